"""CURE: chain-of-thought visual reasoning and its consistency (arXiv 2309.04461).

Each instance has an image, a region (the first bbox), six candidate inferences about that region (one right),
and a chain of 2-4 sub-questions that lead to it, each with six candidates. Every question is multiple choice.

    card.py      what it measures, its columns, source and options
    data.py      the instances file, read and checked (sample/ holds our 20-instance suite)
    region.py    the marked region drawn on the image
    images.py    the images from the Visual Genome and VCR releases (LEADERBOARD_CURE_IMAGES)
    prompts.py   our prompt templates (prompts/)
    planning.py  a row and a model request per question (a lite run: the card's lite rule on the full file)
    workload.py  what a run asks, counted before it runs (the plan's figures)
    scoring.py   reading the answers; Rh, Rcot, Ro, Cf, Cb (evaluator.metrics.cure)
    explore.py   the explorer's item table and opened instance
    measures.py  the questions behind each board score in the explorer, and the score computed on them
"""
from evaluator.benchmarks.cure.card import CARD
from evaluator.benchmarks.cure.planning import plan
from evaluator.benchmarks.cure.scoring import score
from evaluator.benchmarks.cure.workload import workload

__all__ = ["CARD", "plan", "score", "workload"]
