"""ReForm-Eval's dataset table: the task forms, the 8 capability dimensions, the 61 datasets of the full suite
(every one of the reference README's list) with where each file lies in the Hub dataset `Aweminus/ReForm-Eval-Data`
and in which layout it is written; NOT_RUN would name a dataset of the 61 that cannot run, with why (none does)."""
from __future__ import annotations

from dataclasses import dataclass

HUB_REPO = "Aweminus/ReForm-Eval-Data"

# task forms
MC = "multiple_choice"
CAPTION = "caption"
OCR = "ocr"
KIE = "kie"
FORMS = (MC, CAPTION, OCR, KIE)

# how a free-form (OCR / KIE) answer is scored: the reference's --formulation for the dataset
OCR_RULE = "ocr"  # OCROpenEnded: word match after dropping non-alphanumerics (every OCR set, and POIE, SROIE,
#                   DocVQA, TextVQA, OCR-VQA although they ask a question)
KIE_RULE = "kie"  # KIEOpenEnded: word match after the VQA answer normalisation (FUNSD only)
FREE_RULES = (OCR_RULE, KIE_RULE)

# the 8 capability dimensions, in the paper's order: key -> label
DIMENSIONS = {
    "coarse_perception": "Coarse-grained perception",
    "fine_perception": "Fine-grained perception",
    "scene_text": "Scene-text perception",
    "visual_reasoning": "Visually grounded reasoning",
    "spatial": "Spatial understanding",
    "cross_modal_inference": "Cross-modal inference",
    "description": "Visual description",
    "multi_turn_dialogue": "Multi-turn dialogue",
}
DESCRIPTION = "description"  # scored by CIDEr, not a fraction: reported apart from the accuracy dimensions
ACCURACY_DIMENSIONS = tuple(d for d in DIMENSIONS if d != DESCRIPTION)


@dataclass(frozen=True)
class ReformDataset:
    name: str
    dimension: str
    form: str
    hub_path: str       # path inside Aweminus/ReForm-Eval-Data
    confirmed: bool     # True: the path appears in the official configs (FudanDISC/ReForm-Eval build/configs/*.yaml)
    #                     or in the Hub file listing; False: our guess from the naming pattern, not verified
    question_type: str | None = None  # multi-file TDIUC: the annotations' question_type this dataset keeps
    choices_path: str | None = None   # multi-file sets: distractor choice list (TDIUC: a folder of <type>.json)
    layout: str = "items"  # how the file's records are laid out: "items" (load_items reads them as they are) or
    #                        a key of layouts.LAYOUTS (the official builder's own layout, adapted)
    rule: str | None = None  # OCR / KIE sets: the scoring rule (OCR_RULE or KIE_RULE); None: the form's own
    reference_name: str = ""  # its heading in the reference README's list of 61 when that differs from `name`

    @property
    def listed_as(self) -> str:
        """The dataset's name in the reference README's list of 61."""
        return self.reference_name or self.name

    @property
    def multi_file(self) -> bool:
        """True for the sets whose questions, answers and choice lists lie in separate files (TDIUC, COCO counting)."""
        return self.choices_path is not None


_H = "huggingface_data/"
_TDIUC_CHOICES = _H + "TDIUC/choice_list/"  # TDIUC answers (TDIUC_val_anns.json) sit beside the questions file
# One line per dataset. Every hub_path (and the TDIUC question_type / choices_path, the COCO counting choices_path)
# is the path the official config gives (FudanDISC/ReForm-Eval build/configs/, key huggingface_data / hf_*):
#   ImageClassification_{flowers102,cifar10,imagenet1k,pets37}_val, ImageQuality_vizwiz_{yesNo,singleChoice}_val,
#   DisasterType_val, TDIUC_{sport,scene,color,utility,position,detection,counting}, ReferringExpression_val,
#   MulticlassIdentification_val, GroundedObjIdentification_val, MissingObjectSelection_val, ObjectCounting_mscoco_val,
#   OCR_{cute80,ic15,iiit5k,cocotext,wordart,textocr,docvqa,textvqa,ocrvqa}_val, GroundOCR_{ic15,cocotext,textocr}_val,
#   KIE_{funsd,poie,sroie}_val,
#   VQA_{vqa_v2,whoops,okvqa,viquae,aokvqa,imagenetvc}_val, VQA_{gqa,scienceqa,vizwiz}_val_v2.0, KVQA_viquae_val,
#   VQRA_aokvqa_val, VQAR_aokvqa_val,
#   Spatial_{clevr,vsr,mp3d}_val, ImageTextMatching_val, ImageTextSelection_val, CaptionSelection_winoground_val,
#   VisualEntailment_val, MCV_mocheg_val, TemporalOrdering_val, Caption_{MSCOCO,TextCaps,NoCaps,Flickr30K}_val,
#   VQA_vqa_MultiRound_val, VisDial_val_v1.2.
# The official loaders read these files with their own key names; `layout` names the adapter (layouts.py) for the
# files the generic item reader (items.py) does not read as they are.
DATASETS: tuple[ReformDataset, ...] = (
    # coarse-grained perception
    ReformDataset("Flowers102", "coarse_perception", MC, _H + "Flowers102/flower102_val_1p.json", True),
    ReformDataset("CIFAR10", "coarse_perception", MC, _H + "CIFAR10/cifar10_test_10p.json", True),
    ReformDataset("ImageNet-1K", "coarse_perception", MC, _H + "ImageNet-1K/imagenet1k_val_10p.json", True),
    ReformDataset("Pets37", "coarse_perception", MC, _H + "Pets37/pets37_test_10p.json", True),
    # ImageQuality_vizwiz_yesNo_val.yaml (hf_yesNo_anns_path): VizWiz_Dataset with task_kind YesOrNo, the same
    # record shape as the singleChoice file (id, image, question, answer (an index), options)
    ReformDataset("VizWiz-yesno", "coarse_perception", MC, _H + "VizWiz/vizwiz_yesno_val_10p.json", True),
    ReformDataset("VizWiz-quality", "coarse_perception", MC, _H + "VizWiz/vizwiz_singleChoice_val_10p.json",
                  True, reference_name="VizWiz-singleChoice"),  # ImageQuality_vizwiz_singleChoice_val.yaml
    ReformDataset("TDIUC-sport", "coarse_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "sport_recognition", _TDIUC_CHOICES, reference_name="TDIUC-Sport"),
    ReformDataset("TDIUC-scene", "coarse_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "scene_recognition", _TDIUC_CHOICES, reference_name="TDIUC-Scene"),
    ReformDataset("MEDIC", "coarse_perception", MC, _H + "MEDIC/disaster-type-selection-sampled.json", True,
                  layout="medic"),
    # fine-grained perception
    ReformDataset("TDIUC-color", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "color", _TDIUC_CHOICES, reference_name="TDIUC-Color"),
    ReformDataset("TDIUC-utility", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "utility_affordance", _TDIUC_CHOICES, reference_name="TDIUC-Utility"),
    ReformDataset("TDIUC-position", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "positional_reasoning", _TDIUC_CHOICES, reference_name="TDIUC-Position"),
    ReformDataset("TDIUC-detection", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "object_recognition", _TDIUC_CHOICES,  # TDIUC_detection.yaml: task 'object_recognition'
                  reference_name="TDIUC-Detection"),
    ReformDataset("TDIUC-counting", "fine_perception", MC, _H + "TDIUC/TDIUC_val_ques.json", True,
                  "counting", _TDIUC_CHOICES, reference_name="TDIUC-Counting"),
    ReformDataset("RefCOCO", "fine_perception", MC, _H + "RefCOCO/referring-expression-selection-sampled.json", True,
                  layout="refcoco"),
    ReformDataset("MSCOCO-MCI", "fine_perception", MC, _H + "MSCOCO/mci_core_multiple_choice.json", True),
    ReformDataset("MSCOCO-GOI", "fine_perception", MC, _H + "MSCOCO/goi_core_multiple_choice.json", True),
    ReformDataset("MSCOCO-MOS", "fine_perception", MC, _H + "MSCOCO/mos_core_multiple_choice.json", True),
    ReformDataset("MSCOCO-OC", "fine_perception", MC, _H + "MSCOCO/object-counting-all.json", True,
                  choices_path=_H + "MSCOCO/objectCounting_answer_list/answer_list.json"),
    # scene-text perception
    ReformDataset("CUTE80", "scene_text", OCR, _H + "CUTE80/cute80_core_open_ended.json", True,
                  layout="ocr", rule=OCR_RULE),
    # GroundOCR_{ic15,cocotext,textocr}_val.yaml: the word's box drawn on the image (grounded.py), --formulation
    # OCROpenEnded as for the plain sets
    ReformDataset("Grounded IC15", "scene_text", OCR, _H + "IC15/ic15_gocr_core_open_ended.json", True,
                  layout="gocr_ic15", rule=OCR_RULE),
    ReformDataset("IC15", "scene_text", OCR, _H + "IC15/ic15_core_open_ended.json", True,
                  layout="ocr", rule=OCR_RULE),
    ReformDataset("IIIT5K", "scene_text", OCR, _H + "IIIT5K/iiit5k_core_open_ended.json", True,
                  layout="ocr", rule=OCR_RULE),
    # OCR_cocotext_val.yaml gives 'huggingface_data/COCO_Text/cocotext_core_open_ended' (no extension); the
    # repo's own hf loading check reads COCO_Text/cocotext_core_open_ended.json (GroundOCR_cocotext_val: COCO_Text/)
    ReformDataset("Grounded COCO-Text", "scene_text", OCR, _H + "COCO_Text/cocotext_gocr_core_open_ended.json", True,
                  layout="gocr_cocotext", rule=OCR_RULE),
    ReformDataset("COCO-Text", "scene_text", OCR, _H + "COCO_Text/cocotext_core_open_ended.json", True,
                  layout="ocr", rule=OCR_RULE),
    ReformDataset("WordArt", "scene_text", OCR, _H + "WordArt/wordart_core_open_ended.json", True,
                  layout="ocr", rule=OCR_RULE),
    ReformDataset("Grounded TextOCR", "scene_text", OCR, _H + "TextOCR/textocr_gocr_core_open_ended.json", True,
                  layout="gocr_textocr", rule=OCR_RULE),
    ReformDataset("TextOCR", "scene_text", OCR, _H + "TextOCR/textocr_core_open_ended.json", True,
                  layout="ocr", rule=OCR_RULE),
    ReformDataset("FUNSD", "scene_text", KIE, _H + "FUNSD/funsd_core_open_ended.json", True, layout="kie",
                  rule=KIE_RULE),
    ReformDataset("POIE", "scene_text", KIE, _H + "POIE/poie_core_open_ended.json", True, layout="kie",
                  rule=OCR_RULE),
    ReformDataset("SROIE", "scene_text", KIE, _H + "SROIE/sroie_core_open_ended.json", True, layout="kie",
                  rule=OCR_RULE),
    ReformDataset("DocVQA", "scene_text", KIE, _H + "DocVQA/docvqa_val_10p.json", True, rule=OCR_RULE),
    ReformDataset("TextVQA", "scene_text", KIE, _H + "TextVQA/textvqa_val_10p.json", True, rule=OCR_RULE),
    ReformDataset("OCR-VQA", "scene_text", KIE, _H + "OCR-VQA/ocrvqa_test_10p.json", True, rule=OCR_RULE),
    # visually grounded reasoning
    ReformDataset("VQA-v2", "visual_reasoning", MC, _H + "VQA_v2/vqa_val_10p.json", True, reference_name="VQA v2"),
    ReformDataset("GQA", "visual_reasoning", MC, _H + "GQA/gqa_testdev_10p.json", True),
    ReformDataset("Whoops", "visual_reasoning", MC, _H + "Whoops/whoops_all_10p.json", True),
    ReformDataset("OK-VQA", "visual_reasoning", MC, _H + "OK-VQA/okvqa_val_10p.json", True),
    ReformDataset("ScienceQA", "visual_reasoning", MC, _H + "ScienceQA/scienceqa_test_10p.json", True),
    ReformDataset("VizWiz-VQA", "visual_reasoning", MC, _H + "VizWiz/vizwiz_val_10p.json", True,
                  reference_name="VizWiz"),
    ReformDataset("ViQuAE", "visual_reasoning", MC, _H + "ViQuAE/viquae_test_10p.json", True),
    # KVQA_viquae_val.yaml (builder build/VQA/kvqa_dataset.py): ViQuAE questions with a knowledge context
    ReformDataset("K-ViQuAE", "visual_reasoning", MC, _H + "K-ViQuAE/kviquae_test_10p.json", True,
                  layout="kviquae"),
    ReformDataset("A-OKVQA", "visual_reasoning", MC, _H + "A-OKVQA/aokvqa_val_10p.json", True),
    # VQRA_aokvqa_val.yaml / VQAR_aokvqa_val.yaml (build/AOKVQA/qra_dataset.py, qar_dataset.py): the answer given
    # the rationale, and the rationale given the answer
    ReformDataset("A-OKVQRA", "visual_reasoning", MC, _H + "A-OKVQRA/aokvqra_val_10p.json", True,
                  layout="aokvqra"),
    ReformDataset("A-OKVQAR", "visual_reasoning", MC, _H + "A-OKVQAR/aokvqar_val_10p.json", True,
                  layout="aokvqar"),
    ReformDataset("ImageNetVC", "visual_reasoning", MC, _H + "ImageNetVC/imagenetvc_all_10p.json", True),
    # spatial understanding
    ReformDataset("CLEVR", "spatial", MC, _H + "CLEVR/clevr_core_multiple_choice.json", True),
    ReformDataset("VSR", "spatial", MC, _H + "VSR/vsr_core_multiple_choice.json", True),
    ReformDataset("MP3D-Spatial", "spatial", MC, _H + "MP3D/mp3d_core_multiple_choice.json", True,
                  reference_name="MP3D"),
    # cross-modal inference
    ReformDataset("MSCOCO-ITM", "cross_modal_inference", MC,
                  _H + "MSCOCO/image-text-matching-object-sampled.json", True, layout="itm"),
    ReformDataset("MSCOCO-ITS", "cross_modal_inference", MC,
                  _H + "MSCOCO/image-text-selection-object-sampled.json", True, layout="its"),
    ReformDataset("Winoground", "cross_modal_inference", MC,
                  _H + "Winoground/winoground_all_10p.json", True),
    ReformDataset("SNLI-VE", "cross_modal_inference", MC,
                  _H + "SNLI_VE/visual-entailment-matching-sampled.json", True, layout="snli_ve"),
    ReformDataset("MOCHEG", "cross_modal_inference", MC, _H + "MOCHEG/mocheg_test_10p.json", True, layout="mocheg"),
    ReformDataset("WikiHow", "cross_modal_inference", MC,
                  _H + "WikiHow/wikihow-image-text-selection-in-method-sampled.json", True, layout="wikihow"),
    # visual description
    ReformDataset("MSCOCO-caption", "description", CAPTION, _H + "MSCOCO/captions-sampled.json", True,
                  layout="caption", reference_name="MSCOCO"),
    ReformDataset("TextCaps", "description", CAPTION, _H + "TextCaps/captions-sampled.json", True, layout="caption"),
    ReformDataset("NoCaps", "description", CAPTION, _H + "NoCaps/captions-sampled.json", True, layout="caption"),
    ReformDataset("Flickr30K", "description", CAPTION, _H + "Flickr30K/captions-sampled.json", True, layout="caption"),
    # multi-turn dialogue
    ReformDataset("VQA-MT", "multi_turn_dialogue", MC, _H + "VisDial/VQA_MultiTurn_v1.0.json", True, layout="vqa_mt"),
    ReformDataset("VisDial", "multi_turn_dialogue", MC, _H + "VisDial/Visdial_1.0_val_v1.2.json", True,
                  layout="visdial"),
)
DATASETS_BY_NAME = {d.name: d for d in DATASETS}


@dataclass(frozen=True)
class NotRun:
    """A dataset of the reference README's 61 that the full suite does not run, and why."""
    name: str       # as the reference README lists it
    dimension: str
    why: str


NOT_RUN: tuple[NotRun, ...] = ()  # every dataset of the reference's 61 runs


def dimension_counts(dimension: str) -> tuple[int, int]:
    """(datasets the full suite runs, datasets the reference lists) in one dimension."""
    run = sum(d.dimension == dimension for d in DATASETS)
    return run, run + sum(n.dimension == dimension for n in NOT_RUN)


def free_rule(dataset: str, form: str) -> str:
    """The rule that scores a free-form answer of `dataset` (OCR_RULE or KIE_RULE for OCR / KIE sets): the table's
    (the reference's formulation for it), else the form's own (captions, and datasets outside the table such as
    the sample suite's)."""
    entry = DATASETS_BY_NAME.get(dataset)
    return entry.rule if entry is not None and entry.rule else form


def hub_source(entry: ReformDataset, revision: str | None = None, path: str | None = None) -> str:
    """hf:// reference of a table entry's file (or of another `path` in the same Hub dataset)."""
    at = f"@{revision}" if revision else ""
    return f"hf://datasets/{HUB_REPO}{at}/{path or entry.hub_path}"
