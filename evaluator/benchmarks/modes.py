"""How a run asks each benchmark: by generation alone, or also by option likelihood (a card's mode option).

A served model whose server gives no prompt log-probabilities (its probe says so) asks every benchmark by
generation: the mode options it leaves unset are set to "generation" (generation_only), and one it sets to anything
else is refused before any benchmark's request (likelihood_refusal); one whose server gives them (vLLM's) runs in
every mode, as an in-process model does. A mode a benchmark does not have (its card's modes) is refused before the model loads
(mode_problem). Every run records each benchmark's mode (run_modes), and runs scored in different
modes are never ranked together.
"""
from __future__ import annotations

from evaluator.benchmarks.spec import Card

GENERATION = "generation"


def scoring_mode(card: Card, options: dict[str, str]) -> str:
    """The mode a run with `options` asks `card`'s benchmark in: its mode option's value (else that option's
    default), or "generation" for a benchmark that only generates."""
    if not card.mode_option:
        return GENERATION
    value = options.get(card.mode_option)
    if isinstance(value, str) and value.strip():
        return value.strip()
    defaults = [option.default for option in card.options if option.key == card.mode_option]
    return defaults[0] if defaults else GENERATION


def run_modes(cards: list[Card], options: dict[str, str]) -> dict[str, str]:
    """Each benchmark's mode in a run with `options`: {name: mode}."""
    return {card.name: scoring_mode(card, options) for card in cards}


def generation_only(cards: list[Card], options: dict[str, str]) -> dict[str, str]:
    """`options` with every mode option it leaves unset set to "generation" (what a served model can answer)."""
    chosen = dict(options)
    for card in cards:
        if card.mode_option and not str(chosen.get(card.mode_option) or "").strip():
            chosen[card.mode_option] = GENERATION
    return chosen


def likelihood_refusal(cards: list[Card], options: dict[str, str],
                       reason: str = "gives no prompt log-probabilities") -> str | None:
    """Why a served model whose server `reason` (e.g. "gives no prompt log-probabilities") cannot run with `options`
    (one line), or None: a mode option set to anything but generation asks for option log-likelihoods."""
    asked = [f"{card.mode_option}={scoring_mode(card, options)}" for card in cards
             if scoring_mode(card, options) != GENERATION]
    if not asked:
        return None
    return (f"{', '.join(asked)} asks for option log-likelihoods, which this served model's endpoint cannot give: it "
            f"{reason}; drop the option or set it to generation")


def mode_problem(cards: list[Card], options: dict[str, str]) -> str | None:
    """Why `options` name a mode a benchmark does not have (one line), or None; checked before the model loads."""
    for card in cards:
        mode = scoring_mode(card, options)
        if card.mode_option and card.modes and mode not in card.modes:
            return f"{card.mode_option} must be one of {', '.join(card.modes)}, got {mode!r}"
    return None
