"""The results dataset's card: README.md at the root of the results store (the Hub dataset repo, or the local
store's folder), so that `datasets.load_dataset` and the Hub's dataset viewer read the store as a dataset.

The publisher writes it in the same store write as a run's details and results (one commit on the Hub store), and
only when its text changed: it reads the stored card once per publish and compares. The card holds no date and no
count, so it changes only when the code, the settings or the set of published benchmarks do.

Its YAML front matter declares the configs:

- `leaderboard` (the default): leaderboard.parquet, one row per finished run, the board's columns;
- one per benchmark, named after it: `details/**/<benchmark>.parquet`, every run's details of that benchmark as one
  table. The details files themselves do not say whose run they are, so the publisher adds three columns in front
  of each file it publishes (`with_run_columns`): `run_key` (<org>/<model>/<sha12>_<precision>), `model` and
  `revision`.

One config per benchmark, not one per run: a handful of configs however many runs there are (the Hub viewer and
`get_dataset_config_names` stay usable at thousands of runs), a card that does not change at every publish (so no
README commit per run), and every run of a benchmark in one table, where one run is a filter on `run_key` away.
A benchmark gets its config once a run of it is published (the stored card's configs, plus the benchmarks of the
run being published), so no config points at files that do not exist.

The body says what the dataset is, links back to the Space (settings.space_id, SPACE_ID), lists the board's
columns (leaderboard.board.columns) and each benchmark's details columns (its card's `details`), where the data it
quotes comes from and under which terms (a card's `licence`, else its sources and paper), and how to cite. The
board's interval columns (each score's `_stderr`, `_low`, `_high`, `_n` and `_method`: Column.interval_of) get no
row each: one paragraph under the table says what they hold (columns.INTERVALS_DESCRIPTION). The card declares the
configs' files, not their features, so the columns' types are the parquet files' own.

`python -m leaderboard.board.dataset_card` rewrites the card from the whole store and adds the run columns to every
details file that lacks them (one store write): the repair, and the migration of a store published before.
"""
from __future__ import annotations

import io
import json
import logging
import sys
from typing import Iterable, Sequence

from evaluator import api
from leaderboard.board.citation import benchmark_bibtex, bibtex
from leaderboard.board.columns import INTERVALS_DESCRIPTION, Schema
from leaderboard.store import DamagedFile, parse_json

log = logging.getLogger(__name__)

CARD_PATH = "README.md"
LEADERBOARD_CONFIG = "leaderboard"
LEADERBOARD_FILE = "leaderboard.parquet"
HUB_URL = "https://huggingface.co"
TITLE = "Open VLM Reasoning Leaderboard"
SPLIT = "train"
# the details quote each benchmark's data under its source's terms: no one licence of the Hub's list covers them
LICENSE = "other"
LICENSE_NAME = "per-benchmark-source-terms"

# the columns the publisher puts in front of every details file (name, what it holds)
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_key", "The run the row belongs to, `<org>/<model>/<sha12>_<precision>`: the board's `key`, and the name "
                "of the run's request, results and details files."),
    ("model", "The Hugging Face Hub model id (or local folder) that was evaluated."),
    ("revision", "The full commit sha the model was pinned to."),
)
RUN_COLUMN_NAMES = tuple(name for name, _ in RUN_COLUMNS)


# ------------------------------------------------------------------------------------------- the run columns

def _table(data: bytes):
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data))


def _bytes(table) -> bytes:
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _drop_run_columns(table):
    """The table without the run columns the publisher added (only when they lead the table, in order)."""
    if tuple(table.column_names[:len(RUN_COLUMN_NAMES)]) == RUN_COLUMN_NAMES:
        table = table.drop_columns(list(RUN_COLUMN_NAMES))
    return table


def _hf_features(metadata: dict | None, add: bool):
    """Schema metadata with the run columns added to (or removed from) a `datasets` features declaration, if the
    file carries one; otherwise unchanged."""
    if not metadata or b"huggingface" not in metadata:
        return metadata
    try:
        info = parse_json(metadata[b"huggingface"])
        features = info.get("info", {}).get("features")
    except (DamagedFile, AttributeError):
        return metadata
    if not isinstance(features, dict):
        return metadata
    rest = {k: v for k, v in features.items() if k not in RUN_COLUMN_NAMES}
    run = {name: {"dtype": "string", "_type": "Value"} for name in RUN_COLUMN_NAMES} if add else {}
    info["info"]["features"] = {**run, **rest}
    return {**metadata, b"huggingface": json.dumps(info).encode()}


def with_run_columns(data: bytes, key: str, model: str, revision: str) -> bytes:
    """A details parquet with `run_key`, `model` and `revision` (strings) as its first columns, the file's other
    columns, types and metadata as they were (columns the publisher added before are replaced)."""
    import pyarrow as pa

    table = _drop_run_columns(_table(data))
    clash = [name for name in RUN_COLUMN_NAMES if name in table.column_names]
    if clash:
        raise ValueError(f"the details already have a column named {', '.join(clash)}; the run columns would clash")
    metadata = table.schema.metadata
    for i, (name, value) in enumerate(zip(RUN_COLUMN_NAMES, (key, model, revision))):
        table = table.add_column(i, pa.field(name, pa.string()), pa.array([value] * table.num_rows, pa.string()))
    return _bytes(table.replace_schema_metadata(_hf_features(metadata, add=True)))


def without_run_columns(data: bytes) -> bytes:
    """A details parquet as the evaluator wrote it: the run columns the publisher added are taken off again (a file
    without them is returned as it is)."""
    table = _table(data)
    if tuple(table.column_names[:len(RUN_COLUMN_NAMES)]) != RUN_COLUMN_NAMES:
        return data
    table = _drop_run_columns(table)
    return _bytes(table.replace_schema_metadata(_hf_features(table.schema.metadata, add=False)))


def has_run_columns(data: bytes) -> bool:
    import pyarrow.parquet as pq

    names = pq.read_schema(io.BytesIO(data)).names
    return tuple(names[:len(RUN_COLUMN_NAMES)]) == RUN_COLUMN_NAMES


# ------------------------------------------------------------------------------------------- the card's text

def licence_meta(repo: str = "") -> dict[str, str]:
    """The card's licence fields: `license`; when it is `other`, the Hub's `license_name` for it and, when the
    dataset repo is known, `license_link`, the card's own Licence section on the Hub, which says whose terms apply."""
    meta = {"license": LICENSE}
    if LICENSE == "other":
        meta["license_name"] = LICENSE_NAME
        if repo:
            meta["license_link"] = f"{HUB_URL}/datasets/{repo}#licence"
    return meta


def space_url(space_id: str) -> str:
    """The Space's page on the Hub ("" when the Space is not known)."""
    return f"{HUB_URL}/spaces/{space_id}" if space_id else ""


def details_pattern(benchmark: str) -> str:
    """The data files of a benchmark's config: its details file of every run, details/<key>/<benchmark>.parquet."""
    return f"details/**/{benchmark}.parquet"


def configs(benchmarks: Sequence[str]) -> list[dict]:
    """The card's `configs`: the board (the default), then one per benchmark."""
    found = [{"config_name": LEADERBOARD_CONFIG, "data_files": [{"split": SPLIT, "path": LEADERBOARD_FILE}],
              "default": True}]
    found += [{"config_name": name, "data_files": [{"split": SPLIT, "path": details_pattern(name)}]}
              for name in benchmarks]
    return found


def front_matter(text: str | bytes | None) -> dict:
    """The YAML front matter of a card ({} when there is none or it does not parse)."""
    import yaml

    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not text or not text.startswith("---"):
        return {}
    parts = text.split("\n---", 1)
    if len(parts) < 2:
        return {}
    try:
        found = yaml.safe_load(parts[0][3:])
    except yaml.YAMLError:
        return {}
    return found if isinstance(found, dict) else {}


def config_names(text: str | bytes | None) -> list[str]:
    """The names of the configs a card declares (the board's included)."""
    declared = front_matter(text).get("configs")
    if not isinstance(declared, list):
        return []
    return [c["config_name"] for c in declared if isinstance(c, dict) and isinstance(c.get("config_name"), str)]


def _cell(text: object) -> str:
    """A table cell: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _link(location: str) -> str:
    """A source location as a web address ("" for a local path or an empty one)."""
    if location.startswith("hf://datasets/"):
        parts = location[len("hf://datasets/"):].split("/")
        return f"{HUB_URL}/datasets/{'/'.join(parts[:2])}" if len(parts) >= 2 else ""
    return location if location.startswith(("https://", "http://")) else ""


def _dtype(kind: str) -> str:
    """A details column's type as `datasets` shows it (int -> int64), with the card's word when it says more
    (a JSON text is a string)."""
    dtype = api.DETAIL_DTYPES.get(kind, kind)
    return dtype if dtype.startswith(str(kind)) else f"{dtype} ({kind})"


def licence_text(card: api.Card) -> str:
    """The terms of the data a benchmark's details quote: its card's `licence` when it states one, else where its
    data comes from (its sources and paper), so the reader checks the terms there."""
    if card.licence:
        return " ".join(str(card.licence).split())
    links = list(dict.fromkeys(link for link in (_link(s.default) for s in card.sources) if link))
    where = ", ".join(f"<{link}>" for link in links) if links else "the sources its About text names"
    return (f"The rows quote {card.title}'s data (its questions and gold answers). Its terms are those of its "
            f"source: see {where} and the paper, <{card.paper}>.")


def _loading(repo: str, benchmarks: Sequence[str]) -> list[str]:
    where = f'"{repo}"' if repo else '"<this dataset repo, or the local store folder>"'
    example = benchmarks[0] if benchmarks else "<benchmark>"
    return ["```python", "from datasets import load_dataset", "",
            f'board = load_dataset({where}, "{LEADERBOARD_CONFIG}", split="{SPLIT}")',
            f'details = load_dataset({where}, "{example}", split="{SPLIT}")',
            'one_run = details.filter(lambda row: row["run_key"] == "<org>/<model>/<sha12>_<precision>")',
            "```"]


def card_text(schema: Schema, benchmarks: Sequence[str], space_id: str = "", repo: str = "") -> str:
    """The whole card: YAML front matter (configs of the board and of `benchmarks`), then what the dataset is, the
    Space, how to load it, the board's columns, each benchmark's details columns and terms, and how to cite."""
    import yaml

    cards = [schema.card(name) for name in benchmarks if schema.card(name) is not None]
    meta = {"pretty_name": f"{TITLE} results", **licence_meta(repo),
            "tags": ["leaderboard", "evaluation", "vision-language-models"], "configs": configs(benchmarks)}
    space = space_url(space_id)
    address = space or (f"{HUB_URL}/datasets/{repo}" if repo else "")
    named = f"[{TITLE}]({space})" if space else (
        f"{TITLE} (its Space's address is not known to this deployment: SPACE_ID is not set)")
    lines = ["---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
             f"# {TITLE}: results", "",
             f"The published results of the {named}: for every finished run (a model at a pinned commit and "
             "precision), its scores and the record of every question of every benchmark it ran (the prompt sent, "
             "the raw output, the parsed answer, the gold answer and the grade). The leaderboard's publisher writes "
             "this card and keeps it current; edits by hand are overwritten.", "",
             "## Configs", "",
             "| config | files | one row per |", "| --- | --- | --- |",
             f"| `{LEADERBOARD_CONFIG}` (default) | `{LEADERBOARD_FILE}` | finished run (scores as fractions in "
             "0..1, empty where undefined; a run an admin hid is there, with the reason in `hidden`) |"]
    for card in cards:
        lines.append(f"| `{card.name}` | `{details_pattern(card.name)}` | question (or repeat, or part) of a run "
                     f"of {_cell(card.title)}, with the run's `run_key`, `model` and `revision` |")
    lines += ["", *_loading(repo, [c.name for c in cards]), "",
              "There is one config per benchmark rather than one per run: the configs stay a handful however many "
              "runs there are, and every run of a benchmark is one table, where a run is a filter on `run_key` "
              "away. Besides the configs, the repository holds each run's results file, "
              "`results/<org>/<model>/<sha12>_<precision>.json` (scores, counts, the judge, the versions and prompt "
              "hashes of the run), and its details files, `details/<org>/<model>/<sha12>_<precision>/"
              "<benchmark>.parquet`. The board lists only runs whose request finished; `leaderboard.parquet`'s "
              "metadata names the results files it was built from.", "",
              f"## The `{LEADERBOARD_CONFIG}` config", "",
              "| column | on the board | description |", "| --- | --- | --- |"]
    lines += [f"| `{col.name}` | {_cell(col.label)} | {_cell(col.description)} |" for col in schema.columns
              if not col.interval_of]
    if any(col.interval_of for col in schema.columns):
        lines += ["", f"**Intervals.** {' '.join(INTERVALS_DESCRIPTION.split())}"]
    for card in cards:
        lines += ["", f"## The `{card.name}` config: {_cell(card.title)}", "", " ".join(card.summary.split()), "",
                  f"Paper: <{card.paper}>.", "", "| column | type | description |", "| --- | --- | --- |"]
        lines += [f"| `{name}` | string | {_cell(text)} |" for name, text in RUN_COLUMNS]
        lines += [f"| `{col.name}` | {_cell(_dtype(col.type))} | {_cell(col.description)} |" for col in card.details]
        lines += ["", f"Data terms: {licence_text(card)}"]
    lines += ["", "## Licence", "",
              f"The dataset's licence is `{LICENSE}` (`{LICENSE_NAME}`): the scores and the models' outputs are "
              "published by the "
              "leaderboard, and the details quote each benchmark's data, under the terms of its source (each "
              "benchmark's section says where they are stated). The models evaluated keep their own licences.", "",
              "## Citation", "",
              "Cite the leaderboard, and the paper of each benchmark whose results you use:", "",
              "```bibtex", bibtex(address, "Results dataset: scores and per-question records of every finished run"),
              "```", ""]
    lines += [f"- {_cell(card.title)}: <{card.paper}>" for card in cards]
    papers = benchmark_bibtex(cards)
    if papers:
        lines += ["", "The benchmarks' papers:", "", "```bibtex", "\n\n".join(papers), "```"]
    return "\n".join(lines) + "\n"


def card_benchmarks(stored: str | bytes | None, published: Iterable[str]) -> list[str]:
    """The benchmarks the card gives a config: those of the stored card and those just published, registered ones
    only, in registry order."""
    wanted = set(config_names(stored)) | set(published)
    return [name for name in api.benchmark_names() if name in wanted]


def card_update(store, schema: Schema, published: Iterable[str], space_id: str = "",
                repo: str = "") -> dict[str, bytes]:
    """{README.md: the card} when its text differs from the stored one, else {}: one read of the store. `published`:
    the benchmarks whose details the write publishes."""
    stored = store.read_bytes(CARD_PATH)
    text = card_text(schema, card_benchmarks(stored, published), space_id, repo).encode()
    return {} if stored == text else {CARD_PATH: text}


# ------------------------------------------------------------------------------------------- the repair

def _details_run(path: str) -> tuple[str, str] | None:
    """details/<key>/<benchmark>.parquet -> (key, benchmark)."""
    if not path.startswith("details/") or not path.endswith(".parquet") or path.count("/") < 2:
        return None
    key, leaf = path[len("details/"):].rsplit("/", 1)
    return key, leaf[:-len(".parquet")]


def refresh(store, schema: Schema, space_id: str = "", repo: str = "") -> dict[str, bytes]:
    """The files that bring the whole store up to date, in one write: the run columns on every details file that
    lacks them (model and revision from the run's results file), and the card with a config for every benchmark
    that has a details file. Reads every details file: a repair, not a publish."""
    from leaderboard.board.file import read_results

    files: dict[str, bytes] = {}
    benchmarks = set()
    for path in store.list("details", suffix=".parquet"):
        found = _details_run(path)
        data = store.read_bytes(path) if found else None
        if data is None:
            continue
        key, benchmark = found
        benchmarks.add(benchmark)
        try:
            if has_run_columns(data):
                continue
        except Exception as exc:  # noqa: BLE001 - a damaged file is left as it is, and said
            log.warning("details file %s unreadable (%s); left as it is", path, type(exc).__name__)
            continue
        results = read_results(store, f"results/{key}.json") or {}
        model = results.get("model") or key.rsplit("/", 1)[0]
        revision = results.get("revision") or key.rsplit("/", 1)[1].split("_", 1)[0]
        files[path] = with_run_columns(data, key, str(model), str(revision))
    files.update(card_update(store, schema, benchmarks, space_id, repo))
    return files


def main(argv: list[str] | None = None) -> int:
    import argparse

    from leaderboard.board.columns import schema
    from leaderboard.settings import Settings
    from leaderboard.store import open_store

    parser = argparse.ArgumentParser(prog="python -m leaderboard.board.dataset_card", description=(
        "Rewrite the results dataset's card (README.md) from the whole store and add the run columns (run_key, "
        "model, revision) to every details file that lacks them, in one store write."))
    parser.parse_args(argv)
    settings = Settings.from_env()
    store = open_store(settings)
    files = refresh(store, schema(settings.benchmarks), settings.space_id, settings.results_repo)
    if files:
        store.write_many(files)
    changed = sum(1 for path in files if path != CARD_PATH)
    print(f"card {'rewritten' if CARD_PATH in files else 'already current'}; run columns added to {changed} "
          "details file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
