"""How to cite: CITATION.cff, the README's BibTeX entry, the About tab's Citing section and the results dataset's card
say the same (title, authors, year; the Space's address where it is known), and each benchmark's own citation, read
from its card, stands beside it."""
from __future__ import annotations

import re

import yaml

from evaluator import api
from leaderboard.board import dataset_card
from leaderboard.board.citation import AUTHORS, TITLE, YEAR, bibtex
from leaderboard.board.columns import schema
from tests.conftest import PROJECT

NAMES = tuple(api.benchmark_names())


def arxiv_id(card) -> str:
    return re.search(r"eprint = \{([\d.]+)\}", card.citation).group(1)


def test_every_card_has_its_papers_bibtex_entry():
    for card in api.cards():
        entry = card.citation
        assert entry.startswith("@misc{") and entry.rstrip().endswith("}"), card.name
        for field in ("title", "author", "year", "eprint"):
            assert re.search(rf"^  {field} = \{{.+\}},?$", entry, flags=re.MULTILINE), (card.name, field)
        assert entry.count("{") == entry.count("}"), card.name
        assert arxiv_id(card) in card.citation.split("url = ")[1]


def test_citation_cff_names_the_leaderboard_and_the_four_papers():
    cff = yaml.safe_load((PROJECT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] == TITLE == dataset_card.TITLE
    assert cff["authors"] == [{"name": AUTHORS}] and str(cff["date-released"]) == f"{YEAR}-11-28"
    cited = {ref["url"].rsplit("/", 1)[1] for ref in cff["references"]}
    assert cited == {arxiv_id(card) for card in api.cards()}


def test_the_readme_gives_the_leaderboards_entry_and_each_papers_reference():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert f"```bibtex\n{bibtex()}\n```" in readme and "](CITATION.cff)" in readme
    for card in api.cards():
        assert f"arXiv:{arxiv_id(card)}" in readme, card.name


def test_about_cites_the_leaderboard_and_the_benchmarks_it_runs(settings):
    from leaderboard.ui.about import about_markdown

    known = settings.with_(space_id="org/space", benchmarks=NAMES)
    text = about_markdown(known)
    assert "## Citing" in text and bibtex("https://huggingface.co/spaces/org/space") in text
    assert all(card.citation in text for card in api.cards())
    alone = about_markdown(settings.with_(benchmarks=NAMES[:1]))
    assert bibtex() in alone and api.card(NAMES[0]).citation in alone
    assert not any(api.card(name).citation in alone for name in NAMES[1:])


def test_the_dataset_cards_entry_has_authors_year_and_address():
    text = dataset_card.card_text(schema(NAMES), list(NAMES), space_id="org/space")
    entry = text.split("```bibtex\n", 1)[1].split("\n```", 1)[0]
    assert f"author = {{{{{AUTHORS}}}}}" in entry and f"year = {{{YEAR}}}" in entry
    assert "url = {https://huggingface.co/spaces/org/space}" in entry
    assert all(card.citation in text for card in api.cards())
