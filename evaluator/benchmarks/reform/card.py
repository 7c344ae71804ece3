"""ReForm-Eval's card: what it measures, its board columns, its data source and options, how a question is shown."""
from __future__ import annotations

from evaluator.benchmarks.reform import explore, measures, picture
from evaluator.benchmarks.reform.datasets import (ACCURACY_DIMENSIONS, DATASETS, DESCRIPTION, NOT_RUN,
                                                  dimension_counts)
from evaluator.benchmarks.reform.options import DEFAULT_REPEATS, FREE_MAX_NEW_TOKENS, MC_MAX_NEW_TOKENS, MODES
from evaluator.benchmarks.reform.counts import COUNTS
from evaluator.benchmarks.reform.suite import LITE_SUBSET
from evaluator.benchmarks.spec import (BOOL, FLOAT, INT, JSON, NUMBER, STRING, THOUGHT_COLUMNS, THOUGHT_UNCLOSED, Card,
                                       DetailColumn, ItemView, Metric, Option, Source)

# the dimensions' names on the board (datasets.DIMENSIONS has the paper's labels)
BOARD_DIMENSIONS = {
    "coarse_perception": "coarse perception", "fine_perception": "fine perception", "scene_text": "scene text",
    "visual_reasoning": "visual reasoning", "spatial": "spatial", "cross_modal_inference": "cross-modal inference",
    "description": "description", "multi_turn_dialogue": "multi-turn dialogue",
}
MODE_NAMES = {"gen": "generation", "lik": "likelihood"}


def over_datasets(dim: str) -> str:
    """Over how many datasets a dimension's mean is computed in the full suite ("k of the reference's n"), naming
    those not run."""
    run, listed = dimension_counts(dim)
    missing = [n.name for n in NOT_RUN if n.dimension == dim]
    left = f" (not run: {', '.join(missing)})" if missing else ""
    return f"in the full suite over {run} of the reference's {listed} datasets{left}; the sample suite has its own few"


def _not_run() -> str:
    """The datasets of the reference's 61 that do not run, grouped by why (or that all of them run)."""
    if not NOT_RUN:
        return f"All {len(DATASETS)} datasets of the reference README's list run."
    reasons: dict[str, list[str]] = {}
    for entry in NOT_RUN:
        reasons.setdefault(entry.why, []).append(entry.name)
    groups = "; ".join(f"{', '.join(names)}: {why}" for why, names in reasons.items())
    return f"{len(NOT_RUN)} of the reference README's 61 datasets are not run. {groups}."


def _dimension_metric(mode: str, dim: str, label: str) -> Metric:
    """One dimension's score in one mode: an accuracy, or for visual description a CIDEr (not a percentage)."""
    if dim == DESCRIPTION:
        return Metric(f"{mode}_{dim}", f"{mode} {label} CIDEr",
                      f"ReForm-Eval {label} ({MODE_NAMES[mode]} mode; captions are generated in both modes): the mean "
                      f"CIDEr of its caption datasets, {over_datasets(dim)}. Not a percentage, and not part of the "
                      "overall score.", kind=NUMBER, shown=False)
    how = (" Scene text is answered by generation in both modes, each dataset scored by the reference's rule for it "
           "(OCR word match; FUNSD: key-information match)." if dim == "scene_text" else "")
    return Metric(f"{mode}_{dim}", f"{mode} {label}",
                  f"ReForm-Eval {label} ({MODE_NAMES[mode]} mode): the mean of the dimension's dataset accuracies "
                  f"(each over every repeat), {over_datasets(dim)}.{how}", shown=False)


# every column of a details row (planning._row, filled by the executor and scoring), in order. The suite reads its
# images as it loads, so no row is ever marked image_unavailable and the rows have no status column.
DETAILS = (
    DetailColumn("benchmark", STRING, "The benchmark's name, \"reform\"."),
    DetailColumn("question_id", STRING, "The item's id: its question_id, or \"<dataset>/<question_id>\" where "
                 "datasets share an id; every row of one item shares it."),
    DetailColumn("dataset", STRING, "The item's dataset."),
    DetailColumn("dimension", STRING, "The item's capability dimension (coarse_perception, scene_text, ...)."),
    DetailColumn("form", STRING, "The item's form: \"multiple_choice\", \"caption\", \"ocr\" or \"kie\"."),
    DetailColumn("mode", STRING, "How it was asked: \"generation\" (a reply is generated) or \"likelihood\" (the "
                 "options are scored)."),
    DetailColumn("repeat", INT, "The repeat's number (each multiple-choice item is asked several times with other "
                 "templates and option orders); 0 for free-form items."),
    DetailColumn("question", STRING, "The item's question."),
    DetailColumn("prompt", STRING, "The prompt as the model received it (dialogue history and chat template "
                 "applied)."),
    DetailColumn("prediction", STRING, "Generation: the model's reply (a thinking model's answer alone); "
                 "likelihood: the text of the option it "
                 "chose."),
    *THOUGHT_COLUMNS,
    DetailColumn("parsed_answer", STRING, "Multiple choice: the chosen option's index among the options as shown, "
                 "as text (\"-1\": no usable mark); free-form: the reply."),
    DetailColumn("gold", STRING, "Multiple choice: the right option's index among the options as shown, as text; "
                 "free-form: the reference answers as a JSON list."),
    DetailColumn("correct", BOOL, "Whether the answer is right (free-form: its score is 1)."),
    DetailColumn("score", FLOAT, "1.0 or 0.0 for a multiple-choice or OCR / KIE answer; NaN for a caption (scored "
                 "per dataset by CIDEr)."),
    DetailColumn("extraction", STRING, "How the answer was read: \"mark\" (the first (X) mark), \"likelihood\" "
                 "(highest summed log-likelihood), \"likelihood_mean\" (highest mean per token), \"ocr\" or "
                 "\"kie\" (the dataset's word-match rule) or \"caption\"."),
    DetailColumn("options", JSON, "The options in the order shown to the model (empty list for free-form "
                 "items)."),
    DetailColumn("mark_style", STRING, "Generation: how the options were marked (\"upper\", \"lower\" or "
                 "\"number\"); else empty."),
    DetailColumn("template_id", INT, "The prompt template the repeat used (-1 for free-form items)."),
    DetailColumn("option_scores", JSON, "Likelihood: each shown option's log-likelihood, [{\"sum\", \"mean\", "
                 "\"n_tokens\"}] in the order shown (the likelihood and likelihood_mean rows of a repeat share one "
                 "scoring); else empty."),
    DetailColumn("image_ref", STRING, "Where the image is read again: \"<data file>#<n>\", the n-th item of the "
                 "data file as the suite reads it (the sample suite's file by its name; a full-suite file by its "
                 "hf:// reference at the revision used); the image itself, often base64 in the file, is not copied."),
)

# its paper's BibTeX entry (arXiv's record: title, authors, year), printed beside the leaderboard's in About
CITATION = "\n".join([
    '@misc{li2023reformeval,',
    '  title = {ReForm-Eval: '
    'Evaluating Large Vision Language Models via Unified Re-Formulation of Task-Oriented Benchmarks},',
    '  author = {Li, Zejun and Wang, Ye and Du, Mengfei and Liu, Qingwen and Wu, Binhao and '
    'Zhang, Jiwen and Zhou, Chengxing and Fan, Zhihao and Fu, Jie and Chen, Jingjing and '
    'Huang, Xuanjing and Wei, Zhongyu},',
    '  year = {2023},',
    '  eprint = {2310.02569},',
    '  archivePrefix = {arXiv},',
    '  url = {https://arxiv.org/abs/2310.02569}',
    '}',
])

def _full_suite_note() -> str:
    """Where the full suite's size comes from: the dataset table, how each of its counts was found."""
    bases = {basis: sum(1 for c in COUNTS if c.basis == basis) for basis in dict.fromkeys(c.basis for c in COUNTS)}
    found = ", ".join(f"{n} {basis}" for basis, n in bases.items())
    return (f"the sum of the dataset table (counts.py) over the {len(COUNTS)} datasets of datasets.py, each read from "
            f"its own file of the Hub dataset Aweminus/ReForm-Eval-Data: {found} (counted: from a released file, "
            "offline; published: the authors' own figure; derived: the source split's size times the sampling its "
            "file states; estimated: a reasoned guess). A full or lite run checks every dataset's items as read "
            "against the table (its results' suite_check) and says where they differ")


CARD = Card(
    name="reform",
    title="ReForm-Eval",
    short_title="ReForm",
    measures=("perception, reasoning, OCR and captioning over re-formulated vision-language datasets, and how "
              "stable the answers are"),
    summary=(
        "ReForm-Eval (arXiv 2310.02569): existing vision-language datasets re-formulated into multiple choice, OCR, "
        "key-information extraction and captioning, in 8 dimensions (coarse and fine perception, scene text, "
        "grounded reasoning, spatial, cross-modal inference, description, multi-turn dialogue). Multiple choice is "
        "asked 5 times per item with our own varied instructions, shuffled options and mark styles, both by "
        "generation (first (X) mark; format hit rate reported) and by option likelihood; instability is the entropy "
        "of the repeated answers. Each dimension is reported in each mode as the paper does (accuracies; visual "
        "description as CIDEr); the overall scores average the accuracy dimensions only. The full suite runs "
        f"{len(DATASETS)} of the reference's {len(DATASETS) + len(NOT_RUN)} datasets."),
    paper="https://arxiv.org/abs/2310.02569",
    citation=CITATION,
    metrics=(
        Metric("gen_overall", "gen overall",
               f"Generation (black-box) mean accuracy over the {len(ACCURACY_DIMENSIONS)} accuracy dimensions (all "
               "but visual description, whose CIDEr is reported on its own as gen description CIDEr); a dimension's "
               "accuracy is the mean over its datasets. Options listed as (A) x; (B) y; ... after a one-shot format "
               "example, the answer is the first (X) mark; 5 repeats per item with varied instruction, option order "
               "and mark style. Scene text: word match by the reference's rule for each dataset."),
        Metric("lik_overall", "lik overall",
               f"Likelihood (white-box) mean accuracy over the {len(ACCURACY_DIMENSIONS)} accuracy dimensions, as "
               "for generation: options not listed; each option text is scored as the reply (after the same one-shot "
               "example) and the highest summed log-likelihood is the choice; 5 repeats with varied instruction and "
               "option order. Scene text is answered by generation and enters this mean too."),
        Metric("instability", "instability",
               "Generation mode: mean over multiple-choice items of the entropy (natural log) of the 5 repeats' "
               "chosen option texts; 0 = always the same answer, ln 5 = 1.609 = a different answer every time. An "
               "output without a mark enters as its own text (so a reply that is an option's bare text counts as "
               "that option, as in the reference). Not a percentage.",
               kind=NUMBER, higher_is_better=False),
        Metric("format_hit_rate", "format hit rate",
               "Generation mode: share of multiple-choice outputs that contain an option mark such as (A), (a) or "
               "(1)."),
        *(_dimension_metric(mode, dim, label) for mode in ("gen", "lik") for dim, label in BOARD_DIMENSIONS.items()),
        Metric("lik_instability", "lik instability",
               "Likelihood mode: mean over multiple-choice items of the entropy (natural log) of the repeats' chosen "
               "option texts. Not a percentage.", kind=NUMBER, higher_is_better=False, shown=False),
        Metric("gen_mc_accuracy", "gen MC accuracy",
               "Generation mode: accuracy over every repeat of every multiple-choice item, all datasets pooled.",
               shown=False),
        Metric("lik_mc_accuracy", "lik MC accuracy",
               "Likelihood mode: accuracy over every repeat of every multiple-choice item, all datasets pooled.",
               shown=False),
        THOUGHT_UNCLOSED,
    ),
    default_metric="gen_overall",
    # the eight dimensions in each mode, drawn per run on the board (description is a CIDEr, not a percentage)
    dimensions=tuple(f"{mode}_{dim}" for mode in ("gen", "lik") for dim in BOARD_DIMENSIONS),
    needs_images=True,
    needs_judge=False,
    sources=(Source("reform", "LEADERBOARD_REFORM_DATASETS", "",
                    "the full suite's datasets: comma-separated names from the dataset table (empty: all "
                    f"{len(DATASETS)})"),),
    options=(
        Option("reform.mode", "both", "`both`, `generation` (options listed with marks; the first (X) mark in the "
               "reply) or `likelihood` (each option scored as the reply)"),
        Option("reform.repeats", str(DEFAULT_REPEATS), "times each multiple-choice item is asked, each with another "
               "instruction, option order and mark style"),
        Option("reform.marks", "random", "option mark style in generation: `random` (drawn per repeat), `upper` "
               "(A), `lower` (a) or `number` (1)"),
        Option("reform.seed", "0", "seed of the templates, option orders, mark styles and sampling: each sampled "
               "repeat draws from a seed of its own (this one, the question and the repeat), whatever its batch"),
        Option("reform.max_new_tokens", str(MC_MAX_NEW_TOKENS),
               "tokens the model may generate per multiple-choice answer"),
        Option("reform.free_max_new_tokens", str(FREE_MAX_NEW_TOKENS),
               "tokens the model may generate per OCR, key-information or caption answer"),
    ),
    likelihood_rule=(
        "The choice is the option whose tokens, scored as the reply, have the highest summed log-likelihood (the "
        "reference's rule, no length normalisation); the details keep every option's sum, mean and token count "
        "(option_scores) and, in the likelihood_mean rows, the choice by per-token mean (lik_mean_* in the results), "
        "so a reader can recompute either."),
    differences=(
        "The prompts are our own: instruction templates, the one-shot example (a text-only question answered "
        "\"(B)\", given in both modes as the reference gives its in-context sample), the question wording of "
        "datasets whose files carry none, how K-ViQuAE, A-OKVQRA and A-OKVQAR add their context, rationale or "
        "answer to the question (the reference appends it after a label and asks with per-dataset instructions), "
        "and the OCR, key-information and caption instructions; each model's own "
        "chat template replaces the reference's per-model conversation formats, so that any chat model runs "
        "unchanged.",
        "Each repeat's template, option order and mark style, and the TDIUC and COCO counting distractors, are "
        "drawn from seeds (reform.seed, the question id, the repeat); the reference draws options, marks and "
        "distractors unseeded and cycles its instructions by position. Seeded draws make a run repeatable.",
        "Multi-turn dialogue items carry the gold answers of earlier rounds as history; the reference's online mode "
        "puts the model's own earlier answers there. The gold history lets every round be asked, batched and "
        "resumed on its own.",
        "In the instability, an output without a usable mark enters as its own text, as in the reference (a bare "
        "option text counts as that option), but with surrounding whitespace dropped, where the reference enters "
        "the reply as its model interface returned it: our replies are raw decoded text, so \" yes\" and \"yes\" "
        "are one answer.",
        "Multiple-choice replies may run to 16 new tokens and free-form ones to 32 (reform.max_new_tokens, "
        "reform.free_max_new_tokens); the reference's model interfaces allow 30. The mark comes first, and shorter "
        "replies keep runs short.",
        "The reference scores each dataset on its own; the dimension means and the overall means over the "
        f"{len(ACCURACY_DIMENSIONS)} accuracy dimensions are ours, after the paper's per-dimension tables. Scene "
        "text, answered by generation, enters the likelihood mean as well, so both modes cover the same dimensions.",
        *((_not_run(),) if NOT_RUN else ()),
    ),
    item_view=ItemView(question="question", grade="correct", image="image_ref", group_by=explore.GROUP_BY,
                       key=explore.key, items=explore.items, parts=explore.parts, picture=picture.picture,
                       measure=measures.measure, cluster="question_id", cluster_unit="instance"),
    details=DETAILS,
    licence=(
        "ReForm-Eval's code is Apache-2.0 (FudanDISC/ReForm-Eval); its data repackages public datasets (VQA, OCR, "
        "captioning and others), each under its own licence: see the dataset table in the README and each source."),
    mode_option="reform.mode",
    modes=MODES,
    lite=LITE_SUBSET,
    full_suite_items=sum(c.items for c in COUNTS),
    full_suite_note=_full_suite_note(),
)
