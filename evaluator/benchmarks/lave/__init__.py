"""LAVE: free-form VQA answers rated by an LLM judge, beside the strict string metrics (arXiv 2310.02567).

The model answers each question about its image freely (greedy, our short-answer instruction); the judge rates
each answer 1-3 against the reference answers with the LAVE prompt, and the same answers are scored by VQA
accuracy, ANLS, exact match, BLEU-4 and CIDEr, so the results say how much the strict metrics miss.

    card.py      what it measures, its columns, sources, options, board section and playground grader
    data.py      VQA v2-style files (sample/ holds our 30-item suite), the Docmatix split, each item's image
    rater.py     the judge prompt (prompts/: task text and demonstrations), references, reading the reply
    planning.py  a row and a model request per item (lite: the card's rule)
    workload.py  what a run asks, counted before it runs (the plan's figures)
    scoring.py   reading the answers; LAVE through the judge, the string metrics, agreement, breakdowns
    explore.py   the explorer's item table and opened question
    measures.py  the questions behind each board score in the explorer, and the score computed on them
    views.py     the board's table of LAVE beside each strict metric
    grader.py    the judge playground's LAVE mode
"""
from evaluator.benchmarks.lave.card import CARD
from evaluator.benchmarks.lave.planning import plan
from evaluator.benchmarks.lave.scoring import score
from evaluator.benchmarks.lave.workload import workload

__all__ = ["CARD", "plan", "score", "workload"]
