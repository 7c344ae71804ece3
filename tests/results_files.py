"""Results files as the scheduler publishes them, for tests of the board, the UI and the store."""
from __future__ import annotations

SHA_A = "abcdef0123456789abcdef0123456789abcdef01"
SHA_B = "0123456789abcdef0123456789abcdef01234567"


def result(model: str, sha: str = SHA_A, precision: str = "auto", model_type: str = "pretrained",
           params: float | None = 0.5, **scores) -> dict:
    """A results file as the scheduler publishes it (see the contract in the brief)."""
    cure = {"Rh": 0.5, "Rcot": 0.2, "Ro": 0.1, "Cf": 0.5, "Cb": 0.2, "step_accuracy": 0.4}
    cure.update(scores)
    return {
        "model": model, "revision": sha, "precision": precision, "model_type": model_type,
        "params_billions": params, "architecture": "LlavaForConditionalGeneration",
        "key": f"{model}/{sha[:12]}_{precision}",
        "submitted_time": "2026-11-22T02:00:00+00:00", "finished_time": "2026-11-22T02:10:00+00:00",
        "run": {"dtype": "float32", "device": "cpu", "batch_size": 4, "versions": {"torch": "2"},
                "git_commit": "abc", "judge": None, "prompt_hashes": {"cure_high": "sha256:00"}, "suite": "sample",
                "item_counts": {"cure": 20}, "wall_time_s": 12.3, "scoring_path": "reference", "has_vision": True},
        "benchmarks": {"cure": {"scores": cure, "counts": {"items": 20, "scored": 20, "image_unavailable": 0},
                                "extra": {"by_chain_length": {"2": {"Rh": 0.5, "n": 5}}, "mode": "likelihood"}}},
        "skipped": {},
    }


def write_result(store, res: dict) -> str:
    path = f"results/{res['model']}/{res['revision'][:12]}_{res['precision']}.json"
    store.write_json(path, res)
    return path


HEADLINES = {"cure": "Ro", "simpleqa": "f_score", "reform": "gen_overall", "lave": "lave"}
TEXT_ONLY = "needs image input; the model is text-only"


def board_result(model: str, scores: dict[str, float | None], sha: str = SHA_A, precision: str = "auto",
                 coverage: dict[str, float] | None = None, skipped: dict[str, str] | None = None, limit: int = 0,
                 counts: dict[str, dict] | None = None, suite: str = "sample", judge: dict | None = None,
                 model_type: str = "instruction-tuned", params: float | None = 0.5) -> dict:
    """A results file of any benchmarks: `scores` gives each benchmark's headline score (None: undefined); coverage
    is 1.0 for every benchmark unless `coverage` says otherwise."""
    coverage = coverage or {}
    benchmarks = {}
    for name, value in scores.items():
        share = coverage.get(name, 1.0)
        benchmarks[name] = {"scores": {HEADLINES[name]: value}, "counts": {"items": 30, **(counts or {}).get(name, {})},
                            "extra": {}, "coverage": {"scored": round(30 * share), "items": 30, "suite_items": 30,
                                                      "share": share}}
    res = result(model, sha=sha, precision=precision, model_type=model_type, params=params)
    res["benchmarks"] = benchmarks
    res["skipped"] = dict(skipped or {})
    res["run"].update({"suite": suite, "limit": limit, "judge": judge,
                       "judge_name": f"{judge['model']} (endpoint {judge['base_url']})" if judge else None})
    return res
