"""Admins add a served model: a model behind an OpenAI-compatible chat-completions endpoint, evaluated by generation
only (the evaluator's `--model "endpoint:<base url>|<model>"`).

Only an admin may add one, decided from the server's session (leaderboard.submissions.identity), never from what a
client sends: an endpoint is someone's money (its token, LEADERBOARD_MODEL_TOKEN, pays for every request) and a way
to make the Space send requests to an address of one's choosing. The checks, in order (the first failure is the
answer, and nothing is written):

0. the visitor is signed in and an admin;
1. the base url and model name read as an endpoint (evaluator.api.parse_model_spec: http(s), no user, password,
   query or fragment; its one-line reason is the message, and it never holds what it refused);
2. the display name (optional) and the model type;
3. duplicate (the same endpoint and model, not FAILED or CANCELLED): answered with the existing request;
4. write the PENDING request under the store's lock (leaderboard.submissions.checks.enqueue).

Every message is Markdown-safe and scrubbed of every configured secret (settings.scrub).
"""
from __future__ import annotations

import logging

from evaluator import api
from leaderboard.formatting import escape_markdown as md
from leaderboard.settings import Settings
from leaderboard.store import Store
from leaderboard.submissions.checks import Outcome, Refusal, check_choices, enqueue
from leaderboard.submissions.endpoints import (SERVED, display_name_problem, served_model, served_revision,
                                               stored_endpoint)
from leaderboard.submissions.identity import SIGN_IN_NEEDED, Visitor
from leaderboard.submissions.records import Request

log = logging.getLogger(__name__)

ADMINS_ONLY = "Only the leaderboard's admins can add a served model; nothing was queued."
MAX_FIELD = 2000  # characters of a base url, model name or display name read


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def served_request(base_url: str, model: str, display_name: str = "", model_type: str = "instruction-tuned",
                   submitter: str = "") -> Request:
    """The PENDING request of a served model, checked (Refusal, Markdown-safe, says what is wrong)."""
    if any(len(_text(value)) > MAX_FIELD for value in (base_url, model, display_name)):
        raise Refusal(f"A base URL, model name or display name longer than {MAX_FIELD} characters is refused; nothing "
                      "was queued.")
    if not _text(base_url) or not _text(model):
        raise Refusal("Please give the endpoint's base URL (http(s)://host\\[:port\\]/path) and the model name it "
                      "serves; nothing was queued.")
    try:
        endpoint = api.parse_model_spec(f"{api.ENDPOINT_PREFIX}{_text(base_url)}|{_text(model)}")
    except ValueError as error:  # its message holds only the url's public part
        raise Refusal(md(str(error), limit=400)) from None
    name = " ".join(_text(display_name).split()) or None
    problem = display_name_problem(name) if name is not None else None
    if problem:
        raise Refusal(md(problem, limit=None))
    check_choices("auto", model_type, "")
    return Request(model=served_model(endpoint), revision=served_revision(endpoint), precision="auto",
                   model_type=model_type, submitter=submitter, source=SERVED, endpoint=stored_endpoint(endpoint),
                   display_name=name)


def add_served(settings: Settings, store: Store, base_url: str, model: str, display_name: str = "",
               model_type: str = "instruction-tuned", by: Visitor | None = None) -> Outcome:
    """Queue a served model for the admin `by` (see the module's checks); an Outcome whose message is shown as is."""
    try:
        if not isinstance(by, Visitor) or not by.signed_in:
            raise Refusal(SIGN_IN_NEEDED)
        if not by.admin:
            raise Refusal(ADMINS_ONLY)
        outcome = enqueue(settings, store, served_request(base_url, model, display_name, model_type, by.name), by)
    except Refusal as refusal:
        outcome = Outcome(False, str(refusal))
    except Exception as error:  # noqa: BLE001 - a bug or an outage: refuse clearly, log the kind only
        log.error("adding a served model failed unexpectedly: %s", type(error).__name__)
        outcome = Outcome(False, "The served model could not be added because of an internal error "
                                 f"({md(type(error).__name__)}); nothing was queued. Please try again later.")
    if outcome.ok and not outcome.duplicate and outcome.request is not None:
        log.info("add_served %s by %s (admin)", settings.scrub(outcome.request.key), by.name)
    outcome.message = settings.scrub(outcome.message)
    return outcome
