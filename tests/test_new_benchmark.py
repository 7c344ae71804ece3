"""A new benchmark is one package plus one registry line: a toy benchmark, written by this test into a temporary
folder and registered here, shows up everywhere (its source setting and the worker's command line, a real run
with its details rows, the board's columns through the app's API, the About text) with no other file touched."""
from __future__ import annotations

import json
import re
import textwrap

import pandas as pd
import pytest

from evaluator.benchmarks import REGISTRY, BenchmarkError, get_benchmark
from tests.conftest import PATIENT

TOY = textwrap.dedent('''
    """Toy: does the model repeat a word? One question per item, answered by option likelihood."""
    import json
    import math
    from pathlib import Path

    from evaluator.benchmarks.spec import (BOOL, COUNT, INT, JSON, STRING, Ask, Card, DetailColumn, ItemView, Metric,
                                           Option, Plan, Scored, Source)
    from evaluator.metrics.basic import argmax
    from evaluator.models.base import GenerationRequest

    CARD = Card(
        name="toy", title="Toy words", short_title="Toy", paper="https://example.org/toy",
        summary="Asks the model to repeat a word and checks which of two words it finds likelier.",
        metrics=(Metric("accuracy", "accuracy", "Share of items where the repeated word is the likelier one."),
                 Metric("items", "items", "Items asked.", kind=COUNT, path=("counts", "items"), shown=False)),
        default_metric="accuracy", needs_images=False, needs_judge=False,
        sources=(Source("toy", "LEADERBOARD_TOY_DATA", "", "a JSON list of {id, word, other}"),),
        options=(Option("toy.prefix", "Say", "the verb the prompt starts with"),),
        item_view=ItemView(question="question", grade="correct", group_by=("word",)),
        details=(DetailColumn("benchmark", STRING, "The benchmark's name."),
                 DetailColumn("question_id", STRING, "The item's id."),
                 DetailColumn("question", STRING, "What the model is asked."),
                 DetailColumn("prompt", STRING, "The prompt as the model received it."),
                 DetailColumn("option_scores", JSON, "Both words' log-likelihoods."),
                 DetailColumn("options", JSON, "The two words, the right one first."),
                 DetailColumn("gold", INT, "The right word's index."),
                 DetailColumn("word", STRING, "The word to repeat."),
                 DetailColumn("parsed_answer", INT, "The likelier word's index."),
                 DetailColumn("correct", BOOL, "Whether the likelier word is the right one.")),
    )


    def plan(ctx):
        items = json.loads(Path(ctx.sources["toy"]).read_text())
        rows, asks = [], []
        for item in items:
            question = f"{ctx.options.get('toy.prefix', 'Say')} the word {item['word']}."
            row = {"benchmark": "toy", "question_id": item["id"], "question": question, "prompt": question,
                   "option_scores": "", "options": json.dumps([item["word"], item["other"]]), "gold": 0,
                   "word": item["word"], "parsed_answer": -1, "correct": False}
            rows.append(row)
            asks.append(Ask(item["id"], GenerationRequest(text=question), [row], options=[item["word"], item["other"]]))
        return Plan(rows=rows, items=[i["id"] for i in items], asks=asks, prompts={"toy_prompt": "Say the word {w}."})


    def score(rows, ctx):
        for row in rows:
            row["parsed_answer"] = argmax([s["mean"] for s in json.loads(row["option_scores"])])
            row["correct"] = row["parsed_answer"] == row["gold"]
        accuracy = sum(r["correct"] for r in rows) / len(rows) if rows else math.nan
        return Scored(scores={"accuracy": accuracy}, counts={"items": len(rows)}, rows=rows)
''')

ITEMS = [{"id": f"toy-{k}", "word": word, "other": other}
         for k, (word, other) in enumerate([("apple", "zebra"), ("blue", "engine"), ("seven", "cloud")])]


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy package on sys.path and its one registry line; the data file its source setting names."""
    package = tmp_path / "packages" / "toy_benchmark"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path / "packages"))
    monkeypatch.setitem(REGISTRY, "toy", "toy_benchmark")  # the one registry line
    data = tmp_path / "toy.json"
    data.write_text(json.dumps(ITEMS))
    return data


def test_a_toy_benchmark_shows_up_end_to_end(toy, tmp_path, settings, store, tiny_llama, one_torch_thread):
    from evaluator.runs.runner import RunConfig, run
    from gradio_client import Client

    from leaderboard.board import publish as publishing
    from leaderboard.running import evaluator_process
    from leaderboard.settings import Settings, declared
    from leaderboard.submissions import records as q
    from leaderboard.ui import build_app
    from leaderboard.ui.about import about_markdown
    from tests.conftest import free_port

    # its source is a setting, passed to the worker by its key
    env = {"LEADERBOARD_BENCHMARKS": "cure,toy", "LEADERBOARD_TOY_DATA": str(toy), "LEADERBOARD_HOME": str(tmp_path)}
    configured = Settings.from_env(env)
    assert configured.sources["toy"] == str(toy)
    assert ("LEADERBOARD_TOY_DATA", "", "a JSON list of {id, word, other}") in declared()
    command = evaluator_process.worker_command(configured, tmp_path / "request.json", tmp_path / "out")
    assert f"toy={toy}" in command and command[command.index("--benchmarks") + 1] == "cure,toy"

    # a real run of the tiny model: its rows in the details, its scores in the results
    request = q.Request(model=tiny_llama.repo_id, revision=tiny_llama.sha)
    out = tmp_path / "out"
    results = run(RunConfig(model=tiny_llama.repo_id, revision=tiny_llama.sha, benchmarks=("toy",), batch_size=2,
                            sources={"toy": str(toy)}, options={"toy.prefix": "Repeat"}, request=request.to_dict()),
                  out)
    assert results["benchmarks"]["toy"]["counts"] == {"items": 3}
    assert results["run"]["prompt_hashes"]["toy/toy_prompt"].startswith("sha256:")
    details = pd.read_parquet(out / "details" / "toy.parquet")
    assert list(details["question_id"]) == ["toy-0", "toy-1", "toy-2"]
    assert details["question"].str.startswith("Repeat the word").all()
    assert all(len(json.loads(s)) == 2 for s in details["option_scores"])  # the executor scored both words
    assert results["benchmarks"]["toy"]["scores"]["accuracy"] == pytest.approx(details["correct"].mean())

    # published, it is a column of the board, through the app's API
    request.status = q.FINISHED  # the board shows the runs whose request is FINISHED
    q.save(store, request)
    publishing.publish(store, request, out)
    assert publishing.rebuild_board(settings.with_(benchmarks=("toy",)), store)
    assert [p.rsplit("/", 1)[1] for p in store.list("details", suffix=".parquet")] == ["toy.parquet"]
    demo = build_app(settings.with_(benchmarks=("cure", "toy")), store)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False, download_files=False, httpx_kwargs=PATIENT)
        board = client.predict("", [], [], api_name="/leaderboard")
        facts = client.predict("", [], [], "runs", False, api_name="/leaderboard")  # the Run details view
    finally:
        demo.close()
    row = dict(zip(board["headers"], board["metadata"]["display_value"][0]))
    expected = 100 * results["benchmarks"]["toy"]["scores"]["accuracy"]
    assert row["Model"].startswith(f"[{tiny_llama.repo_id}]") and row["Toy accuracy"] == f"{expected:.1f}"
    assert row["Overall"] == f"{expected:.1f}"  # its headline score is the overall
    assert dict(zip(facts["headers"], facts["metadata"]["display_value"][0]))["Scored on"] == "Toy"
    assert "Toy items (count)" not in board["headers"]  # the Overview shows headline scores; the Toy view all

    # and its text is on About: summary, paper, columns, the option and the source setting
    about = about_markdown(settings.with_(benchmarks=("cure", "toy")))
    for text in ("### Toy words", "Asks the model to repeat a word", "https://example.org/toy", "**Toy accuracy**",
                 "**Toy items (count)**", "`toy.prefix` (default `Say`)", "`LEADERBOARD_TOY_DATA`"):
        assert text in about, text


def test_a_package_that_breaks_the_contract_is_refused_naming_what_is_missing(tmp_path, monkeypatch):
    for name, text in (("no_score_benchmark", TOY.split("def score")[0]),
                       ("bad_card_benchmark", TOY.replace('default_metric="accuracy"', 'default_metric="speed"'))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(REGISTRY, "toy", "no_score_benchmark")
    with pytest.raises(BenchmarkError, match=r"lacks score"):
        get_benchmark("toy")
    monkeypatch.setitem(REGISTRY, "toy2", "bad_card_benchmark")
    with pytest.raises(BenchmarkError) as refused:
        get_benchmark("toy2")
    message = str(refused.value)
    assert "registered as 'toy2'" in message and "default_metric 'speed' is not one of its metrics" in message
    # a card must declare the columns of its details rows
    undeclared = re.sub(r"    details=\(DetailColumn.*?\"\)\),\n", "", TOY, flags=re.S)
    assert "details=" not in undeclared
    (tmp_path / "no_details_benchmark").mkdir()
    (tmp_path / "no_details_benchmark" / "__init__.py").write_text(undeclared)
    monkeypatch.setitem(REGISTRY, "toy", "no_details_benchmark")
    with pytest.raises(BenchmarkError, match=r"CARD.details is empty"):
        get_benchmark("toy")
