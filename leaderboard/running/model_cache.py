"""The machine's disk after a run (local executor): model revisions leave the Hugging Face Hub cache once no queued
request needs them, and the free space of the store's disk and of the cache's (the Queue tab shows it to admins).

After each run that ends on this machine (finished, failed, or back to the queue), `free_after_run` deletes from the
Hub cache every revision of a model this leaderboard ran (a request of the store that is no longer PENDING or
RUNNING) that no PENDING or RUNNING request needs (same model and revision), but for the most recently run ones that
fit in LEADERBOARD_KEEP_MODELS_GB. Nothing else in the cache is touched: datasets, the local judge's model, models
this leaderboard never ran. Deleting goes through huggingface_hub's cache API (scan_cache_dir, then
delete_revisions(...).execute()); a failure is logged and never fails the run. Inside a Hugging Face Job nothing is
freed (job_run calls run_request, not the tick): its container, disk included, is thrown away with it.
"""
from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

from evaluator import api
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions import records as queue
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)

GB = 10**9
QUEUED = (queue.PENDING, queue.RUNNING)


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


def _judge_model(settings: Settings) -> str:
    """The Hub id of a local judge (its model stays in the cache), else ""."""
    if not settings.judge:
        return ""
    try:
        spec = api.parse_judge_spec(settings.judge, settings.judge_bearer)
    except ValueError:
        return ""
    return spec.source if spec.kind == "local" else ""


def free_after_run(settings: Settings, store: Store, request: Request, cache_dir: Path | None = None) -> Freed | None:
    """After the run of `request` ended: delete the cached model revisions this leaderboard ran that no queued request
    needs, keeping the most recently run ones up to LEADERBOARD_KEEP_MODELS_GB. None when the cache could not be
    cleaned this time (logged, never raised: a run never fails for it)."""
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
    requests = queue.all_requests(store)
    needed = {(r.model, r.revision) for r in requests if r.status in QUEUED}
    ran: dict[tuple[str, str], float] = {}
    for r in requests:
        if r.source == "hub" and r.status not in QUEUED:
            ran[(r.model, r.revision)] = max(ran.get((r.model, r.revision), 0.0), _when(r))
    if request.source == "hub":
        ran[(request.model, request.revision)] = time.time()  # the run that just ended is the newest
    judge = _judge_model(settings)
    info = scan_cache_dir(cache_dir)
    candidates = sorted(((ran[(repo.repo_id, rev.commit_hash)], rev.size_on_disk, repo, rev)
                         for repo in info.repos if repo.repo_type == "model" and repo.repo_id != judge
                         for rev in repo.revisions
                         if (repo.repo_id, rev.commit_hash) in ran and (repo.repo_id, rev.commit_hash) not in needed),
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
    for repo in dict.fromkeys(repo for repo, _ in doomed):  # one repo at a time: a sha names one repo's revision
        strategy = replace(info, repos=frozenset({repo})).delete_revisions(
            *[rev.commit_hash for other, rev in doomed if other is repo])
        strategy.execute()
        freed += strategy.expected_freed_size
    deleted = tuple(f"{repo.repo_id}@{rev.commit_hash[:12]}" for repo, rev in doomed)
    if deleted:
        log.info("Hub cache: deleted %s (%.2f GB freed); kept %s", ", ".join(deleted), freed / GB,
                 ", ".join(kept) or "none")
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
