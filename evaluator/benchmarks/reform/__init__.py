"""ReForm-Eval: existing vision-language datasets re-formulated into multiple choice, OCR, key-information
extraction and captioning, in 8 capability dimensions (arXiv 2310.02569).

Multiple-choice items are asked N times (reform.repeats) with varied instructions, shuffled options and mark
styles, by generation and by option likelihood (reform.mode); OCR, KIE and caption items once, by greedy
generation.

    card.py        what it measures, its columns, source and options
    datasets.py    the task forms, the 8 dimensions, the 61-dataset table of the full suite
    files.py       reading data files (local, http(s), hf://) and choice lists
    image_refs.py  an item's image: base64 text or a path, opened
    layouts.py     the official builders' file layouts, adapted into item records
    grounded.py    the grounded OCR sets: their box conventions, drawn as the builders draw them
    templates.py   the layouts without a question, phrased from our templates
    dialogue.py    the multi-turn dialogue layout (VisDial, VQA-MT)
    items.py       one record checked and normalised; a file read
    suite.py       TDIUC and COCO counting (multi-file), the full suite, our sample suite (sample/)
    prompts.py     our prompts (prompts/), mark styles, how each repeat is asked
    options.py     the run options
    planning.py    the rows and model requests of every item (lite: the card's rule)
    counts.py      each dataset's items in the full suite, and where that number comes from
    workload.py    what a run asks, counted before it runs (the plan's figures)
    scoring.py     reading the answers; dataset, dimension and overall scores, format hit rate, instability
    explore.py     the explorer's item table and opened question; measures.py: the questions behind each board
                   metric and its value; picture.py: a question's image, read again from its data file
"""
from evaluator.benchmarks.reform.card import CARD
from evaluator.benchmarks.reform.planning import plan
from evaluator.benchmarks.reform.scoring import score
from evaluator.benchmarks.reform.workload import headline_weights, workload

__all__ = ["CARD", "headline_weights", "plan", "score", "workload"]
