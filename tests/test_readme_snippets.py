"""The README's Python snippets run as written against a real served app and its store, only the addresses changed
(the app's URL, the results dataset's name), so they cannot rot: the explorer snippet on a run with matching
questions, on a run whose filter matches none and on a run the board lacks; the datasets snippet on the store."""
from __future__ import annotations

import re
import textwrap

from tests.conftest import PROJECT

APP = "http://127.0.0.1:7860/"  # the app's address in the README's snippets
DATASET = '"<org>/<results dataset>"'  # the results dataset in the README's snippets
RUN = "org/model/0123456789ab_auto"  # the run the snippets name


def python_snippets() -> list[str]:
    """Every ```python block of the README, dedented (a snippet may sit inside a list item)."""
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^([ \t]*)```python\n(.*?)^\1```", text, flags=re.MULTILINE | re.DOTALL)
    return [textwrap.dedent(body) for _, body in blocks]


def run_snippet(marker: str, address: str, capsys) -> tuple[dict, str]:
    """Run the README's snippet that names `marker`, with `address` in its place: (its variables, what it printed)."""
    found = [s for s in python_snippets() if marker in s]
    assert len(found) == 1, f"one README snippet names {marker}"
    capsys.readouterr()
    names: dict = {"__name__": "readme_snippet"}
    exec(compile(found[0].replace(marker, address), "README.md", "exec"), names)
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
    assert snippets and all(APP in s or DATASET in s for s in snippets), "a new README snippet needs a test here"


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
