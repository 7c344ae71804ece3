"""Which Hugging Face Jobs hardware ("flavor") evaluates a model of a given size (LEADERBOARD_EXECUTOR=hf-jobs).

LEADERBOARD_JOBS_FLAVORS (`settings.jobs_flavors`) is a table of `<billions>=<flavor>` entries, smallest first:
each flavor takes models up to that many billions of parameters at 16 bits. A float32 model counts double (its
weights take twice the memory); `auto`, bfloat16 and float16 count as they are.

- `parse_flavors` reads the table, refusing a bad one with a message naming LEADERBOARD_JOBS_FLAVORS. Flavor names
  must be ones huggingface_hub knows (its `JobHardware` enum, kept in sync with the Hub's API).
- `choose_flavor` picks the first (smallest) flavor covering a model; a model larger than the last one raises
  `TooLarge`, whose message is written for the person submitting. A model of unknown size raises `UnknownSize`
  (a `TooLarge`, so one `except TooLarge` covers both): submission already refuses a model whose parameter count
  cannot be read from its safetensors files, so only a hand-made or damaged request can get there, and guessing the
  largest (most expensive) hardware for it would be the wrong default.
- `is_multi_gpu` says whether a flavor has more than one GPU (the worker then loads with device_map="auto").
- `hardware_rates` asks the Hub for each flavor's price in dollars per hour, `hardware_prices` the same as text
  ("$0.40/h"); any error gives {} (no price known or shown). Neither keeps a cache: the caller decides how often to
  ask.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass

from leaderboard.submissions.vocabulary import PRECISIONS

log = logging.getLogger(__name__)

SETTING = "LEADERBOARD_JOBS_FLAVORS"
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_GPUS_RE = re.compile(r"x(\d+)$")                  # l40sx4, a100x8, a10g-largex2, h200x2 ...
_DOUBLE = {"float32": 2.0}                         # precision -> weight of a parameter against the 16-bit table
_PER_HOUR = {"second": 3600, "minute": 60, "hour": 1}


@dataclass(frozen=True)
class FlavorRule:
    """Models up to `max_billions` billion parameters (at 16 bits) run on `flavor`."""
    max_billions: float
    flavor: str


class TooLarge(ValueError):
    """No flavor of the table covers the model; str() is a message for the person submitting."""


class UnknownSize(TooLarge):
    """The model's parameter count is unknown, so no flavor can be chosen."""


def known_flavors() -> tuple[str, ...]:
    """The Jobs hardware names huggingface_hub knows (empty when it has no such list)."""
    try:
        from huggingface_hub import JobHardware
    except ImportError:  # an older huggingface_hub: any well-formed name is accepted
        return ()
    return tuple(item.value for item in JobHardware)


def parse_flavors(entries: tuple[str, ...] | list[str]) -> list[FlavorRule]:
    """The table from LEADERBOARD_JOBS_FLAVORS entries ("3=t4-small", ...); ValueError naming the setting when an
    entry has no "=", a size that is not a positive number, an empty or unknown flavor, or sizes not increasing."""
    if not entries:
        raise ValueError(f"{SETTING} is empty: give at least one `<billions>=<flavor>` entry, e.g. 3=t4-small")
    known = known_flavors()
    rules: list[FlavorRule] = []
    for entry in entries:
        entry = str(entry).strip()
        if "=" not in entry:
            raise ValueError(f"{SETTING} takes comma-separated `<billions>=<flavor>` entries, not {entry!r}")
        size_text, flavor = (part.strip() for part in entry.split("=", 1))
        try:
            size = float(size_text)
        except ValueError:
            raise ValueError(f"{SETTING}: the size in {entry!r} is not a number of billions of parameters") from None
        if not math.isfinite(size) or size <= 0:
            raise ValueError(f"{SETTING}: the size in {entry!r} must be a positive number of billions of parameters")
        flavor = flavor.lower()
        if not flavor:
            raise ValueError(f"{SETTING}: the entry {entry!r} names no hardware flavor")
        if not _NAME_RE.match(flavor):
            raise ValueError(f"{SETTING}: {flavor!r} in {entry!r} is not a hardware flavor name (letters, digits "
                             "and '-')")
        if known and flavor not in known:
            raise ValueError(f"{SETTING}: unknown hardware flavor {flavor!r} in {entry!r}; known: {', '.join(known)}")
        if rules and size <= rules[-1].max_billions:
            raise ValueError(f"{SETTING} must list sizes smallest first, each larger than the one before: {entry!r} "
                             f"comes after {rules[-1].max_billions:g}={rules[-1].flavor}")
        rules.append(FlavorRule(size, flavor))
    return rules


def effective_billions(params_billions: float, precision: str) -> float:
    """The size counted against the 16-bit table: float32 counts double; auto, bfloat16 and float16 as they are."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of: {', '.join(PRECISIONS)}")
    return params_billions * _DOUBLE.get(precision, 1.0)


def _billions(value: float) -> str:
    return f"{value:.4g}"


def choose_flavor(rules: list[FlavorRule], params_billions: float | None, precision: str) -> str:
    """The flavor of the first rule whose size covers the model (`params_billions` at `precision`).

    Raises TooLarge (message for the submitter) above the largest rule, UnknownSize (a TooLarge) when the size is
    None or not a number, ValueError for an unknown precision or an empty table."""
    if not rules:
        raise ValueError(f"{SETTING} is empty: no hardware to run on")
    if params_billions is None or not math.isfinite(params_billions):
        raise UnknownSize("The number of parameters of this model is unknown, so no hardware can be chosen for it; "
                          "it cannot be evaluated here.")
    size = effective_billions(params_billions, precision)
    for rule in rules:
        if size <= rule.max_billions:
            return rule.flavor
    largest = rules[-1]
    counted = f", counted as {_billions(size)} B at 16 bits" if size != params_billions else ""
    message = (f"{_billions(params_billions)} B parameters ({precision}{counted}) is larger than the largest hardware "
               f"this leaderboard runs ({largest.flavor}, up to {largest.max_billions:g} B at 16 bits); ")
    if params_billions <= largest.max_billions:  # only float32 made it too large
        message += "submitted in bfloat16 or float16 it would fit."
    else:
        message += "it cannot be evaluated here."
    raise TooLarge(message)


def flavor_for(settings, params_billions: float | None, precision: str) -> str:
    """choose_flavor with the table of `settings.jobs_flavors` (ValueError when the table is bad)."""
    return choose_flavor(parse_flavors(settings.jobs_flavors), params_billions, precision)


def gpu_count(flavor: str) -> int:
    """The GPUs a flavor's name says it has ("l40sx4": 4, "a10g-largex2": 2, "t4-small" and "l40sx1": 1)."""
    found = _GPUS_RE.search(str(flavor).strip().lower())
    return int(found.group(1)) if found else 1


def is_multi_gpu(flavor: str) -> bool:
    """Whether the flavor has more than one GPU ("l40sx4", "a10g-largex2": yes; "l40sx1", "t4-small": no)."""
    return gpu_count(flavor) > 1


def price_text(unit_cost_usd: float, unit_label: str) -> str:
    """A short cost text: "$0.40/h" (a per-second or per-minute price is shown per hour), "$2.00/<unit>" else."""
    label = str(unit_label or "").strip().lower()
    if label in _PER_HOUR:
        cost, unit = float(unit_cost_usd) * _PER_HOUR[label], "h"
    else:
        cost, unit = float(unit_cost_usd), label or "unit"
    if not math.isfinite(cost) or cost < 0:
        raise ValueError(f"not a price: {unit_cost_usd!r}")
    if 0 < cost < 0.005:
        return f"<$0.01/{unit}"
    return f"${cost:.2f}/{unit}"


def hardware_rates(api) -> dict[str, float]:
    """Flavor name -> its price in US dollars per hour, from `api.list_jobs_hardware()` (huggingface_hub's
    JobHardwareInfo: name, unit_cost_micro_usd, unit_cost_usd, unit_label; a per-second or per-minute price counted
    per hour; an entry priced per anything else is left out). Any error asking gives {}; an entry that cannot be
    read is left out."""
    rates: dict[str, float] = {}
    for item in _hardware(api):
        try:
            per_hour = _unit_usd(item) * _PER_HOUR[str(item.unit_label or "").strip().lower()]
            if math.isfinite(per_hour) and per_hour >= 0:
                rates[str(item.name)] = per_hour
        except Exception:  # one odd entry does not hide the others
            continue
    return rates


def _hardware(api) -> list:
    """`api.list_jobs_hardware()`, or [] (logged) when the Hub cannot say."""
    try:
        return list(api.list_jobs_hardware())
    except Exception as error:  # offline, no token, an unexpected answer: no price is known
        log.warning("could not list the Jobs hardware prices: %s", type(error).__name__)
        return []


def _unit_usd(item) -> float:
    micro = getattr(item, "unit_cost_micro_usd", None)
    return micro / 1_000_000 if isinstance(micro, (int, float)) else float(item.unit_cost_usd)


def hardware_prices(api) -> dict[str, str]:
    """Flavor name -> cost text ("$0.40/h"; a price per another unit as "$1.00/job"); {} when the Hub cannot say,
    and an entry that cannot be read is left out."""
    prices: dict[str, str] = {}
    for item in _hardware(api):
        try:
            prices[str(item.name)] = price_text(_unit_usd(item), item.unit_label)
        except Exception:  # one odd entry does not hide the others
            continue
    return prices


__all__ = ["FlavorRule", "TooLarge", "UnknownSize", "parse_flavors", "effective_billions", "choose_flavor",
           "flavor_for", "is_multi_gpu", "hardware_prices", "hardware_rates", "price_text", "known_flavors"]
