"""The machine's disk after a run (leaderboard.running.model_cache): a finished or failed run's model revision leaves
a temporary Hub cache unless a queued request needs it, LEADERBOARD_KEEP_MODELS_GB keeps the most recently run ones,
nothing leaves inside a Hugging Face Job, a failure never fails the run; admins see the free disk in the Queue tab."""
from __future__ import annotations

import logging

import pytest

from leaderboard.formatting import escape_markdown
from leaderboard.running import job_run, model_cache, scheduler
from leaderboard.submissions import records as queue
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.records import Request
from leaderboard.ui.queue_tab import disk_text
from tests.conftest import HUB_CACHE
from tests.hub_cache import fake_sha, lay_into_hub_cache

SIZE = 1000  # bytes of each laid model's weights file


@pytest.fixture
def keep_the_shared_hub_cache():
    """Overrides conftest's: here ticks free the temporary caches these tests lay out."""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A temporary Hub cache, the one this process and the evaluators it starts use."""
    from huggingface_hub import constants

    folder = tmp_path / "hub"
    folder.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(folder))
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    return folder


def _lay(cache, repo: str, tag: str = "main", repo_type: str = "model") -> str:
    return lay_into_hub_cache(cache, repo, files={"config.json": "{}", "model.safetensors": b"w" * SIZE},
                              sha=fake_sha(repo, tag), refs=(tag,), repo_type=repo_type)


def _cached(cache) -> set[tuple[str, str]]:
    from huggingface_hub import scan_cache_dir

    return {(repo.repo_id, rev.commit_hash) for repo in scan_cache_dir(cache).repos for rev in repo.revisions}


def _save(store, model: str, sha: str, status: str, finished: str | None = None, **fields) -> Request:
    request = Request(model=model, revision=sha, status=status, finished_time=finished, **fields)
    queue.save(store, request)
    return request


def test_a_run_that_ended_leaves_the_cache_unless_a_queued_request_needs_it(settings, store, cache):
    done = _save(store, "org/done", _lay(cache, "org/done"), queue.FINISHED)
    failed = _save(store, "org/failed", _lay(cache, "org/failed"), queue.FAILED)
    again = _lay(cache, "org/again")  # finished once, and queued again (another precision)
    _save(store, "org/again", again, queue.FINISHED, precision="float32")
    _save(store, "org/again", again, queue.PENDING, precision="bfloat16")
    old, new = _lay(cache, "org/two", "v1"), _lay(cache, "org/two", "v2")  # one repo, two revisions
    _save(store, "org/two", old, queue.FINISHED)
    _save(store, "org/two", new, queue.RUNNING)
    judge = _lay(cache, "org/judge")  # the local judge's model, which a run may also have evaluated
    _save(store, "org/judge", judge, queue.FINISHED)
    never = _lay(cache, "org/never-run")  # in the cache, but never a request of this leaderboard
    data = _lay(cache, "org/done", repo_type="dataset")  # a dataset of the same name
    settings = settings.with_(judge="local:org/judge")
    freed = model_cache.free_after_run(settings, store, done, cache_dir=cache)
    assert _cached(cache) == {("org/again", again), ("org/two", new), ("org/judge", judge), ("org/never-run", never),
                              ("org/done", data)}
    assert sorted(freed.deleted) == sorted([f"org/done@{done.revision[:12]}", f"org/failed@{failed.revision[:12]}",
                                            f"org/two@{old[:12]}"])
    assert freed.freed_bytes >= 3 * SIZE and freed.kept == ()
    assert not (cache / "models--org--done").exists() and (cache / "models--org--two" / "snapshots" / new).is_dir()
    assert model_cache.free_after_run(settings, store, done, cache_dir=cache).deleted == ()  # nothing left to do


def test_keep_models_gb_keeps_the_most_recently_run_revisions(settings, store, cache):
    ran = {}
    for name, finished in (("org/oldest", "2001-01-01T00:00:00+00:00"), ("org/middle", "2002-01-01T00:00:00+00:00"),
                           ("org/newest", "2003-01-01T00:00:00+00:00")):
        ran[name] = _save(store, name, _lay(cache, name), queue.FINISHED, finished=finished)
    just_now = _save(store, "org/just-now", _lay(cache, "org/just-now"), queue.FAILED,
                     finished="2000-01-01T00:00:00+00:00")  # the run that just ended counts as the newest
    room = (3 * SIZE + 3 * 200) / model_cache.GB  # three weights files and their small files, not four
    freed = model_cache.free_after_run(settings.with_(keep_models_gb=room), store, just_now, cache_dir=cache)
    assert {model for model, _ in _cached(cache)} == {"org/just-now", "org/newest", "org/middle"}
    assert [k.split("@")[0] for k in freed.kept] == ["org/just-now", "org/newest", "org/middle"]
    assert [k.split("@")[0] for k in freed.deleted] == ["org/oldest"]
    everything = model_cache.free_after_run(settings.with_(keep_models_gb=1.0), store, just_now, cache_dir=cache)
    assert everything.deleted == () and len(_cached(cache)) == 3
    assert model_cache.free_after_run(settings, store, just_now, cache_dir=cache).kept == ()  # 0 GB: none kept
    assert _cached(cache) == set()


def _fake_run(status: str):
    """A run_request that closes the request with `status` at once (no evaluator)."""
    def run(settings, store, request, owner, stop=None, in_job=False):
        closed = queue.finish(store, request.path, owner, status, error=None if status == queue.FINISHED else "boom")
        return scheduler.TickReport(request=request.path, status=closed.status)

    return run


@pytest.mark.parametrize("status", [queue.FINISHED, queue.FAILED])
def test_a_tick_frees_the_cache_after_its_run(settings, store, cache, monkeypatch, status):
    request = _save(store, "org/model", _lay(cache, "org/model"), queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run(status))
    assert scheduler.tick(settings, store).status == status
    assert _cached(cache) == set() and queue.load(store, request.path).status == status


def test_a_failure_to_delete_is_logged_and_never_fails_the_run(settings, store, cache, monkeypatch, caplog):
    import huggingface_hub

    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    sha = _lay(cache, "org/model")
    _save(store, "org/model", sha, queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run(queue.FINISHED))
    monkeypatch.setattr(huggingface_hub, "scan_cache_dir", refuse)
    with caplog.at_level(logging.WARNING, logger=model_cache.__name__):
        assert scheduler.tick(settings, store).status == queue.FINISHED
    assert "not cleaned" in caplog.text and "read-only file system" in caplog.text
    monkeypatch.undo()
    assert _cached(cache) == {("org/model", sha)}


def test_inside_a_hugging_face_job_nothing_is_freed(settings, store, cache, monkeypatch):
    request = _save(store, "org/model", _lay(cache, "org/model"), queue.RUNNING, lease_owner="job-owner")
    monkeypatch.setenv("LEADERBOARD_HOME", str(settings.home))
    monkeypatch.setattr(job_run, "run_request", _fake_run(queue.FINISHED))
    assert job_run.main(["--request", request.path, "--owner", "job-owner"]) == 0
    assert queue.load(store, request.path).status == queue.FINISHED
    assert _cached(cache) == {("org/model", request.revision)}  # the Job's disk goes with its container
    assert len(model_cache.free_after_run(settings, store, request).deleted) == 1  # a local tick would have freed it


def test_a_real_run_of_a_tiny_model_leaves_the_cache(settings, store, cache, tiny_llava, one_torch_thread):
    sha = lay_into_hub_cache(cache, tiny_llava.repo_id, tiny_llava.folder)
    request = _save(store, tiny_llava.repo_id, sha, queue.PENDING, architecture="test")
    queued = _save(store, "org/queued", _lay(cache, "org/queued"), queue.PENDING,
                   submitted_time="2999-01-01T00:00:00+00:00")  # after the first: still queued when it ends
    report = scheduler.tick(settings.with_(limit=2), store)
    assert report.request == request.path and report.status == queue.FINISHED, report.error
    assert _cached(cache) == {("org/queued", queued.revision)}
    assert (HUB_CACHE / "models--tiny-org--tiny-llava" / "snapshots" / sha).is_dir()  # the shared cache: untouched


def test_admins_see_the_free_disk_of_the_home_and_of_the_hub_cache(settings, cache):
    shown = disk_text(settings, Visitor("ada", admin=True))
    assert shown.startswith("**Free disk**") and shown.count("GB free of") == 2
    assert "LEADERBOARD_HOME" in shown and "Hub cache" in shown and escape_markdown(cache) in shown
    for visitor in (Visitor("alice"), Visitor()):  # signed in or not: nothing of it
        assert disk_text(settings, visitor) == ""
    folders = {what: (folder, free, total) for what, folder, free, total in model_cache.free_disk(settings)}
    assert not settings.home.exists() and folders["LEADERBOARD_HOME"][0] == settings.home  # not made yet: its parent's
    assert 0 <= folders["Hub cache"][1] <= folders["Hub cache"][2]


def test_the_queue_tab_puts_the_free_disk_on_admins_pages_only(settings, store, cache):
    from types import SimpleNamespace

    import gradio as gr

    from leaderboard.ui import queue_tab

    with gr.Blocks() as demo:  # the tab alone: a whole app with sign-in would want this machine's Hub login
        queue_tab.build(demo, settings.with_(require_sign_in=True, admins=("ada",)), store)
    decorate = next(dep for dep in demo.fns.values() if dep.fn is not None and dep.fn.__name__ == "decorate")
    disk = next(block for block in decorate.outputs if getattr(block, "elem_id", None) == "queue-admin-disk")
    where = decorate.outputs.index(disk)
    shown = {who: decorate.fn({}, profile) for who, profile in (
        ("ada", SimpleNamespace(username="ada")), ("bob", SimpleNamespace(username="bob")), ("nobody", None))}
    assert all(len(out) == len(decorate.outputs) for out in shown.values())
    assert shown["ada"][where].startswith("**Free disk**") and escape_markdown(cache) in shown["ada"][where]
    assert shown["bob"][where] == "" and shown["nobody"][where] == ""
