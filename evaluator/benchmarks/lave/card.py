"""LAVE's card: what it measures, its board columns, its data sources and options, how a question is shown, its
board section and its playground grader."""
from __future__ import annotations

from evaluator.benchmarks.item_tables import by_question
from evaluator.benchmarks.lave import explore
from evaluator.benchmarks.lave.data import DOCMATIX
from evaluator.benchmarks.lave.grader import GRADER
from evaluator.benchmarks.lave.scoring import STRING_METRICS
from evaluator.benchmarks.lave.views import lave_agreement_frame
from evaluator.benchmarks.spec import (BOOL, COUNT, FLOAT, JSON, NUMBER, STRING, Card, DetailColumn, ItemView, Metric,
                                       Option, Section, Source)

# every column of a details row (planning.DETAIL_COLUMNS, filled by the executor and scoring), in order
DETAILS = (
    DetailColumn("benchmark", STRING, "The benchmark's name, \"lave\"."),
    DetailColumn("question_id", STRING, "The item's id."),
    DetailColumn("source", STRING, "Where the item comes from: \"docmatix\", or the VQA-style file's label "
                 "(\"sample\", \"vqa\")."),
    DetailColumn("kind", STRING, "The item's kind of question as the data labels it (\"document\" for Docmatix; may "
                 "be empty)."),
    DetailColumn("style", STRING, "The item's answer style as the data gives it (\"vqa\", or \"doc\" for "
                 "Docmatix)."),
    DetailColumn("status", STRING, "\"ok\", or \"image_unavailable\" when the image could not be read (the item "
                 "is left out of every score)."),
    DetailColumn("error", STRING, "Why the image could not be read (empty when status is ok)."),
    DetailColumn("question", STRING, "The item's question."),
    DetailColumn("prompt", STRING, "The prompt as the model received it, its chat template applied."),
    DetailColumn("prediction", STRING, "The model's raw reply."),
    DetailColumn("parsed_answer", STRING, "The scored answer: the reply's first non-empty line, whitespace "
                 "collapsed."),
    DetailColumn("gold", JSON, "The reference answers, a JSON list."),
    DetailColumn("rating", FLOAT, "The judge's LAVE rating, 1 (incorrect), 2 (ambiguous or incomplete) or 3 "
                 "(correct); NaN when unrated."),
    DetailColumn("lave", FLOAT, "The LAVE score, (rating - 1) / 2; NaN when unrated."),
    DetailColumn("rating_fallback", BOOL, "Whether the judge's reply had no rating and 2 was taken (the paper's "
                 "rule)."),
    DetailColumn("correct", BOOL, "Whether the judge rated the answer 3 (correct)."),
    DetailColumn("score", FLOAT, "The item's score, the same as lave; NaN when unrated."),
    DetailColumn("vqa_accuracy", FLOAT, "VQA accuracy of the answer against the references; NaN when unanswered."),
    DetailColumn("anls", FLOAT, "ANLS of the answer against the references; NaN when unanswered."),
    DetailColumn("exact_match", FLOAT, "1.0 when the answer matches a reference exactly (after normalisation), else "
                 "0.0; NaN when unanswered."),
    DetailColumn("bleu4", FLOAT, "The answer's sentence BLEU-4 against the references; NaN when unanswered."),
    DetailColumn("cider", FLOAT, "The answer's CIDEr against the references (over the run's answered items); NaN "
                 "when unanswered."),
    DetailColumn("judge_prompt", STRING, "The LAVE prompt the judge got (empty when unanswered)."),
    DetailColumn("judge_rationale", STRING, "The judge's reasoning, its reply without the rating."),
    DetailColumn("judge_raw", STRING, "The judge's raw reply."),
    DetailColumn("judge_error", STRING, "Why the answer is unrated (a failed call, or a reply that never judged); "
                 "empty when rated."),
    DetailColumn("extraction", STRING, "How the answer is scored: \"judge\"; empty when the image was "
                 "unavailable."),
    DetailColumn("image_ref", STRING, "The image as the data names it (a path, URL or hf:// reference)."),
)


def _agreement(metric: str, label: str) -> Metric:
    """How often LAVE and one strict metric agree on correct vs not (off the board by default)."""
    return Metric(f"agree_{metric}", f"agrees with {label}",
                  f"Share of answered items where LAVE and {label} agree on correct vs not (LAVE correct = rating 3; "
                  f"{label} correct at or above its threshold in the results file). The rest is what one of them "
                  "misses; the Spearman correlation of the per-item scores is in the results file.",
                  path=("extra", "agreement", metric, "agreement"), shown=False, judged=True)


CARD = Card(
    name="lave",
    title="LAVE",
    short_title="LAVE",
    summary=(
        "LLM-assisted VQA evaluation (arXiv 2310.02567): the model answers questions about images freely; an LLM "
        "judge rates each answer 1-3 against the reference answers, with a rationale first, from our own "
        "task text and demonstrations (yes/no questions get yes/no demonstrations; rare reference answers are "
        "filtered out). The same answers are scored by VQA accuracy, ANLS, exact match, BLEU-4 and CIDEr, and the "
        "results say how often each strict metric agrees with LAVE: on the Docmatix zero-shot study, strict metrics "
        "scored near zero where LAVE gave 0.58."),
    paper="https://arxiv.org/abs/2310.02567",
    metrics=(
        Metric("lave", "score", "LLM-assisted VQA score: the judge rates each free-form answer 1 (incorrect), 2 "
               "(ambiguous or incomplete) or 3 (correct) against the reference answers; mean of (rating - 1) / 2. A "
               "reply without a rating counts as 2 (the paper's rule) and is flagged in the details.", judged=True),
        Metric("vqa_accuracy", "VQA accuracy", "Official VQA accuracy of the same answers: min(1, matching "
               "annotators / 3) averaged over the 10 leave-one-out subsets, after the official answer "
               "normalisation."),
        Metric("anls", "ANLS", "Average normalised Levenshtein similarity to the closest reference (0 below "
               "similarity 0.5)."),
        Metric("exact_match", "exact match", "Share of answers equal to a reference after the VQA answer "
               "normalisation."),
        Metric("bleu4", "BLEU-4", "Corpus BLEU-4 of the answers against the references (pycocoevalcap, raw "
               "strings)."),
        Metric("cider", "CIDEr", "Corpus CIDEr of the answers against the references (pycocoevalcap, raw strings). "
               "Not a percentage; comparable only over the same item set.", kind=NUMBER),
        Metric("unrated", "unrated", "Answers the judge could not rate (its call failed after the retries, or it never "
               "gave a judgement: an empty reply, an error page or message, a refusal, no rationale): counted here "
               "and left out of LAVE, never scored as wrong.", kind=COUNT, higher_is_better=False,
               path=("counts", "unrated"), judged=True),
        *(_agreement(metric, label) for metric, label in STRING_METRICS.items()),
    ),
    default_metric="lave",
    needs_images=True,
    needs_judge=True,
    sources=(
        Source("lave", "LEADERBOARD_LAVE_VQA", "",
               "a VQA v2-style file added to the full LAVE suite (beside Docmatix): JSON or JSON lines of "
               "question_id, image, question, answers; a URL, a local path or `hf://datasets/...`"),
        Source("lave.docmatix", "LEADERBOARD_LAVE_DOCMATIX", DOCMATIX,
               "where the full suite reads the Docmatix zero-shot test split: an hf:// reference or a local parquet "
               "file"),
    ),
    options=(
        Option("lave.max_new_tokens", "32", "tokens the model may generate per answer (the answer is the first "
               "non-empty line of its reply)"),
        Option("lave.shots", "8", "demonstrations in each judge prompt (the yes/no ones for a yes/no question)"),
        Option("lave.judge_max_tokens", "", "tokens the judge may generate per rating (empty: the judge's "
               "default)"),
        Option("lave.docmatix", "on", "`on` or `off`: whether the full suite includes the Docmatix zero-shot test "
               "split"),
    ),
    differences=(
        "The task text and the demonstrations are written for this leaderboard; they say what the reference's say "
        "(the 1-3 scale and its meaning, rationale before rating, a yes/no question answered otherwise is rated "
        "1) and add nothing to them: no instruction to be lenient or strict about wording.",
        "The rating is read where the format puts it: the last labelled rating (\"So rating=3\", \"Rating: 2\"), "
        "else the reply's final character. The reference reads only the last token of its fine-tuned rater. Reason: "
        "a chat judge often adds a sentence or a full stop after \"So rating=3\", which the reference's rule would "
        "turn into its fallback 2. A digit elsewhere in the reply (\"3 of the references agree\") is never a "
        "rating.",
        "A reply with no rating still counts as 2 (the paper's rule) but is flagged in the details; a reply that is "
        "not a judgement at all (an error message, an empty reply, a refusal) or a failed call is counted as "
        "unrated and left out of LAVE, never scored. Reason: the fallback is the paper's, an outage is not.",
        "The judge is the deployer's choice (named in every results file), not the paper's rater; the scores of "
        "two judges are not comparable, and the board flags them.",
        "The full suite is the Docmatix zero-shot test split (and optionally a VQA v2-style file), the study the "
        "card summary cites, not the paper's VQAv2 / VG-QA / OK-VQA human-judgement sets, whose human ratings are "
        "not used here.",
    ),
    item_view=ItemView(question="question", grade="rating", rationale="judge_rationale", image="image_ref",
                       group_by=explore.GROUP_BY, key=by_question, items=explore.items, parts=explore.parts,
                       picture=explore.picture),
    sections=(
        Section(key="lave_agreement", title="LAVE against strict metrics",
                description="The same free-form answers scored by the LLM judge (LAVE) and by the strict string "
                            "metrics. *Agrees with LAVE* is the share of answers on which the metric and the judge "
                            "agree (correct or not); where they disagree, usually a correct answer phrased "
                            "differently from the references scored 0 by the strict metric. Every answer, rating "
                            "and rationale is in the run's details.",
                kind="table", needs="lave", render=lave_agreement_frame,
                empty="No finished run has LAVE yet: this table compares the judge with the strict metrics for "
                      "each run of LAVE (text-only models skip LAVE)."),
    ),
    grader=GRADER,
    details=DETAILS,
    licence=(
        "The full suite's questions come from the Docmatix zero-shot test split (HuggingFaceM4/Docmatix, MIT on its "
        "Hub page); a file added through LEADERBOARD_LAVE_VQA keeps its own terms. The sample suite is this "
        "project's own."),
)
