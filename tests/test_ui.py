"""The Gradio app driven through gradio_client: /submit, /leaderboard, /queue and /cancel."""
from __future__ import annotations

import pytest

from leaderboard.submissions import records as q
from tests.conftest import PROJECT
from tests.results_files import SHA_A, SHA_B, result, write_result


def test_the_idle_event_queue_polls_every_20_ms_not_every_millisecond(settings, store):
    """Gradio's queue looked for new events every 1 ms while it had none, and for progress every 10 ms (62 ms of CPU a
    second for an idle Space); the Space's queue waits QUEUE_IDLE_POLL_S and QUEUE_PROGRESS_POLL_S, also when the
    queue is made again, and Gradio's loops still read those intervals where we set them (every other test here runs
    its events through this queue)."""
    import inspect

    from gradio.queueing import Queue

    from leaderboard.ui import QUEUE_IDLE_POLL_S, QUEUE_PROGRESS_POLL_S, build_app

    assert "await asyncio.sleep(self.sleep_when_free)" in inspect.getsource(Queue.start_processing)
    assert "await asyncio.sleep(self.progress_update_sleep_when_free)" in inspect.getsource(Queue)
    demo = build_app(settings, store)
    for queue in (demo._queue, demo.queue(max_size=10)._queue):
        assert (queue.sleep_when_free, queue.progress_update_sleep_when_free) == (QUEUE_IDLE_POLL_S,
                                                                                  QUEUE_PROGRESS_POLL_S) == (0.02, 0.1)
    assert demo._queue.max_size == 10


def test_endpoints_are_named(client):
    names = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert {"/leaderboard", "/queue", "/submit", "/cancel"} <= names


@pytest.mark.parametrize("model_id", ["", "   "])
def test_empty_submission_gets_a_clear_message_and_queues_nothing(client, store, model_id):
    message = client.predict(model_id, "", "auto", "pretrained", api_name="/submit")
    assert "model id" in message.lower()
    assert "nothing was submitted" in message.lower()
    assert q.all_requests(store) == []


def test_malformed_id_is_refused_with_the_user_text_escaped(client, store):
    message = client.predict("<b>bad</b> id", "", "auto", "pretrained", api_name="/submit")
    assert message.startswith("**Not submitted.**")
    assert "<b>" not in message  # the raw tag never reaches the Markdown
    assert q.all_requests(store) == []


def test_leaderboard_endpoint_is_empty_then_shows_a_results_file(client, store):
    empty = client.predict("", [], [], api_name="/leaderboard")
    assert empty["data"] == []
    assert empty["headers"][:3] == ["#", "Model", "Overall"]

    write_result(store, result("tiny-org/tiny-llava", Ro=0.1, Cf=None))
    write_result(store, result("tiny-org/tiny-llama", sha=SHA_B, Ro=0.5, model_type="instruction-tuned",
                               params=7.0))
    board = client.predict("", [], [], "cure", False, api_name="/leaderboard")  # the CURE view
    headers = board["headers"]
    models = [row[headers.index("Model")] for row in board["data"]]
    assert models == ["tiny-org/tiny-llama", "tiny-org/tiny-llava"]  # Ro descending
    llava = dict(zip(headers, board["metadata"]["display_value"][1]))  # the text the table shows
    assert llava["Revision"] == SHA_A[:12] and llava["#"] == "2"
    assert llava["CURE Ro"] == "10.0" and llava["CURE Rh"] == "50.0" and llava["CURE Cf"] == "n/a"
    numbers = dict(zip(headers, board["data"][1]))  # the sortable values behind the text
    assert numbers["CURE Ro"] == pytest.approx(10.0) and numbers["CURE Cf"] is None

    overview = client.predict("", [], [], api_name="/leaderboard")  # by default: the Overview
    assert "Overall" in overview["headers"] and "CURE Rh" not in overview["headers"]
    filtered = client.predict("LLAVA", [], [], api_name="/leaderboard")
    assert [row[1] for row in filtered["data"]] == ["tiny-org/tiny-llava"]
    by_type = client.predict("", ["instruction-tuned"], ["7-15B"], api_name="/leaderboard")
    assert [row[1] for row in by_type["data"]] == ["tiny-org/tiny-llama"]


def test_queue_endpoint_shows_a_pending_request_and_cancel_works(client, store):
    request = q.Request(model="tiny-org/tiny-llava", revision=SHA_A, submitted_time="2026-11-22T02:00:00+00:00")
    q.save(store, request)
    running = q.Request(model="tiny-org/tiny-llama", revision=SHA_B, status=q.RUNNING,
                        started_time="2026-11-22T02:05:00+00:00",
                        progress={"benchmark": "cure", "done": 12, "total": 20, "rate": 1.4})
    q.save(store, running)

    pending, run, finished, failed, cancelled = client.predict(api_name="/queue")
    assert [row[1] for row in pending["data"]] == ["tiny-org/tiny-llava"]
    row = dict(zip(pending["headers"], pending["data"][0]))
    assert row["#"] == "1" and row["Revision"] == SHA_A[:12] and row["Key"] == request.key
    assert dict(zip(run["headers"], run["data"][0]))["Progress"].startswith("cure 12/20 · 1.4 it/s")
    assert finished["data"] == [] and failed["data"] == [] and cancelled["data"] == []

    refused = client.predict("../../etc/passwd", api_name="/cancel")
    assert "not a request key" in refused
    done = client.predict(request.key, api_name="/cancel")
    assert done.startswith("Done")
    assert q.load(store, request.path).status == q.CANCELLED
    again = client.predict(request.key, api_name="/cancel")
    assert "Only a PENDING or RUNNING request can be cancelled; this one is CANCELLED" in again
    stopped = client.predict(running.key, api_name="/cancel")  # a running evaluation is stopped too
    assert stopped.startswith("Done")
    assert (q.load(store, running.path).status, q.load(store, running.path).lease_owner) == (q.CANCELLED, None)

    pending, _, _, _, cancelled = client.predict(api_name="/queue")
    assert pending["data"] == []
    assert sorted(row[0] for row in cancelled["data"]) == ["tiny-org/tiny-llama", "tiny-org/tiny-llava"]


def test_failed_request_shows_reason_and_log_tail(client, store):
    q.save(store, q.Request(model="org/broken", revision=SHA_A, status=q.FAILED, error="worker exited with code 1",
                            log_tail="Traceback ...\nRuntimeError: <script>boom</script>", attempts=1,
                            finished_time="2026-11-22T03:00:00+00:00"))
    _, _, _, failed, _ = client.predict(api_name="/queue")
    row = dict(zip(failed["headers"], failed["data"][0]))
    assert row["Error"] == "worker exited with code 1"
    assert row["Log tail"].endswith("RuntimeError: <script>boom</script>")  # text, rendered as text


def test_submitting_a_model_queues_it_with_its_position(client, store, tiny_llava):
    message = client.predict(tiny_llava.repo_id, "", "auto", "pretrained", api_name="/submit")
    assert message.startswith("Queued"), message
    assert "position 1" in message
    (request,) = q.all_requests(store)
    assert request.status == q.PENDING and request.revision == tiny_llava.sha
    again = client.predict(tiny_llava.repo_id, "", "auto", "pretrained", api_name="/submit")
    assert "already submitted" in again
    assert len(q.all_requests(store)) == 1


def test_calibration_endpoint_plots_a_run_with_simpleqa(client, store):
    res = result("tiny-org/tiny-llama", sha=SHA_B)
    res["benchmarks"]["simpleqa"] = {
        "scores": {"correct": 0.5, "incorrect": 0.25, "not_attempted": 0.25, "correct_given_attempted": 0.667,
                   "f_score": 0.571, "ece": 0.2},
        "extra": {"calibration": {"confidence": True, "frequency": False},
                  "reliability": [{"bin_low": 0.8, "bin_high": 0.9, "confidence": 0.85, "accuracy": 0.5, "n": 4}]}}
    write_result(store, res)
    plot = client.predict(res["key"], api_name="/calibration")
    text = str(plot)
    assert "stated confidence (ECE 0.200)" in text and "not run: answer frequency" in text
    assert client.predict("../../etc/passwd", api_name="/calibration") is None


def test_about_says_who_submits_with_and_without_sign_in(settings):
    from leaderboard.ui.about import about_markdown

    local = about_markdown(settings.with_(require_sign_in=False))
    assert "submitted by the local user" in local and "Sign in with Hugging Face" not in local
    space = about_markdown(settings.with_(require_sign_in=True, max_pending_per_user=3, max_submissions_per_week=7))
    assert "Sign in with Hugging Face" in space and "3 pending at once and submit 7 in any 7 days" in space
    assert "playground needs sign-in" in space and "playground needs sign-in" not in local
    assert "at most 6 answers a minute for each person and each client address, and 30 a minute for the whole" in space


def test_about_links_every_docs_page_on_the_space_s_repository(settings):
    """Issue 40: About links the docs pages, on the Hub when the Space is known, by path otherwise; every docs page
    is named and every name is a page."""
    from leaderboard.ui.about import DOCS, about_markdown

    pages = sorted(path.name for path in (PROJECT / "docs").glob("*.md"))
    assert sorted(name for name, _, _ in DOCS) == pages
    on_hub = about_markdown(settings.with_(space_id="acme/vlm-board"))
    for name in pages:
        assert f"(https://huggingface.co/spaces/acme/vlm-board/blob/main/docs/{name})" in on_hub, name
    local = about_markdown(settings.with_(space_id=""))
    assert "(`docs/using.md`)" in local and "](" not in local.split("## Read more", 1)[1]


def test_about_states_every_benchmark_s_differences_and_likelihood_rule(settings):
    """Issue 15: per benchmark, About says every place where we deliberately differ from the reference, and the
    rule by which a benchmark that scores options by likelihood picks one."""
    from evaluator.benchmarks import cards
    from leaderboard.ui.about import about_markdown

    about = about_markdown(settings)
    for card in cards():
        assert card.differences, f"{card.name} states no difference from its reference"
        for difference in card.differences:
            assert f"- {difference}" in about
        heading = about.index(f"### {card.title}") if f"### {card.title}" in about else about.index(card.title)
        assert about.index(card.differences[0]) > heading  # under its own benchmark
    rules = {card.name: card.likelihood_rule for card in cards()}
    assert "mean" in rules["cure"] and "sum" in rules["reform"]
    assert all(rules[name] in about for name in ("cure", "reform"))


def test_about_says_what_one_item_of_each_benchmark_asks_in_each_mode_and_its_full_suites_size(settings):
    """Issue 67: every card says its model calls per item in each mode and its judge calls, and how large its full
    suite is and where that count comes from."""
    from evaluator import api
    from evaluator.benchmarks import cards
    from leaderboard.ui.about import about_markdown

    about = about_markdown(settings)
    for card in cards():
        section = about[about.index(f"### {card.title}"):]
        calls = api.calls_per_item(card.name)
        assert len(calls) == len(card.modes or ("generation",)), card.name
        for mode, how in calls:
            assert f"- {mode}: {how}" in section, (card.name, mode)
        assert f"**Its full suite**: {card.full_suite_items:,} items ({card.full_suite_note})" in section
    assert "- likelihood: one request per question (the inference, then each step of the chain), an option " \
           "scoring over its 6 candidates" in about
    assert "1 judge grade" in about and "one judge rating" in about and "93,748 items" in about


def test_about_gives_the_lite_suite_its_rules_and_its_widths_beside_the_full_suite_s(settings):
    """Issue 67: About's lite section says each benchmark's rule (api.describe_lite), its version, that suites are
    ranked apart, each headline score's expected 95% half-width at the lite and the full size as the evaluator
    computes them (api.expected_widths), and how it compares with LMMs-Eval Lite and tinyBenchmarks."""
    from evaluator import api
    from leaderboard.ui.about import about_markdown

    about = about_markdown(settings.with_(suite="lite"))
    section = about.split("## The lite suite", 1)[1].split("\n## ", 1)[0]
    widths = api.expected_widths()
    assert {w.benchmark for w in widths} == set(api.benchmark_names())  # every card has a lite rule
    for found in widths:
        card = api.card(found.benchmark)
        assert f"- **{card.title}**: {api.describe_lite(card.lite)}." in section
        row = (f"| {card.title} | {card.short_title} {card.metric(found.metric).label} | {found.lite_items:,} | "
               f"±{found.lite_half_width:.1f} | {found.full_items:,} | ±{found.full_half_width:.1f} |")
        assert row in section, row
        assert found.lite_items < found.full_items and found.lite_half_width > found.full_half_width
    assert f"`{api.LITE_RULE}`" in section and "`run.lite_rule`" in section
    assert "lite, full and sample runs are never ranked together, nor lite runs of different rules" in section
    assert "0.25 hours against 40" in section and "0.87-0.99" in section
    assert "tinyBenchmarks reports 1-2.4 points" in section and "item response theory" in section
    low = min(w.lite_half_width for w in widths)
    high = max(w.lite_half_width for w in widths)
    assert f"±{low:.1f} to ±{high:.1f} points at 95%" in section
    assert "This Space runs the **lite** suite." in about and "`run.suite` (sample, lite or full;" in about
