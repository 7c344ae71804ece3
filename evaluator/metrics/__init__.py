"""Pure metric functions (no model calls). Scores are fractions in 0..1; NaN where undefined."""
from evaluator.metrics.cure import CURE_KEYS, cure_by_chain_length, cure_scores, cure_step_accuracy  # noqa: F401
