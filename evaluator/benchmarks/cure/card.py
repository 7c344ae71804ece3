"""CURE's card: what it measures, its board columns, its data source and options, how a question is shown."""
from __future__ import annotations

from evaluator.benchmarks.cure import explore, measures
from evaluator.benchmarks.cure.data import LITE_SUBSET, OFFICIAL_URL
from evaluator.benchmarks.cure.images import SETTING as IMAGES_SETTING, SOURCE as IMAGES_SOURCE
from evaluator.benchmarks.cure.planning import MODES
from evaluator.benchmarks.item_tables import by_question
from evaluator.benchmarks.spec import (BOOL, FLOAT, INT, JSON, RATIO, STRING, THOUGHT_COLUMNS, THOUGHT_UNCLOSED, Card,
                                       DetailColumn, ItemView, Metric, Option, Source)

# every column of a details row (planning._row, filled by the executor and scoring), in order
DETAILS = (
    DetailColumn("benchmark", STRING, "The benchmark's name, \"cure\"."),
    DetailColumn("question_id", STRING, "The instance's id; the high-level question and every step of its chain "
                 "share it."),
    DetailColumn("part", STRING, "Which question of the instance: \"high\" (the high-level inference) or "
                 "\"step1\", \"step2\", ... (the chain's sub-questions, in order)."),
    DetailColumn("repeat", INT, "Always 0: each question is asked once."),
    DetailColumn("question", STRING, "The question's text (for the high-level inference, our fixed question about "
                 "the marked region)."),
    DetailColumn("prompt", STRING, "The prompt as the model received it, its chat template applied."),
    DetailColumn("prediction", STRING, "Generation mode: the model's reply (a thinking model's answer alone); "
                 "likelihood mode: the text of the "
                 "candidate it chose (empty when the image was unavailable)."),
    *THOUGHT_COLUMNS,
    DetailColumn("parsed_answer", INT, "The chosen candidate's index, 0-5 for A-F (-1: no letter in the reply, or "
                 "no answer)."),
    DetailColumn("gold", INT, "The right candidate's index, 0-5."),
    DetailColumn("correct", BOOL, "Whether the chosen candidate is the right one."),
    DetailColumn("score", FLOAT, "1.0 when correct, else 0.0; NaN when the image was unavailable."),
    DetailColumn("extraction", STRING, "How the answer was read: \"likelihood\" (highest mean log-likelihood per "
                 "token) or \"letter\" (the first (X) mark or standalone letter of the reply)."),
    DetailColumn("option_scores", JSON, "Likelihood mode: each candidate's log-likelihood as the reply, "
                 "[{\"sum\", \"mean\", \"n_tokens\"}] in candidate order (empty in generation mode or unanswered)."),
    DetailColumn("choice_sum", INT, "Likelihood mode: the index of the candidate with the highest summed "
                 "log-likelihood (-1 in generation mode or unanswered)."),
    DetailColumn("status", STRING, "\"ok\", or \"image_unavailable\" when the image could not be read (the "
                 "instance is left out of every score)."),
    DetailColumn("error", STRING, "Why the image could not be read (empty when status is ok)."),
    DetailColumn("chain_length", INT, "How many sub-questions the instance's chain has (2-4)."),
    DetailColumn("options", JSON, "The six candidate texts, in the order A-F."),
    DetailColumn("image_url", STRING, "The image's URL as the data gives it."),
    DetailColumn("image_file", STRING, "The image's path in the Visual Genome / VCR releases when it was read from "
                 "them (LEADERBOARD_CURE_IMAGES), else empty."),
    DetailColumn("region", JSON, "The marked region (the first bbox) and the image size in the data: "
                 "{\"left\", \"top\", \"width\", \"height\", \"image_width\", \"image_height\"}."),
)

# its paper's BibTeX entry (arXiv's record: title, authors, year), printed beside the leaderboard's in About
CITATION = """@misc{chen2023measuring,
  title = {Measuring and Improving Chain-of-Thought Reasoning in Vision-Language Models},
  author = {Chen, Yangyi and Sikka, Karan and Cogswell, Michael and Ji, Heng and Divakaran, Ajay},
  year = {2023},
  eprint = {2309.04461},
  archivePrefix = {arXiv},
  url = {https://arxiv.org/abs/2309.04461}
}"""

CARD = Card(
    name="cure",
    title="CURE",
    short_title="CURE",
    measures="chain-of-thought visual reasoning about a marked image region, and its consistency",
    summary=(
        "Chain-of-thought visual reasoning and its consistency: each item has a high-level inference about a marked "
        "image region and a chain of 2-4 sub-questions leading to it, all 6-way multiple choice. How it runs here: "
        "the region is drawn on the full image as a thick red rectangle (not cropped, so the context stays "
        "visible); each question is answered by option likelihood, choosing the candidate with the highest mean "
        "log-likelihood per token (the choice by summed log-likelihood is kept in the details); a text-only model "
        "skips CURE; an image that cannot be fetched is counted and reported per item and left out of the scores."),
    paper="https://arxiv.org/abs/2309.04461",
    citation=CITATION,
    metrics=(
        Metric("Ro", "Ro", "Overall reasoning: share of items where the high-level inference AND every step of the "
               "chain are answered correctly (mean of h and s). The default ranking."),
        Metric("Rh", "Rh", "High-level reasoning: share of items whose high-level inference is answered correctly."),
        Metric("Rcot", "Rcot", "Chain-of-thought reasoning: share of items whose whole chain is answered correctly "
               "(all-or-nothing per item, not the per-step accuracy)."),
        Metric("Cf", "Cf", "Forward consistency, Ro / Rcot: P(high-level correct | whole chain correct). n/a when "
               "Rcot is 0.", kind=RATIO),
        Metric("Cb", "Cb", "Backward consistency, Ro / Rh: P(whole chain correct | high-level correct). n/a when Rh "
               "is 0.", kind=RATIO),
        Metric("step_accuracy", "step accuracy", "Mean per-step accuracy over all sub-questions of all chains."),
        THOUGHT_UNCLOSED,
    ),
    default_metric="Ro",
    dimensions=("Rh", "Rcot", "Ro", "Cf", "Cb"),  # the paper's five metrics, drawn per run on the board
    needs_images=True,
    needs_judge=False,
    sources=(
        Source("cure", "LEADERBOARD_CURE_FULL", OFFICIAL_URL,
               "the full CURE suite: a URL, a local path or `hf://datasets/<org>/<name>/<file>`"),
        Source(IMAGES_SOURCE, IMAGES_SETTING, "",
               "the full suite's images from the Visual Genome and VCR releases: a local folder or "
               "`hf://datasets/<org>/<name>` holding `VG_100K/`, `VG_100K_2/` and `vcr1images/<movie>/` as released "
               "(empty: each image is downloaded from its URL in the data)"),
    ),
    options=(
        Option("cure.mode", "likelihood", "`likelihood` (each candidate scored as the reply; the highest mean "
               "log-likelihood per token wins) or `generation` (candidates listed as (A)-(F); the first letter in "
               "the reply)"),
        Option("cure.max_new_tokens", "16", "tokens the model may generate per answer in generation mode"),
    ),
    likelihood_rule=(
        "The choice is the candidate whose tokens, scored as the reply, have the highest mean log-likelihood per "
        "token (the six candidates are sentences of different lengths, and a sum favours the shortest); the details "
        "keep the choice by summed log-likelihood (choice_sum) and every candidate's sum, mean and token count "
        "(option_scores), and the results give every score under the sum rule too (scores_sum_rule), so a reader "
        "can recompute either."),
    differences=(
        "The CURE release is data only, with no evaluation code and no question wording: the high-level prompt "
        "(which inference about the marked region is most likely), the sub-question prompts and the answer "
        "instructions are our own, framed by each model's own chat template, so that any chat model runs unchanged.",
        "The region (the first bbox, as the release's README says the paper keeps) is drawn as a thick red "
        "rectangle just outside the box on the full image, scaled when the image's size differs from the size in "
        "the data, and the prompts say so; it is not cropped, because the inferences are about the region in its "
        "context, which a crop would cut away.",
        "In likelihood mode (the default) the candidate with the highest mean log-likelihood per token wins, not "
        "the highest sum, because the candidates differ in length; the choice by sum is kept beside it.",
        "Generation mode (cure.mode=generation) is ours as well: it lists the candidates as (A)-(F) and reads the "
        "first mark or standalone letter in a reply of at most 16 new tokens (cure.max_new_tokens); a reply "
        "without one counts as wrong and is counted as unparsed.",
        "Each question is asked on its own, without the earlier steps or their answers in the prompt, so that the "
        "high-level answer and the chain are measured independently, as Cf and Cb compare them.",
        "Images are read from the Visual Genome and VCR releases when LEADERBOARD_CURE_IMAGES names a folder "
        "holding them, as the Sherlock data asks, else downloaded from the URLs in the data. An instance whose "
        "image cannot be read is left out of every score and counted (image_unavailable), and the run goes on; "
        "the coverage shows how many were scored, and the board flags a run under the coverage threshold.",
        "Cf and Cb are undefined (n/a) when their denominator is 0, a case the paper's ratios leave open.",
        "Mean per-step accuracy and the scores by chain length are shown besides the paper's five metrics.",
        "A text-only model skips CURE rather than answering without the image.",
    ),
    item_view=ItemView(question="question", grade="correct", image="image_url", group_by=explore.GROUP_BY,
                       key=by_question, items=explore.items, parts=explore.parts, picture=explore.picture,
                       measure=measures.measure, cluster_unit="instance"),
    details=DETAILS,
    licence=(
        "The CURE release (github.com/Yangyi-Chen/CoTConsistency) states no licence; its regions, clues and "
        "inferences come from Sherlock, whose data is CC BY 4.0 (allenai/sherlock). The images are Visual Genome's "
        "and VCR's, under their own terms (VCR asks users to accept its terms of use before downloading); the "
        "details quote image URLs, not images."),
    mode_option="cure.mode",
    modes=MODES,
    lite=LITE_SUBSET,
    full_suite_items=1622,
    full_suite_note=(
        "the official data file (Yangyi-Chen/CoTConsistency, cot_consistency_eval.jsonl, the source's default): a JSON "
        "array of 1,622 instances, one item each"),
)
