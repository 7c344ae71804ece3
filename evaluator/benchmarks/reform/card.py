"""ReForm-Eval's card: what it measures, its board columns, its data source and options, how a question is shown."""
from __future__ import annotations

from evaluator.benchmarks.reform import explore
from evaluator.benchmarks.reform.options import DEFAULT_REPEATS, FREE_MAX_NEW_TOKENS, MC_MAX_NEW_TOKENS
from evaluator.benchmarks.spec import NUMBER, Card, ItemView, Metric, Option, Source

# the dimensions' names on the board (datasets.DIMENSIONS has the paper's labels)
BOARD_DIMENSIONS = {
    "coarse_perception": "coarse perception", "fine_perception": "fine perception", "scene_text": "scene text",
    "visual_reasoning": "visual reasoning", "spatial": "spatial", "cross_modal_inference": "cross-modal inference",
    "description": "description", "multi_turn_dialogue": "multi-turn dialogue",
}
MODE_NAMES = {"gen": "generation", "lik": "likelihood"}


def _dimension_metric(mode: str, dim: str, label: str) -> Metric:
    return Metric(f"{mode}_{dim}", f"{mode} {label}",
                  f"ReForm-Eval {label} ({MODE_NAMES[mode]} mode): the mean of the dimension's dataset scores "
                  "(accuracy over the repeats; captioning: CIDEr).", shown=False)


CARD = Card(
    name="reform",
    title="ReForm-Eval",
    short_title="ReForm",
    summary=(
        "ReForm-Eval (arXiv 2310.02569): existing vision-language datasets re-formulated into multiple choice, OCR, "
        "key-information extraction and captioning, in 8 dimensions (coarse and fine perception, scene text, "
        "grounded reasoning, spatial, cross-modal inference, description, multi-turn dialogue). Multiple choice is "
        "asked 5 times per item with our own varied instructions, shuffled options and mark styles, both by "
        "generation (first (X) mark; format hit rate reported) and by option likelihood; instability is the entropy "
        "of the repeated answers. Per-dimension scores are in the results files."),
    paper="https://arxiv.org/abs/2310.02569",
    metrics=(
        Metric("gen_overall", "gen overall",
               "Generation (black-box) score: options listed as (A) x; (B) y; ... after a one-shot format example, "
               "the answer is the first (X) mark; 5 repeats per item with varied instruction, option order and mark "
               "style. Mean over the 8 dimensions of the mean over their datasets (accuracy; captioning: CIDEr; "
               "OCR / key-information extraction: word accuracy)."),
        Metric("lik_overall", "lik overall",
               "Likelihood (white-box) score: options not listed; each option text is scored as the reply and the "
               "highest summed log-likelihood is the choice; 5 repeats with varied instruction and option order. "
               "Averaged over dimensions as for generation (the free-form dimensions are answered by generation)."),
        Metric("instability", "instability",
               "Generation mode: mean over multiple-choice items of the entropy (natural log) of the 5 repeats' "
               "chosen option texts; 0 = always the same answer, ln 5 = 1.609 = a different answer every time. An "
               "output without a mark counts as its own answer. Not a percentage.",
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
    ),
    default_metric="gen_overall",
    needs_images=True,
    needs_judge=False,
    sources=(Source("reform", "LEADERBOARD_REFORM_DATASETS", "",
                    "the full suite's datasets: comma-separated names from the dataset table (empty: all 54)"),),
    options=(
        Option("reform.mode", "both", "`both`, `generation` (options listed with marks; the first (X) mark in the "
               "reply) or `likelihood` (each option scored as the reply)"),
        Option("reform.repeats", str(DEFAULT_REPEATS), "times each multiple-choice item is asked, each with another "
               "instruction, option order and mark style"),
        Option("reform.marks", "random", "option mark style in generation: `random` (drawn per repeat), `upper` "
               "(A), `lower` (a) or `number` (1)"),
        Option("reform.seed", "0", "seed of the templates, option orders, mark styles and sampling"),
        Option("reform.max_new_tokens", str(MC_MAX_NEW_TOKENS),
               "tokens the model may generate per multiple-choice answer"),
        Option("reform.free_max_new_tokens", str(FREE_MAX_NEW_TOKENS),
               "tokens the model may generate per OCR, key-information or caption answer"),
    ),
    item_view=ItemView(question="question", grade="correct", group_by=explore.GROUP_BY, key=explore.key,
                       items=explore.items, parts=explore.parts),
)
