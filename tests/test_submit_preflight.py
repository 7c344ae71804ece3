"""Issue 62, points 1-3: the Submit tab runs the CLI's preflight, the judge is checked at start, and refusals say
what to do next.

- A text-only model on a Space whose benchmarks all need images was queued, then FAILED on the next tick with advice
  a visitor cannot follow, and counted toward the weekly limit: now Submit refuses it (evaluator.api.images_needed,
  the CLI's rule), and a request refused before its run began (the evaluator's mark, api.NOTHING_RAN) is not counted.
- `LEADERBOARD_JUDGE=local:<id>` with the id not in the offline cache was accepted at start and failed the run 51 s
  later with `LocalEntryNotFoundError`; the CLI's `--judge local:...` gave the same raw text.
- Submit's "not in the local Hub cache" and "could not be reached" said nothing to do; a local folder's run linked to
  `https://huggingface.co/local/...`, and its greyed Propose button blamed HF_TOKEN.
"""
from __future__ import annotations

import json
from datetime import timedelta

import pytest

from evaluator import api
from evaluator.runs import preflight
from leaderboard.board import proposals
from leaderboard.board.frames import model_link, model_shown
from leaderboard.settings import Settings
from leaderboard.submissions import limits
from leaderboard.submissions import records as q
from leaderboard.submissions.checks import submit
from leaderboard.submissions.identity import Visitor
from tests.hub_cache import lay_into_hub_cache

CAT = Visitor("cat")


# ---------------------------------------------------------------- point 1: Submit runs the CLI's preflight
def test_a_text_only_model_where_every_benchmark_needs_images_is_refused_at_submit(settings, store, tiny_llama):
    assert settings.benchmarks == ("cure",)  # the default Space: every benchmark needs images
    outcome = submit(settings, store, tiny_llama.repo_id, by=CAT)
    assert not outcome.ok and outcome.request is None and store.list("requests") == []
    said = outcome.message
    assert said.startswith("Model tiny") and "is text-only (LlamaForCausalLM: no vision part)" in said, said
    assert "(cure) needs image input, so nothing would run; please submit a vision-language model" in said, said
    assert "without images" not in said  # the CLI's advice, which a visitor cannot follow
    with_text = submit(settings.with_(benchmarks=("cure", "simpleqa")), store, tiny_llama.repo_id, by=CAT)
    assert with_text.ok, with_text.message  # a benchmark without images would run: queued as before


def test_a_vision_model_is_not_refused_for_images(settings, store, tiny_llava):
    assert submit(settings, store, tiny_llava.repo_id, by=CAT).ok


def test_the_rule_is_the_clis(tiny_llama):
    """Submit and the CLI's preflight share one rule (evaluator.api.images_needed)."""
    assert api.images_needed(["cure", "reform"], False) == ["cure", "reform"]
    assert api.images_needed(["cure", "simpleqa"], False) == [] and api.images_needed(["cure"], True) == []
    with pytest.raises(preflight.Refused, match="is text-only"):
        preflight.check(tiny_llama.repo_id, tiny_llama.sha, ["cure"], "")


def _failed(error: str, days: float, model: str = "org/m") -> q.Request:
    return q.Request(model=model, revision=f"{int(days * 10):040d}", submitter="cat", status=q.FAILED, error=error,
                     submitted_time=q.iso(q.now() - timedelta(days=days)))


def test_a_request_refused_before_its_run_began_does_not_count_toward_the_weekly_limit(settings):
    weekly = settings.with_(max_submissions_per_week=2, max_pending_per_user=10)
    new = q.Request(model="org/new", revision="f" * 40, submitter="cat")
    refused = [_failed(f"org/x is text-only ...: nothing would run {api.NOTHING_RAN}", d) for d in (1, 2, 3)]
    assert limits.refusal(weekly, refused, new, q.now()) == ""
    ran = [_failed("CUDA out of memory while generating", d) for d in (1, 2)]  # it ran, and failed: counted
    assert "has submitted 2 request(s) in the last 7 days" in limits.refusal(weekly, refused + ran, new, q.now())
    assert not limits.refused_before_run(q.Request(model="org/m", revision="a" * 40, error=api.NOTHING_RAN))


def test_the_cli_marks_a_queue_request_refused_before_its_run_began(tiny_llama, tmp_path, capsys):
    """What the worker stores as a FAILED request's reason is the CLI's last `error:` line: a request's run that its
    configuration stopped ends that line with the mark; a run by --model (a person at the terminal) does not."""
    from evaluator.__main__ import main

    request = tmp_path / "request.json"
    request.write_text(json.dumps({"model": tiny_llama.repo_id, "revision": tiny_llama.sha, "precision": "auto"}))
    assert main(["run", "--request", str(request), "--benchmarks", "cure", "--out", str(tmp_path / "out")]) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"error: {tiny_llama.repo_id} is text-only") and line.endswith(api.NOTHING_RAN), line
    assert main(["run", "--model", tiny_llama.repo_id, "--revision", tiny_llama.sha, "--benchmarks", "cure",
                 "--out", str(tmp_path / "out")]) == 1
    assert api.NOTHING_RAN not in capsys.readouterr().err


# ---------------------------------------------------------------- point 2: the judge checked at start
MISSING = "local:tiny-org/never-downloaded-judge"


def test_a_local_judge_the_offline_cache_lacks_is_refused_at_start_naming_it(tmp_path):
    with pytest.raises(ValueError) as refused:
        Settings.from_env({"LEADERBOARD_JUDGE": MISSING}, home=tmp_path)
    said = str(refused.value)
    assert said.startswith("LEADERBOARD_JUDGE: the judge local:tiny-org/never-downloaded-judge is not in this "
                           "machine's Hugging Face cache and the Hub is off (HF_HUB_OFFLINE=1)"), said
    assert "download it once with the Hub reachable" in said and "local model folder" in said and "\n" not in said
    assert "LocalEntryNotFoundError" not in said and "Error" not in said
    for spec, start in (("endpoint:ftp://judge.example/v1|m", "LEADERBOARD_JUDGE: bad endpoint judge spec"),
                        ("local:../up", "LEADERBOARD_JUDGE: bad local judge spec")):  # known without a call too
        with pytest.raises(ValueError, match=f"^{start}"):
            Settings.from_env({"LEADERBOARD_JUDGE": spec}, home=tmp_path)


def test_a_cached_judge_and_a_folder_judge_are_accepted(tmp_path, hub_cache, tiny_llama):
    Settings.from_env({"LEADERBOARD_JUDGE": f"local:{tiny_llama.repo_id}@{tiny_llama.sha}"}, home=tmp_path)
    Settings.from_env({"LEADERBOARD_JUDGE": f"local:{tiny_llama.repo_id}"}, home=tmp_path)  # its main ref
    Settings.from_env({"LEADERBOARD_JUDGE": f"local:{tiny_llama.folder}"}, home=tmp_path)
    with pytest.raises(ValueError, match=r"never-downloaded-judge@0{12} is not in this machine"):
        Settings.from_env({"LEADERBOARD_JUDGE": f"{MISSING}@{'0' * 12}"}, home=tmp_path)
    lay_into_hub_cache(hub_cache, "tiny-org/judge-with-a-tag", files={"config.json": "{}"}, refs=("v1",))
    Settings.from_env({"LEADERBOARD_JUDGE": "local:tiny-org/judge-with-a-tag@v1"}, home=tmp_path)
    with pytest.raises(ValueError, match="judge-with-a-tag@v2 is not in"):
        Settings.from_env({"LEADERBOARD_JUDGE": "local:tiny-org/judge-with-a-tag@v2"}, home=tmp_path)


def test_the_clis_preflight_refuses_the_same_judge_in_one_line(tiny_llava, tmp_path, capsys):
    with pytest.raises(preflight.Refused) as refused:
        preflight.check(tiny_llava.repo_id, tiny_llava.sha, ["cure", "simpleqa"], MISSING)
    assert str(refused.value).startswith("--judge (LEADERBOARD_JUDGE): the judge local:tiny-org/never-downloaded-"
                                         "judge is not in this machine's Hugging Face cache"), refused.value
    preflight.check(tiny_llava.repo_id, tiny_llava.sha, ["cure"], MISSING)  # no benchmark asked needs it
    from evaluator.__main__ import main

    assert main(["run", "--model", tiny_llava.repo_id, "--revision", tiny_llava.sha, "--benchmarks", "simpleqa",
                 "--judge", MISSING, "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {refused.value}"], err  # one line, said before any model loads


# ---------------------------------------------------------------- point 3: refusals say what to do next
def test_a_model_the_offline_cache_lacks_says_what_to_do(settings, store, hub_cache):
    said = submit(settings, store, "tiny-org/not-here", by=CAT).message
    assert "is not in the local Hub cache; the Hub is offline." in said, said
    assert "downloaded once into this machine's Hugging Face cache with the Hub reachable" in said, said
    assert "local model folder" in said  # this Space (the local default) allows local folders
    closed = submit(settings.with_(allow_local_models=False), store, "tiny-org/not-here", by=CAT).message
    assert "Hub reachable" in closed and "local model folder" not in closed, closed
    lay_into_hub_cache(hub_cache, "tiny-org/one-revision", files={"config.json": "{}"})
    revision = submit(settings, store, "tiny-org/one-revision", revision="v2", by=CAT).message
    assert "Revision v2 of tiny-org/one-revision is not in the local Hub cache" in revision
    assert "Hub reachable" in revision, revision


def test_a_hub_out_of_reach_says_what_to_do(settings, store, monkeypatch):
    import httpx2

    from leaderboard.submissions import model_inspection

    class Unreachable:
        def model_info(self, *args, **kwargs):
            raise httpx2.ConnectError("no route")

    monkeypatch.setattr(model_inspection, "OFFLINE", False)
    said = submit(settings, store, "tiny-org/far", by=CAT, api=Unreachable()).message
    assert "The Hub could not be reached (ConnectError); please try again later." in said, said
    assert "submit again once the Hub is reachable" in said and "with the Hub reachable" in said, said


def test_a_local_folders_run_links_to_no_hub_page():
    assert model_link("local/tiny-llava") == "local/tiny-llava"
    assert "huggingface.co" not in model_shown({"model": "local/tiny-llava"})[0]
    assert model_link("org/model") == "[org/model](https://huggingface.co/org/model)"  # a Hub model keeps its link


def test_a_local_folders_greyed_propose_button_gives_the_real_reason(settings, monkeypatch):
    assert not settings.hf_token  # the local default: a Space that cannot propose at all
    local = q.Request(model="local/tiny-llava", revision="a" * 40, status=q.FINISHED, source="local")
    said = proposals.refused_run(settings, local, {})
    assert said.startswith("Only a Hugging Face Hub model has a model page") and "local folder" in said, said
    assert "HF_TOKEN" not in said
    monkeypatch.setattr(proposals, "run_problem", lambda *args: "")  # a run that could be proposed: the Space's
    assert "HF_TOKEN" in proposals.refused_run(settings, local, {})
