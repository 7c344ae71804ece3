"""How values and untrusted text are shown: the one Markdown escaper and the one number formatter (percentages,
plain numbers, measured numbers, parameter counts, times, labels) that every tab uses."""
from __future__ import annotations

import math
import re
from datetime import timezone
from typing import Any

import numpy as np

from leaderboard.submissions.vocabulary import parse_time

NA = "n/a"
# Markdown punctuation that can start formatting, a link, HTML or an entity; an underscore only at a word's edge
# (inside a word, as in Qwen2_5, it cannot start emphasis and is left alone)
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>&|~#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def escape_markdown(text: object, limit: int | None = 200) -> str:
    """Untrusted text (model ids, judge replies, file names) made inert inside Markdown: one line, at most `limit`
    characters (None: no limit), every character that could start formatting, a link or HTML backslash-escaped."""
    text = " ".join(str(text).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", text)


def as_float(value: Any) -> float:
    """A finite float, or NaN for anything else (None, text, booleans, infinities)."""
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def _unsigned_zero(text: str) -> str:
    """"-0.0" -> "0.0": a value that rounds to zero is shown without a sign."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def format_score(value: Any) -> str:
    """A fraction as a percentage with one decimal ("54.6", never "-0.0"); null / NaN as "n/a"."""
    number = as_float(value)
    return NA if math.isnan(number) else _unsigned_zero(f"{number * 100:.1f}")


def format_percent(value: Any) -> str:
    """A fraction as a percentage with its sign ("54.6%"); null / NaN as "n/a" (never "n/a%")."""
    text = format_score(value)
    return text if text == NA else f"{text}%"


def format_number(value: Any) -> str:
    """A plain number with three significant digits (parameters in billions, CIDEr, an entropy, a count, a
    setting such as 95 or 0.5); null / NaN as "n/a"."""
    number = as_float(value)
    if math.isnan(number):
        return NA
    return _unsigned_zero(np.format_float_positional(number, precision=3, unique=False, fractional=False, trim="-"))


def format_measure(value: Any) -> str:
    """A measured number that is not a percentage (a CIDEr, an entropy, hours, dollars): three significant digits and
    always at least one decimal, as the percentages beside it ("0.0", "1.23", "12.3", "123.4"); null / NaN as "n/a"."""
    number = as_float(value)
    if math.isnan(number):
        return NA
    digits = 1 if number == 0 else max(1, 2 - math.floor(math.log10(abs(number))))
    text = f"{number:.{digits}f}"
    text = text.rstrip("0") if "." in text else text
    return _unsigned_zero(text + "0" if text.endswith(".") else text)


SMALLEST_BILLIONS = 0.01  # a model under 10 million parameters reads as "<0.01" billion, not 0.0000723


def format_billions(value: Any) -> str:
    """A number of parameters in billions, as the board's Params (B) shows it: "7.62", "0.5", "<0.01" for a
    toy model under 10 million parameters; null / NaN as "n/a"."""
    number = as_float(value)
    if not math.isnan(number) and 0 < number < SMALLEST_BILLIONS:
        return f"<{SMALLEST_BILLIONS}"
    return format_number(number)


_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def format_label(value: Any) -> str:
    """A machine name as a label for people: snake_case words spelled out with a capital first letter
    ("coarse_perception" -> "Coarse perception", "chain_length" -> "Chain length"); any other text (a dataset's
    own name such as "TextVQA", a number, a sentence) as it is."""
    text = "" if value is None else str(value)
    if not _SNAKE.match(text):
        return text
    words = text.replace("_", " ")
    return words[0].upper() + words[1:]


def format_time(text: str | None) -> str:
    """ISO time -> 'YYYY-MM-DD HH:MM:SS UTC' (text that does not parse is shown as is)."""
    if not text:
        return ""
    try:
        moment = parse_time(text)
    except ValueError:
        return str(text)
    if moment is None:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def money(usd: float | None) -> str:
    """US dollars as every tab shows them: "$1.23", a cost under half a cent "<$0.01", "no price" when unknown."""
    if usd is None:
        return "no price"
    return "<$0.01" if 0 < usd < 0.005 else f"${usd:,.2f}"
