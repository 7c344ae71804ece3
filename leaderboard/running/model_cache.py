"""The machine's disk after a run (local executor): the model revisions this leaderboard downloaded, and only those,
may leave the Hugging Face Hub cache once no queued request needs them; and the free space of the store's disk and
of the cache's (the Queue tab shows it to admins).

The Hub cache is usually the user's own (`~/.cache/huggingface/hub`), so a leaderboard never deletes what it did not
put there:
- Deleting is off by default outside a Space (LEADERBOARD_DELETE_MODELS; on by default on a Hugging Face Space,
  whose disk is the Space's).
- `note_download`, called before the evaluator starts, records in a ledger (`<LEADERBOARD_HOME>/cache/
  downloaded-models.json`, per Hub cache folder) a revision that is not yet in the cache: this leaderboard is about
  to download it. A revision that was already there is never recorded, so never deleted.
- `free_after_run` then deletes the recorded revisions that no PENDING or RUNNING request needs (same model and
  revision), but for the most recently run ones that fit in LEADERBOARD_KEEP_MODELS_GB; never the local judge's
  model, whether it is named by Hub id or by a folder inside the cache; and nothing at all after a cancelled attempt
  that downloaded nothing. Each deleted revision is one console line (a warning, shown at the default log level).
- A served model's request (an endpoint answers it) downloads nothing: neither call records or deletes anything
  for it.
Deleting goes through huggingface_hub's cache API (scan_cache_dir, then delete_revisions(...).execute()); a failure
is logged and never fails the run. Inside a Hugging Face Job nothing is freed (job_run calls run_request, not the
tick): its container, disk included, is thrown away with it.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock

from evaluator import api
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)

GB = 10**9
QUEUED = (queue.PENDING, queue.RUNNING)
LEDGER_NAME = "downloaded-models.json"


@dataclass(frozen=True)
class Freed:
    """What one clean-up of the Hub cache did: revisions as `<model>@<sha12>`, newest first."""

    deleted: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    freed_bytes: int = 0


def hub_cache_dir() -> Path:
    """The Hub cache the evaluator downloads into (HF_HUB_CACHE, else HF_HOME/hub, as huggingface_hub reads them)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


# ---------------------------------------------------------------- the ledger: what this leaderboard downloaded
def ledger_path(settings: Settings) -> Path:
    """The ledger of the model revisions this leaderboard downloaded into a Hub cache (this machine's own file)."""
    return settings.home / "cache" / LEDGER_NAME


def _cache_key(cache_dir: Path) -> str:
    return os.path.realpath(cache_dir)


def _read_ledger(path: Path) -> dict[str, dict[str, str]]:
    """{Hub cache folder: {"<model>@<sha>": when it was recorded}}; empty when absent or unreadable (then nothing is
    taken for this leaderboard's own: an unreadable ledger can only keep models, never delete one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("the ledger of downloaded models %s is unreadable (%s): no model is deleted until it is",
                    path, type(exc).__name__)
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(cache): {str(k): str(v) for k, v in entries.items()} for cache, entries in data.items()
            if isinstance(entries, dict)}


def _write_ledger(path: Path, ledger: dict[str, dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({cache: entries for cache, entries in ledger.items() if entries}, indent=1,
                              sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _lock(path: Path) -> FileLock:
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path.with_name(f".{path.name}.lock")), timeout=60)


def snapshot_folder(cache_dir: Path, model: str, revision: str) -> Path:
    """Where the Hub cache keeps `model` at the commit `revision`."""
    from huggingface_hub.file_download import repo_folder_name

    return Path(cache_dir) / repo_folder_name(repo_id=model, repo_type="model") / "snapshots" / revision


def note_download(settings: Settings, request: Request, cache_dir: Path | None = None) -> bool:
    """Before the evaluator starts: whether it will download the request's model revision (a Hub model whose
    snapshot folder is not in the Hub cache). If so, the ledger records the revision as this leaderboard's own before
    a file arrives; a revision already in the cache is never recorded. Never raises (an error counts as "already
    there": the model is then never deleted)."""
    if request.source != "hub" or not request.revision:  # a local folder or a served model: nothing is downloaded
        return False
    cache = Path(cache_dir) if cache_dir else hub_cache_dir()
    try:
        if snapshot_folder(cache, request.model, request.revision).exists():
            return False
        path = ledger_path(settings)
        with _lock(path):
            ledger = _read_ledger(path)
            ledger.setdefault(_cache_key(cache), {})[f"{request.model}@{request.revision}"] = \
                datetime.now(timezone.utc).isoformat(timespec="seconds")
            _write_ledger(path, ledger)
        return True
    except Exception as exc:  # noqa: BLE001 - a ledger that cannot be written: the download is not counted as ours
        log.warning("could not record the download of %s: %s", request.key,
                    settings.scrub(f"{type(exc).__name__}: {exc}"))
        return False


# ---------------------------------------------------------------- after a run
def _when(request: Request) -> float:
    """When the request's run last ended (or started, or was submitted), as a timestamp; 0 when it cannot say."""
    for text in (request.finished_time, request.started_time, request.submitted_time):
        try:
            moment = queue.parse_time(text)
        except ValueError:
            continue
        if moment is not None:
            return moment.timestamp()
    return 0.0


@dataclass(frozen=True)
class Judge:
    """The local judge's model in both spellings: its Hub id (lower case), and the real path of its folder."""

    hub_id: str = ""
    folder: Path | None = None

    def is_in(self, repo) -> bool:
        """Whether a cached repo (huggingface_hub's CachedRepoInfo) holds the judge's model."""
        if self.hub_id and repo.repo_id.lower() == self.hub_id:
            return True
        if self.folder is None:
            return False
        home = Path(os.path.realpath(repo.repo_path))
        if self.folder.is_relative_to(home):
            return True
        try:  # a folder elsewhere whose files link into the cache (an old `--local-dir` download)
            return any(Path(os.path.realpath(f)).is_relative_to(home) for f in self.folder.rglob("*"))
        except OSError:
            return True  # cannot tell: keep it


def local_judge(settings: Settings) -> Judge:
    """The local judge's model (nothing for an endpoint judge or none)."""
    if not settings.judge:
        return Judge()
    try:
        spec = api.parse_judge_spec(settings.judge, settings.judge_bearer)
    except ValueError:
        return Judge()
    if spec.kind != "local":
        return Judge()
    folder = Path(spec.source).expanduser()
    if folder.is_dir():
        return Judge(folder=Path(os.path.realpath(folder)))
    return Judge(hub_id=spec.source.lower())


def free_after_run(settings: Settings, store: Store, request: Request, cache_dir: Path | None = None,
                   downloaded: bool = True, cancelled: bool = False) -> Freed | None:
    """After the run of `request` ended: with LEADERBOARD_DELETE_MODELS on, delete the cached model revisions this
    leaderboard downloaded that no queued request needs, keeping the most recently run ones up to
    LEADERBOARD_KEEP_MODELS_GB. `downloaded`: whether this attempt downloaded its model (note_download's answer);
    `cancelled`: the attempt ended because its lease was lost (a cancel). Nothing is deleted after a cancelled
    attempt that downloaded nothing. None when the cache could not be cleaned this time (logged, never raised: a run
    never fails for it)."""
    if not settings.delete_models or request.served or (cancelled and not downloaded):
        return Freed()
    try:
        return _free(settings, store, request, Path(cache_dir) if cache_dir else hub_cache_dir())
    except Exception as exc:  # noqa: BLE001 - an unreadable store or cache, a file that would not go: try next run
        log.warning("the Hub cache was not cleaned after %s: %s", request.key,
                    settings.scrub(f"{type(exc).__name__}: {exc}"))
        return None


def _free(settings: Settings, store: Store, request: Request, cache_dir: Path) -> Freed:
    from huggingface_hub import scan_cache_dir

    if not cache_dir.is_dir():
        return Freed()
    path = ledger_path(settings)
    with _lock(path):
        ledger = _read_ledger(path)
        ours = ledger.get(_cache_key(cache_dir), {})
        known = len(ours)
        for entry in list(ours):  # a revision gone from the cache (deleted by hand) is no longer ours
            model, _, revision = entry.rpartition("@")
            if not snapshot_folder(cache_dir, model, revision).exists():
                del ours[entry]
        requests = queue.all_requests(store)
        needed = {(r.model, r.revision) for r in requests if r.status in QUEUED and r.source == "hub"}
        ran: dict[tuple[str, str], float] = {}
        for r in requests:
            if r.source == "hub" and r.status not in QUEUED:
                ran[(r.model, r.revision)] = max(ran.get((r.model, r.revision), 0.0), _when(r))
        if request.source == "hub":
            ran[(request.model, request.revision)] = time.time()  # the run that just ended is the newest
        judge = local_judge(settings)
        info = scan_cache_dir(cache_dir)
        candidates = sorted(((ran.get((repo.repo_id, rev.commit_hash), 0.0), rev.size_on_disk, repo, rev)
                             for repo in info.repos if repo.repo_type == "model" and not judge.is_in(repo)
                             for rev in repo.revisions
                             if f"{repo.repo_id}@{rev.commit_hash}" in ours
                             and (repo.repo_id, rev.commit_hash) not in needed),
                            key=lambda c: (c[0], c[3].commit_hash), reverse=True)
        budget, used = settings.keep_models_gb * GB, 0
        kept, doomed = [], []
        for _, size, repo, rev in candidates:  # newest first; the first that does not fit goes, and every older one
            if not doomed and used + size <= budget:
                used += size
                kept.append(f"{repo.repo_id}@{rev.commit_hash[:12]}")
            else:
                doomed.append((repo, rev))
        freed = 0
        for repo in dict.fromkeys(repo for repo, _ in doomed):  # a repo's revisions at once: blobs they share go too
            revisions = [rev for other, rev in doomed if other is repo]
            strategy = replace(info, repos=frozenset({repo})).delete_revisions(*[r.commit_hash for r in revisions])
            strategy.execute()
            freed += strategy.expected_freed_size
            locks = cache_dir / ".locks" / Path(repo.repo_path).name  # the download's empty lock files
            if not Path(repo.repo_path).exists() and locks.is_dir():
                shutil.rmtree(locks, ignore_errors=True)
            for rev in revisions:
                del ours[f"{repo.repo_id}@{rev.commit_hash}"]
                log.warning("Hub cache: deleted %s@%s (%.2f GB), which this leaderboard downloaded for a run and no "
                            "queued request needs (LEADERBOARD_DELETE_MODELS=0 keeps every model)", repo.repo_id,
                            rev.commit_hash[:12], rev.size_on_disk / GB)
        if len(ours) != known:
            _write_ledger(path, ledger)
    deleted = tuple(f"{repo.repo_id}@{rev.commit_hash[:12]}" for repo, rev in doomed)
    return Freed(deleted=deleted, kept=tuple(kept), freed_bytes=freed)


def _existing(path: Path) -> Path:
    """`path`, or the nearest folder above it that exists (a folder not made yet is on its parent's disk)."""
    path = Path(path).expanduser().absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_disk(settings: Settings, cache_dir: Path | None = None) -> list[tuple[str, Path, int, int]]:
    """(what, folder, free bytes, total bytes) of the disk holding LEADERBOARD_HOME and of the one holding the Hub
    cache; a disk that cannot be read is left out."""
    found = []
    for what, folder in (("LEADERBOARD_HOME", settings.home), ("Hub cache", cache_dir or hub_cache_dir())):
        try:
            usage = shutil.disk_usage(_existing(folder))
        except OSError:
            continue
        found.append((what, Path(folder), usage.free, usage.total))
    return found
