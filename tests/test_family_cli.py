"""Each family added for today's VLMs through the CLI, as a submission runs it: a few items of the CURE sample suite
by generation and of the ReForm-Eval sample suite (both modes) from the tiny model's folder, at --batch-size 1 and 3,
give the same details row by row (answers, parses and chosen options; option log-likelihoods within
tests.batch_details.OPTION_TOLERANCE per token; a reply may part from the other only at a near tie both runs
recorded), and results.json records the processor's own image settings.

--limit 2 at batch 3 leaves a short last batch (the mixture-of-experts families' grouped experts once moved with the
batch's shape: issue 69); ReForm-Eval asks each multiple-choice item twice (reform.repeats=2: a sampled repeat
beside the first, with its own seed, at less than half the protocol's five repeats' time; issue 70), and every reply
stops at 8 new tokens (the cards' 16 and 32 for replies the random model never ends early: the same prompts,
batches and first decoding steps at half the time). The whole samples, at batch 4 with every repeat and the
cards' budgets, are bench/family_batches.py's (about 15 minutes for the 20 families on 2 cores)."""
from __future__ import annotations

import json

import pytest

from tests.batch_details import differing_rows
from tests.cli_runs import evaluator_many, family_command
from tests.test_batch_invariance import assert_same_details
from tests.tiny_models import CLI_FAMILIES

pytestmark = pytest.mark.slow  # two runs per family through the CLI
LIMIT, BATCH = 2, 3
OPTIONS = ("reform.repeats=2", "cure.max_new_tokens=8", "reform.max_new_tokens=8", "reform.free_max_new_tokens=8")


@pytest.mark.parametrize("name", CLI_FAMILIES)
def test_a_few_items_answer_alike_at_batch_1_and_3(tiny_folder, tmp_path, name):
    folder = tiny_folder(name)
    commands = [family_command(folder, tmp_path, size, LIMIT, options=OPTIONS) for size in (1, BATCH)]
    done = evaluator_many(commands, tmp_path / "report.json", timeout=900)
    for result in done:
        assert result.returncode == 0, (result.args, result.stderr[-2000:])
    assert assert_same_details(tmp_path / "batch-1", tmp_path / f"batch-{BATCH}") == ["cure", "reform"]
    asked = {bench: _modes(tmp_path / f"batch-{BATCH}", bench) for bench in ("cure", "reform")}
    assert asked["cure"]["generation"] % BATCH and set(asked["reform"]) == {"generation", "likelihood"}, asked
    one, other = (json.loads((tmp_path / f"batch-{size}" / "results.json").read_text()) for size in (1, BATCH))
    assert (one["run"]["batch_size"], other["run"]["batch_size"], one["run"]["limit"]) == (1, BATCH, LIMIT)
    assert '"repeats": 2' in json.dumps(one["benchmarks"]["reform"])  # as asked, and said in the results
    assert dict(option.split("=") for option in OPTIONS).items() <= one["run"]["options"].items()
    parted = differing_rows(tmp_path / "batch-1", tmp_path / f"batch-{BATCH}")
    for bench in ("cure", "reform"):
        if not parted[bench]:  # a reply that parted at a near tie may move its benchmark's scores
            assert one["benchmarks"][bench]["scores"] == other["benchmarks"][bench]["scores"]
        assert one["benchmarks"][bench]["counts"]["items"] > 0
    settings = one["run"]["image_settings"]
    saved = json.loads((folder / "preprocessor_config.json").read_text()) if (
        folder / "preprocessor_config.json").is_file() else {}
    assert settings and all(saved[key] == value for key, value in settings.items()
                            if key in saved and not isinstance(value, dict))


def _modes(out, bench: str) -> dict[str, int]:
    """The details rows of a run's benchmark, counted by the mode that asked them."""
    import pandas as pd

    rows = pd.read_parquet(out / "details" / f"{bench}.parquet")
    return rows["mode"].value_counts().to_dict() if "mode" in rows else {"generation": len(rows)}
