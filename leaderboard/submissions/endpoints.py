"""What a served model's request is made of (a model behind an OpenAI-compatible chat-completions endpoint, added by
an admin): its key, its revision, and the rules its record's endpoint and display name follow.

- The model of a served request is `served--<host slug>/<model slug>`, e.g.
  `served--router.huggingface.co/Qwen--Qwen2.5-VL-72B-Instruct` (a port becomes `-8000`): a Hub id never holds
  "--", so it can never be taken for one, and both slugs keep to what a request key accepts
  (leaderboard.submissions.records.is_request_key).
- Its revision is the sha1 of `<public base url>|<model name>`: the same endpoint and model is the same request (a
  duplicate), whatever display name it is given. Its precision is "auto" (the endpoint decides).
- Its record keeps the endpoint as {"base_url": its public url, "model": the name requests carry}: never a user,
  password, query or token (the token is LEADERBOARD_MODEL_TOKEN, handed to the evaluator by environment).
"""
from __future__ import annotations

import hashlib
import re

from evaluator import api

SERVED = "served"  # a served request's source
KEY_PREFIX = "served--"  # the start of a served request's model (a Hub id never holds "--")
MAX_DISPLAY_NAME = 80  # characters of a display name
MAX_SLUG = 100  # characters of each slug (the revision tells two long names apart)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DISPLAY_RE = re.compile(r"^\w[\w .,:()/+'@-]*$")
DISPLAY_RULE = (f"at most {MAX_DISPLAY_NAME} characters: letters, digits, spaces and . , : ( ) / + ' @ - _, "
                "starting with a letter or digit")


def slug(text: str, limit: int = MAX_SLUG) -> str:
    """`text` as a name a request key accepts: "/" becomes "--", ":" and any other character but letters, digits,
    ".", "_" and "-" become "-", ".." becomes ".", and it starts and ends with a letter, digit or "_"."""
    found = _UNSAFE.sub("-", str(text).replace("/", "--"))
    found = re.sub(r"\.{2,}", ".", found).strip(".-")[:limit].rstrip(".-")
    return found or "model"


def served_model(endpoint: api.Endpoint) -> str:
    """The model field of a served request: served--<host slug>/<model slug> (a model named by a folder path, as
    `transformers serve` asks, by the folder's last part: no path in a key, a URL or the Queue)."""
    return f"{KEY_PREFIX}{slug(endpoint.host)}/{slug(api.shown_name(endpoint.model))}"


def served_revision(endpoint: api.Endpoint) -> str:
    """The revision of a served request: the sha1 of "<public base url>|<model name>" (40 hex digits)."""
    return hashlib.sha1(f"{api.public_url(endpoint.base_url)}|{endpoint.model}".encode()).hexdigest()


def stored_endpoint(endpoint: api.Endpoint) -> dict[str, str]:
    """What a served request records of its endpoint: its public base url and the model name."""
    return {"base_url": api.public_url(endpoint.base_url), "model": endpoint.model}


def display_name_problem(name: str) -> str | None:
    """Why `name` (already stripped, whitespace runs made one space) cannot be a display name (None: it can)."""
    if len(name) > MAX_DISPLAY_NAME or not _DISPLAY_RE.match(name):
        return f"A display name is {DISPLAY_RULE}."
    return None


def served_problem(known: dict) -> str | None:
    """What is wrong with a stored request's endpoint and display name (None: nothing): a served request names its
    endpoint by a public url (no user, password, query or fragment) and a model name, under a served model key; no
    other request names an endpoint."""
    endpoint, name = known.get("endpoint") or {}, known.get("display_name")
    if name is not None and (not name.strip() or len(name) > MAX_DISPLAY_NAME or not name.isprintable()):
        return f"display_name is empty, longer than {MAX_DISPLAY_NAME} characters or not printable"
    if known.get("source") != SERVED:
        return "endpoint is set on a request that is not served" if endpoint else None
    url, model = endpoint.get("base_url"), endpoint.get("model")
    if not (isinstance(url, str) and isinstance(model, str) and url and model.strip()):
        return "a served request's endpoint needs a base_url and a model (text)"
    if api.public_url(url) != url:
        return "a served request's endpoint base_url is not a public url (scheme, host, port and path only)"
    if not str(known.get("model", "")).startswith(KEY_PREFIX):
        return f"a served request's model does not start with {KEY_PREFIX!r}"
    return None
