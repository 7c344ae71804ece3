"""LAVE's card: what it measures, its board columns, its data sources and options, how a question is shown, its
board section and its playground grader."""
from __future__ import annotations

from evaluator.benchmarks.item_tables import by_question
from evaluator.benchmarks.lave import explore, measures
from evaluator.benchmarks.lave.data import DOCMATIX, LITE_SUBSET
from evaluator.benchmarks.lave.grader import GRADER
from evaluator.benchmarks.lave.scoring import STRING_METRICS
from evaluator.benchmarks.lave.views import lave_agreement_frame
from evaluator.benchmarks.spec import (BOOL, COUNT, FLOAT, JSON, NUMBER, STRING, THOUGHT_COLUMNS, THOUGHT_UNCLOSED,
                                       Card, DetailColumn, ItemView, Metric, Option, Section, Source)

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
    DetailColumn("prediction", STRING, "The model's reply (a thinking model's answer alone)."),
    *THOUGHT_COLUMNS,
    DetailColumn("parsed_answer", STRING, "The scored answer: the reply's first non-empty line, whitespace "
                 "collapsed."),
    DetailColumn("gold", JSON, "The reference answers, a JSON list."),
    DetailColumn("rating", FLOAT, "The judge's LAVE rating, 1 (incorrect), 2 (ambiguous or incomplete) or 3 "
                 "(correct); NaN when unrated."),
    DetailColumn("lave", FLOAT, "The LAVE score, (rating - 1) / 2; NaN when unrated."),
    DetailColumn("rating_fallback", BOOL, "Whether the judge's reply had no rating and 2 was taken (the paper's "
                 "rule)."),
    DetailColumn("no_rationale", BOOL, "Whether the judge's reply was a bare rating with no rationale (\"3\"), "
                 "counted as that rating, as the reference reads the last token."),
    DetailColumn("correct", BOOL, "Whether the judge rated the answer 3 (correct)."),
    DetailColumn("score", FLOAT, "The item's score, the same as lave; NaN when unrated."),
    DetailColumn("vqa_accuracy", FLOAT, "Official VQA accuracy of the answer against the references; NaN when "
                 "unanswered or when the question has fewer than 10 reference answers."),
    DetailColumn("anls", FLOAT, "ANLS of the answer against the references; NaN when unanswered."),
    DetailColumn("exact_match", FLOAT, "1.0 when the answer matches a reference exactly after the VQA answer "
                 "normalisation, else 0.0; NaN when unanswered."),
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


# its paper's BibTeX entry (arXiv's record: title, authors, year), printed beside the leaderboard's in About
CITATION = """@misc{manas2023improving,
  title = {Improving Automatic VQA Evaluation Using Large Language Models},
  author = {Ma{\\~n}as, Oscar and Krojer, Benno and Agrawal, Aishwarya},
  year = {2023},
  eprint = {2310.02567},
  archivePrefix = {arXiv},
  url = {https://arxiv.org/abs/2310.02567}
}"""

CARD = Card(
    name="lave",
    title="LAVE",
    short_title="LAVE",
    measures="free-form visual question answering, rated by an LLM judge against reference answers",
    summary=(
        "LLM-assisted VQA evaluation (arXiv 2310.02567): the model answers questions about images freely; an LLM "
        "judge rates each answer 1-3 against the reference answers, with a rationale first, from our own "
        "task text and the reference's demonstrations with our own rationales (yes/no questions get yes/no "
        "demonstrations; rare reference answers are filtered out). The same answers are scored by VQA accuracy "
        "(questions with 10 answers), ANLS, exact match, BLEU-4 and CIDEr, and the "
        "results say how often each strict metric agrees with LAVE: on the Docmatix zero-shot study, strict metrics "
        "scored near zero where LAVE gave 0.58."),
    paper="https://arxiv.org/abs/2310.02567",
    citation=CITATION,
    metrics=(
        Metric("lave", "score", "LLM-assisted VQA score: the judge rates each free-form answer 1 (incorrect), 2 "
               "(ambiguous or incomplete) or 3 (correct) against the reference answers; mean of (rating - 1) / 2. A "
               "reply without a rating counts as 2 (the paper's rule) and is flagged in the details, as is a bare "
               "rating with no rationale (counted as it reads).", judged=True),
        Metric("vqa_accuracy", STRING_METRICS["vqa_accuracy"], "Official VQA accuracy of the same answers: min(1, "
               "matching annotators / 3) averaged over the 10 leave-one-out subsets, after the official answer "
               "normalisation; over the questions with 10 reference answers only (n/a where none has: Docmatix has "
               "one, and its strict score is exact match (VQA-normalised))."),
        Metric("anls", STRING_METRICS["anls"], "Average normalised Levenshtein similarity to the closest reference (0 "
               "below similarity 0.5)."),
        Metric("exact_match", STRING_METRICS["exact_match"], "Share of answers equal to a reference after the VQA "
               "answer normalisation (for a question with one reference answer, what VQA accuracy would reduce to)."),
        Metric("bleu4", STRING_METRICS["bleu4"], "Corpus BLEU-4 of the answers against the references "
               "(pycocoevalcap, raw strings)."),
        Metric("cider", STRING_METRICS["cider"], "Corpus CIDEr of the answers against the references (pycocoevalcap, "
               "raw strings). Not a percentage; comparable only over the same item set.", kind=NUMBER),
        Metric("unrated", "unrated", "Answers the judge could not rate (its call failed after the retries, or it never "
               "gave a judgement: an empty reply, an error page or message, a refusal, neither a rating nor a word): "
               "counted here and left out of LAVE, never scored as wrong.", kind=COUNT, higher_is_better=False,
               path=("counts", "unrated"), judged=True),
        Metric("rating_fallback", "fallback ratings (no rating in the reply)", "Rated answers "
               "whose judge reply held no rating, so the paper's fallback 2 was taken: counted in LAVE as the paper "
               "says, and noted beside the run, since a judge that never rates gives every answer 2 (LAVE 50).",
               kind=COUNT, higher_is_better=False, path=("counts", "rating_fallback"), judged=True),
        *(_agreement(metric, label) for metric, label in STRING_METRICS.items()),
        THOUGHT_UNCLOSED,
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
        "The demonstrations are the reference's (mair-lab/lave, 16 general and 8 yes/no: the same questions, "
        "reference answers, candidate answers and ratings, in its order), but each rationale is written in our own "
        "words. Reason: the explanation sentences are the reference authors' text; ours give the same reason for "
        "the same rating. Their captions are kept in our files and not shown, as in the reference's default.",
        "The task description is our own wording of the reference's: the same 1-3 scale and meanings, rationale "
        "before rating, a yes/no question answered otherwise is rated 1, and nothing added (no instruction to be "
        "lenient or strict about wording); the blocks after it (Question, Reference answers, Candidate answer, "
        "Output ... So rating=r) are laid out as the reference lays them out. Reason: the prompt text is this "
        "project's own.",
        "The rating is read where the format puts it: the last labelled rating (\"So rating=3\", \"Rating: 2\"), "
        "else the reply's final character. The reference reads only the last token of its fine-tuned rater. Reason "
        "(kept on purpose): a chat judge often adds a sentence or a full stop after \"So rating=3\", which the "
        "reference's rule would turn into its fallback 2. A digit elsewhere in the reply (\"3 of the references "
        "agree\") is never a rating. A bare rating (\"3\") counts as the reference reads it, flagged no_rationale.",
        "A reply with no rating still counts as 2 (the paper's rule) but is flagged in the details; a reply that is "
        "not a judgement at all (an error message, an empty reply, a refusal, neither a rating nor a word) or a "
        "failed call is asked again, then counted as unrated and left out of LAVE, where the reference would score "
        "2. Reason: the fallback is the paper's, an outage is not.",
        "The judge is the deployer's choice (named in every results file), not the reference code's Flan-T5-XXL; "
        "the scores of two judges are not comparable, and the board flags them. It is asked at temperature 0 "
        "(greedy, as the reference generates) with up to 512 new tokens unless lave.judge_max_tokens says "
        "otherwise, where the reference allows 100. Reason: a chat judge's rationale runs longer, and a reply cut "
        "off before its rating would fall back to 2.",
        "VQA accuracy is the official formula (10 leave-one-out subsets) and is reported only over questions with "
        "10 reference answers: it is n/a on Docmatix (one answer per question), whose strict score is exact match "
        "(VQA-normalised). Reason: with fewer answers the formula is not the official one (with one answer it is "
        "exact match), and a column named VQA accuracy should hold VQA accuracy.",
        "The full suite is the Docmatix zero-shot test split (and optionally a VQA v2-style file), the study the "
        "card summary cites, not the paper's VQAv2 / VG-QA / OK-VQA human-judgement sets, whose human ratings are "
        "not used here.",
    ),
    item_view=ItemView(question="question", grade="rating", rationale="judge_rationale", image="image_ref",
                       group_by=explore.GROUP_BY, key=by_question, items=explore.items, parts=explore.parts,
                       picture=explore.picture, measure=measures.measure),
    sections=(
        Section(key="lave_agreement", title="LAVE against strict metrics",
                description="The same free-form answers scored by the LLM judge (LAVE) and by the strict string "
                            "metrics. *Agrees with LAVE* is the share of answers on which the metric and the judge "
                            "agree (correct or not); where they disagree, usually a correct answer phrased "
                            "differently from the references scored 0 by the strict metric. VQA accuracy covers "
                            "only the questions with 10 reference answers (n/a on Docmatix, which has one). Every "
                            "answer, rating and rationale is in the run's details.",
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
    lite=LITE_SUBSET,
    full_suite_items=200,
    full_suite_note=(
        "the Docmatix zero-shot test split (HuggingFaceM4/Docmatix, config zero-shot-exp: 200 rows in its dataset "
        "card's split sizes), one item each; a VQA v2-style file added through LEADERBOARD_LAVE_VQA adds its own"),
)
