"""A run's progress tells the truth: progress.json from its first write of each benchmark (the total, "benchmark i
of n", the resumed share), a rate in the unit of its count, an ETA that holds steady through uneven requests and
says how sure it is, when the count last moved, and the Queue's one-line text of it."""
from __future__ import annotations

import json
from collections import deque
from datetime import datetime, timezone

import pytest

from evaluator.runs import progress as progress_module
from evaluator.runs.progress import ANSWERING, GRADING, LOADING, Progress, later_half_pace
from leaderboard.submissions.views import duration_text, eta_text, progress_text, resume_note

KEYS = {"benchmark", "stage", "done", "total", "benchmark_index", "benchmarks", "requests", "unit", "rate", "eta_s",
        "eta_sure", "at", "moved_at", "resumed"}


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def writes(monkeypatch) -> list[dict]:
    """Every state Progress writes, in order (the file only keeps the last)."""
    seen: list[dict] = []
    real = progress_module.write_atomic

    def record(path, data):
        seen.append(json.loads(data))
        real(path, data)

    monkeypatch.setattr(progress_module, "write_atomic", record)
    return seen


def test_every_benchmark_is_written_at_once_and_its_first_count_has_the_total(tmp_path, writes):
    clock = Clock()
    progress = Progress(tmp_path, ("cure", "simpleqa"), clock=clock)
    progress.start("cure", LOADING)
    assert writes[-1] == {**writes[-1], "benchmark": "cure", "stage": "loading", "done": 0, "total": None,
                          "benchmark_index": 1, "benchmarks": 2, "rate": None, "eta_s": None, "eta_sure": False,
                          "resumed": {"reused": 0, "items": 0}}
    assert set(writes[-1]) == KEYS and datetime.fromisoformat(writes[-1]["at"]).tzinfo is not None
    progress.planned(3, 10)
    progress.start("cure", ANSWERING)
    assert len(writes) == 1  # a counting stage is written at its first update, which has the total
    progress.update(3, 10)  # at once, though within the throttle interval of the loading write
    assert len(writes) == 2 and writes[-1]["stage"] == "answering" and writes[-1]["total"] == 10
    assert writes[-1]["done"] == 3 and writes[-1]["resumed"] == {"reused": 3, "items": 10}
    clock.t += 0.1
    progress.update(4, 10)  # throttled
    assert len(writes) == 2
    clock.t += 0.5
    progress.update(5, 10)
    # the pace of the later half (from 4 done, 0.5 s ago), in items: no ETA yet on 2 items and 0.6 s
    assert writes[-1]["done"] == 5 and writes[-1]["unit"] == "items" and writes[-1]["rate"] == pytest.approx(2.0)
    assert writes[-1]["eta_s"] is None
    clock.t += 0.1
    progress.update(10, 10)  # the stage's last update is always written
    assert writes[-1]["done"] == 10

    clock.t += 0.1
    progress.start("simpleqa", LOADING)  # the next benchmark: at once, "2 of 2", no count yet
    assert writes[-1]["stage"] == "loading" and writes[-1]["benchmark_index"] == 2 and writes[-1]["total"] is None
    progress.planned(0, 31)
    progress.start("simpleqa", ANSWERING)
    clock.t += 0.1
    progress.update(0, 31)
    first = writes[-1]
    assert (first["benchmark"], first["stage"], first["done"], first["total"]) == ("simpleqa", "answering", 0, 31)
    assert first["benchmark_index"] == 2 and first["resumed"] == {"reused": 3, "items": 41}
    assert first["rate"] is None and first["eta_s"] is None  # one point: no rate yet
    progress.start("simpleqa", GRADING)
    progress.update(0, 0)
    progress.update(0, 93)  # a changed total is written at once
    assert writes[-1]["stage"] == "grading" and writes[-1]["total"] == 93
    progress.close()
    assert json.loads((tmp_path / "progress.json").read_text()) == writes[-1]


def test_the_pace_is_that_of_the_stages_later_half(tmp_path, writes):
    clock = Clock()
    progress = Progress(tmp_path, ("reform",), clock=clock)
    progress.start("reform", ANSWERING)
    for seconds, done in ((0, 0), (30, 30), (60, 60), (90, 150)):  # 1 it/s, then 3 it/s for the last 30 s
        clock.t = 1000.0 + seconds
        progress.update(done, 600)
    # the later half: from the last count at or before 75 (60, at t=60): 90 items in 30 s
    assert writes[-1]["rate"] == pytest.approx(3.0)
    assert writes[-1]["eta_s"] is None  # its quarters ran at 1 and 3 it/s: the pace is changing, no ETA yet
    for seconds in range(100, 160, 10):  # 3 it/s on
        clock.t = 1000.0 + seconds
        progress.update(150 + 3 * (seconds - 90), 600)
    # from 150 (the last at or before 165), steady: 270 left at 3 it/s, sure
    assert writes[-1]["done"] == 330 and writes[-1]["rate"] == pytest.approx(3.0)
    assert writes[-1]["eta_s"] == pytest.approx(90.0) and writes[-1]["eta_sure"] is True
    clock.t += 300  # a stall: the count did not move, so the pace over the later half slows and is not steady
    progress.update(330, 600)
    assert writes[-1]["rate"] == pytest.approx(180 / 360) and writes[-1]["eta_s"] is None

    assert later_half_pace(deque(), 0, 0, 5.0) == (None, None)  # nothing counted yet
    assert later_half_pace(deque([(0.0, 0)]), 0, 4, 8.0) == (2.0, None)  # one move: no halves to compare
    points = deque([(0.0, 0), (10.0, 10), (100.0, 100), (130.0, 160)])
    seconds, ratio = later_half_pace(points, 0, 160, 130.0)
    assert seconds == pytest.approx(120 / 150)  # from 10, the last count at or before 80
    assert ratio == pytest.approx(2.0)  # its halves, split at 100 (the last at or before 120): 1 s and 0.5 s each
    assert list(points) == [(10.0, 10), (100.0, 100), (130.0, 160)]  # older points are dropped
    steady = deque([(0.0, 0), (10.0, 10), (20.0, 20), (30.0, 30), (40.0, 40)])
    assert later_half_pace(steady, 0, 40, 40.0) == (1.0, 1.0)


def _requests(slow_start: int, pattern: tuple[float, ...], count: int, batch: int) -> list[tuple[int, float]]:
    """(requests in a batch, its seconds): `slow_start` requests at 6 s each, then `count` requests whose seconds
    each go round `pattern`, answered `batch` at a time."""
    times = [6.0] * slow_start + [pattern[i % len(pattern)] for i in range(count)]
    return [(len(times[i:i + batch]), sum(times[i:i + batch])) for i in range(0, len(times), batch)]


@pytest.mark.parametrize("stage, batches", [
    (ANSWERING, _requests(16, (0.5,) * 8 + (2.5,) * 8, 224, 8)),  # a slow start, then fast and slow batches
    (ANSWERING, _requests(0, (0.5, 3.5), 200, 1)),  # one request at a time, alternately fast and slow
    (ANSWERING, _requests(10, (0.5, 2.5), 200, 1)),  # ten slow ones first
    (ANSWERING, [(16, 90.0)] + [(16, 6.0 if i % 3 else 14.0) for i in range(13)]),  # a first batch that waited
    (GRADING, _requests(8, (1.0, 3.0, 0.5), 232, 8)),  # the judge: items in batches, a slow first one
])
def test_the_eta_holds_steady_through_uneven_requests(tmp_path, writes, stage, batches):
    """Per-request times that vary (a slow start, fast and slow batches): once an ETA is shown it stays within half
    of the true time left (a sure one within a fifth, both give or take 15 s) and never jumps by more than a factor
    2 from one write to the next (taking off the time between them). The ETA of the last minute's rate failed this
    in every case here, e.g. 1392 s shown where 384 were left after the slow start, or 100 s where 400 were left."""
    clock = Clock()
    progress = Progress(tmp_path, ("simpleqa",), clock=clock)
    progress.start("simpleqa", stage)
    total = sum(size for size, _ in batches)
    end = clock.t + sum(seconds for _, seconds in batches)
    report = (lambda n: progress.update(n, total)) if stage == GRADING else \
        (lambda n: progress.update(0, 3, requests=(n, total)))
    report(0)
    counted, shown = 0, []
    for size, seconds in batches:
        clock.t += seconds
        counted += size
        report(counted)
        state = writes[-1]
        assert state["unit"] == ("items" if stage == GRADING else "requests")
        if state["eta_s"] is not None and clock.t < end:
            shown.append((clock.t, end - clock.t, state["eta_s"], state["eta_sure"], counted))
    assert shown and shown[0][4] < total / 2, "an ETA before half the stage is counted"
    assert any(sure for *_, sure, _ in shown), "sure before the end"
    for at, left, eta, sure, _ in shown:
        assert abs(eta - left) <= (0.2 if sure else 0.5) * left + 15, (at - 1000.0, left, eta, sure)
    for (at, _, before, *_), (then, _, eta, *_) in zip(shown, shown[1:]):
        expected = before - (then - at)
        if expected >= 60:
            assert 1 / 2 <= eta / expected <= 2, (then - 1000.0, before, eta)


def test_moved_at_is_when_the_count_last_moved(tmp_path, writes, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_module, "utc_now", lambda: f"2026-05-01T12:{int(clock.t - 1000.0):02d}:00+00:00")
    progress = Progress(tmp_path, ("lave",), clock=clock)
    progress.start("lave", GRADING)
    progress.update(0, 6)
    assert writes[-1]["moved_at"] == "2026-05-01T12:00:00+00:00"  # a stage's first count is a move
    clock.t += 5
    progress.update(3, 6, force=True)
    clock.t += 20
    progress.update(3, 6, force=True)  # written, not moved
    assert writes[-1]["at"] == "2026-05-01T12:25:00+00:00" and writes[-1]["moved_at"] == "2026-05-01T12:05:00+00:00"
    clock.t += 1
    progress.update(4, 6)
    assert writes[-1]["moved_at"] == "2026-05-01T12:26:00+00:00"
    grading = {**writes[-1], "updated": "2026-05-01T12:39:55+00:00"}  # the judge then fell silent
    later = datetime(2026, 5, 1, 12, 40, 0, tzinfo=timezone.utc)
    assert progress_text(grading, now=later, judge_stall_s=600) == (
        "benchmark 1 of 1 · lave grading 4/6 · judge silent for 14 min (no grade since 12:26 UTC) · "
        "heartbeat 5 s ago")
    assert "silent" not in progress_text(grading, now=later, judge_stall_s=900)
    progress.start("lave", ANSWERING)
    clock.t += 1
    progress.update(0, 6, requests=(0, 12))
    clock.t += 1
    progress.update(0, 6, requests=(2, 12))  # requests move inside an item
    assert writes[-1]["moved_at"] == "2026-05-01T12:28:00+00:00"


@pytest.mark.slow  # a real run of every benchmark
def test_a_real_run_writes_each_benchmark_with_its_total_and_place(tiny_llava, tmp_path, writes, one_torch_thread):
    from evaluator.benchmarks.cure.data import SAMPLE_PATH, load_instances
    from evaluator.runs.runner import RunConfig, run

    config = RunConfig(model=tiny_llava.repo_id, revision=tiny_llava.sha, benchmarks=("cure", "reform"), limit=2,
                       batch_size=1, images_dir=tmp_path / "images")
    results = run(config, tmp_path / "out")
    by_bench = {name: [w for w in writes if w["benchmark"] == name] for name in ("cure", "reform")}
    for index, (name, states) in enumerate(by_bench.items(), start=1):
        items = results["run"]["item_counts"][name]
        assert states[0]["stage"] == "loading" and states[0]["benchmark_index"] == index
        assert states[0]["benchmarks"] == 2 and states[0]["total"] is None
        answering = [s for s in states if s["stage"] == "answering"]
        assert answering[0]["total"] == items and answering[0]["done"] == 0  # never a count without its total
        assert answering[-1]["done"] == items
        assert all(s["total"] == items for s in answering)
    assert [w["stage"] for w in writes if w["stage"] == "loading"] == ["loading", "loading"]
    assert writes[-1]["resumed"] == {"reused": 0, "items": 2 + results["run"]["item_counts"]["reform"]}
    # no journal: nothing reused, every Ask answered by the model
    assert results["run"]["resumed"]["cure"]["reused"] == 0
    # coverage of a limited run: 2 of the sample's instances
    assert results["benchmarks"]["cure"]["coverage"] == {
        "scored": 2, "items": 2, "suite_items": len(load_instances(SAMPLE_PATH)), "share": 2 / 20}


def test_requests_give_the_rate_and_eta_inside_an_item(tmp_path, writes):
    """A 7-request item: the count of requests moves, the rate (in items/s) and the ETA come from it."""
    clock = Clock()
    progress = Progress(tmp_path, ("simpleqa",), clock=clock)
    progress.planned(0, 2)
    progress.start("simpleqa", ANSWERING)
    progress.update(0, 2, requests=(0, 14))
    assert writes[-1]["requests"] == {"done": 0, "total": 14} and writes[-1]["rate"] is None
    clock.t += 10
    progress.update(0, 2, requests=(2, 14))
    clock.t += 10
    progress.update(0, 2, requests=(4, 14))  # 0.2 requests/s: the rate is in requests, the unit of their count
    assert writes[-1]["done"] == 0 and writes[-1]["requests"] == {"done": 4, "total": 14}
    assert writes[-1]["unit"] == "requests" and writes[-1]["rate"] == pytest.approx(0.2)
    assert writes[-1]["eta_s"] is None  # 4 requests: not enough to rest an ETA on
    clock.t += 10
    progress.update(0, 2, requests=(6, 14))
    assert writes[-1]["eta_s"] == pytest.approx(40.0) and writes[-1]["eta_sure"] is True  # 8 left, 5 s each
    progress.start("simpleqa", GRADING)
    progress.update(0, 2)
    assert writes[-1]["requests"] is None


def test_the_log_prints_each_state_once(tmp_path, capsys):
    """One tqdm line per state: the first, at most one a second, and the last once (when the bar closes)."""
    clock = Clock()
    progress = Progress(tmp_path, ("cure",), clock=clock)
    progress.start("cure", ANSWERING)
    for seconds, done in ((0, 0), (0.2, 1), (0.4, 2), (1.5, 3), (1.6, 4)):
        clock.t = 1000.0 + seconds
        progress.update(done, 4, requests=(done, 4))
    progress.close()
    lines = [line.strip() for line in capsys.readouterr().out.replace("\r", "\n").splitlines() if line.strip()]
    counts = [line.split("|")[2].split()[0] for line in lines]
    assert counts == ["0/4", "3/4", "4/4"], lines  # no line twice; 1 and 2 fell within a second of the first
    assert lines[-1].endswith("4/4 requests]")


def test_a_tiny_model_moves_the_count_inside_one_chunk(tiny_llava, tmp_path, one_torch_thread):
    """One chunk of 2 items (batch size 2): the executor hears of every batch the adapter answers, so the count of
    requests, and of items, moves before the chunk ends; the answers are those of the run without a callback."""
    from evaluator.benchmarks.cure import planning
    from evaluator.benchmarks.spec import PlanContext
    from evaluator.models import load_model
    from evaluator.runs.executor import execute

    model = load_model(tiny_llava.repo_id, revision=tiny_llava.sha, batch_size=2)
    context = PlanContext(suite="sample", limit=2, images_dir=tmp_path / "images", options={"cure.mode": "generation"})
    plan = planning.plan(context)
    heard: list[tuple[int, int, tuple[int, int]]] = []
    execute(model, plan, 2, lambda done, total, requests=None: heard.append((done, total, requests)))
    planned = len(plan.asks)
    assert len(plan.items) == 2 and planned > 2 and heard[0] == (0, 2, (0, planned))
    inside = [h for h in heard if 0 < h[2][0] < planned]
    assert len(inside) >= 2 and [h[2][0] for h in heard] == sorted(h[2][0] for h in heard)  # several, in order
    assert any(0 < done < 2 for done, _, _ in heard) and heard[-1] == (2, 2, (planned, planned))
    again = planning.plan(context)
    execute(model, again, 2)
    assert [row.get("prediction") for row in again.rows] == [row.get("prediction") for row in plan.rows]


NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def test_progress_text_renders_every_part():
    full = {"benchmark": "simpleqa", "stage": "answering", "done": 4, "total": 31, "benchmark_index": 2,
            "benchmarks": 4, "rate": 0.8, "eta_s": 33.4, "eta_sure": True, "at": "2026-05-01T11:59:56+00:00",
            "resumed": {"reused": 412, "items": 980}, "updated": "2026-05-01T11:59:57.000000+00:00"}
    assert progress_text(full, now=NOW) == ("benchmark 2 of 4 · simpleqa answering 4/31 · 0.8 it/s · ETA 0:33 · "
                                            "resumed: 412 of 980 items reused · heartbeat 3 s ago")
    # the README's example: requests move inside an item, the rate is in requests too, the ETA is not sure yet
    counted = {**full, "requests": {"done": 30, "total": 217}, "unit": "requests", "eta_s": 233.8, "eta_sure": False}
    assert progress_text(counted, now=NOW) == ("benchmark 2 of 4 · simpleqa answering 4/31 · 30/217 requests · "
                                               "0.8 req/s · ETA ~4 min · resumed: 412 of 980 items reused · "
                                               "heartbeat 3 s ago")
    assert "· 20 s/req ·" in progress_text({**counted, "rate": 0.05}, now=NOW)
    assert "requests" not in progress_text({**full, "requests": {"done": 5, "total": 0}}, now=NOW)
    loading = {"benchmark": "cure", "stage": "loading", "done": 0, "total": None, "benchmark_index": 1,
               "benchmarks": 2, "rate": None, "eta_s": None, "resumed": {"reused": 0, "items": 0}}
    assert progress_text(loading, now=NOW) == "benchmark 1 of 2 · cure loading"
    slow = {"benchmark": "lave", "stage": "grading", "done": 3, "total": 30, "rate": 0.05, "eta_s": 5400,
            "updated": "2026-05-01T11:50:00+00:00"}
    # an older dict: no "unit" (its rate is in items), no "eta_sure" (its ETA is not called sure)
    assert progress_text(slow, now=NOW) == "lave grading 3/30 · 20 s/it · ETA ~1.5 h · heartbeat 10 min ago"
    finished = {**full, "done": 31, "eta_s": 0.0}
    assert "ETA" not in progress_text(finished, now=NOW)
    assert duration_text(59.6) == "1:00" and duration_text(3723) == "1:02:03"
    assert [eta_text(seconds, False) for seconds in (20, 31, 240, 3500, 3590, 5400)] == [
        "ETA < 1 min", "ETA ~1 min", "ETA ~4 min", "ETA ~58 min", "ETA ~1 h", "ETA ~1.5 h"]
    assert eta_text(233.8, True) == "ETA 3:54"
    assert resume_note(full) == "resumed: 412 of 980 items reused" and resume_note({"resumed": {"reused": 0}}) == ""


@pytest.mark.parametrize("junk", [
    None, {}, [], "cure 3/4", 7,
    {"benchmark": None, "done": "x", "total": [1]},
    {"benchmark": {"a": 1}, "stage": 4, "rate": "fast", "eta_s": -1, "resumed": [1, 2], "updated": "yesterday"},
    {"benchmark_index": True, "benchmarks": "many", "done": float("nan"), "total": float("inf")},
    {"rate": 1e-300, "eta_s": 1e30, "benchmark": "x", "done": 1, "total": 5, "updated": 12},
    {"resumed": {"reused": "lots", "items": -3}, "updated": "2026-05-01T11:59:00"},
    {"requests": {"done": "x", "total": None}, "benchmark": "x"}, {"requests": [3, 4], "done": 1, "total": 2},
    {"benchmark_index": 5, "benchmarks": 2, "done": -1, "total": -4, "message": "warming up"},
])
def test_progress_text_survives_junk(junk):
    text = progress_text(junk, now=NOW)
    assert isinstance(text, str) and text
    assert "None" not in text and "nan" not in text and "inf" not in text and "{" not in text
    assert "ETA" not in text and "of 2" not in text


def test_progress_text_of_old_dicts():
    old = {"benchmark": "cure", "done": 12, "total": 20, "rate": 1.4}  # before stages, places and heartbeats
    assert progress_text(old, now=NOW) == "cure 12/20 · 1.4 it/s"
    assert progress_text({"benchmark": "simpleqa", "done": 0, "total": 0}, now=NOW) == "simpleqa"  # no "0" alone
    assert progress_text({"message": "warming up"}, now=NOW) == "warming up"
    assert progress_text({"updated": "2026-05-01T11:59:00"}, now=NOW) == "running · heartbeat 60 s ago"
