"""How many items our loader makes from each of the 61 ReForm-Eval files, so the full suite's size is known before
it is downloaded.

Most numbers could not be counted: the Hub files (Aweminus/ReForm-Eval-Data) were not reachable offline. Three
kinds of evidence were used instead. Two of the reference's own prediction dumps were counted. The source split's
published size was multiplied by the sampling the file name states ("_10p" = 10%); the reference's "-sampled"
files are also a 10% draw, since the counted MSCOCO caption file holds 500 of val2017's 5,000 images. Where no
split size applies, the Hub file size was divided by the usual size of one base64 image of that source (a COCO
image is about 216 KB in these files). Such estimates are good to perhaps +-30%.

An item is what the loader yields: one record is one item, except that VisDial and VQA-MT yield one item per
dialogue round, and the TDIUC sets each keep one question type of a shared file. Every number must be confirmed
by counting on first download. VQA-v2, the TDIUC sets, VQA-MT and the guessed sets (MP3D-Spatial, WikiHow, Grounded
IC15) are the least sure.
"""
from __future__ import annotations

from dataclasses import dataclass

COUNTED, PUBLISHED, DERIVED, ESTIMATED = "counted", "published", "derived", "estimated"
# counted: counted offline from a released file of the reference; published: a number the authors print (paper,
# README, configs); derived: the source split's published size x the sampling its file name or builder states;
# estimated: a reasoned guess (said how)


@dataclass(frozen=True)
class DatasetCount:
    name: str  # ReformDataset.name in datasets.py
    items: int  # items our loader makes from the file
    basis: str  # one of COUNTED, PUBLISHED, DERIVED, ESTIMATED
    source: str  # where the number comes from, in one sentence (file, page, or split size x sampling)


_SIZE = "Hub file size / ~216 KB per base64 COCO image"  # the per-image size the counted caption file shows
_TDIUC = ("one type of TDIUC_val_ques.json: a reference dump with local paths has 11 colour questions after the "
          "builder's 1-in-100 stride, so ~1,050 colour questions; other types scaled by TDIUC val proportions")

COUNTS: tuple[DatasetCount, ...] = (
    # coarse-grained perception
    DatasetCount("Flowers102", 818, DERIVED,
                 "the Kaggle pytorch-challenge flower 'valid' split (818 images) that the config's image_dir names, "
                 "unsampled (46.2 MB on the Hub, ~56 KB an image)"),
    DatasetCount("CIFAR10", 1000, DERIVED,
                 "CIFAR-10 test 10,000 x 10% (_10p); 3.33 MB on the Hub fits 1,000 tiny images"),
    DatasetCount("ImageNet-1K", 5000, DERIVED, "ImageNet-1K val 50,000 x 10% (_10p, 'tenths_HN_annotations_val')"),
    DatasetCount("Pets37", 367, DERIVED, "Oxford-IIIT Pets test 3,669 x 10% (_10p) = 366.9"),
    DatasetCount("VizWiz-yesno", 775, DERIVED,
                 "VizWiz image-quality val 7,750 images x 10% (_10p), one yes/no question per image assumed"),
    DatasetCount("VizWiz-quality", 775, ESTIMATED,
                 "as VizWiz-yesno (7,750 x 10%), assuming one flaw question per image; some images may be dropped"),
    DatasetCount("TDIUC-sport", 170, ESTIMATED, _TDIUC + " (sport_recognition)"),
    DatasetCount("TDIUC-scene", 358, ESTIMATED, _TDIUC + " (scene_recognition)"),
    DatasetCount("MEDIC", 1569, DERIVED,
                 "MEDIC test 15,688 x 10% ('-sampled'); 71.4 MB on the Hub fits ~45 KB an image"),
    # fine-grained perception
    DatasetCount("TDIUC-color", 1050, ESTIMATED,
                 "TDIUC_SingleChoice dump (reference test_output): 11 colour questions = the builder's [::100] of "
                 "1,001-1,100 colour questions in the same question file"),
    DatasetCount("TDIUC-utility", 3, ESTIMATED, _TDIUC + " (utility_affordance; 3-17)"),
    DatasetCount("TDIUC-position", 206, ESTIMATED, _TDIUC + " (positional_reasoning)"),
    DatasetCount("TDIUC-detection", 502, ESTIMATED, _TDIUC + " (object_recognition)"),
    DatasetCount("TDIUC-counting", 885, ESTIMATED, _TDIUC + " (counting)"),
    DatasetCount("RefCOCO", 244, ESTIMATED, "52.7 MB on the Hub / ~216 KB per COCO train2014 image"),
    DatasetCount("MSCOCO-MCI", 377, ESTIMATED, "81.4 MB on the Hub; " + _SIZE),
    DatasetCount("MSCOCO-GOI", 356, ESTIMATED, "76.8 MB on the Hub; " + _SIZE),
    DatasetCount("MSCOCO-MOS", 256, ESTIMATED, "55.4 MB on the Hub; " + _SIZE),
    DatasetCount("MSCOCO-OC", 565, ESTIMATED, "object-counting-all.json, 122 MB on the Hub; " + _SIZE),
    # scene-text perception
    DatasetCount("CUTE80", 288, DERIVED,
                 "CUTE80's 288 cropped words, the whole set ('core' files keep whole test sets)"),
    DatasetCount("Grounded IC15", 500, ESTIMATED,
                 "guess: one boxed word per IC15 test image (500); no Hub size seen; file replaced in Nov 2023"),
    DatasetCount("IC15", 1811, DERIVED, "the IC15 1,811-word test set the config's image folder 'IC15_1811' names"),
    DatasetCount("IIIT5K", 3000, DERIVED, "IIIT5K test 3,000 words, assuming the 'core' file keeps the whole test set"),
    DatasetCount("Grounded COCO-Text", 324, ESTIMATED, "69.9 MB on the Hub / ~216 KB per COCO train2014 image"),
    DatasetCount("COCO-Text", 1500, ESTIMATED, "3.37 MB on the Hub of small word crops at ~2-3 KB each (1,100-1,900)"),
    DatasetCount("WordArt", 1511, DERIVED, "WordArt test 1,511 words; 37.5 MB on the Hub fits ~25 KB a crop"),
    DatasetCount("Grounded TextOCR", 320, ESTIMATED, "107 MB on the Hub / ~335 KB per TextOCR image"),
    DatasetCount("TextOCR", 315, ESTIMATED, "105 MB on the Hub / ~335 KB per TextOCR image (cropped at load)"),
    DatasetCount("FUNSD", 588, COUNTED,
                 "FUNSD_KIEOpenEnded dump (reference test_output, ids 0-587 once each) from the local core file; "
                 "the Hub file was replaced in Nov 2023"),
    DatasetCount("POIE", 450, ESTIMATED, "89.2 MB on the Hub / ~200 KB per POIE image"),
    DatasetCount("SROIE", 1388, ESTIMATED, "SROIE test 347 receipts x 4 key fields, assuming the whole set"),
    DatasetCount("DocVQA", 535, DERIVED, "DocVQA val 5,349 questions x 10% (_10p); 463 MB on the Hub"),
    DatasetCount("TextVQA", 500, DERIVED, "TextVQA val 5,000 questions x 10% (_10p)"),
    DatasetCount("OCR-VQA", 10004, DERIVED,
                 "OCR-VQA test ~100,037 questions (20,796 images) x 10% (_10p); ~2,080 if sampled by image"),
    # visually grounded reasoning
    DatasetCount("VQA-v2", 21435, DERIVED,
                 "VQA v2 val 214,354 questions x 10% (_10p); the Hub repo's 8.56 GB total suggests at most ~14,000"),
    DatasetCount("GQA", 1258, DERIVED, "GQA testdev-balanced 12,578 questions x 10% (_10p)"),
    DatasetCount("Whoops", 366, ESTIMATED, "WHOOPS! VQA pairs (~3,662, unverified) x 10% (_10p)"),
    DatasetCount("OK-VQA", 505, DERIVED,
                 "OK-VQA val 5,046 x 10% (_10p); 113 MB on the Hub fits 505 x ~224 KB"),
    DatasetCount("ScienceQA", 202, DERIVED, "ScienceQA test questions with an image 2,017 x 10% (_10p)"),
    DatasetCount("VizWiz-VQA", 432, DERIVED, "VizWiz VQA val 4,319 x 10% (_10p)"),
    DatasetCount("ViQuAE", 126, ESTIMATED, "ViQuAE test ~1,257 questions (unverified) x 10% (_10p)"),
    DatasetCount("K-ViQuAE", 126, ESTIMATED, "the ViQuAE test questions with context, ~1,257 x 10% (_10p)"),
    DatasetCount("A-OKVQA", 115, DERIVED, "A-OKVQA val 1,145 x 10% (_10p) = 114.5"),
    DatasetCount("A-OKVQRA", 115, DERIVED, "A-OKVQA val 1,145 x 10% (_10p), answer given the rationale"),
    DatasetCount("A-OKVQAR", 115, DERIVED, "A-OKVQA val 1,145 x 10% (_10p), rationale given the answer"),
    DatasetCount("ImageNetVC", 408, ESTIMATED,
                 "ImageNetVC ~4,076 QA pairs (unverified) x 10% (_10p); 82.1 MB on the Hub"),
    # spatial understanding
    DatasetCount("CLEVR", 700, ESTIMATED, "175 MB on the Hub / ~250 KB per CLEVR PNG"),
    DatasetCount("VSR", 108, ESTIMATED, "23.4 MB on the Hub; " + _SIZE),
    DatasetCount("MP3D-Spatial", 400, ESTIMATED,
                 "guess: no Hub size or source count found; of the order of the CLEVR file"),
    # cross-modal inference
    DatasetCount("MSCOCO-ITM", 588, ESTIMATED, "127 MB on the Hub; " + _SIZE),
    DatasetCount("MSCOCO-ITS", 293, ESTIMATED, "63.4 MB on the Hub; " + _SIZE),
    DatasetCount("Winoground", 80, ESTIMATED,
                 "Winoground 800 image items (400 examples x 2) x 10% (_10p); 47.6 MB fits ~600 KB an image"),
    DatasetCount("SNLI-VE", 315, ESTIMATED, "55.7 MB on the Hub / ~177 KB per Flickr30K image"),
    DatasetCount("MOCHEG", 244, ESTIMATED, "MOCHEG test ~2,442 claims (unverified) x 10% (_10p); 60.2 MB on the Hub"),
    DatasetCount("WikiHow", 500, ESTIMATED, "guess: no Hub size or source count found"),
    # visual description
    DatasetCount("MSCOCO-caption", 500, COUNTED,
                 "MSCOCO_Generation dump (reference test_output): 500 distinct items = 10% of val2017's 5,000 images; "
                 "108 MB on the Hub fits 500 x ~216 KB"),
    DatasetCount("TextCaps", 317, DERIVED, "TextCaps val 3,166 images x 10% ('-sampled'); 120 MB on the Hub fits"),
    DatasetCount("NoCaps", 450, DERIVED, "NoCaps val 4,500 images x 10% ('-sampled')"),
    DatasetCount("Flickr30K", 100, DERIVED,
                 "Flickr30K Karpathy test 1,000 images x 10% ('-sampled'); 17.7 MB on the Hub fits"),
    # multi-turn dialogue
    DatasetCount("VQA-MT", 5000, ESTIMATED,
                 "204 MB on the Hub / ~216 KB = ~940 dialogues x ~5.3 VQA v2 questions per image, one item per round"),
    DatasetCount("VisDial", 20640, DERIVED,
                 "VisDial v1.0 val 2,064 dialogues x 10 rounds, one item per round; 449 MB fits 2,064 images"),
)
