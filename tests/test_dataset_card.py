"""The results dataset: the store's root is a dataset that `datasets.load_dataset` reads by its card's configs (the
board, and each benchmark's details of every run with the run's key), and the card says what is in it."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from evaluator import api
from leaderboard.board import dataset_card
from leaderboard.board.columns import schema
from leaderboard.board.dataset_card import CARD_PATH, RUN_COLUMN_NAMES, front_matter, with_run_columns, without_run_columns
from leaderboard.board.file import LEADERBOARD_PATH
from tests.published_runs import finished_output, publish_finished
from tests.results_files import SHA_A, SHA_B

ROWS = 3


@pytest.fixture
def published(settings, store, tmp_path):
    """Two finished runs: A on the first two registered benchmarks, B on the first only."""
    first, second = api.benchmark_names()[:2]
    a, _ = publish_finished(settings, store, finished_output(tmp_path / "a", "A", {first: 0.5, second: 0.25}),
                            "org/model-a", SHA_A)
    b, _ = publish_finished(settings, store, finished_output(tmp_path / "b", "B", {first: 0.75}), "org/model-b", SHA_B,
                            hidden="trained on the test data")
    return {"first": first, "second": second, "a": a, "b": b}


def _load(root, config, tmp_path):
    import datasets

    return datasets.load_dataset(str(root), config, split="train", cache_dir=str(tmp_path / "datasets-cache"))


def test_load_dataset_reads_the_board_and_each_benchmarks_details(settings, store, published, tmp_path):
    board = _load(store.root, "leaderboard", tmp_path)
    assert board.num_rows == 2
    assert board.column_names == schema(settings.benchmarks).names
    rows = {row["key"]: row for row in board}
    assert set(rows) == {published["a"].key, published["b"].key}
    assert rows[published["b"].key]["hidden"] == "trained on the test data"

    details = _load(store.root, published["first"], tmp_path)
    assert details.num_rows == 2 * ROWS  # both runs' rows, in one table
    assert details.column_names[:3] == list(RUN_COLUMN_NAMES)
    declared = [c.name for c in getattr(api.card(published["first"]), "details", ())]
    if declared:
        assert details.column_names[3:] == declared
    frame = details.to_pandas()
    assert sorted(frame["run_key"].unique()) == sorted([published["a"].key, published["b"].key])
    by_run = frame.groupby("run_key")["model"].unique().to_dict()
    assert list(by_run[published["a"].key]) == ["org/model-a"] and list(by_run[published["b"].key]) == ["org/model-b"]
    assert set(frame.loc[frame["run_key"] == published["a"].key, "revision"]) == {SHA_A}  # the full sha
    if "prediction" in frame:
        assert set(frame.loc[frame["run_key"] == published["b"].key, "prediction"]) == {
            f"B answer {i}" for i in range(ROWS)}

    only_a = _load(store.root, published["second"], tmp_path)
    assert only_a.num_rows == ROWS and set(only_a["run_key"]) == {published["a"].key}


def test_the_cards_configs_are_the_ones_load_dataset_uses(store, published):
    import datasets

    text = (store.root / CARD_PATH).read_text()
    meta = front_matter(text)
    assert meta["license"] == "other"
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["leaderboard", published["first"], published["second"]]  # benchmarks in registry order
    assert datasets.get_dataset_config_names(str(store.root)) == names
    files = {c["config_name"]: c["data_files"] for c in meta["configs"]}
    assert files["leaderboard"] == [{"split": "train", "path": LEADERBOARD_PATH}]
    assert files[published["first"]] == [{"split": "train", "path": f"details/**/{published['first']}.parquet"}]
    assert [c for c in meta["configs"] if c.get("default")] == [meta["configs"][0]]


def test_the_card_names_every_column_of_the_board_and_of_the_details(settings, store, published):
    text = (store.root / CARD_PATH).read_text()
    for column in schema(settings.benchmarks).columns:
        if not column.interval_of:  # the interval columns are one paragraph (the next test)
            assert f"| `{column.name}` |" in text, column.name
    for name in ("first", "second"):
        card = api.card(published[name])
        section = text.split(f"## The `{card.name}` config", 1)[1].split("\n## ", 1)[0]
        for column in RUN_COLUMN_NAMES:
            assert f"| `{column}` | string |" in section
        declared = getattr(card, "details", ())
        for column in declared:
            assert f"| `{column.name}` |" in section, column.name
        assert card.paper in section and "Data terms:" in section
    assert "## Citation" in text and "@misc{open_vlm_reasoning_leaderboard" in text


def test_the_interval_columns_are_one_paragraph_under_the_boards_table(settings):
    from leaderboard.board.columns import INTERVALS_DESCRIPTION

    board = schema(settings.benchmarks)
    text = dataset_card.card_text(board, list(settings.benchmarks))
    section = text.split("## The `leaderboard` config", 1)[1].split("\n## ", 1)[0]
    table, after = section.split("\n\n**Intervals.** ", 1)
    intervals = [column for column in board.columns if column.interval_of]
    scores = {column.interval_of for column in intervals}
    assert len(intervals) >= 4 * len(scores) > 0 and "overall" in scores
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(board.columns) - len(intervals)  # one row per column that is not an interval's part
    assert not [column.name for column in intervals if f"| `{column.name}` |" in text]
    assert all(f"| `{name}` |" in table for name in scores)  # each score column keeps its own row
    assert after.strip() == " ".join(INTERVALS_DESCRIPTION.split())
    for part in ("_stderr`", "_low`", "_high`", "_n`", "95% interval", "Wilson", "bootstrap"):
        assert part in after, part


def test_the_card_links_to_the_space_and_names_the_repo(settings, store):
    board = schema(settings.benchmarks)
    first = api.benchmark_names()[0]
    on_space = dataset_card.card_text(board, [first], space_id="org/leaderboard", repo="org/results")
    assert "(https://huggingface.co/spaces/org/leaderboard)" in on_space
    assert 'load_dataset("org/results", "leaderboard", split="train")' in on_space
    assert f'load_dataset("org/results", "{first}", split="train")' in on_space
    unknown = dataset_card.card_text(board, [first])
    assert "SPACE_ID is not set" in unknown and "huggingface.co/spaces" not in unknown
    assert front_matter(unknown)["configs"] == front_matter(on_space)["configs"]


def test_the_cards_other_licence_has_a_name_and_a_link_when_the_repo_is_known(settings):
    import re

    board = schema(settings.benchmarks)
    first = api.benchmark_names()[0]
    on_hub = dataset_card.card_text(board, [first], space_id="org/leaderboard", repo="org/results")
    meta = front_matter(on_hub)
    assert meta["license"] == "other" and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["license_name"])
    assert meta["license_link"] == "https://huggingface.co/datasets/org/results#licence"
    assert "\n## Licence\n" in on_hub and f"`{meta['license_name']}`" in on_hub  # the section the link opens
    assert list(meta)[list(meta).index("license"):][:3] == ["license", "license_name", "license_link"]
    local = front_matter(dataset_card.card_text(board, [first]))  # no repo: no link to make
    assert local["license"] == "other" and local["license_name"] == meta["license_name"]
    assert "license_link" not in local


def test_a_card_that_states_its_terms_is_quoted(settings):
    from dataclasses import replace

    card = api.card(api.benchmark_names()[0])
    stated = type("Stated", (), {"licence": "CC BY 4.0, see https://example.org/terms", "title": card.title,
                                 "sources": card.sources, "paper": card.paper})()
    assert dataset_card.licence_text(stated) == "CC BY 4.0, see https://example.org/terms"
    unstated = replace(card, licence="")  # a card that states none points to its sources and paper
    assert card.paper in dataset_card.licence_text(unstated)
    for name in api.benchmark_names():  # every benchmark states the terms of the data its details quote
        declared = api.card(name)
        assert declared.licence and dataset_card.licence_text(declared) == declared.licence
    board = schema(settings.benchmarks)
    text = dataset_card.card_text(board, list(api.benchmark_names()))
    assert all(api.card(name).licence in text for name in api.benchmark_names())


def test_the_card_is_rewritten_only_when_its_text_changes(settings, store, tmp_path):
    first, second = api.benchmark_names()[:2]
    board = schema(settings.benchmarks)
    assert dataset_card.card_update(store, board, [first]) == {CARD_PATH: dataset_card.card_text(board, [first]).encode()}
    store.write_many(dataset_card.card_update(store, board, [first]))
    assert dataset_card.card_update(store, board, [first]) == {}  # unchanged: nothing to write
    assert dataset_card.card_update(store, board, []) == {}  # the stored card's configs are kept
    grown = dataset_card.card_update(store, board, [second])
    assert dataset_card.config_names(grown[CARD_PATH]) == ["leaderboard", first, second]


def test_run_columns_go_in_front_and_come_off_again(tmp_path):
    import pyarrow.parquet as pq

    table = pa.table({"question_id": ["q1", "q2"], "score": [1.0, None]},
                     metadata={b"note": b"kept"})
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    data = path.read_bytes()
    added = with_run_columns(data, "org/m/abcdef012345_auto", "org/m", SHA_A)
    back = pq.read_table(pa.BufferReader(added))
    assert back.column_names == [*RUN_COLUMN_NAMES, "question_id", "score"]
    assert back.schema.metadata[b"note"] == b"kept"
    assert back.schema.field("score").type == pa.float64()
    assert back.column("run_key").to_pylist() == ["org/m/abcdef012345_auto"] * 2
    again = with_run_columns(added, "org/m/abcdef012345_float32", "org/m", SHA_A)  # replaced, not doubled
    assert pq.read_table(pa.BufferReader(again)).column("run_key").to_pylist() == ["org/m/abcdef012345_float32"] * 2
    stripped = pq.read_table(pa.BufferReader(without_run_columns(again)))
    assert stripped.column_names == ["question_id", "score"]
    assert without_run_columns(data) == data
    assert pd.read_parquet(pa.BufferReader(added))["model"].tolist() == ["org/m", "org/m"]


def test_no_card_declares_a_run_column():
    for card in api.cards():
        assert not {c.name for c in getattr(card, "details", ())} & set(RUN_COLUMN_NAMES), card.name


def test_the_repair_adds_run_columns_to_older_details_and_rewrites_the_card(settings, store, tmp_path):
    first = api.benchmark_names()[0]
    out = finished_output(tmp_path / "old", "old", {first: 0.5})
    key = f"org/old/{SHA_A[:12]}_auto"
    store.write_bytes(f"details/{key}/{first}.parquet", (out / "details" / f"{first}.parquet").read_bytes())
    store.write_json(f"results/{key}.json", {"model": "org/old", "revision": SHA_A, "key": key})
    files = dataset_card.refresh(store, schema(settings.benchmarks))
    assert set(files) == {f"details/{key}/{first}.parquet", CARD_PATH}
    store.write_many(files)
    assert dataset_card.refresh(store, schema(settings.benchmarks)) == {}  # done once
    frame = pd.read_parquet(store.root / "details" / key / f"{first}.parquet")
    assert list(frame.columns[:3]) == list(RUN_COLUMN_NAMES)
    assert set(frame["run_key"]) == {key} and set(frame["revision"]) == {SHA_A}
    assert dataset_card.config_names((store.root / CARD_PATH).read_bytes()) == ["leaderboard", first]
