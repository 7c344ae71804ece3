"""SimpleQA: short fact-seeking questions graded by an LLM judge (OpenAI, 4,326 questions). See BENCHMARKS.md.

The model gets the bare question (greedy); the judge (required) grades every answer A correct, B incorrect or C not
attempted; an answer it cannot grade is counted and left out of the scores. Calibration (on by default for the
sample suite): a stated 0-100 confidence (ECE), and the most frequent of k answers sampled at temperature 1.

    card.py      what it measures, its columns, source, options, calibration section and playground mode
    data.py      the questions file, read and checked (sample/ holds our sample suite)
    prompts.py   our prompt templates (prompts/): the grader and the stated-confidence question
    options.py   the run options, read the same way by plan and score
    answers.py   reading replies: stated confidence, normalised and most frequent answers, the judge's rationale
    planning.py  the rows of every question and the model requests that fill them (lite: the card's rule)
    workload.py  what a run asks, counted before it runs (the plan's figures)
    grading.py   the judge's grades of the answers
    scoring.py   the frequency rows, the grades, and the scores (evaluator.metrics.simpleqa)
    explore.py   the explorer's item table and opened question
    measures.py  the questions behind each board score in the explorer, and the score computed on them
    views.py     the calibration figure of one run
    grader.py    the judge playground's SimpleQA mode
"""
from evaluator.benchmarks.simpleqa.card import CARD
from evaluator.benchmarks.simpleqa.planning import plan
from evaluator.benchmarks.simpleqa.scoring import score
from evaluator.benchmarks.simpleqa.workload import workload

__all__ = ["CARD", "plan", "score", "workload"]
