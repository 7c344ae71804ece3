"""The hf-jobs hardware table (leaderboard.running.job_flavors) and the submission refusal it drives."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from huggingface_hub import HfApi, JobHardware, JobHardwareInfo
from safetensors.numpy import save as save_safetensors

from leaderboard.submissions.identity import Visitor
from leaderboard.running.job_flavors import (FlavorRule, TooLarge, UnknownSize, choose_flavor, effective_billions, flavor_for,
                                     hardware_prices, is_multi_gpu, parse_flavors, price_text)
from leaderboard.settings import Settings
from leaderboard.submissions.checks import submit
from tests.hub_cache import LICENSED_CARD, lay_into_hub_cache

DEFAULT = parse_flavors(("3=t4-small", "15=l40sx1", "35=a100-large", "70=l40sx4"))

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 64, "hidden_size": 32,
    "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
    "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "bos_token_id": 1, "eos_token_id": 2,
    "tie_word_embeddings": False, "torch_dtype": "float32",
}


# ---------------------------------------------------------------- the table
def test_the_default_setting_parses_to_the_documented_table():
    assert parse_flavors(Settings.from_env({}).jobs_flavors) == [
        FlavorRule(3.0, "t4-small"), FlavorRule(15.0, "l40sx1"), FlavorRule(35.0, "a100-large"),
        FlavorRule(70.0, "l40sx4")]


def test_entries_are_trimmed_and_lower_cased():
    assert parse_flavors((" 1.5 = T4-Small ", "8=l40sx1")) == [FlavorRule(1.5, "t4-small"), FlavorRule(8.0, "l40sx1")]


@pytest.mark.parametrize("params, precision, flavor", [
    (0.5, "auto", "t4-small"), (3, "bfloat16", "t4-small"), (3.1, "float16", "l40sx1"), (15, "auto", "l40sx1"),
    (15.01, "auto", "a100-large"), (20, "bfloat16", "a100-large"), (35, "auto", "a100-large"),
    (36, "auto", "l40sx4"), (70, "float16", "l40sx4"),
    (1.5, "float32", "t4-small"),     # counts 3
    (7, "float32", "l40sx1"),         # counts 14
    (8, "float32", "a100-large"),     # counts 16
    (35, "float32", "l40sx4"),        # counts 70
])
def test_each_size_bracket_of_the_default_table(params, precision, flavor):
    assert choose_flavor(DEFAULT, params, precision) == flavor


def test_float32_counts_double_and_the_rest_as_they_are():
    assert effective_billions(7, "float32") == 14
    for precision in ("auto", "bfloat16", "float16"):
        assert effective_billions(7, precision) == 7
    with pytest.raises(ValueError, match="int8"):
        effective_billions(7, "int8")


def test_a_model_above_the_largest_flavor_is_too_large_with_a_message_for_the_submitter():
    with pytest.raises(TooLarge) as caught:
        choose_flavor(DEFAULT, 72, "bfloat16")
    assert str(caught.value) == ("72 B parameters (bfloat16) is larger than the largest hardware this leaderboard runs "
                                 "(l40sx4, up to 70 B at 16 bits); it cannot be evaluated here.")
    with pytest.raises(TooLarge) as caught:  # float32 alone made it too large: say that 16 bits would fit
        choose_flavor(DEFAULT, 40, "float32")
    assert str(caught.value) == ("40 B parameters (float32, counted as 80 B at 16 bits) is larger than the largest "
                                 "hardware this leaderboard runs (l40sx4, up to 70 B at 16 bits); submitted in "
                                 "bfloat16 or float16 it would fit.")
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("size", [None, float("nan")])
def test_an_unknown_size_is_refused_not_given_the_largest_flavor(size):
    with pytest.raises(UnknownSize, match="unknown") as caught:
        choose_flavor(DEFAULT, size, "auto")
    assert isinstance(caught.value, TooLarge)  # one `except TooLarge` covers both


def test_flavor_for_reads_the_settings_table():
    settings = Settings.from_env({"LEADERBOARD_JOBS_FLAVORS": "1=t4-small,100=a100x8"})
    assert flavor_for(settings, 0.3, "auto") == "t4-small"
    assert flavor_for(settings, 45, "float32") == "a100x8"


@pytest.mark.parametrize("entries, words", [
    ((), ["LEADERBOARD_JOBS_FLAVORS", "empty"]),
    (("3:t4-small",), ["LEADERBOARD_JOBS_FLAVORS", "<billions>=<flavor>", "3:t4-small"]),
    (("three=t4-small",), ["LEADERBOARD_JOBS_FLAVORS", "not a number", "three=t4-small"]),
    (("nan=t4-small",), ["LEADERBOARD_JOBS_FLAVORS", "positive"]),
    (("0=t4-small",), ["LEADERBOARD_JOBS_FLAVORS", "positive"]),
    (("-3=t4-small",), ["LEADERBOARD_JOBS_FLAVORS", "positive"]),
    (("3=",), ["LEADERBOARD_JOBS_FLAVORS", "no hardware flavor"]),
    (("3=t4 small",), ["LEADERBOARD_JOBS_FLAVORS", "not a hardware flavor name"]),
    (("3=t4-huge",), ["LEADERBOARD_JOBS_FLAVORS", "unknown hardware flavor 't4-huge'", "known:", "t4-small",
                      "l40sx4", "a100-large"]),
    (("15=l40sx1", "3=t4-small"), ["LEADERBOARD_JOBS_FLAVORS", "smallest first", "'3=t4-small'", "15=l40sx1"]),
    (("3=t4-small", "3=l40sx1"), ["LEADERBOARD_JOBS_FLAVORS", "smallest first"]),
])
def test_bad_tables_are_refused_naming_the_setting(entries, words):
    with pytest.raises(ValueError) as caught:
        parse_flavors(entries)
    for word in words:
        assert word in str(caught.value), str(caught.value)


def test_the_default_table_uses_only_flavors_the_jobs_api_has():
    """Every flavor of the default table is a name of huggingface_hub's own JobHardware, and the loopback Hub's
    hardware list (what the tests' Jobs may ask for) is exactly that list."""
    from tests.hub_jobs import HARDWARE

    names = {item.value for item in JobHardware}
    assert {rule.flavor for rule in parse_flavors(Settings.from_env({}).jobs_flavors)} <= names
    assert [row["name"] for row in HARDWARE] == [item.value for item in JobHardware]


def test_every_flavor_huggingface_hub_knows_is_accepted():
    names = [item.value for item in JobHardware]
    rules = parse_flavors(tuple(f"{i + 1}={name}" for i, name in enumerate(names)))
    assert [rule.flavor for rule in rules] == names


@pytest.mark.parametrize("flavor, multi", [
    ("t4-small", False), ("l40sx1", False), ("a100-large", False), ("cpu-xl", False), ("h200", False),
    ("l40sx4", True), ("l40sx8", True), ("a10g-largex2", True), ("a100x8", True), ("h200x2", True),
    ("rtx-pro-6000x4", True), ("rtx-pro-6000", False), ("L40SX4", True),
])
def test_is_multi_gpu(flavor, multi):
    assert is_multi_gpu(flavor) is multi


# ---------------------------------------------------------------- prices
def _hardware_json(name: str, pretty: str, micro_per_unit: int, unit: str = "minute", gpu: dict | None = None) -> dict:
    """One entry of GET /api/jobs/hardware, as the Hub sends it."""
    return {"name": name, "prettyName": pretty, "cpu": "8 vCPU", "ram": "32 GB", "ephemeralStorage": "50 GB",
            "accelerator": gpu, "unitCostMicroUSD": micro_per_unit, "unitCostUSD": micro_per_unit / 1_000_000,
            "unitLabel": unit}


def _gpu(model: str, count: int, vram: int) -> dict:
    return {"type": "gpu", "model": model, "quantity": str(count), "vram": f"{vram} GB", "manufacturer": "Nvidia"}


def test_hardware_prices_from_the_hubs_hardware_list():
    answer = [_hardware_json("cpu-basic", "CPU Basic", 167),                           # $0.01/h
              _hardware_json("t4-small", "Nvidia T4 - small", 6667, gpu=_gpu("T4", 1, 16)),   # $0.40/h
              _hardware_json("l40sx4", "4x Nvidia L40S", 138333, gpu=_gpu("L40S", 4, 192)),  # $8.30/h
              _hardware_json("a100-large", "Nvidia A100 - large", 2_500_000, unit="hour", gpu=_gpu("A100", 1, 80)),
              _hardware_json("odd", "Per job", 1_000_000, unit="job"),
              _hardware_json("tiny", "Tiny", 1),                                           # $0.00006/h
              _hardware_json("free", "Free", 0)]
    hardware = [JobHardwareInfo(**json.loads(json.dumps(entry))) for entry in answer]  # as list_jobs_hardware parses
    api = SimpleNamespace(list_jobs_hardware=lambda: hardware)
    assert hardware_prices(api) == {"cpu-basic": "$0.01/h", "t4-small": "$0.40/h", "l40sx4": "$8.30/h",
                                    "a100-large": "$2.50/h", "odd": "$1.00/job", "tiny": "<$0.01/h",
                                    "free": "$0.00/h"}


def test_an_unreadable_entry_is_left_out():
    good = JobHardwareInfo(**_hardware_json("t4-small", "Nvidia T4 - small", 6667))
    bad = JobHardwareInfo(**_hardware_json("weird", "Weird", 10))
    bad.unit_cost_micro_usd, bad.unit_cost_usd = None, "a lot"
    assert hardware_prices(SimpleNamespace(list_jobs_hardware=lambda: [bad, good])) == {"t4-small": "$0.40/h"}


def test_any_error_asking_gives_no_prices():
    def fails():
        raise RuntimeError("the Hub is down")

    assert hardware_prices(SimpleNamespace(list_jobs_hardware=fails)) == {}
    assert hardware_prices(HfApi(endpoint="http://127.0.0.1:9", token="hf_nothing")) == {}  # real client, offline
    assert hardware_prices(object()) == {}


def test_price_text():
    assert price_text(0.000167, "minute") == "$0.01/h"
    assert price_text(0.001, "second") == "$3.60/h"
    assert price_text(2, "Hour") == "$2.00/h"
    with pytest.raises(ValueError):
        price_text(-1, "hour")


# ---------------------------------------------------------------- the submission refusal
@pytest.fixture
def settings(settings):
    """A leaderboard that also asks a benchmark without images, so the text-only models submitted here are queued
    (a text-only model where every benchmark needs images is refused: test_submit_preflight.py)."""
    return settings.with_(benchmarks=("cure", "simpleqa"))


def _repo(hub_cache, name: str, parameters: int) -> str:
    """test-org/<name> in the offline Hub cache, with `parameters` float32 parameters (one tensor)."""
    files = {"config.json": json.dumps(LLAMA_CONFIG), "README.md": LICENSED_CARD,
             "model.safetensors": save_safetensors({"w": np.zeros((parameters,), dtype=np.float32)})}
    lay_into_hub_cache(hub_cache, f"test-org/{name}", files=files, add_card=False)
    return f"test-org/{name}"


def _jobs(settings, flavors: tuple[str, ...]):
    return settings.with_(executor="hf-jobs", jobs_flavors=flavors)


def _refused(outcome, store, *words):
    assert not outcome.ok, outcome.message
    assert outcome.request is None
    for word in words:
        assert word in outcome.message, outcome.message
    assert store.list("requests") == []


def test_a_model_larger_than_the_largest_flavor_is_refused_before_anything_is_written(settings, store, hub_cache):
    model = _repo(hub_cache, "flavor-too-big", 3000)                         # 3e-06 B
    jobs = _jobs(settings, ("0.000001=t4-small", "0.000002=l40sx4"))
    outcome = submit(jobs, store, model, precision="bfloat16", by=Visitor("alice"))
    _refused(outcome, store, "Model test-org/flavor-too-big: 3e-06 B parameters (bfloat16) is larger than the largest "
                             "hardware this leaderboard runs (l40sx4, up to 2e-06 B at 16 bits); it cannot be "
                             "evaluated here.")
    # the local executor has no hardware table: the same model is queued
    assert submit(settings.with_(jobs_flavors=("0.000001=t4-small",)), store, model, by=Visitor("alice")).ok


def test_float32_counts_double_at_submission(settings, store, hub_cache):
    model = _repo(hub_cache, "flavor-float32", 1000)                         # 1e-06 B, 2e-06 in float32
    jobs = _jobs(settings, ("0.0000015=l40sx4",))
    outcome = submit(jobs, store, model, precision="float32", by=Visitor("bob"))
    _refused(outcome, store, "1e-06 B parameters (float32, counted as 2e-06 B at 16 bits)",
             "submitted in bfloat16 or float16 it would fit")
    queued = submit(jobs, store, model, precision="bfloat16", by=Visitor("bob"))
    assert queued.ok, queued.message
    assert store.list("requests") == [queued.request.path]


def test_a_model_that_fits_is_queued_with_the_default_table(settings, store, hub_cache):
    model = _repo(hub_cache, "flavor-fits", 500)
    outcome = submit(settings.with_(executor="hf-jobs"), store, model, by=Visitor("carol"))
    assert outcome.ok, outcome.message


def test_a_bad_table_refuses_submissions_clearly(settings, store, hub_cache):
    model = _repo(hub_cache, "flavor-bad-table", 500)
    outcome = submit(_jobs(settings, ("15=l40sx1", "3=t4-small")), store, model, by=Visitor("dave"))
    _refused(outcome, store, "hardware table is misconfigured", "LEADERBOARD_JOBS_FLAVORS", "smallest first",
             "nothing was queued")
    # from the environment too: the settings load, the submission says what is wrong
    bad = Settings.from_env({"LEADERBOARD_JOBS_FLAVORS": "3=t4-huge"}, home=settings.home, run_scheduler=False)
    outcome = submit(bad.with_(executor="hf-jobs"), store, model, by=Visitor("dave"))
    _refused(outcome, store, "LEADERBOARD_JOBS_FLAVORS", "unknown hardware flavor")
