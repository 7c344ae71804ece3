"""The README's and the docs pages' Python snippets run as written against a real served app and its store, only
the addresses changed (the app's URL, the results dataset's name), so they cannot rot: the explorer snippet on a run
with matching questions, on a run whose filter matches none and on a run the board lacks; the datasets snippet on the
store. And the front door stays one: README.md at most 200 lines, its two commands as CI runs them, and every
relative link of README.md and docs/*.md naming a file (and a heading) that exists."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tests.conftest import PROJECT

APP = "http://127.0.0.1:7860/"  # the app's address in the snippets
DATASET = '"<org>/<results dataset>"'  # the results dataset in the snippets
RUN = "org/model/0123456789ab_auto"  # the run the snippets name
START = "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && .venv/bin/python app.py"
TESTS = "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt && .venv/bin/python -m pytest -q -n 2"
QUICK_TIER = '.venv/bin/python -m pytest -m "not slow"'
# the screenshots tools/screenshots.py takes: checked as links only once they exist
SCREENSHOTS = ("docs/images/board.png", "docs/images/explorer.png")


def pages() -> list[Path]:
    """README.md and every page of docs/."""
    return [PROJECT / "README.md"] + sorted((PROJECT / "docs").glob("*.md"))


def python_snippets() -> list[tuple[str, str]]:
    """(page, snippet) for every ```python block of README.md and docs/*.md, dedented (a snippet may sit inside a
    list item)."""
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(r"^([ \t]*)```python\n(.*?)^\1```", text, flags=re.MULTILINE | re.DOTALL)
        found += [(str(page.relative_to(PROJECT)), textwrap.dedent(body)) for _, body in blocks]
    return found


def run_snippet(marker: str, address: str, capsys) -> tuple[dict, str]:
    """Run the snippet (README.md or docs/) that names `marker`, with `address` in its place: (its variables, what
    it printed)."""
    found = [(page, s) for page, s in python_snippets() if marker in s]
    assert len(found) == 1, f"one snippet names {marker}"
    page, snippet = found[0]
    capsys.readouterr()
    names: dict = {"__name__": "readme_snippet"}
    exec(compile(snippet.replace(marker, address), page, "exec"), names)
    return names, capsys.readouterr().out


def publish_as_the_snippets_run(store, settings, finished) -> None:
    """Publish a finished run under the key the snippets name."""
    from leaderboard.board.publish import publish, rebuild_board
    from leaderboard.submissions.records import FINISHED, Request

    request = Request(model="org/model", revision="0123456789ab" + "0" * 28, precision="auto", status=FINISHED,
                      params_billions=0.001, architecture="LlavaForConditionalGeneration")
    publish(store, request, finished.out_dir)
    assert rebuild_board(settings, store) and request.key == RUN


def test_every_snippet_is_run_here():
    snippets = python_snippets()
    assert snippets and all(APP in s or DATASET in s for _, s in snippets), "a new snippet needs a test here"


def test_the_readme_is_a_front_door():
    """At most 200 lines; the two commands exactly as CI (.ci/run) runs the tests and as a user starts the Space,
    the quick tier named beside them, the two screenshots, and a link to every docs page."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert f"```bash\n{START}\n```" in readme and f"```bash\n{TESTS}\n```" in readme
    assert (PROJECT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(TESTS)
    assert f"`{QUICK_TIER}`" in readme and "slow:" in (PROJECT / "pytest.ini").read_text(encoding="utf-8")
    assert readme.index("](docs/images/board.png)") < readme.index("](docs/images/explorer.png)") < readme.index(START)
    for page in pages()[1:]:
        assert f"](docs/{page.name}" in readme, page.name


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub (and the Hub) give a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\A---\n.*?^---\n", "", text, flags=re.MULTILINE | re.DOTALL)  # README's front matter
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    titles = re.findall(r"^#{1,6} +(.+?) *$", text, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", t.lower().replace("`", "")).replace(" ", "-") for t in titles}


def test_every_relative_link_names_a_file_of_the_repository():
    """Every relative link of README.md and docs/*.md names an existing file inside the repository (never
    ../shared or anything outside it), and its #anchor, on a Markdown page, one of that page's headings. The two
    screenshots are checked once tools/screenshots.py has written them."""
    root = PROJECT.resolve()
    seen = 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"^([ \t]*)```.*?^\1```", "", text, flags=re.MULTILINE | re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            seen += 1
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page.resolve()
            assert where.is_relative_to(root) and "shared" not in where.relative_to(root).parts[:1], (page, target)
            shown = str(where.relative_to(root))
            if shown in SCREENSHOTS and not where.exists():
                continue
            assert where.is_file(), f"{page.name}: {target} names no file"
            if anchor and where.suffix == ".md":
                assert anchor in heading_anchors(where.read_text(encoding="utf-8")), f"{page.name}: {target}"
    assert seen > 10


def test_the_explorer_snippet_opens_the_first_wrong_answer(store, settings, finished_runs, app_url, capsys):
    publish_as_the_snippets_run(store, settings, finished_runs["vision-a"])
    names, out = run_snippet(APP, app_url, capsys)
    assert names["page"]["items"] and all(i["outcome"] == "wrong" for i in names["page"]["items"])
    assert names["one"]["item"] == names["page"]["items"][0]["item"]
    assert re.search(r"^lave-\d+ ", out, flags=re.MULTILINE), out


def test_the_datasets_snippet_reads_the_store(store, settings, finished_runs, capsys):
    publish_as_the_snippets_run(store, settings, finished_runs["vision-a"])
    names, _ = run_snippet(DATASET, repr(str(store.root)), capsys)
    assert names["board"].num_rows == 1 and names["one_run"].num_rows == names["cure"].num_rows > 0


def test_the_explorer_snippet_says_when_no_question_matches(store, settings, finished_runs, app_url, capsys):
    publish_as_the_snippets_run(store, settings, finished_runs["vision-b"])  # a generous judge: nothing is wrong
    names, out = run_snippet(APP, app_url, capsys)
    assert names["page"]["items"] == [] and "no question matches" in out


def test_the_explorer_snippet_says_when_the_run_is_not_on_the_board(app_url, capsys):
    names, out = run_snippet(APP, app_url, capsys)
    assert "one" not in names and RUN in out, out


def test_the_readme_says_the_offline_judge_the_install_and_the_tests_plainly():
    """The offline path covers the judged benchmarks (a local folder as a trial judge), the install gives its size
    and the CPU wheel index, and the tests are counted in round numbers that do not drift, with the skipped
    reference-fidelity tests named without pointing outside the repository."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert "LEADERBOARD_JUDGE=local:./tiny-llava" in readme and "trial judge" in readme
    assert "--judge local:./tiny-llava" in readme
    assert "3.2 GB" in readme and "--index-url https://download.pytorch.org/whl/cpu" in readme
    pinned = (PROJECT / "requirements.txt").read_text(encoding="utf-8")
    for pin in re.findall(r"(torch(?:vision)?==[\d.]+) ", readme):
        assert pin in pinned.split(), pin  # the CPU command installs the versions requirements.txt pins
    assert not re.search(r"\d,\d{3} (passed|tests collected|collected)", readme)  # exact counts drift
    assert "some 3,000 tests" in readme and "reference files, which the repository does not ship" in readme
    assert "shared" not in readme


def test_the_cli_page_gives_the_recipe_for_a_board_row():
    page = (PROJECT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "python -m evaluator run --request " in page and "requests/<org>/<model>/<sha12>_<precision>.json" in page
    assert "results.json keeps fractions" in page
