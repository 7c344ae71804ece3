"""Pure metric functions (no model calls). Scores are fractions in 0..1; NaN where undefined.

Imports nothing of the evaluator outside this room.
"""
from evaluator.metrics.cure import CURE_KEYS, cure_by_chain_length, cure_scores, cure_step_accuracy  # noqa: F401
from evaluator.metrics.simpleqa import (  # noqa: F401
    expected_calibration_error,
    frequency_points,
    reliability_points,
    simpleqa_breakdown,
    simpleqa_scores,
)
from evaluator.metrics.captions import caption_item_scores, caption_scores  # noqa: F401
from evaluator.metrics.reform import (  # noqa: F401
    answer_entropy,
    choice_text,
    extract_option,
    find_option_mark,
    format_hit,
    format_hit_rate,
    instability,
    kie_accuracy,
    ocr_word_accuracy,
    reform_accuracy,
    score_choice,
)
from evaluator.metrics.lave import lave_agreement, lave_score  # noqa: F401
from evaluator.metrics.vqa import anls, exact_match, vqa_accuracy  # noqa: F401
