"""Giants fit: a run's memory beyond its weights (the KV cache at the run's longest sequence and batch size, a
thinking model's budget, the static cache's bucket, the image-features cache) picks a smaller batch or a larger
flavor, or refuses the model with the numbers. Shapes from the config.json of Llama 4 Scout, Qwen3-VL-235B-A22B and
GLM-4.5V (only the fields the count reads)."""
from __future__ import annotations

import pytest

from leaderboard.running import run_memory
from leaderboard.running.job_flavors import TooLarge, parse_flavors
from leaderboard.running.run_memory import as_plan, gpu_memory_gb, kv_bytes_per_row, may_think, plan_run

# meta-llama/Llama-4-Scout-17B-16E-Instruct: 109 B in all (16 experts), 48 layers, 8 KV heads of 128; its RoPE layers
# attend within 8,192-token chunks, every fourth (NoPE) to everything
SCOUT = {"model_type": "llama4", "text_config": {
    "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
    "hidden_size": 5120, "attention_chunk_size": 8192, "no_rope_layers": [1, 1, 1, 0] * 12,
    "num_local_experts": 16, "num_experts_per_tok": 1}}
# Qwen/Qwen3-VL-235B-A22B-Instruct: 236 B, 94 layers, 4 KV heads of 128
QWEN3_VL_235B = {"model_type": "qwen3_vl_moe", "text_config": {
    "num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
    "hidden_size": 4096, "num_experts": 128, "num_experts_per_tok": 8}}
# zai-org/GLM-4.5V: 108 B, 46 layers, 8 KV heads of 128
GLM_45V = {"model_type": "glm4v_moe", "text_config": {
    "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128,
    "hidden_size": 4096, "n_routed_experts": 128, "num_experts_per_tok": 8}}
TABLE = parse_flavors(["35=a100-large", "70=l40sx4", "140=h200x2", "300=h200x8"])


def test_flavors_gpu_memory():
    assert (gpu_memory_gb("h200x2"), gpu_memory_gb("l40sx4"), gpu_memory_gb("a10g-largex2")) == (282, 192, 48)
    assert gpu_memory_gb("a100-large") == 80 and gpu_memory_gb("t4-small") == 16
    assert gpu_memory_gb("cpu-basic") is None


def test_the_kv_cache_counts_windowed_layers_at_their_window():
    per_token = 2 * 8 * 128 * 2  # keys and values, 8 heads of 128, 2 bytes
    assert kv_bytes_per_row(SCOUT, 4096, "auto") == 48 * 4096 * per_token  # shorter than a chunk: all of it
    assert kv_bytes_per_row(SCOUT, 16384, "auto") == (36 * 8192 + 12 * 16384) * per_token
    assert kv_bytes_per_row(GLM_45V, 1000, "float32") == 46 * 1000 * 2 * 8 * 128 * 4
    linear = {"num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
              "layer_types": ["linear_attention"] * 3 + ["full_attention"]}
    assert kv_bytes_per_row(linear, 100, "auto") == 100 * 2 * 2 * 8 * 2


def test_llama_4_scout_runs_at_a_smaller_batch_on_the_flavor_its_weights_pick():
    plan = plan_run(TABLE, SCOUT, 109.0, "auto", thinking_budget=4096, may_think=False)
    # weights 218 GB on h200x2 (282 GB, 240 to plan on): 64 requests of 4,352 tokens would not fit beside them
    assert plan.flavor == "h200x2" and plan.choice == "smaller batch" and plan.tokens == 4352
    assert plan.batch_size is not None and plan.batch_size < 64
    assert plan.total_gb <= 282 * run_memory.HEADROOM
    bigger = plan_run(TABLE, SCOUT, 109.0, "auto", batch=plan.batch_size * 2)
    assert bigger.batch_size == plan.batch_size  # twice the batch does not fit: halved back to the same


def test_a_thinking_budget_makes_the_kv_cache_larger_and_the_batch_smaller():
    calm = plan_run(TABLE, GLM_45V, 108.0, "auto", thinking_budget=4096, may_think=False)
    thinking = plan_run(TABLE, GLM_45V, 108.0, "auto", thinking_budget=4096, may_think=True)
    assert (calm.flavor, thinking.flavor) == ("h200x2", "h200x2")
    assert thinking.tokens == calm.tokens + 4096 and thinking.thinking_tokens == 4096
    assert thinking.batch_size < calm.batch_size < 64
    assert thinking.kv_gb <= calm.kv_gb * 2  # a smaller batch holds the longer rows


def test_qwen3_vl_235b_fits_its_flavor_at_the_default_batch():
    plan = plan_run(TABLE, QWEN3_VL_235B, 236.0, "auto", thinking_budget=4096, may_think=True)
    assert (plan.flavor, plan.batch_size, plan.choice) == ("h200x8", None, "fits")
    assert plan.weights_gb == pytest.approx(472) and plan.kv_gb > 50


def test_a_run_no_batch_fits_takes_the_next_flavor_up():
    table = parse_flavors(["240=h200x4", "600=h200x8"])
    small = plan_run(table, QWEN3_VL_235B, 236.0, "auto", thinking_budget=4096, may_think=True)
    assert small.flavor == "h200x4" and small.choice == "smaller batch"
    long = plan_run(table, QWEN3_VL_235B, 236.0, "auto", thinking_budget=32768, may_think=True)
    assert (long.flavor, long.choice) == ("h200x8", "larger flavor")


def test_a_run_no_flavor_holds_is_refused_with_the_numbers():
    with pytest.raises(TooLarge) as refused:
        plan_run(parse_flavors(["240=h200x4"]), QWEN3_VL_235B, 236.0, "auto", thinking_budget=32768, may_think=True)
    said = str(refused.value)
    assert "472.0 GB" in said and "KV cache" in said and "thinking budget of 32768" in said and "h200x4" in said


def test_nothing_is_counted_without_a_config_or_on_a_cpu_flavor():
    assert plan_run(TABLE, None, 7.0, "auto") is None
    assert plan_run(parse_flavors(["10=cpu-upgrade"]), GLM_45V, 7.0, "auto") is None


def test_a_thinking_model_is_known_by_its_tokenizer():
    qwen = {"tokenizer_config.json": {"added_tokens_decoder": {"151667": {"content": "<think>"},
                                                               "151668": {"content": "</think>"}}}}
    assert may_think(qwen) and not may_think({"tokenizer_config.json": {"added_tokens_decoder": {}}})
    assert may_think({"tokenizer_config.json": {"chat_template": "{{ '<think>' }}...{{ '</think>' }}"}})
    assert not may_think({})


def test_a_stored_plan_is_read_back_or_ignored_when_damaged():
    plan = plan_run(TABLE, SCOUT, 109.0, "auto")
    assert as_plan(plan.record()).flavor == "h200x2"
    assert as_plan({"flavor": "h200x2"}) is None and as_plan({**plan.record(), "batch_size": 0}) is None
    assert as_plan("h200x2") is None


def test_the_job_runs_on_the_planned_flavor_at_the_planned_batch_size():
    from leaderboard.running import hf_jobs
    from leaderboard.running.run_memory import planned_flavor
    from leaderboard.settings import Settings
    from leaderboard.submissions.records import Request

    settings = Settings.from_env({"LEADERBOARD_JOBS_FLAVORS": "35=a100-large,70=l40sx4,140=h200x2,300=h200x8"})
    plan = plan_run(TABLE, SCOUT, 109.0, "auto")
    request = Request.from_dict({**Request("meta-llama/Scout", "a" * 40, params_billions=109.0).to_dict(),
                                 "run_plan": plan.record()})
    assert planned_flavor(settings, request) == ("h200x2", 16)
    assert hf_jobs.job_env(settings, "h200x2", 16)["LEADERBOARD_BATCH_SIZE"] == "16"
    assert hf_jobs.job_env(settings, "h200x2")["LEADERBOARD_BATCH_SIZE"] == settings.batch_size
    # a plan naming a flavor the table no longer has: the table's choice from the weights
    moved = Settings.from_env({"LEADERBOARD_JOBS_FLAVORS": "200=h200x4"})
    assert planned_flavor(moved, request) == ("h200x4", None)
    assert planned_flavor(settings, Request("org/m", "b" * 40, params_billions=50.0)) == ("l40sx4", None)


def test_submission_refuses_a_run_that_fits_no_flavor_and_plans_one_that_does():
    from leaderboard.settings import Settings
    from leaderboard.submissions.checks import check_hardware
    from leaderboard.submissions.outcomes import Refusal

    thinking = {"tokenizer_config.json": {"added_tokens_decoder": {"1": {"content": "<think>"},
                                                                   "2": {"content": "</think>"}}}}
    import dataclasses

    local = Settings.from_env({"LEADERBOARD_JOBS_FLAVORS": "240=h200x4"})
    settings = dataclasses.replace(local, executor="hf-jobs")
    with pytest.MonkeyPatch.context() as patch:
        # the tests' budget (tests/conftest.py sets it for the session), set here too: the whole suite on two
        # workers once ran this after a test that left the setting unset, and the plan read the default 4096
        patch.setenv("LEADERBOARD_THINKING_BUDGET", "8")
        plan = check_hardware(settings, "Qwen3-VL-235B", 236.0, "auto", QWEN3_VL_235B, thinking)
        assert (plan.flavor, plan.choice, plan.thinking_tokens) == ("h200x4", "smaller batch", 8)
        patch.setenv("LEADERBOARD_THINKING_BUDGET", "32768")
        with pytest.raises(Refusal, match=r"472\.0 GB.*KV cache"):
            check_hardware(settings, "Qwen3-VL-235B", 236.0, "auto", QWEN3_VL_235B, thinking)
    assert check_hardware(local, "Qwen3-VL-235B", 236.0, "auto", QWEN3_VL_235B, thinking) is None


def test_a_hostile_config_size_is_no_size_not_an_overflow():
    """config.json may hold Infinity (Python's JSON reader takes it): int() of it raised OverflowError while a run
    was planned at Submit; it is read as no size, as text or a list is."""
    hostile = {"num_hidden_layers": float("inf"), "num_attention_heads": float("nan"), "hidden_size": [4],
               "num_key_value_heads": "8"}
    assert kv_bytes_per_row(hostile, 100, "auto") == 0  # no layers known: nothing planned from garbage
