"""Deterministic judges for the ScriptedServer (tests.judge_servers): each maps a request body to a Reply.

Shared by the end-to-end tests, the golden sample-suite scores and the rescore tests, so that every recorded
number comes from the same judge.
"""
from __future__ import annotations

from tests.judge_servers import Reply


def simpleqa_grades(index: int, body: dict) -> Reply:
    """Grades by the question's reference answer: deterministic A / B / C, and one unusable reply (gold "206")."""
    prompt = body["messages"][-1]["content"]
    gold = prompt.split("Reference answer: ")[-1].split("\n")[0]
    if gold == "206":
        return Reply(content="I cannot decide on this one.")  # no grade line: ungraded, never scored as wrong
    grade = "ABC"[sum(map(ord, gold)) % 3]
    return Reply(content=f"Scripted reason for {gold}.\n{grade}")


def simpleqa_grades_strict(index: int, body: dict) -> Reply:
    """A second SimpleQA judge that disagrees with the first: everything is B (incorrect), one item is C."""
    prompt = body["messages"][-1]["content"]
    gold = prompt.split("Reference answer: ")[-1].split("\n")[0]
    grade = "C" if gold == "206" else "B"
    return Reply(content=f"Strict reason for {gold}.\n{grade}")


def lave_ratings(index: int, body: dict) -> Reply:
    """Rates by the candidate's length (deterministic 1 / 2 / 3), and one reply without a rating."""
    prompt = body["messages"][-1]["content"]
    question = prompt.rsplit("Question: '", 1)[1].split("'\n", 1)[0]
    candidate = prompt.rsplit("Candidate answer: '", 1)[1].rsplit("'\nOutput:", 1)[0]
    if question == "Is it raining?":
        return Reply(content="I cannot tell from the references.")  # no rating: the paper's fallback, flagged
    rating = 1 + len(candidate) % 3
    return Reply(content=f"Scripted rationale for {question} So rating={rating}")


def lave_ratings_generous(index: int, body: dict) -> Reply:
    """A second LAVE judge: every answer is rated 3."""
    prompt = body["messages"][-1]["content"]
    question = prompt.rsplit("Question: '", 1)[1].split("'\n", 1)[0]
    return Reply(content=f"Generous rationale for {question} So rating=3")


# ---- a judge that fails part of the time, for the resilience tests and bench/chaos.py

FAULTS = (
    Reply(status=500),
    Reply(status=429, headers={"Retry-After": "0"}),
    Reply(status=200, body="<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>"
                           "</body></html>"),  # an error page served with 200: not even a chat completion
    Reply(content="<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"),  # the page as the content
    Reply(content=""),
    Reply(content="Rate limit: 3 requests per second exceeded"),
    Reply(content='{"error": "The model is overloaded, rating 2 requests later"}'),
    Reply(content="I'm sorry, but I can't help with rating this answer."),
    Reply(content="Error: model overloaded, retry in 3"),  # an error ending in a digit: never read as a rating
    Reply(delay=2.0),  # longer than the client's timeout in the fault tests
)


def faulty(judge, share: float = 0.3, seed: int = 0, faults: tuple[Reply, ...] = FAULTS):
    """`judge` (a function of (index, body) -> Reply) that answers a fault instead, chosen at random, for `share` of
    the calls (seeded by the call's index: a call that is asked again may get a real answer). `judge.faults` counts
    the faults served."""
    import random

    served = {"faults": 0}

    def reply(index: int, body: dict) -> Reply:
        draw = random.Random(f"{seed}:{index}")
        if draw.random() < share:
            served["faults"] += 1
            return draw.choice(faults)
        return judge(index, body)

    reply.served = served
    return reply
