"""SimpleQA's card: what it measures, its board columns, its data source and options, how a question is shown, its
calibration section and its judge playground mode."""
from __future__ import annotations

from evaluator.benchmarks.item_tables import by_question
from evaluator.benchmarks.simpleqa import explore, measures
from evaluator.benchmarks.simpleqa.data import LITE_SUBSET, OFFICIAL_URL
from evaluator.benchmarks.simpleqa.grader import GRADER
from evaluator.benchmarks.simpleqa.options import DEFAULT_MAX_NEW_TOKENS
from evaluator.benchmarks.simpleqa.planning import LIMIT_SEED
from evaluator.benchmarks.simpleqa.views import calibration_figure
from evaluator.benchmarks.spec import (BOOL, COUNT, FLOAT, INT, STRING, THOUGHT_COLUMNS, THOUGHT_UNCLOSED, Card,
                                       DetailColumn, HubEval, ItemView, Metric, Option, Section, Source)

CALIBRATION = ("Accuracy against the model's stated confidence (it is asked for an answer and a 0-100 confidence) "
               "and against how often its most frequent answer came up among samples at temperature 1. Points on "
               "the diagonal are perfectly calibrated; the ECE is the weighted mean gap. Binned as in the SimpleQA "
               "write-up: 30 equal-count (quantile) bins; a second panel shows 10 equal-width bins.")
CALIBRATION_DEFAULT = "unset: on for the sample suite, and on the full suite when within simpleqa.max_cost"

# every column of a details row (planning.DETAIL_COLUMNS, filled by the executor and scoring), in order
DETAILS = (
    DetailColumn("benchmark", STRING, "The benchmark's name, \"simpleqa\"."),
    DetailColumn("question_id", STRING, "The question's id; every row of one question shares it."),
    DetailColumn("part", STRING, "What the row holds: \"answer\" (the bare question, greedy; the scores come from "
                 "these rows), \"confidence\" (the answer with a stated confidence), \"sample1\"..\"sampleK\" "
                 "(answers sampled at temperature 1) or \"frequency\" (the most frequent sampled answer)."),
    DetailColumn("repeat", INT, "The sample's number for sample rows (1..K), else 0."),
    DetailColumn("question", STRING, "The question as the data gives it."),
    DetailColumn("prompt", STRING, "The prompt as the model received it, its chat template applied."),
    DetailColumn("prediction", STRING, "The model's reply, a thinking model's answer alone (frequency rows: the "
                 "first reply of the most frequent "
                 "answer)."),
    *THOUGHT_COLUMNS,
    DetailColumn("parsed_answer", STRING, "The answer read from the reply: the stripped reply, the confidence "
                 "reply's best guess, or a sample's normalised text (frequency rows: the most frequent normalised "
                 "answer)."),
    DetailColumn("gold", STRING, "The gold answer."),
    DetailColumn("correct", BOOL, "Whether the judge graded the answer correct (grade A)."),
    DetailColumn("score", FLOAT, "1.0 when graded correct, 0.0 when graded incorrect or not attempted; NaN when not "
                 "graded (sample rows, or the judge gave no grade)."),
    DetailColumn("grade", STRING, "The judge's grade: \"A\" correct, \"B\" incorrect, \"C\" not attempted; empty "
                 "when not graded."),
    DetailColumn("judge_rationale", STRING, "The judge's reason, its reply without the grade line."),
    DetailColumn("judge_raw", STRING, "The judge's raw reply."),
    DetailColumn("judge_error", STRING, "Why the answer is ungraded (a failed call, an empty reply or no grade in "
                 "it); empty when graded."),
    DetailColumn("extraction", STRING, "How the answer is graded: \"judge\", or \"normalised (not graded)\" for "
                 "sample rows."),
    DetailColumn("topic", STRING, "The question's topic, from the data."),
    DetailColumn("answer_type", STRING, "The kind of answer the question expects (date, person, number, ...), "
                 "from the data."),
    DetailColumn("confidence", FLOAT, "Confidence rows: the stated confidence as a fraction 0..1 (NaN when "
                 "unreadable); frequency rows: the most frequent answer's share of the samples; else NaN."),
    DetailColumn("hit_token_limit", BOOL, "Whether the reply used up its max_new_tokens budget (null when the "
                 "model does not report it)."),
)

# its paper's BibTeX entry (arXiv's record: title, authors, year), printed beside the leaderboard's in About
CITATION = "\n".join([
    '@misc{wei2024measuring,',
    '  title = {Measuring short-form factuality in large language models},',
    '  author = {Wei, Jason and Karina, Nguyen and Chung, Hyung Won and Jiao, Yunxin Joy and '
    'Papay, Spencer and Glaese, Amelia and Schulman, John and Fedus, William},',
    '  year = {2024},',
    '  eprint = {2411.04368},',
    '  archivePrefix = {arXiv},',
    '  url = {https://arxiv.org/abs/2411.04368}',
    '}',
])

CARD = Card(
    name="simpleqa",
    title="SimpleQA",
    short_title="SimpleQA",
    measures="short-form factual accuracy of text questions, graded by an LLM judge (and calibration)",
    summary=(
        "Short-form factuality (OpenAI): the model gets the bare question; an LLM judge grades each answer against "
        "the gold answer as correct, incorrect (contradicts it, even hedged) or not attempted. Fractions are of the "
        "graded answers; an answer the judge could not grade is counted and shown, never scored as wrong. The "
        "judge's identity and the grader prompt's hash are in each results file."),
    paper="https://openai.com/index/introducing-simpleqa/",
    citation=CITATION,
    metrics=(
        Metric("correct", "correct", "Share of graded answers that give the gold answer without contradicting it.",
               judged=True),
        Metric("not_attempted", "not attempted", "Share of graded answers that give no answer and contradict "
               "nothing (\"I don't know\").", judged=True),
        Metric("incorrect", "incorrect", "Share of graded answers that contradict the gold answer.",
               higher_is_better=False, judged=True),
        Metric("correct_given_attempted", "correct given attempted", "Correct / (correct + incorrect): accuracy "
               "when the model does answer (0 when it never does).", judged=True),
        Metric("f_score", "F-score", "Harmonic mean of correct and correct given attempted.", judged=True),
        Metric("ungraded", "ungraded", "Answers the judge could not grade (it failed after its retries, it never gave "
               "a judgement: an empty reply, an error page or message, a refusal, or its reply had no grade line): "
               "counted here and left out of the fractions, never scored as wrong.",
               kind=COUNT, higher_is_better=False, path=("counts", "ungraded"), judged=True),
        Metric("hit_token_limit", "cut off", "Answers that used up the token budget (simpleqa.max_new_tokens) "
               "before the model ended them, so they may stop mid-sentence; each is marked in the details "
               "(hit_token_limit). Many cut-off answers mean the budget is too small for this model.",
               kind=COUNT, higher_is_better=False, path=("counts", "hit_token_limit"), shown=False),
        Metric("ece", "ECE", "Expected calibration error of the stated confidence: the item-weighted mean gap "
               "between accuracy and mean stated confidence over 30 equal-count (quantile) confidence bins, as the "
               "SimpleQA write-up bins it (judge: correct; over 10 equal-width bins in the results as "
               "`ece_equal_width`). Undefined when stated-confidence calibration did not run.",
               higher_is_better=False, shown=False, judged=True),
        THOUGHT_UNCLOSED,
    ),
    default_metric="f_score",
    needs_images=False,
    needs_judge=True,
    sources=(Source("simpleqa", "LEADERBOARD_SIMPLEQA_FULL", OFFICIAL_URL,
                    "the full SimpleQA suite (the official CSV): a URL, a local path or `hf://datasets/...`"),),
    options=(
        Option("simpleqa.grader", "reason", "the judge's answer format: `reason` (a one-sentence reason, then a "
               "final line with the letter) or `letter` (the letter alone, as the reference grader asks)"),
        Option("simpleqa.confidence", "", "`on` / `off`: stated-confidence calibration (a second prompt asks for "
               "the best guess and a 0-100 confidence; the guess is graded too; ECE); " + CALIBRATION_DEFAULT),
        Option("simpleqa.frequency", "", "`on` / `off`: answer-frequency calibration (k samples at temperature 1; "
               "the most frequent answer is graded, against its share of the samples); " + CALIBRATION_DEFAULT),
        Option("simpleqa.samples", "5", "samples per question (k) for answer-frequency calibration"),
        Option("simpleqa.seed", "0", "base seed of the samples: each sample of each question draws with its own "
               "seed, derived from this one, the question id and the sample's number"),
        Option("simpleqa.max_new_tokens", str(DEFAULT_MAX_NEW_TOKENS), "tokens the model may generate per answer "
               "(and per sample); a reply that uses them all is marked in the details (`hit_token_limit`) and "
               "counted"),
        Option("simpleqa.confidence_max_new_tokens", "96", "tokens the model may generate per stated-confidence "
               "reply"),
        Option("simpleqa.judge_max_tokens", "", "tokens the judge may generate per grade (unset: the judge's "
               "default)"),
        Option("simpleqa.max_cost", "1.5", "full suite: a calibration runs by default only if it keeps the run "
               "within this many times the plain run (stated confidence costs 2x, answer frequency 1 + k x)"),
    ),
    item_view=ItemView(question="question", grade="grade", rationale="judge_rationale",
                       group_by=explore.GROUP_BY, main_rows=("part", "answer"), key=by_question, items=explore.items,
                       parts=explore.parts, measure=measures.measure),
    sections=(Section(key="calibration", title="SimpleQA calibration", description=CALIBRATION, kind="plot",
                      needs="f_score", render=calibration_figure,
                      empty="No finished run has SimpleQA calibration yet: it is drawn for each run of SimpleQA "
                            "(calibration is on by default on the sample suite)."),),
    grader=GRADER,
    details=DETAILS,
    differences=(
        "The grader prompt is our own wording with our own examples (the reference's text is not copied), and it "
        "states and illustrates every decision the reference's grader prompt states, decided the same way: any "
        "wording, order or case, with extra true details, is correct; hedging is fine when the answer is complete "
        "and right; an answer giving only part of a several-part gold (one of two names) as if it were the whole "
        "is incorrect, while one that says it does not know the rest is not attempted; a list holding any wrong "
        "item, several candidates, a hedged contradiction or any false statement is incorrect; declining, asking "
        "for context or giving only true background is not attempted; numbers count to the gold's last "
        "significant figure (a vague range is not attempted); when the gold holds more than the question asks, the "
        "part asked for is enough; what the question makes obvious may be left out; small name typos are fine. "
        "Reason: the numbers depend on these decisions, not on the wording.",
        "By default the judge gives a one-sentence reason before its letter; `simpleqa.grader=letter` asks for "
        "the letter alone, as the reference does. Reason: a reader can see why an answer was graded so.",
        "The grade is read from a line that holds it alone: the reply's last line, or its first when the judge "
        "puts the grade first and explains below it. The reference takes the first capital A, B or C anywhere in "
        "the reply and reads a reply without one as not attempted. A reply with no grade line, two different "
        "grades, or an error, fault or refusal where its grade or explanation should be is asked again and then "
        "counted as ungraded, left out of the fractions. Reason: the reference's rule reads \"CORRECT\" as C and "
        "can read a grade out of an error message; a failed or garbled judgement says nothing about the model.",
        "The judge is the deployer's choice (named, with the grader prompt's hash, in every results file), not the "
        "reference's grader (GPT-4.1 after the system message \"You are a helpful assistant.\", at temperature "
        "0.5, up to 2,048 tokens). Ours gets the grader prompt alone, at temperature 0, with the judge's token "
        "limit (512 unless `simpleqa.judge_max_tokens` says otherwise). Reason: a repeatable grade from whichever "
        "judge is set. Scores from different judges are not comparable: the board flags them.",
        f"`--limit N` runs N questions drawn at random with the reference's seed (`LIMIT_SEED` = {LIMIT_SEED}: "
        "the questions `random.Random(0).sample` draws, as the reference's num_examples = N does on the official "
        "file), the same N in every run; they run in file order, where the reference keeps the drawn order. "
        "Reason: the order changes no score and keeps the details in file order.",
        "Calibration (the write-up gives no code) is binned as the write-up draws it: 30 equal-count (quantile) "
        "bins, for the stated confidence (plot and ECE) and the answer frequency; equal values are never split "
        "between two bins, so a bin can hold more and fewer bins can be drawn when many answers share a value. "
        "A second panel keeps 10 equal-width bins (`ece_equal_width` in the results). Reason: a split of equal "
        "values would make the bins depend on the answers' order.",
        f"The model may generate {DEFAULT_MAX_NEW_TOKENS} tokens per answer; the reference leaves the length to "
        "its sampler, which allows far longer replies. Reason: a bounded run time on small GPUs. Answers that hit "
        "the budget are marked and counted (the `cut off` column), so a cut can be seen, not guessed.",
        "Answer-frequency calibration samples k = 5 answers per question by default (`simpleqa.samples`); the "
        "paper samples 100. Reason: cost (each sample is a full generation). Each sample has its own seed, so the "
        "k samples are independent draws whatever the batch size. With 5 samples the frequencies are coarse "
        "(multiples of 0.2).",
        "Stated confidence is read from the model's reply by one rule: a number is a percentage (80 and \"80%\" "
        "are 0.8), except a number of at most 1 written with a decimal point (0.8 or \"1.0\"), which is read on the "
        "0-1 scale. The prompt asks for a whole-number percentage, as the paper does; replies that give none are "
        "counted as unparsable.",
    ),
    licence=(
        "SimpleQA's questions and answers are published by OpenAI under the MIT licence (openai/simple-evals)."),
    lite=LITE_SUBSET,
    full_suite_items=4326,
    full_suite_note=(
        "the official file (OpenAI's simple_qa_test_set.csv, the source's default): 4,326 questions, one item each"),
    hub_eval=HubEval(
        "OpenEvals/SimpleQA", "default", "correct", "percent",
        note=("its eval.yaml (https://huggingface.co/datasets/OpenEvals/SimpleQA/blob/main/eval.yaml) could not be "
              "read where this was written (no access to the Hub); the one proposed in that repo's discussion #2 "
              "has a single task on the dataset's `default` subset, test split, scored by a model-graded fact check "
              "(a correct share). The task id \"default\" (the Hub's single-task convention), the percent scale and "
              "the correct share are assumed from it; a deployer corrects them with LEADERBOARD_EVAL_DATASETS")),
)
