"""How to cite the leaderboard: one BibTeX entry, the same in the README, CITATION.cff, the About tab and the results
dataset's card (tests/test_citation.py checks they agree), and beside it each benchmark's own citation, read from its
card (`citation`), so that nothing here names a benchmark."""
from __future__ import annotations

from typing import Iterable

TITLE = "Open VLM Reasoning Leaderboard"
AUTHORS = "The Open VLM Reasoning Leaderboard maintainers"
YEAR = 2026  # the year of the release CITATION.cff names (date-released); a constant, so the dataset card holds no date
KEY = "open_vlm_reasoning_leaderboard"


def bibtex(url: str = "", note: str = "") -> str:
    """The leaderboard's BibTeX entry; `url` (the Space's page, else the results dataset's) and `note` when known."""
    lines = [f"@misc{{{KEY},", f"  title = {{{TITLE}}},", f"  author = {{{{{AUTHORS}}}}},", f"  year = {{{YEAR}}},"]
    if url:
        lines += [f"  url = {{{url}}},", f"  howpublished = {{\\url{{{url}}}}},"]
    if note:
        lines.append(f"  note = {{{note}}},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join([*lines, "}"])


def benchmark_bibtex(cards: Iterable) -> list[str]:
    """The benchmarks' own BibTeX entries, from their cards, in the order given (a card without one: left out)."""
    return [card.citation.strip() for card in cards if getattr(card, "citation", "")]
