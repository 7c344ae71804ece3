"""Chaos: kill workers and evaluators at random points, race many claimers, fail the judge, damage files, and count
the harm. Every count of harm should be 0.

Scenarios (one line each, with its counts):

1. kills, local store: N requests (the tiny LLaVA under N model ids, CURE sample suite, --limit 2) run by two real
   workers (`python -m leaderboard.running.worker`, through bench/_chaos_worker.py, which slows and announces the writes
   of a publish); K times, at a random moment, kill -9 a worker while it evaluates, a running evaluator, or a worker
   inside publish (writing details or results, closing the request FINISHED, or rebuilding the board); a killed worker
   is replaced. Then the workers drain the queue. Harm: requests lost (gone, or FINISHED without results), stuck
   RUNNING, duplicated (two live evaluators of one request at once, or a board row twice or for a request that is not
   FINISHED), partial (a FINISHED run whose details, results and board row disagree, or a board behind the store),
   orphan evaluators (alive 3 s after their worker was killed, or after all workers stopped).
2. kills, loopback Hub store: the same with worker threads, each with its own Hub store, on the loopback Hub
   (tests/hub_server.py, over HTTP with huggingface_hub's own HfApi; it honours parent_commit, so writers race): a
   "kill" is an evaluator kill -9, or a worker thread dying at its next commit (a heartbeat, the publish commit
   before or after it lands, the FINISHED commit or the board commit); the kernel's parent-death signal takes its
   evaluator down with it.
3. claimers: 4 and 8 concurrent workers over M requests, on the local store (processes) and the loopback Hub store
   (threads): requests claimed more than once, requests never run, worker crashes, and heartbeats not written (a
   renewal that lost every race, or met an outage: a lease that lapses while its worker lives is run twice). Their
   lease is CLAIMERS_LEASE (20 s), the kill scenarios' 6 s.
4. judge: SimpleQA (tiny Llama) and LAVE (tiny LLaVA) sample suites graded by a judge on loopback that fails 30 % of
   the calls (500, 429, timeouts, 200 with an HTML page, an empty body, an error text, a refusal, an error ending in a digit):
   items misgraded (a grade or rating other than the healthy judge's), items ungraded or unrated (counted, never
   scored).
5. damaged files: each kind of damage (request: garbage JSON, not UTF-8, a JSON list, fields missing, a lease that
   is not a time, 200 KB of nested JSON, over the size limit; results: garbage, a list, nested JSON, over the size
   limit; a details parquet; leaderboard.parquet) next to a finished run and a pending request, in a real app: does
   the board, the queue, a submission, the explorer and a tick still answer, and is the file listed in the Queue
   tab's damaged files?

Run: `HF_HUB_OFFLINE=1 .venv/bin/python bench/chaos.py [--requests 20] [--kills 20] [--claims 16] [--seed 7]
[--only kills-local,kills-hub,claimers,judge,damaged]` (about 8 minutes on 2 cores); it exits 1 when a summary line
counts harm (`harmful`). The damaged-file scenarios' Submit probe sends the tiny LLaVA under an id of its own
(SUBMIT_PROBE), by the Submit API's named inputs: a model the Space accepts. Its smoke forms are
tests/test_benches.py's; small, fast versions of each scenario are in the test suite too
(tests/test_run_lifecycle.py, test_hub_store.py, test_damaged_files.py, test_judge_faults.py).
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

WORK = Path(tempfile.mkdtemp(prefix="bench-chaos-"))
os.environ.update({"HF_HOME": str(WORK / "hf-home"), "HF_HUB_CACHE": str(WORK / "hf-home" / "hub"),
                   "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                   "GRADIO_ANALYTICS_ENABLED": "False", "TOKENIZERS_PARALLELISM": "false",
                   "OMP_NUM_THREADS": "1",  # many tiny evaluators share 2 cores
                   "HF_HUB_DISABLE_XET": "1",  # the loopback Hub takes LFS files through Git LFS, not Xet
                   "HF_HUB_DISABLE_PROGRESS_BARS": "1"})  # no upload bar per commit
for _var in [v for v in os.environ if v.startswith("LEADERBOARD_")]:
    os.environ.pop(_var)

import _models  # noqa: E402,F401  (sys.path to the project root)
from leaderboard.store.damage import MAX_JSON_BYTES  # noqa: E402

ROOT = _models.ROOT
RESULTS_REPO, REQUESTS_REPO = "chaos/results", "chaos/requests"
HUB_COMMIT_BUDGET = 100_000  # heartbeats every 0.5 s are commits: the Hub's hourly budget is not what this measures


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


# ---- models and requests ---------------------------------------------------------------------------------------

@dataclass
class Models:
    llava: Path
    llama: Path
    llava_sha: str
    llama_sha: str


def build_models() -> Models:
    from tests.hub_cache import lay_into_hub_cache
    from tests.tiny_models import build_tiny_llama, build_tiny_llava

    cache = Path(os.environ["HF_HUB_CACHE"])
    cache.mkdir(parents=True, exist_ok=True)
    llava = build_tiny_llava(WORK / "tiny-llava")
    llama = build_tiny_llama(WORK / "tiny-llama")
    return Models(llava, llama, lay_into_hub_cache(cache, "chaos-org/tiny-llava", llava),
                  lay_into_hub_cache(cache, "chaos-org/tiny-llama", llama))


def enqueue(store, models: Models, n: int, prefix: str) -> list:
    """N PENDING requests, each the tiny LLaVA under its own model id (laid into the Hub cache)."""
    from leaderboard.submissions import records as queue
    from tests.hub_cache import lay_into_hub_cache

    made = []
    for i in range(n):
        repo = f"chaos-org/{prefix}-{i:02d}"
        sha = lay_into_hub_cache(Path(os.environ["HF_HUB_CACHE"]), repo, models.llava)
        request = queue.Request(model=repo, revision=sha, submitted_time=f"2026-11-24T00:00:{i:02d}+00:00",
                                params_billions=0.0001, architecture="LlavaForConditionalGeneration")
        queue.save(store, request)
        made.append(request)
    return made


def worker_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEADERBOARD_")}
    env.update({"LEADERBOARD_HOME": str(home), "LEADERBOARD_SCHEDULER_INTERVAL": "0.3",
                "LEADERBOARD_LEASE_SECONDS": "6", "LEADERBOARD_HEARTBEAT_SECONDS": "0.5",
                "LEADERBOARD_MAX_ATTEMPTS": "30", "LEADERBOARD_LIMIT": "2", "LEADERBOARD_BATCH_SIZE": "1",
                "LEADERBOARD_BENCHMARKS": "cure", "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


def settings_for(home: Path, **changes):
    from leaderboard.settings import Settings

    return Settings.from_env(worker_env(home)).with_(**changes)


# ---- processes -------------------------------------------------------------------------------------------------

def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def evaluators(under: Path) -> dict[int, Path]:
    """Live evaluator processes whose command line names a folder under `under`: pid -> their --request file (in the
    run's folder, <runs>/<request>/<attempt>/request.json, with the lease owner that started it)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"evaluator" not in argv or b"run" not in argv or b"--request" not in argv:
            continue
        request_file = argv[argv.index(b"--request") + 1].decode()
        if request_file.startswith(str(under)) and alive(int(entry.name)):
            found[int(entry.name)] = Path(request_file)
    return found


class Watcher:
    """Polls the evaluators every 50 ms: how often two of one request were alive at the same time."""

    def __init__(self, under: Path):
        self.under, self.overlaps, self.stop = under, set(), threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            running = evaluators(self.under)
            # distinct attempts (run folders) per request: a process an evaluator forks (a moment before it runs git,
            # say) carries the same command line and the same run folder, and is not a second run
            count = Counter(attempt.parent for attempt in {path.parent for path in running.values()})
            for folder, n in count.items():
                if n > 1 and folder not in self.overlaps:
                    self.overlaps.add(folder)
                    seen = {pid: (path.parent.name, _stat(pid)) for pid, path in running.items()
                            if path.parent.parent == folder}
                    say(f"  two live evaluators of {folder.name}: {seen}")

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def children(pid: int, under: Path) -> list[int]:
    return [p for p in evaluators(under) if (_stat(p) or ("", 0))[1] == pid]


def orphans_after(pids: list[int], wait: float = 3.0) -> int:
    """How many of `pids` are still alive `wait` seconds on."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return sum(alive(p) for p in pids)


# ---- what the store holds at the end ------------------------------------------------------------------------------

@dataclass
class Harm:
    lost: int = 0
    stuck: int = 0
    duplicated: int = 0
    partial: int = 0
    orphans: int = 0
    failed: int = 0  # FAILED with a reason (not harm: the rules allow it; shown)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"lost {self.lost}, stuck RUNNING {self.stuck}, duplicated {self.duplicated}, partial {self.partial}, "
                f"orphan evaluators {self.orphans}; FAILED with a reason {self.failed}")


def inspect_store(store, requests: list, settings, harm: Harm) -> None:
    """Count lost, stuck, duplicated and partial runs in the store after the drain."""
    import io

    import pandas as pd

    from leaderboard.board.columns import schema
    from leaderboard.board.file import board_is_current, load_board
    from leaderboard.submissions import records as queue

    board = load_board(store, schema(settings.benchmarks))
    rows = Counter(board["key"])
    harm.duplicated += sum(n - 1 for n in rows.values() if n > 1)
    by_key = {r.key: r for r in queue.all_requests(store)}
    for request in requests:
        stored = by_key.get(request.key)
        if stored is None:
            harm.lost += 1
            harm.notes.append(f"{request.key}: request gone")
            continue
        if stored.status == queue.RUNNING:
            harm.stuck += 1
        elif stored.status == queue.FAILED:
            harm.failed += 1
            if not stored.error:
                harm.lost += 1
        elif stored.status != queue.FINISHED:
            harm.lost += 1
            harm.notes.append(f"{request.key}: {stored.status} after the drain ({stored.error})")
        if stored.status != queue.FINISHED:
            harm.duplicated += int(rows.get(request.key, 0) > 0)  # on the board without being FINISHED
            continue
        results = store.read_json(f"results/{request.key}.json")
        if not results:
            harm.lost += 1
            harm.notes.append(f"{request.key}: FINISHED without results")
            continue
        names = set(results.get("benchmarks", {}))
        details = {p.rsplit("/", 1)[1][: -len(".parquet")] for p in store.list(f"details/{request.key}")}
        complete = names == details and rows.get(request.key, 0) == 1
        for name in names & details:
            frame = pd.read_parquet(io.BytesIO(store.read_bytes(f"details/{request.key}/{name}.parquet")))
            complete &= len(frame) > 0
        if complete:
            row = board[board["key"] == request.key].iloc[0]
            shown, stored_ro = row.get("cure_Ro"), results["benchmarks"].get("cure", {}).get("scores", {}).get("Ro")
            complete &= (shown is None and stored_ro is None) or (
                isinstance(stored_ro, (int, float)) and math.isclose(float(shown), float(stored_ro)))
        if not complete:
            harm.partial += 1
            harm.notes.append(f"{request.key}: details {sorted(details)} vs results {sorted(names)}, "
                              f"{rows.get(request.key, 0)} board row(s)")
    if not board_is_current(store):
        harm.partial += 1
        harm.notes.append("leaderboard.parquet is behind the store")


def wait_until_done(store, requests: list, timeout: float) -> bool:
    from leaderboard.submissions import records as queue

    deadline = time.monotonic() + timeout
    keys = {r.key for r in requests}
    while time.monotonic() < deadline:
        store.refresh()  # the Hub store reads from its picture of the repos: bring it to the head
        states = {r.key: r.status for r in queue.all_requests(store) if r.key in keys}
        if len(states) == len(keys) and all(s in (queue.FINISHED, queue.FAILED) for s in states.values()):
            return True
        time.sleep(0.5)
    return False


# ---- 1. kills on the local store --------------------------------------------------------------------------------

class LocalWorkers:
    """Real worker processes (through bench/_chaos_worker.py) on one home folder; replaced when killed."""

    def __init__(self, home: Path, count: int, delay: float = 0.3, **extra: str):
        self.home, self.markers = home, home / "chaos-markers"
        self.markers.mkdir(parents=True, exist_ok=True)
        self.env = worker_env(home, CHAOS_MARKERS=str(self.markers), CHAOS_WRITE_DELAY=str(delay), **extra)
        self.procs: list[subprocess.Popen] = [self._start() for _ in range(count)]
        self.logs: list[str] = []

    def _start(self) -> subprocess.Popen:
        log = open(self.home / f"worker-{len(list(self.home.glob('worker-*.log')))}.log", "wb")
        return subprocess.Popen([sys.executable, str(ROOT / "bench" / "_chaos_worker.py")], cwd=ROOT, env=self.env,
                                stdout=log, stderr=subprocess.STDOUT)

    def kill(self, proc: subprocess.Popen) -> list[int]:
        """SIGKILL one worker, start another; the pids of the evaluators it had."""
        had = children(proc.pid, self.home)
        proc.kill()
        proc.wait()
        self.procs[self.procs.index(proc)] = self._start()
        return had

    def publishing(self, phase: str) -> subprocess.Popen | None:
        for proc in self.procs:
            marker = self.markers / str(proc.pid)
            try:
                if marker.read_text().startswith(phase + " "):
                    return proc
            except OSError:
                continue
        return None

    def stop(self) -> int:
        """SIGTERM every worker (they return their runs to the queue); the exit codes that were not 0."""
        for proc in self.procs:
            proc.terminate()
        return sum(1 for proc in self.procs if proc.wait(60) != 0)


def kills_local(models: Models, n: int, k: int, rng: random.Random) -> Harm:
    from leaderboard.store.local import LocalStore

    home = WORK / "kills-local"
    settings = settings_for(home)
    store = LocalStore(home / "store")
    requests = enqueue(store, models, n, "local")
    workers, watcher, harm = LocalWorkers(home, 2), Watcher(home), Harm()
    kinds: Counter = Counter()
    try:
        while sum(kinds.values()) < k:
            time.sleep(rng.uniform(0.3, 3.0))
            kind = rng.choice(["worker", "evaluator", "publish", "close", "board"])
            if kind == "evaluator":
                running = list(evaluators(home))
                if not running:
                    continue
                os.kill(rng.choice(running), signal.SIGKILL)
            elif kind == "worker":
                busy = [p for p in workers.procs if children(p.pid, home)]
                if not busy:
                    continue
                harm.orphans += orphans_after(workers.kill(rng.choice(busy)))
            else:
                phase = "publish" if kind == "publish" else kind
                deadline, target = time.monotonic() + 60, None
                while target is None and time.monotonic() < deadline:
                    target = workers.publishing(phase)
                    time.sleep(0.01)
                if target is None:
                    continue
                time.sleep(rng.uniform(0, 0.25))
                harm.orphans += orphans_after(workers.kill(target))
            kinds[kind] += 1
        if not wait_until_done(store, requests, timeout=900):
            harm.notes.append("the queue did not drain in 900 s")
    finally:
        crashed = workers.stop()
        watcher.close()
    harm.orphans += len(evaluators(home))
    harm.duplicated += len(watcher.overlaps)
    inspect_store(store, requests, settings, harm)
    harm.notes.append(f"kills: {dict(kinds)}; workers that exited with an error: {crashed}")
    return harm


# ---- 2. kills on the loopback Hub store -------------------------------------------------------------------------

class WorkerKilled(BaseException):
    """A worker thread dies here (BaseException: none of our handlers catch it, as none run when a process dies)."""


def chaos_hub(server):
    """huggingface_hub's HfApi on the loopback Hub `server`, whose next matching commit, from a worker thread, kills
    that thread (when armed): before the commit is sent, or after it landed."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from leaderboard.store.hub import TRANSACTION_MARK

    class ChaosHfApi(HfApi):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.armed: tuple[str, bool] | None = None  # (what, after): kill at that commit, before or after it lands
            self.kills: Counter = Counter()
            self._arm_lock = threading.Lock()

        def arm(self, what: str, after: bool = False) -> None:
            with self._arm_lock:
                self.armed = (what, after)

        def _take(self, what: str) -> tuple[bool, bool]:
            if not threading.current_thread().name.startswith("chaos-worker"):
                return False, False
            with self._arm_lock:
                if self.armed is None or self.armed[0] != what:
                    return False, False
                after = self.armed[1]
                self.armed = None
            self.kills[what + (" (after)" if after else "")] += 1
            return True, after

        def create_commit(self, repo_id, operations, **kw):
            operations = list(operations)
            paths = [op.path_in_repo for op in operations if op.path_in_repo != TRANSACTION_MARK]
            if any(p.startswith("results/") for p in paths):
                what = "publish"
            elif paths == ["leaderboard.parquet"]:
                what = "board"
            elif any(p.startswith("requests/") for p in paths) and any(
                    isinstance(op, CommitOperationAdd) and b'"FINISHED"' in op.path_or_fileobj for op in operations):
                what = "close"
            else:
                what = "heartbeat"
            hit, after = self._take(what)
            if hit and not after:
                raise WorkerKilled(what)
            info = super().create_commit(repo_id, operations, **kw)
            if hit:
                raise WorkerKilled(what)
            return info

    return ChaosHfApi(endpoint=server.url, token=server.issue_token("chaos-bot", orgs=["chaos"]))


def hub_store(api):
    from leaderboard.store.hub import HubStore

    return HubStore(api, RESULTS_REPO, REQUESTS_REPO, commit_budget=HUB_COMMIT_BUDGET)


def rejected(server) -> int:
    """Commits the loopback Hub refused because their parent was no longer the head (lost races)."""
    return sum(server.repos.rejected.values())


class ThreadWorkers:
    """Worker threads, each with its own HubStore on the shared API; a thread killed by WorkerKilled is replaced."""

    def __init__(self, api, settings, count: int):
        self.api, self.settings, self.stop = api, settings, threading.Event()
        self.threads: list[threading.Thread] = []
        self.crashes, self.reports = 0, []
        self._lock = threading.Lock()
        for _ in range(count):
            self._start()

    def _run(self) -> None:
        from leaderboard.running import scheduler

        store = hub_store(self.api)
        name = threading.current_thread().name
        try:
            while not self.stop.is_set():
                report = scheduler.tick(self.settings, store, self.stop, owner=f"{name}:{time.monotonic_ns()}")
                with self._lock:
                    self.reports.append(report)
                if report.request is None:
                    self.stop.wait(self.settings.scheduler_interval)
        except WorkerKilled:
            return  # the thread ends: its evaluator gets the parent-death signal
        except Exception:  # noqa: BLE001 - a crash the loop should never let out
            with self._lock:
                self.crashes += 1

    def _start(self) -> None:
        self.started = getattr(self, "started", 0) + 1
        thread = threading.Thread(target=self._run, name=f"chaos-worker-{self.started}", daemon=True)
        self.threads.append(thread)
        thread.start()

    def replace_dead(self) -> list[str]:
        """Start a new thread for each dead one; the dead threads' names."""
        dead = [t for t in self.threads if not t.is_alive()]
        for thread in dead:
            self.threads.remove(thread)
            self._start()
        return [t.name for t in dead]

    def wait_dead(self, timeout: float = 10.0) -> list[str]:
        """The names of the threads that died (waiting for the one a kill hit), each replaced."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and all(t.is_alive() for t in self.threads):
            time.sleep(0.01)
        return self.replace_dead()

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(120)


def owned_by(prefix: str, under: Path) -> list[int]:
    """Live evaluators whose run was leased to an owner whose name starts with `prefix` (their request.json says)."""
    found = []
    for pid, request_file in evaluators(under).items():
        try:
            owner = str(json.loads(request_file.read_text()).get("lease_owner") or "")
        except (OSError, ValueError):
            continue
        if owner.startswith(prefix + ":"):
            found.append(pid)
    return found


def kills_hub(models: Models, n: int, k: int, rng: random.Random) -> Harm:
    from tests.hub_server import HubServer, hub_client_online

    home = WORK / "kills-hub"
    settings = settings_for(home, store_backend="hub", results_repo=RESULTS_REPO, requests_repo=REQUESTS_REPO,
                            commit_budget=HUB_COMMIT_BUDGET)
    with HubServer() as server, hub_client_online():
        return _kills_hub(models, n, k, rng, home, settings, server)


def _kills_hub(models: Models, n: int, k: int, rng: random.Random, home: Path, settings, server) -> Harm:
    api = chaos_hub(server)
    store = hub_store(api)
    requests = enqueue(store, models, n, "hub")
    workers, watcher, harm = ThreadWorkers(api, settings, 2), Watcher(home), Harm()
    kinds: Counter = Counter()
    try:
        while sum(kinds.values()) < k:
            time.sleep(rng.uniform(0.3, 3.0))
            kind = rng.choice(["evaluator", "heartbeat", "publish", "publish-after", "close", "board"])
            if kind == "evaluator":
                running = list(evaluators(home))
                if not running:
                    continue
                os.kill(rng.choice(running), signal.SIGKILL)
            else:
                api.arm(kind.split("-")[0], after=kind.endswith("-after"))
                deadline = time.monotonic() + 60
                while api.armed is not None and time.monotonic() < deadline:
                    time.sleep(0.01)
                if api.armed is not None:
                    api.armed = None
                    continue
                for name in workers.wait_dead():
                    harm.orphans += orphans_after(owned_by(name, home))
            kinds[kind] += 1
        deadline = time.monotonic() + 900
        while not wait_until_done(store, requests, timeout=5) and time.monotonic() < deadline:
            workers.replace_dead()
    finally:
        workers.close()
        watcher.close()
    harm.orphans += len(evaluators(home))
    harm.duplicated += len(watcher.overlaps)
    store.refresh()
    inspect_store(store, requests, settings, harm)
    harm.notes.append(f"kills: {dict(kinds)} (at the commit: {dict(api.kills)}); worker threads that crashed: "
                      f"{workers.crashes}; commits refused (lost races): {rejected(server)}")
    return harm


# ---- 3. many claimers ---------------------------------------------------------------------------------------------

def _runs_per_request(lines: list[str]) -> Counter:
    """requests/<key>.json -> how many runs of it the workers reported (each tick that ran one says so)."""
    runs: Counter = Counter()
    for line in lines:
        if line.startswith("[worker] requests/") and ": " in line:
            runs[line[len("[worker] "):].split(": ", 1)[0]] += 1
    return runs


# The claimers' lease: they race for claims and commits, and nothing kills them, so their lease is not the kill
# scenarios' 6 s (short, for quick recoveries). With 8 claimers on 2 cores a renewal can wait seconds for the lock
# or for a commit that is not refused, and a 6 s lease (renewed every 2 s on the Hub store) then lapses under a live
# worker: the bench's own scale, not the service's (600 s, renewed every 200 s on the Hub store, every 5 s here).
CLAIMERS_LEASE = 20


def claimers_local(models: Models, m: int, count: int) -> str:
    from leaderboard.store.local import LocalStore

    home = WORK / f"claimers-local-{count}"
    store = LocalStore(home / "store")
    requests = enqueue(store, models, m, f"claim{count}")
    workers = LocalWorkers(home, count, delay=0.0, LEADERBOARD_LEASE_SECONDS=str(CLAIMERS_LEASE))
    try:
        drained = wait_until_done(store, requests, timeout=900)
    finally:
        crashed = workers.stop()
    lines = [line for log in home.glob("worker-*.log") for line in log.read_text(errors="replace").splitlines()]
    runs = _runs_per_request(lines)
    twice = sum(1 for r in requests if runs[r.path] > 1)
    never = sum(1 for r in requests if runs[r.path] == 0)
    crashed += sum(1 for line in lines if "tick failed" in line or "Traceback" in line)
    missed = sum(1 for line in lines if _HEARTBEAT_MISSED in line)
    return (f"{count} workers, local store, {m} requests: claimed more than once {twice}, never run {never}, worker "
            f"crashes {crashed}, heartbeats not written {missed}" + ("" if drained else " (the queue did not drain)"))


_HEARTBEAT_MISSED = "not written"  # leaderboard.running.attempt's warning for a heartbeat that could not be written


class _Counted(logging.Handler):
    """Counts the log records whose message holds `text`."""

    def __init__(self, text: str):
        super().__init__(logging.WARNING)
        self.text, self.count = text, 0

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.count += 1


def claimers_hub(models: Models, m: int, count: int) -> str:
    from tests.hub_server import HubServer, hub_client_online

    home = WORK / f"claimers-hub-{count}"
    settings = settings_for(home, store_backend="hub", results_repo=RESULTS_REPO, requests_repo=REQUESTS_REPO,
                            commit_budget=HUB_COMMIT_BUDGET, lease_seconds=CLAIMERS_LEASE)
    with HubServer() as server, hub_client_online():
        api = chaos_hub(server)
        store = hub_store(api)
        requests = enqueue(store, models, m, f"hubclaim{count}")
        heartbeats = _Counted(_HEARTBEAT_MISSED)
        logging.getLogger("leaderboard.running.attempt").addHandler(heartbeats)
        workers = ThreadWorkers(api, settings, count)
        try:
            drained = wait_until_done(store, requests, timeout=900)
        finally:
            workers.close()
            logging.getLogger("leaderboard.running.attempt").removeHandler(heartbeats)
        refused = rejected(server)
    runs = Counter(r.request for r in workers.reports if r.request)
    twice = sum(1 for r in requests if runs[r.path] > 1)
    never = sum(1 for r in requests if runs[r.path] == 0)
    errors = sum(1 for r in workers.reports if r.request is None and r.error)
    return (f"{count} workers, loopback Hub store, {m} requests: claimed more than once {twice}, never run {never}, "
            f"worker crashes {workers.crashes}, heartbeats not written {heartbeats.count} (ticks that met a store "
            f"error and went on: {errors}; commits refused as lost races: {refused})"
            + ("" if drained else " (the queue did not drain)"))


# ---- 4. a judge that fails 30 % of the time ----------------------------------------------------------------------

def judge_faults(models: Models, seed: int) -> list[str]:
    from evaluator.judge import EndpointJudge
    from evaluator.models import load_model
    from tests import scripted_judges
    from tests.benchmark_runs import run_benchmark
    from tests.judge_servers import ScriptedServer

    lines = []
    for name, folder, healthy in (("simpleqa", models.llama, scripted_judges.simpleqa_grades),
                                  ("lave", models.llava, scripted_judges.lave_ratings)):
        model = load_model(str(folder), batch_size=4)
        with ScriptedServer(healthy) as server:
            truth = run_benchmark(name, model, judge=EndpointJudge(server.base_url, "healthy", timeout=10))
        script = scripted_judges.faulty(healthy, share=0.3, seed=seed)
        with ScriptedServer(script) as server:
            judge = EndpointJudge(server.base_url, "faulty", timeout=1.0, max_retries=2, backoff=0.05)
            got = run_benchmark(name, model, judge=judge)
            calls = len(server.requests)
        if name == "simpleqa":
            verdict = lambda row: row["grade"] or None  # noqa: E731
            what = "ungraded"
        else:
            verdict = lambda row: (None if math.isnan(row["rating"])  # noqa: E731
                                   else (row["rating"], bool(row["rating_fallback"])))
            what = "unrated"
        pairs = list(zip(got.rows, truth.rows))
        judged = sum(1 for _, true in pairs if verdict(true) is not None)
        misgraded = sum(1 for mine, true in pairs if verdict(mine) is not None and verdict(mine) != verdict(true))
        left_out = sum(1 for mine, true in pairs if verdict(mine) is None and verdict(true) is not None)
        lines.append(f"judge failing 30 %, {name} ({judged} answers the healthy judge grades, {calls} calls, "
                     f"{script.served['faults']} faults served): misgraded {misgraded}; {what} (counted, not scored) "
                     f"{left_out}")
    return lines


# ---- 5. damaged files ---------------------------------------------------------------------------------------------

BROKEN_REQUEST, BROKEN_RESULTS = ("requests/chaos-org/broken/0123456789ab_auto.json",
                                  "results/chaos-org/broken/0123456789ab_auto.json")
BROKEN_RECORD = {"model": "chaos-org/broken", "revision": "0123456789ab" + "0" * 28}
NESTED = b"[" * 100_000 + b"]" * 100_000  # 200 KB: json.loads raises RecursionError


def _oversized(record: dict) -> bytes:
    """A well-formed record padded one past the store's JSON size limit."""
    return json.dumps({**record, "padding": "x" * MAX_JSON_BYTES}).encode()


DAMAGE = {
    "request: garbage JSON": (BROKEN_REQUEST, b"{not json"),
    "request: not UTF-8": (BROKEN_REQUEST, b'{"model": "\xff\xfe"}'),
    "request: a JSON list": (BROKEN_REQUEST, b"[1, 2]"),
    "request: fields missing": (BROKEN_REQUEST, b'{"status": "PENDING"}'),
    "request: a lease that is not a time": (
        BROKEN_REQUEST, json.dumps({**BROKEN_RECORD, "status": "RUNNING", "lease_owner": "w",
                                    "lease_expires": "soon"}).encode()),
    "request: nested JSON": (BROKEN_REQUEST, NESTED),
    "request: oversized": (BROKEN_REQUEST, _oversized(BROKEN_RECORD)),
    "results: garbage JSON": (BROKEN_RESULTS, b"{not json"),
    "results: a JSON list": (BROKEN_RESULTS, b"[]"),
    "results: nested JSON": (BROKEN_RESULTS, NESTED),
    "results: oversized": (BROKEN_RESULTS, _oversized({**BROKEN_RECORD, "benchmarks": {}})),
    "details: not parquet": (None, b"PAR1 this is not parquet"),
    "leaderboard.parquet: garbage": ("leaderboard.parquet", b"garbage"),
}


# what the damaged-file scenarios submit to see that Submit still answers: a model this Space accepts (it sees images,
# as CURE needs), under an id of its own (the pending and finished requests are the tiny LLaVA's own)
SUBMIT_PROBE = "chaos-org/submitted-llava"


def queued(message: str) -> bool:
    """Whether Submit queued the probe; what it said instead, when not."""
    if "Queued" not in message:
        say(f"  submit answered: {' '.join(message.split())[:300]}")
    return "Queued" in message


def damaged_files(models: Models) -> list[str]:
    from gradio_client import Client

    from evaluator.runs.runner import RunConfig, run
    from leaderboard.board import publish as publishing
    from leaderboard.running import scheduler
    from leaderboard.store.local import LocalStore
    from leaderboard.submissions import records as queue
    from leaderboard.ui import build_app, launch_options
    from tests.conftest import free_port
    from tests.hub_cache import lay_into_hub_cache

    from huggingface_hub import constants

    # where the Space's Submit looks (read when huggingface_hub was imported: tests.conftest resets the variable)
    lay_into_hub_cache(Path(constants.HF_HUB_CACHE), SUBMIT_PROBE, models.llava)
    finished = WORK / "damaged-finished-run"
    run(RunConfig(model="chaos-org/tiny-llava", revision=models.llava_sha, benchmarks=("cure",), limit=2,
                  batch_size=1, images_dir=WORK / "images"), finished)
    lines = []
    for kind, (path, data) in DAMAGE.items():
        home = WORK / "damaged" / kind.replace(" ", "-").replace(":", "")
        settings = settings_for(home, run_scheduler=False)
        store = LocalStore(settings.home / "store")
        done = queue.Request(model="chaos-org/tiny-llava", revision=models.llava_sha, status=queue.FINISHED)
        queue.save(store, done)
        publishing.publish(store, done, finished)
        publishing.rebuild_board(settings, store)
        pending = enqueue(store, models, 1, "pending")[0]
        path = path or f"details/{done.key}/cure.parquet"
        store.write_bytes(path, data)
        demo = build_app(settings, store)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **launch_options(settings, store))
        answers: dict[str, bool] = {}
        try:
            client = Client(f"http://127.0.0.1:{port}/", verbose=False, download_files=False)
            checks = {
                "board": lambda: client.predict("", [], [], api_name="/leaderboard"),
                "queue": lambda: client.predict(api_name="/queue"),
                "submit": lambda: queued(client.predict(model_id=SUBMIT_PROBE, revision="", precision="auto",
                                                        model_type="pretrained", thinking="auto",
                                                        api_name="/submit")),
                "explorer": lambda: client.predict(done.key, "cure", "", "", [], "", "", False, 1,
                                                   api_name="/explorer_items"),
                "tick": lambda: scheduler.tick(settings, store).request == pending.path
                and queue.load(store, pending.path).status == queue.FINISHED,
            }
            for name, check in checks.items():
                try:
                    answers[name] = bool(check())
                except Exception as exc:  # noqa: BLE001 - counted as a service that stopped answering
                    answers[name] = False
                    say(f"  {kind}: {name} failed: {type(exc).__name__}: {exc}")
            listed = [d["path"] for d in client.predict(api_name="/damaged_files")]
        finally:
            demo.close()
        healed = path == "leaderboard.parquet" and store.read_bytes(path) != data
        where = ("listed" if path in listed else "rebuilt from the results (not listed)" if healed
                 else "NOT LISTED")
        failed = [name for name, ok in answers.items() if not ok]
        lines.append(f"damaged {kind}: the service answered {len(answers) - len(failed)} of {len(answers)} "
                     f"(board, queue, submit, explorer, tick){' - failed: ' + ', '.join(failed) if failed else ''}; "
                     f"the file is {where}")
    return lines


# ---- main ---------------------------------------------------------------------------------------------------------

SCENARIOS = ("kills-local", "kills-hub", "claimers", "judge", "damaged")
HARM = re.compile(r"(?:lost|stuck RUNNING|duplicated|partial|orphan evaluators|claimed more than once|never run|"
                  r"worker crashes|heartbeats not written|misgraded) ([1-9]\d*)|failed: |NOT LISTED|did not drain")


def harmful(lines: list[str]) -> list[str]:
    """The summary lines that count some harm (a count above 0, a service that failed, a damaged file not listed, a
    queue that did not drain): each should be none, and the bench exits 1 when one is not."""
    return [line for line in lines if HARM.search(line)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20, help="N: requests in the kill scenarios")
    parser.add_argument("--kills", type=int, default=20, help="K: kills in each kill scenario")
    parser.add_argument("--claims", type=int, default=16, help="M: requests in the claimer scenarios")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated: " + ", ".join(SCENARIOS))
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    rng = random.Random(args.seed)
    started = time.monotonic()
    say(f"work folder {WORK}; {os.cpu_count()} CPUs")
    models = build_models()
    lines: list[str] = []
    try:
        for key, where, scenario in (("kills-local", "local store", kills_local),
                                     ("kills-hub", "loopback Hub store", kills_hub)):
            if key in only:
                harm = scenario(models, args.requests, args.kills, rng)
                lines.append(f"kills, {where} (N={args.requests}, K={args.kills}): {harm.line()}")
                for note in harm.notes:
                    say(f"  {note}")
                say(lines[-1])
        if "claimers" in only:
            for count in (4, 8):
                for scenario in (claimers_local, claimers_hub):
                    lines.append(scenario(models, args.claims, count))
                    say(lines[-1])
        if "judge" in only:
            for line in judge_faults(models, args.seed):
                lines.append(line)
                say(line)
        if "damaged" in only:
            for line in damaged_files(models):
                lines.append(line)
                say(line)
    finally:
        if not args.keep:
            shutil.rmtree(WORK, ignore_errors=True)
    print()
    print("\n".join(lines))
    print(f"\nbench/chaos.py ran for {(time.monotonic() - started) / 60:.1f} min.")
    if harmful(lines):
        print(f"harm in {len(harmful(lines))} of {len(lines)} lines", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
