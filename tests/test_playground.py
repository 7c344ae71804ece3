"""The Judge playground tab, end to end: the real app on 127.0.0.1, a real scripted judge server, gradio_client and
a real browser. The judge's replies come from tests.judge_servers.ScriptedServer (OpenAI-compatible, streams when
asked)."""
from __future__ import annotations

import re

import pytest

from tests.conftest import PATIENT, free_port
from tests.judge_servers import Reply, ScriptedServer

TOKEN = "sekret-judge-token-0123456789"
MODE = "SimpleQA grade"


@pytest.fixture
def serve(settings, store):
    """serve(**setting changes) -> the URL of build_app(settings.with_(...), store), served on a free port."""
    from leaderboard.ui import build_app

    demos = []

    def _serve(**changes) -> str:
        demo = build_app(settings.with_(**changes), store)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, show_error=True)
        demos.append(demo)
        return f"http://127.0.0.1:{port}/"

    yield _serve
    for demo in demos:
        demo.close()


def connect(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, httpx_kwargs=PATIENT)


def grade(client, question="Which element has the symbol W?", gold="Tungsten", candidate="It is tungsten."):
    message, verdict, rationale, identity, raw = client.predict(MODE, question, gold, candidate, api_name="/grade")
    return {"message": message, "verdict": verdict, "rationale": rationale, "identity": identity, "raw": raw}


def test_grade_shows_verdict_rationale_and_identity_but_never_the_token(serve):
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted", judge_token=TOKEN))
        out = grade(client)
        assert "CORRECT" in out["verdict"] and out["verdict"].startswith("A")
        assert out["rationale"] == "Reason."
        assert out["raw"] == "Reason.\nA"
        assert server.base_url in out["identity"] and "scripted" in out["identity"]
        assert all(TOKEN not in str(value) for value in out.values())
        assert len(server.requests) == 1
        sent = server.requests[0]
        assert sent.headers.get("Authorization") == f"Bearer {TOKEN}"
        assert sent.body.get("stream") is True  # the reply was streamed in
        prompt = sent.body["messages"][0]["content"]
        assert "It is tungsten." in prompt and "Tungsten" in prompt and "symbol W" in prompt


def test_ungraded_reply_is_said_so(serve):
    with ScriptedServer([Reply("I cannot decide.")]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted"))
        out = grade(client)
        assert out["verdict"] == "ungraded: the judge's reply had no grade line"
        assert out["raw"] == "I cannot decide."
        assert out["message"].startswith("**Not graded**: ungraded: the judge") and "Graded." not in out["message"]
        assert "trial judge" not in out["message"] + out["identity"]  # an endpoint's size is not known


def test_a_trial_judge_says_so_in_the_playground(serve, tiny_llama):
    """A local judge under 7B (the tests' tiny Llama) is named a trial judge beside its verdict, graded or not."""
    client = connect(serve(judge=f"local:{tiny_llama.repo_id}@{tiny_llama.sha}"))
    out = grade(client)
    assert "trial judge, not for scores" in out["identity"] and tiny_llama.repo_id in out["identity"]
    assert "**trial judge**" in out["message"] and "not scores" in out["message"]
    said_graded = out["message"].startswith("Graded.")
    assert said_graded == (not out["verdict"].startswith("ungraded"))  # the message agrees with the verdict


def test_unreachable_judge_gives_a_clear_message(serve):
    port = free_port()  # nothing listens there any more
    client = connect(serve(judge=f"endpoint:http://127.0.0.1:{port}/v1|scripted", judge_token=TOKEN))
    out = grade(client)
    assert "The judge could not be reached" in out["message"]
    assert "Traceback" not in out["message"] and TOKEN not in out["message"]
    assert out["verdict"] == ""


def test_a_hub_token_in_a_judge_error_never_reaches_the_page(serve):
    """The one redactor masks anything shaped like a Hub token, not only the configured ones."""
    leaked = "hf_LeakedByTheProvider0123456789"
    with ScriptedServer([Reply(status=401, body='{"error": "bad key ' + leaked + '"}')]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted", judge_token=TOKEN))
        out = grade(client)
    assert "The judge could not be reached" in out["message"] and "HTTP 401" in out["message"]
    assert leaked not in str(out) and TOKEN not in str(out)


def test_refusals_call_no_judge(serve):
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted", playground_max_chars=50))
        out = grade(client, candidate="   ")
        assert "fill in the candidate answer" in out["message"] and out["verdict"] == ""
        out = grade(client, question="")
        assert "fill in the question" in out["message"]
        out = grade(client, gold="x" * 51)
        assert "too long" in out["message"] and "gold answer" in out["message"]
        assert server.requests == []


def test_no_judge_configured(serve):
    client = connect(serve(judge=""))
    out = grade(client)
    assert "No judge is configured" in out["message"] and out["verdict"] == ""


@pytest.mark.slow  # the per-address limits over the served app, seconds (tests/test_rate_limits.py checks the logic)
def test_the_limit_per_address_holds_across_clients(serve):
    """Each new gradio_client is a new session; the limit is the address's, not the session's."""
    with ScriptedServer([Reply("Reason.\nB")]) as server:
        url = serve(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=2)
        first = connect(url)
        api = first.view_api(print_info=False, return_format="dict")["named_endpoints"]["/grade"]
        assert [p["label"] for p in api["parameters"]] == ["Grading mode", "Question", "Gold answer",
                                                           "Candidate answer"]
        assert len(api["returns"]) == 5
        assert "INCORRECT" in grade(first)["verdict"]
        assert "INCORRECT" in grade(connect(url))["verdict"]
        for client in (connect(url), first):
            out = grade(client)
            assert out["message"].startswith("**Too many gradings**: at most 2 per minute from one client address.")
            assert re.search(r"Please wait (\d+) s and try again", out["message"])
            assert 1 <= int(re.search(r"wait (\d+) s", out["message"]).group(1)) <= 60
            assert out["verdict"] == out["raw"] == out["identity"] == ""
        assert len(server.requests) == 2


def forwarded(url: str, header: str):
    """A new client whose requests carry its own X-Forwarded-For header."""
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, httpx_kwargs=PATIENT, headers={"X-Forwarded-For": header})


@pytest.mark.slow  # the per-address limits over the served app, seconds (tests/test_rate_limits.py checks the logic)
def test_behind_one_proxy_the_address_is_the_one_it_appended(serve):
    """With one trusted hop, the right-most X-Forwarded-For entry is the address: what a client forges further
    left changes nothing."""
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        url = serve(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=2, proxy_hops=1)
        assert "CORRECT" in grade(forwarded(url, "6.6.6.1, 203.0.113.7"))["verdict"]
        assert "CORRECT" in grade(forwarded(url, "6.6.6.2, 203.0.113.7"))["verdict"]
        out = grade(forwarded(url, "6.6.6.3, 203.0.113.7"))
        assert "at most 2 per minute from one client address" in out["message"] and out["verdict"] == ""
        assert "CORRECT" in grade(forwarded(url, "6.6.6.1, 203.0.113.8"))["verdict"]  # another address
        assert len(server.requests) == 3


@pytest.mark.slow  # the per-address limits over the served app, seconds (tests/test_rate_limits.py checks the logic)
def test_behind_two_proxies_the_address_is_the_second_from_the_right(serve):
    """With two trusted hops the address is the second entry from the right, whatever the nearest proxy's own
    address (the right-most entry; uvicorn alone would take that one) and whatever a client forges further left."""
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        url = serve(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=1, proxy_hops=2)
        assert "CORRECT" in grade(forwarded(url, "6.6.6.1, 203.0.113.7, 10.0.0.2"))["verdict"]
        out = grade(forwarded(url, "6.6.6.2, 203.0.113.7, 10.0.0.3"))
        assert "from one client address" in out["message"] and out["verdict"] == ""
        assert "CORRECT" in grade(forwarded(url, "203.0.113.8, 10.0.0.2"))["verdict"]
        assert len(server.requests) == 2


def grade_each(url: str, headers: list[str]) -> tuple[int, int]:
    """One grading per X-Forwarded-For header, each from a new client: (granted, refused by the address limit)."""
    outs = [grade(forwarded(url, header)) for header in headers]
    granted = sum("CORRECT" in out["verdict"] for out in outs)
    refused = sum("at most 3 per minute from one client address" in out["message"] for out in outs)
    return granted, refused


@pytest.mark.slow  # the per-address limits over the served app, seconds (tests/test_rate_limits.py checks the logic)
def test_without_proxies_a_forwarded_header_changes_nothing(serve):
    """With no trusted proxy (LEADERBOARD_PROXY_HOPS unset outside a Space: 0 hops) the address is the TCP peer,
    127.0.0.1 here, whatever X-Forwarded-For says: uvicorn, as Gradio starts it, would otherwise take the header of
    a loopback peer for the client's address, so that a new header made a new bucket."""
    import os

    before = os.environ.get("FORWARDED_ALLOW_IPS")
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        url = serve(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=3)
        assert os.environ.get("FORWARDED_ALLOW_IPS") == before  # only the launch saw it changed
        headers = ["203.0.113.1", "203.0.113.2", "6.6.6.1, 203.0.113.3", "2001:db8::1", "198.51.100.9:80", "evil"]
        assert grade_each(url, headers) == (3, 3)
        assert len(server.requests) == 3


@pytest.mark.slow  # the per-address limits over the served app, seconds (tests/test_rate_limits.py checks the logic)
def test_behind_one_proxy_every_spelling_of_an_address_is_one_bucket(serve):
    """A port, brackets, spaces, leading zeros or an IPv4-mapped IPv6 form in the entry the proxy appended name the
    same client: one bucket, not one each."""
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        url = serve(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=3, proxy_hops=1)
        headers = ["6.6.6.1, 198.51.100.7:10001", "198.51.100.7:10002", "6.6.6.2, [198.51.100.7]",
                   "6.6.6.3,  [198.51.100.7]:8443", "198.051.100.007", "[::ffff:198.51.100.7]:443"]
        assert grade_each(url, headers) == (3, 3)
        assert len(server.requests) == 3


@pytest.mark.slow  # the per-address limits over the served app, seconds (tests/test_rate_limits.py checks the logic)
def test_the_whole_space_budget_refuses_a_new_address(serve):
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        url = serve(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=2,
                    playground_budget_per_minute=3, proxy_hops=1)
        for n in range(3):
            assert "CORRECT" in grade(forwarded(url, f"203.0.113.{n}"))["verdict"]
        out = grade(forwarded(url, "203.0.113.99"))
        assert out["message"].startswith("**Too many gradings on this Space**: at most 3 per minute from all "
                                         "visitors together")
        assert "Please wait" in out["message"] and out["verdict"] == ""
        assert len(server.requests) == 3


def grade_handler(settings, store):
    """The `/grade` handler of a playground built with `settings` (a bare Blocks: no sign-in button, no server)."""
    import gradio as gr

    from leaderboard.ui import playground

    with gr.Blocks() as demo:
        playground.build(demo, settings, store)
    return next(f.fn for f in demo.fns.values() if f.api_name == "grade")


def call(handler, profile, address: str) -> dict:
    """The handler's last output for one grading, as Gradio would call it: the OAuth profile (or None) and a
    request from `address` injected."""
    import gradio as gr
    from starlette.requests import Request

    scope = {"type": "http", "method": "POST", "path": "/gradio_api/queue/join", "query_string": b"",
             "headers": [], "client": (address, 40000)}
    *_, last = handler(MODE, "Which element has the symbol W?", "Tungsten", "It is tungsten.", profile,
                       gr.Request(request=Request(scope)))
    return dict(zip(("message", "verdict", "rationale", "identity", "raw"), last))


def profile(user: str):
    import gradio as gr

    return gr.OAuthProfile({"preferred_username": user, "name": user.title(), "profile": "", "picture": ""})


def test_with_sign_in_a_signed_out_visitor_is_refused(settings, store):
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        signed = settings.with_(require_sign_in=True, judge=f"endpoint:{server.base_url}|scripted",
                                playground_per_minute=1)
        handler = grade_handler(signed, store)
        out = call(handler, None, "203.0.113.7")
        assert "sign in with Hugging Face" in out["message"] and out["verdict"] == ""
        assert server.requests == []
        assert "CORRECT" in call(handler, profile("alice"), "203.0.113.7")["verdict"]  # the refusal counted nothing
        # alice's own limit holds from another address; another user from alice's address meets the address's
        out = call(handler, profile("Alice"), "198.51.100.1")  # user names compare case-insensitively
        assert "at most 1 per minute for one signed-in user" in out["message"]
        assert "from one client address" in call(handler, profile("bob"), "203.0.113.7")["message"]
        assert "CORRECT" in call(handler, profile("bob"), "198.51.100.2")["verdict"]
        assert len(server.requests) == 2


def test_anonymous_grading_when_the_space_allows_it(settings, store):
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        anonymous = settings.with_(require_sign_in=True, playground_anonymous=True, playground_per_minute=1,
                                   judge=f"endpoint:{server.base_url}|scripted")
        handler = grade_handler(anonymous, store)
        assert "CORRECT" in call(handler, None, "203.0.113.7")["verdict"]
        assert "from one client address" in call(handler, None, "203.0.113.7")["message"]
        assert "CORRECT" in call(handler, None, "203.0.113.8")["verdict"]
        assert len(server.requests) == 2


def test_each_app_has_its_own_limiter(settings, store):
    """The limiter is per build (closed over), never module-global."""
    with ScriptedServer([Reply("Reason.\nA")]) as server:
        limited = settings.with_(judge=f"endpoint:{server.base_url}|scripted", playground_per_minute=1)
        first, second = grade_handler(limited, store), grade_handler(limited, store)
        assert "CORRECT" in call(first, None, "203.0.113.7")["verdict"]
        assert "Too many gradings" in call(first, None, "203.0.113.7")["message"]
        assert "CORRECT" in call(second, None, "203.0.113.7")["verdict"]
        assert len(server.requests) == 2


def test_no_change_of_an_input_is_dropped_while_an_event_is_pending(settings, store):
    """An event that reads a component on its change must list the last value, never drop it: with Gradio's
    trigger_mode "once" (the default when the first trigger is a page load or a click) a change made while the
    page's first listing is pending was ignored, and the playground's run picker kept the first mode's runs."""
    from leaderboard.ui import build_app

    demo = build_app(settings.with_(suite="lite"), store)
    changes = [d for d in demo.config["dependencies"]
               if {t[1] for t in d["targets"]} & {"change", "input"} and d["inputs"]]
    assert any("load" in {t[1] for t in d["targets"]} for d in changes)  # the run picker's listing is among them
    assert [d["targets"] for d in changes if d["trigger_mode"] == "once"] == []
    suite = [f for f in demo.fns.values() if {t[1] for t in f.targets} <= {"load", "change"}
             and f.concurrency_id == "judge-suite"]
    assert {t[1] for f in suite for t in f.targets} == {"load", "change"}  # the lazy suite and the mode, in one queue


def _choose_when_listed(page, box, text: str, attempts: int = 60) -> None:
    """Open the dropdown `box` and choose its option holding `text`, opening it again until that option is listed: a
    list the page updates while the dropdown is open (the run picker's choices after a mode change, on a busy
    machine) shows only when it is opened again. Up to `attempts` openings of 5 s each: slow, not red."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    option = page.get_by_role("option").filter(has_text=text).filter(visible=True).first
    for _ in range(attempts):  # the choice itself is retried: the list may change again between listing and click
        box.click()
        try:
            option.click(timeout=5000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise AssertionError(f"{text!r} was never listed in {attempts} openings")


def _value(page, elem_id: str) -> str:
    return page.evaluate(
        "(id) => { const e = document.querySelector(`#${id} textarea, #${id} input`); return e ? e.value : null; }",
        elem_id)


@pytest.mark.slow  # a browser test
def test_playground_in_the_browser(serve, open_page):
    with ScriptedServer([Reply("The answer names the right number.\nA")]) as server:
        page = open_page(serve(judge=f"endpoint:{server.base_url}|scripted", judge_token=TOKEN))
        page.get_by_role("tab", name="Judge playground").click()
        pick = page.locator("#judge-question-pick input").first
        pick.wait_for(state="visible")
        pick.click()
        pick.fill("bones")
        page.get_by_role("option").filter(has_text="bones").filter(visible=True).first.click()
        page.wait_for_function("() => document.querySelector('#judge-gold textarea, #judge-gold input').value === '206'")
        assert "bones" in _value(page, "judge-question")

        page.locator("#judge-candidate textarea, #judge-candidate input").first.fill("206 bones.")
        page.locator("#judge-grade").click()
        page.wait_for_function(
            "() => (document.querySelector('#judge-verdict textarea, #judge-verdict input') || {}).value === 'A CORRECT'")
        assert page.locator("#judge-verdict").is_visible()
        assert _value(page, "judge-rationale") == "The answer names the right number."
        assert server.base_url in _value(page, "judge-identity")
        assert TOKEN not in page.content()

        page.locator("#judge-gold textarea, #judge-gold input").first.fill("")
        page.locator("#judge-random").click()  # another question of the suite, with its gold answer
        page.wait_for_function("() => document.querySelector('#judge-gold textarea, #judge-gold input').value !== ''")
        assert "bones" not in _value(page, "judge-question")
        assert _value(page, "judge-question")


def _write_run(store, model: str, sha: str, answers: dict[str, tuple[str, str]]) -> None:
    """A finished run with SimpleQA details: answers maps question_id -> (question, answer)."""
    import io

    import pandas as pd

    from tests.results_files import result, write_result

    res = result(model, sha=sha)
    write_result(store, res)
    rows = []
    for qid, (question, prediction) in answers.items():
        rows.append({"benchmark": "simpleqa", "question_id": qid, "part": "confidence", "question": question,
                     "prompt": "conf", "prediction": "not this one", "parsed_answer": "not this one"})
        rows.append({"benchmark": "simpleqa", "question_id": qid, "part": "answer", "question": question,
                     "prompt": f"user: {question}", "prediction": f" {prediction}\n", "parsed_answer": prediction})
    buffer = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buffer)
    store.write_bytes(f"details/{res['key']}/simpleqa.parquet", buffer.getvalue())


@pytest.mark.slow  # a browser test
def test_stored_answers_of_finished_runs_load_into_the_candidate_box(store, serve, open_page):
    from evaluator.benchmarks.simpleqa.data import SAMPLE_PATH, load_questions
    from tests.results_files import SHA_A, SHA_B

    bones = next(q for q in load_questions(SAMPLE_PATH) if "bones" in q["problem"])
    _write_run(store, "org/answers-bones", SHA_A, {bones["question_id"]: (bones["problem"], "<b>206</b> bones")})
    _write_run(store, "org/other-questions", SHA_B, {"simpleqa-9999": ("Something else?", "x")})
    page = open_page(serve(judge=""))
    page.get_by_role("tab", name="Judge playground").click()
    pick = page.locator("#judge-question-pick input").first
    pick.click()
    pick.fill("bones")
    page.get_by_role("option").filter(has_text="bones").filter(visible=True).first.click()
    page.wait_for_function("() => document.querySelector('#judge-gold textarea, #judge-gold input').value === '206'")

    runs = page.locator("#judge-run-pick input").first
    _choose_when_listed(page, runs, "org/answers-bones")  # listed once the page load's runs have come
    page.wait_for_function(
        "() => document.querySelector('#judge-candidate textarea, #judge-candidate input').value === '<b>206</b> bones'")
    page.locator("#judge-run-note").get_by_text("Loaded the stored answer").wait_for(state="visible")

    runs.click()
    page.get_by_role("option").filter(has_text="org/other-questions").filter(visible=True).first.click()
    page.locator("#judge-run-note").get_by_text("has no stored answer").wait_for(state="visible")
    assert page.locator("#judge-run-note b").count() == 0  # names are escaped, never HTML


@pytest.mark.slow  # a browser test
def test_full_suite_that_cannot_load_falls_back_to_the_sample(tmp_path, serve, open_page):
    page = open_page(serve(suite="full", sources={"simpleqa": str(tmp_path / "missing.csv")}, judge=""))
    page.get_by_role("tab", name="Judge playground").click()
    page.locator("#judge-suite-note").get_by_text("could not be loaded").wait_for(state="visible")
    pick = page.locator("#judge-question-pick input").first
    pick.click()
    pick.fill("bones")
    page.get_by_role("option").filter(has_text="bones").filter(visible=True).first.click()
    page.wait_for_function("() => document.querySelector('#judge-gold textarea, #judge-gold input').value === '206'")


# -- LAVE mode ----------------------------------------------------------------------------------------------------------

LAVE = "LAVE rating"


def lave_grade(client, question="How many circles are there?", references="2\n two \n\n2\nthere are two circles",
               candidate="two"):
    message, verdict, rationale, identity, raw = client.predict(LAVE, question, references, candidate,
                                                                api_name="/grade")
    return {"message": message, "verdict": verdict, "rationale": rationale, "identity": identity, "raw": raw}


def test_lave_rating_with_the_lave_prompt(serve):
    """The server receives exactly the LAVE grader's messages (their content is tested in test_lave_grader)."""
    from evaluator.benchmarks.lave.card import CARD

    reply = "The candidate says two, matching the experts. So rating=3"
    with ScriptedServer([Reply(reply)]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted", judge_token=TOKEN))
        out = lave_grade(client)
        assert out["message"] == "Graded."
        assert out["verdict"] == "3 correct (score 1)"
        assert out["rationale"] == "The candidate says two, matching the experts."
        assert out["raw"] == reply
        assert server.base_url in out["identity"] and "scripted" in out["identity"]
        assert all(TOKEN not in str(value) for value in out.values())
        sent = server.requests[0]
        assert sent.body.get("stream") is True
        assert sent.body["messages"] == CARD.grader.messages("How many circles are there?",
                                                             "2\n two \n\n2\nthere are two circles", "two")

        # a yes/no question gets the binary demonstrations
        out = lave_grade(client, question="Is it raining?", references="yes\nYes.\nno\nyes", candidate="It is.")
        assert out["verdict"] == "3 correct (score 1)"
        prompt = server.requests[1].body["messages"][0]["content"]
        assert "Reference answers: 'Yes.', 'no', 'yes', 'yes'\nCandidate answer: 'It is.'\nOutput:" in prompt


def test_lave_ratings_and_the_fallback(serve):
    replies = ["Not what the experts said. So rating=1", "Partly right. Rating: 2", "I am not sure what to say."]
    with ScriptedServer([Reply(text) for text in replies]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted"))
        assert lave_grade(client)["verdict"] == "1 incorrect (score 0)"
        assert lave_grade(client)["verdict"] == "2 ambiguous or incomplete (score 0.5)"
        out = lave_grade(client)
        assert out["message"] == "Graded."
        assert out["verdict"] == "2 (no rating in the judge's reply: the paper's fallback) (score 0.5)"
        assert out["rationale"] == "I am not sure what to say."
        assert len(server.requests) == 3


def test_lave_refusals_call_no_judge(serve):
    with ScriptedServer([Reply("Fine. So rating=3")]) as server:
        client = connect(serve(judge=f"endpoint:{server.base_url}|scripted", playground_max_chars=50))
        for references in ("", "  \n\n \n"):
            out = lave_grade(client, references=references)
            assert "fill in the reference answers" in out["message"] and out["verdict"] == ""
        out = lave_grade(client, references="two\n" * 20)
        assert "too long" in out["message"] and "reference answers" in out["message"]
        out = lave_grade(client, candidate=" ")
        assert "fill in the candidate answer" in out["message"]
        assert server.requests == []


def _write_lave_run(store, model: str, sha: str, answers: dict[str, tuple[str, str]]) -> None:
    """A finished run with LAVE details: answers maps question_id -> (question, parsed_answer)."""
    import io

    import pandas as pd

    from tests.results_files import result, write_result

    res = result(model, sha=sha)
    write_result(store, res)
    rows = [{"benchmark": "lave", "question_id": qid, "question": question, "prediction": f"Answer: {answer}\nMore.",
             "parsed_answer": answer} for qid, (question, answer) in answers.items()]
    buffer = io.BytesIO()
    pd.DataFrame(rows).to_parquet(buffer)
    store.write_bytes(f"details/{res['key']}/lave.parquet", buffer.getvalue())


@pytest.mark.slow  # a browser test
def test_lave_mode_in_the_browser(store, serve, open_page):
    import json

    from evaluator.benchmarks.lave.data import SAMPLE_PATH as LAVE_SAMPLE
    from evaluator.benchmarks.lave.data import load_vqa_file
    from evaluator.benchmarks.simpleqa.data import SAMPLE_PATH, load_questions
    from tests.results_files import SHA_A, SHA_B

    first = load_vqa_file(LAVE_SAMPLE, "sample")[0]
    assert first["question_id"] == "lave-01"
    _write_lave_run(store, "org/lave-answers", SHA_A, {"lave-01": (first["question"], "two")})
    _write_lave_run(store, "org/lave-other-suite", SHA_B, {"lave-01": ("What is this?", "a cat")})
    _write_run(store, "org/simpleqa-only", "c" * 40, {"simpleqa-0001": ("Q?", "x")})
    with ScriptedServer([Reply("The candidate says two, matching the experts. So rating=3")]) as server:
        page = open_page(serve(judge=f"endpoint:{server.base_url}|scripted"))
        page.get_by_role("tab", name="Judge playground").click()
        page.locator("#judge-gold").get_by_text("Gold answer").wait_for(state="visible")
        page.locator("#judge-mode").get_by_text(LAVE).click()
        page.locator("#judge-gold").get_by_text("Reference answers (one per line)").wait_for(state="visible")
        page.locator("#judge-suite-note").get_by_text("The LAVE sample suite (30 questions)").wait_for(state="visible")

        pick = page.locator("#judge-question-pick input").first
        pick.click()
        pick.fill("circles")
        page.get_by_role("option").filter(has_text="lave-01 · How many circles").filter(visible=True).first.click()
        page.wait_for_function(
            "(refs) => document.querySelector('#judge-gold textarea, #judge-gold input').value === refs",
            arg="\n".join(first["answers"]))
        assert _value(page, "judge-question") == first["question"]
        page.locator("#judge-image img").wait_for(state="visible")  # the question's image, as the model saw it
        assert page.locator("#judge-image img").evaluate("(img) => img.complete && img.naturalWidth > 0")

        runs = page.locator("#judge-run-pick input").first
        _choose_when_listed(page, runs, "org/lave-other-suite")  # listed once the mode's runs have come
        page.locator("#judge-run-note").get_by_text("answered a different question").wait_for(state="visible")
        runs.click()
        assert page.get_by_role("option").filter(has_text="org/simpleqa-only").filter(visible=True).count() == 0
        page.get_by_role("option").filter(has_text="org/lave-answers").filter(visible=True).first.click()
        page.wait_for_function(
            "() => document.querySelector('#judge-candidate textarea, #judge-candidate input').value === 'two'")

        page.locator("#judge-grade").click()
        page.wait_for_function("() => (document.querySelector('#judge-verdict textarea, #judge-verdict input') "
                               "|| {}).value === '3 correct (score 1)'")
        assert _value(page, "judge-rationale") == "The candidate says two, matching the experts."
        assert "Reference answers: '2', '2', '2', '2', '2', '2', 'two', 'two'" in \
            server.requests[0].body["messages"][0]["content"]  # '3' and the one-off phrasing are filtered out

        page.locator("#judge-mode").get_by_text("SimpleQA grade").click()
        page.locator("#judge-gold").get_by_text("Gold answer").wait_for(state="visible")
        page.wait_for_function(  # the last verdict does not stay beside a question of another mode
            "() => (document.querySelector('#judge-verdict textarea, #judge-verdict input') || {}).value === ''")
        assert _value(page, "judge-rationale") == "" and _value(page, "judge-raw") == ""
        page.locator("#judge-image").wait_for(state="hidden")
        page.locator("#judge-random").click()  # a question of the SimpleQA suite again
        page.wait_for_function(
            "() => (document.querySelector('#judge-question textarea, #judge-question input') || {}).value "
            "!== " + json.dumps(first["question"]))
        assert _value(page, "judge-question") in {q["problem"] for q in load_questions(SAMPLE_PATH)}
