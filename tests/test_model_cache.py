"""The machine's disk after a run (leaderboard.running.model_cache). The Hub cache is usually the user's own, so the
leaderboard never deletes what it did not put there: deleting is off by default outside a Space; when on, only the
revisions it downloaded itself (recorded before the download) leave, never one that was there before, never the
judge's model in any spelling, nothing after a cancel that downloaded nothing, and each deletion is one console line.
LEADERBOARD_KEEP_MODELS_GB keeps the most recently run ones; nothing leaves inside a Hugging Face Job; a failure never
fails the run; admins see the free disk in the Queue tab."""
from __future__ import annotations

import logging
import os
import shutil
import time

import pytest

from leaderboard.formatting import escape_markdown
from leaderboard.running import job_run, model_cache, scheduler
from leaderboard.settings import Settings
from leaderboard.submissions import records as queue
from leaderboard.submissions.actions import act
from leaderboard.submissions.identity import Visitor
from leaderboard.submissions.records import Request
from leaderboard.ui.queue_tab import disk_text
from tests.conftest import HUB_CACHE, PATIENT, wait_for
from tests.hub_cache import fake_sha, lay_into_hub_cache

SIZE = 1000  # bytes of each laid model's weights file


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A temporary Hub cache, the one this process and the evaluators it starts use."""
    from huggingface_hub import constants

    folder = tmp_path / "hub"
    folder.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(folder))
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    return folder


@pytest.fixture
def deleting(settings):
    """Settings with deleting on (as on a Space)."""
    return settings.with_(delete_models=True)


def _lay(cache, repo: str, tag: str = "main", repo_type: str = "model") -> str:
    return lay_into_hub_cache(cache, repo, files={"config.json": "{}", "model.safetensors": b"w" * SIZE},
                              sha=fake_sha(repo, tag), refs=(tag,), repo_type=repo_type)


def _download(settings, cache, repo: str, tag: str = "main") -> str:
    """What a run of this leaderboard does: note the revision before it arrives, then the evaluator fetches it."""
    sha = fake_sha(repo, tag)
    assert model_cache.note_download(settings, Request(model=repo, revision=sha), cache_dir=cache) is True
    return _lay(cache, repo, tag)


def _cached(cache) -> set[tuple[str, str]]:
    from huggingface_hub import scan_cache_dir

    return {(repo.repo_id, rev.commit_hash) for repo in scan_cache_dir(cache).repos for rev in repo.revisions}


def _files(folder) -> dict[str, int]:
    """Every file and link under `folder` with its size: what "the cache kept everything" compares."""
    return {os.path.relpath(os.path.join(d, n), folder): os.lstat(os.path.join(d, n)).st_size
            for d, _, names in os.walk(folder) for n in names}


def _save(store, model: str, sha: str, status: str, finished: str | None = None, **fields) -> Request:
    request = Request(model=model, revision=sha, status=status, finished_time=finished, **fields)
    queue.save(store, request)
    return request


# ---------------------------------------------------------------- the defaults
def test_deleting_is_off_outside_a_space_and_on_on_a_space():
    assert Settings.from_env({}).delete_models is False
    assert Settings.from_env({"SPACE_ID": "org/space"}).delete_models is False  # SPACE_ID alone is not a Space
    space = {"SYSTEM": "spaces", "SPACE_ID": "org/space", "LEADERBOARD_REQUIRE_SIGN_IN": "0",
             "LEADERBOARD_HOST": "127.0.0.1"}
    assert Settings.from_env(space).delete_models is True
    assert Settings.from_env({**space, "LEADERBOARD_DELETE_MODELS": "0"}).delete_models is False
    assert Settings.from_env({"LEADERBOARD_DELETE_MODELS": "1"}).delete_models is True
    assert Settings().delete_models is False


def test_with_deleting_off_nothing_leaves_not_even_what_it_downloaded(settings, store, cache):
    sha = _download(settings, cache, "org/done")
    done = _save(store, "org/done", sha, queue.FINISHED)
    assert model_cache.free_after_run(settings, store, done, cache_dir=cache) == model_cache.Freed()
    assert _cached(cache) == {("org/done", sha)}


# ---------------------------------------------------------------- only what it downloaded
def test_only_revisions_it_downloaded_leave_and_only_when_no_queued_request_needs_them(deleting, store, cache):
    settings = deleting
    done = _save(store, "org/done", _download(settings, cache, "org/done"), queue.FINISHED)
    failed = _save(store, "org/failed", _download(settings, cache, "org/failed"), queue.FAILED)
    again = _download(settings, cache, "org/again")  # finished once, and queued again (another precision)
    _save(store, "org/again", again, queue.FINISHED, precision="float32")
    _save(store, "org/again", again, queue.PENDING, precision="bfloat16")
    old, new = _download(settings, cache, "org/two", "v1"), _download(settings, cache, "org/two", "v2")
    _save(store, "org/two", old, queue.FINISHED)
    _save(store, "org/two", new, queue.RUNNING)
    mine = _lay(cache, "org/mine")  # the user's own: in the cache before this leaderboard ran it
    _save(store, "org/mine", mine, queue.FINISHED)
    assert model_cache.note_download(settings, Request(model="org/mine", revision=mine), cache_dir=cache) is False
    never = _lay(cache, "org/never-run")  # in the cache, never a request of this leaderboard
    data = _lay(cache, "org/done", repo_type="dataset")  # a dataset of the same name
    freed = model_cache.free_after_run(settings, store, done, cache_dir=cache)
    assert _cached(cache) == {("org/again", again), ("org/two", new), ("org/mine", mine), ("org/never-run", never),
                              ("org/done", data)}
    assert sorted(freed.deleted) == sorted([f"org/done@{done.revision[:12]}", f"org/failed@{failed.revision[:12]}",
                                            f"org/two@{old[:12]}"])
    assert freed.freed_bytes >= 3 * SIZE and freed.kept == ()
    assert not (cache / "models--org--done").exists() and (cache / "models--org--two" / "snapshots" / new).is_dir()
    assert model_cache.free_after_run(settings, store, done, cache_dir=cache).deleted == ()  # nothing left to do


def test_a_revision_already_in_the_cache_is_never_recorded_nor_deleted(deleting, store, cache):
    sha = _lay(cache, "org/theirs")  # the user downloaded it; then submitted it here
    request = _save(store, "org/theirs", sha, queue.FINISHED)
    assert model_cache.note_download(deleting, request, cache_dir=cache) is False
    assert model_cache.free_after_run(deleting, store, request, cache_dir=cache).deleted == ()
    assert _cached(cache) == {("org/theirs", sha)}
    assert not model_cache.ledger_path(deleting).exists()  # nothing was recorded


def test_a_revision_deleted_by_hand_and_fetched_again_by_the_user_is_theirs(deleting, store, cache):
    sha = _download(deleting, cache, "org/model")
    request = _save(store, "org/model", sha, queue.PENDING)  # still queued: kept
    assert model_cache.free_after_run(deleting, store, request, cache_dir=cache).deleted == ()
    shutil.rmtree(cache / "models--org--model")  # the user deleted it by hand...
    model_cache.free_after_run(deleting, store, request, cache_dir=cache)  # ...the ledger forgets it
    _lay(cache, "org/model")  # ...and downloaded it again themselves
    queue.save(store, Request(model="org/model", revision=sha, status=queue.FINISHED))
    assert model_cache.free_after_run(deleting, store, request, cache_dir=cache).deleted == ()
    assert _cached(cache) == {("org/model", sha)}


def test_an_unreadable_ledger_deletes_nothing(deleting, store, cache, caplog):
    request = _save(store, "org/done", _download(deleting, cache, "org/done"), queue.FINISHED)
    model_cache.ledger_path(deleting).write_text("{not json")
    with caplog.at_level(logging.WARNING, logger=model_cache.__name__):
        assert model_cache.free_after_run(deleting, store, request, cache_dir=cache).deleted == ()
    assert "unreadable" in caplog.text and _cached(cache) == {("org/done", request.revision)}


# ---------------------------------------------------------------- the judge, in any spelling
@pytest.mark.parametrize("spelling", ["hub id", "other case", "with revision", "snapshot folder", "linked folder",
                                      "repo folder"])
def test_the_judges_model_is_never_deleted_whatever_its_spelling(deleting, store, cache, tmp_path, spelling):
    sha = _download(deleting, cache, "HuggingFaceTB/SmolLM2-135M-Instruct")  # also evaluated by this leaderboard
    request = _save(store, "HuggingFaceTB/SmolLM2-135M-Instruct", sha, queue.FINISHED)
    snapshot = cache / "models--HuggingFaceTB--SmolLM2-135M-Instruct" / "snapshots" / sha
    link = tmp_path / "judge-link"
    link.symlink_to(snapshot, target_is_directory=True)
    judge = {"hub id": "HuggingFaceTB/SmolLM2-135M-Instruct", "other case": "huggingfacetb/smollm2-135m-instruct",
             "with revision": f"HuggingFaceTB/SmolLM2-135M-Instruct@{sha}", "snapshot folder": str(snapshot),
             "linked folder": str(link), "repo folder": str(snapshot.parent.parent)}[spelling]
    settings = deleting.with_(judge=f"local:{judge}")
    assert model_cache.free_after_run(settings, store, request, cache_dir=cache).deleted == ()
    assert _cached(cache) == {("HuggingFaceTB/SmolLM2-135M-Instruct", sha)}
    other = deleting.with_(judge="local:org/another-judge")  # a different judge: the model is the leaderboard's own
    assert len(model_cache.free_after_run(other, store, request, cache_dir=cache).deleted) == 1


def test_a_judge_folder_outside_the_cache_whose_files_link_into_it_is_kept(deleting, store, cache, tmp_path):
    sha = _download(deleting, cache, "org/judge")
    request = _save(store, "org/judge", sha, queue.FINISHED)
    folder = tmp_path / "judge"
    folder.mkdir()
    (folder / "model.safetensors").symlink_to(cache / "models--org--judge" / "snapshots" / sha / "model.safetensors")
    settings = deleting.with_(judge=f"local:{folder}")
    assert model_cache.free_after_run(settings, store, request, cache_dir=cache).deleted == ()


# ---------------------------------------------------------------- how much is kept, and what each deletion says
def test_keep_models_gb_keeps_the_most_recently_run_revisions(deleting, store, cache):
    ran = {}
    for name, finished in (("org/oldest", "2001-01-01T00:00:00+00:00"), ("org/middle", "2002-01-01T00:00:00+00:00"),
                           ("org/newest", "2003-01-01T00:00:00+00:00")):
        ran[name] = _save(store, name, _download(deleting, cache, name), queue.FINISHED, finished=finished)
    just_now = _save(store, "org/just-now", _download(deleting, cache, "org/just-now"), queue.FAILED,
                     finished="2000-01-01T00:00:00+00:00")  # the run that just ended counts as the newest
    room = (3 * SIZE + 3 * 200) / model_cache.GB  # three weights files and their small files, not four
    freed = model_cache.free_after_run(deleting.with_(keep_models_gb=room), store, just_now, cache_dir=cache)
    assert {model for model, _ in _cached(cache)} == {"org/just-now", "org/newest", "org/middle"}
    assert [k.split("@")[0] for k in freed.kept] == ["org/just-now", "org/newest", "org/middle"]
    assert [k.split("@")[0] for k in freed.deleted] == ["org/oldest"]
    everything = model_cache.free_after_run(deleting.with_(keep_models_gb=1.0), store, just_now, cache_dir=cache)
    assert everything.deleted == () and len(_cached(cache)) == 3
    assert model_cache.free_after_run(deleting, store, just_now, cache_dir=cache).kept == ()  # 0 GB: none kept
    assert _cached(cache) == set()


def test_each_deletion_is_one_line_at_the_default_log_level(deleting, store, cache, caplog):
    shas = [_download(deleting, cache, "org/one"), _download(deleting, cache, "org/two")]
    done = [_save(store, repo, sha, queue.FINISHED) for repo, sha in zip(("org/one", "org/two"), shas)]
    with caplog.at_level(logging.WARNING):  # the level Python shows when nothing configured logging
        freed = model_cache.free_after_run(deleting, store, done[0], cache_dir=cache)
    lines = [r for r in caplog.records if r.name == model_cache.__name__]
    assert len(freed.deleted) == 2 and len(lines) == 2
    assert all(r.levelno >= logging.getLogger().getEffectiveLevel() and r.levelno >= logging.WARNING for r in lines)
    said = sorted(r.getMessage() for r in lines)
    assert said[0].startswith(f"Hub cache: deleted org/one@{shas[0][:12]}") and "LEADERBOARD_DELETE_MODELS=0" in said[0]
    assert said[1].startswith(f"Hub cache: deleted org/two@{shas[1][:12]}") and "\n" not in said[1]


# ---------------------------------------------------------------- through the tick
def _fake_run(status: str, cache=None, lay: bool = True):
    """A run_request that closes the request with `status` at once (no evaluator); with `lay`, its model arrives in
    the cache as a download by the evaluator would bring it."""
    def run(settings, store, request, owner, stop=None, in_job=False, served_by=None):
        if lay and cache is not None:
            lay_into_hub_cache(cache, request.model, files={"model.safetensors": b"w" * SIZE}, sha=request.revision)
        if status == "LOST":  # cancelled while it ran
            assert act(store, request.path, "cancel", Visitor("ada", admin=True))[0]
            return scheduler.TickReport(request=request.path, status="LOST", error="the lease was lost")
        closed = queue.finish(store, request.path, owner, status, error=None if status == queue.FINISHED else "boom")
        return scheduler.TickReport(request=request.path, status=closed.status)

    return run


@pytest.mark.parametrize("status", [queue.FINISHED, queue.FAILED])
def test_a_tick_frees_what_its_run_downloaded(deleting, store, cache, monkeypatch, status):
    request = _save(store, "org/model", fake_sha("org/model", "main"), queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run(status, cache))
    assert scheduler.tick(deleting, store).status == status
    assert _cached(cache) == set() and queue.load(store, request.path).status == status


def test_a_tick_keeps_a_model_that_was_in_the_cache_before_its_run(deleting, store, cache, monkeypatch):
    request = _save(store, "org/model", _lay(cache, "org/model"), queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run(queue.FINISHED, cache))
    assert scheduler.tick(deleting, store).status == queue.FINISHED
    assert _cached(cache) == {("org/model", request.revision)}


def test_a_cancel_of_a_run_that_downloaded_nothing_deletes_nothing(deleting, store, cache, monkeypatch):
    ours = _download(deleting, cache, "org/model")  # downloaded by an earlier run, still held (nothing freed yet)
    other = _download(deleting, cache, "org/other")
    _save(store, "org/other", other, queue.FINISHED)
    _save(store, "org/model", ours, queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run("LOST", cache, lay=False))
    assert scheduler.tick(deleting, store).status == "LOST"
    assert _cached(cache) == {("org/model", ours), ("org/other", other)}  # not even the other one it downloaded


def test_a_cancel_of_a_run_that_was_downloading_frees_what_it_brought(deleting, store, cache, monkeypatch):
    request = _save(store, "org/model", fake_sha("org/model", "main"), queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run("LOST", cache))
    assert scheduler.tick(deleting, store).status == "LOST"
    assert queue.load(store, request.path).status == queue.CANCELLED and _cached(cache) == set()


def test_a_failure_to_delete_is_logged_and_never_fails_the_run(deleting, store, cache, monkeypatch, caplog):
    import huggingface_hub

    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    sha = fake_sha("org/model", "main")
    _save(store, "org/model", sha, queue.PENDING)
    monkeypatch.setattr(scheduler, "run_request", _fake_run(queue.FINISHED, cache))
    monkeypatch.setattr(huggingface_hub, "scan_cache_dir", refuse)
    with caplog.at_level(logging.WARNING, logger=model_cache.__name__):
        assert scheduler.tick(deleting, store).status == queue.FINISHED
    assert "not cleaned" in caplog.text and "read-only file system" in caplog.text
    monkeypatch.undo()
    assert _cached(cache) == {("org/model", sha)}


def test_inside_a_hugging_face_job_nothing_is_freed(deleting, store, cache, monkeypatch):
    request = _save(store, "org/model", _download(deleting, cache, "org/model"), queue.RUNNING,
                    lease_owner="job-owner")
    monkeypatch.setenv("LEADERBOARD_HOME", str(deleting.home))
    monkeypatch.setenv("LEADERBOARD_DELETE_MODELS", "1")
    monkeypatch.setattr(job_run, "run_request", _fake_run(queue.FINISHED))
    assert job_run.main(["--request", request.path, "--owner", "job-owner"]) == 0
    assert queue.load(store, request.path).status == queue.FINISHED
    assert _cached(cache) == {("org/model", request.revision)}  # the Job's disk goes with its container
    assert len(model_cache.free_after_run(deleting, store, request).deleted) == 1  # a local tick would have freed it


@pytest.mark.slow  # a real run: the tick runs the evaluator as a process
def test_a_real_run_keeps_a_tiny_model_that_was_in_the_cache(deleting, store, cache, tiny_llava, one_torch_thread):
    sha = lay_into_hub_cache(cache, tiny_llava.repo_id, tiny_llava.folder)
    request = _save(store, tiny_llava.repo_id, sha, queue.PENDING, architecture="test")
    report = scheduler.tick(deleting.with_(limit=2), store)
    assert report.request == request.path and report.status == queue.FINISHED, report.error
    assert _cached(cache) == {(tiny_llava.repo_id, sha)}
    assert (HUB_CACHE / "models--tiny-org--tiny-llava" / "snapshots" / sha).is_dir()  # the shared cache: untouched


@pytest.mark.slow  # a real run: the tick runs the evaluator as a process
def test_a_real_download_from_the_hub_leaves_and_nothing_else(deleting, store, cache, tiny_llava, hub, api,
                                                              monkeypatch, one_torch_thread):
    """The evaluator downloads the model from the (loopback) Hub for real: that revision, and only it, leaves."""
    repo = "test-org/downloaded-llava"
    api.create_repo(repo)
    sha = api.upload_folder(repo_id=repo, folder_path=tiny_llava.folder).oid
    before_mine = _lay(cache, "org/mine")
    _save(store, "org/mine", before_mine, queue.FINISHED)  # ran here once, but the user's own download
    before = _files(cache)
    for name, value in {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1"}.items():
        monkeypatch.setenv(name, value)
    request = _save(store, repo, sha, queue.PENDING, architecture="test")
    report = scheduler.tick(deleting.with_(limit=1), store)
    assert report.request == request.path and report.status == queue.FINISHED, report.error
    assert any("/resolve/" in path for _, path in hub.requests)  # the evaluator did download it
    after = {path: size for path, size in _files(cache).items() if path != "CACHEDIR.TAG"}  # huggingface_hub's mark
    assert _cached(cache) == {("org/mine", before_mine)} and after == before


# ---------------------------------------------------------------- the Space on its local default
@pytest.mark.slow  # starts app.py and the real worker
def test_the_space_on_its_local_default_keeps_every_model_of_a_copied_hub_cache(tmp_path, tiny_llava, tiny_llama):
    """The whole Space (app.py, its scheduler, the real worker) on a copy of a Hub cache: a quick trial, then a run
    cancelled just after its claim. Every file of the cache is still there afterwards, the judge's model included."""
    from gradio_client import Client

    from tests.test_sign_in import off_a_space, start_app, stop_app

    copy = tmp_path / "hub-copy"
    shutil.copytree(HUB_CACHE, copy, symlinks=True)
    before = _files(copy)
    judge = copy / "models--tiny-org--tiny-llama" / "snapshots" / tiny_llama.sha  # a judge given as a folder
    home = tmp_path / "home"
    home.mkdir()
    proc, url, log = start_app(home, {"HF_HUB_CACHE": str(copy), "LEADERBOARD_RUN_SCHEDULER": "1",
                                      "LEADERBOARD_SCHEDULER_INTERVAL": "1", "LEADERBOARD_LIMIT": "2",
                                      "LEADERBOARD_BENCHMARKS": "cure", "LEADERBOARD_JUDGE": f"local:{judge}",
                                      "LEADERBOARD_HEARTBEAT_SECONDS": "0.5"}, base=off_a_space())
    try:
        client = Client(url, verbose=False, download_files=False, httpx_kwargs=PATIENT)
        assert "Queued" in client.predict(tiny_llava.repo_id, "main", "auto", "pretrained", api_name="/submit")
        store = Settings.from_env({"LEADERBOARD_HOME": str(home)})
        from leaderboard.store import open_store

        store = open_store(store)
        first = wait_for(lambda: next((r for r in queue.all_requests(store) if r.status == queue.FINISHED), None),
                         timeout=300, step=0.5)
        assert "Queued" in client.predict(tiny_llava.repo_id, "main", "float32", "pretrained", api_name="/submit")
        second = wait_for(lambda: next((r for r in queue.all_requests(store)
                                        if r.key != first.key and r.status == queue.RUNNING), None), step=0.1)
        time.sleep(0.6)
        assert "ancel" in client.predict(second.key, api_name="/cancel")
        # its tick has ended, and says it was a cancel, not a fault (issue 52, point 10)
        wait_for(lambda: f"{second.path}: CANCELLED by " in log_text(home), timeout=60, step=0.2)
        assert "lease was lost" not in log_text(home)
    finally:
        stop_app(proc, log)
    assert _files(copy) == before, "the Space changed the Hub cache"
    assert "Hub cache: deleted" not in log_text(home)


def log_text(home) -> str:
    return (home / "app.log").read_text(errors="replace")


# ---------------------------------------------------------------- free disk
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
