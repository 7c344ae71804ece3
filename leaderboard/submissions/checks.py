"""Validate a submitted model id and enqueue it as a PENDING request.

`submit` runs the checks in a fixed order (see its docstring). Every refusal returns an Outcome with ok=False and a
clear message and writes nothing to the store. Messages are Markdown-safe (user text is escaped) and never contain
the Hub token.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from urllib.parse import unquote

from evaluator import api as evaluator_api
from leaderboard.formatting import escape_markdown as md
from leaderboard.submissions import limits
from leaderboard.submissions import model_inspection as inspection
from leaderboard.submissions.cost_plans import over_budget
from leaderboard.submissions.identity import SIGN_IN_NEEDED, SIGNED_OUT, Visitor
from leaderboard.submissions.outcomes import (REPLACEABLE, Choice, Outcome, Refusal,  # noqa: F401 - read here
                                              duplicate_of, existing_request, is_full_sha, shown_request,
                                              stored_duplicate)
from leaderboard.submissions.planning import check_hardware, check_thinking, plan_cost  # noqa: F401 - checks.X
from leaderboard.submissions.records import (MODEL_TYPES, PRECISIONS, THINKING, Request, all_requests, now,
                                             pending_position, request_path, save, transact)
from leaderboard.settings import Settings
from leaderboard.store import Store, StoreBusy, StoreConflict

log = logging.getLogger(__name__)

OFFLINE_NOTE = "gated/private status not checked (offline)"
_REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/\-]{0,254}$")


# ---------------------------------------------------------------- the entry point
def submit(settings: Settings, store: Store, model_id: str, revision: str = "", precision: str = "auto",
           model_type: str = "pretrained", by: Visitor = SIGNED_OUT, api=None, queue: bool = True,
           thinking: str | None = None) -> Outcome:
    """Check a submission by the visitor `by` (leaderboard.submissions.identity: taken from the server's session, never
    from the client) and queue it (`queue` False: only check it and plan it, steps 0-7, writing nothing: the Submit
    tab's "See the plan"). Checks, in order (the first failure is the answer):

    0. the visitor is signed in;
    1. malformed model id / precision / thinking (None: the Space's LEADERBOARD_THINKING) / model type / revision;
    2. local folder (./path or /path with config.json): only when settings.allow_local_models, only from an admin,
       only under settings.local_models_root (one message outside it, whether or not the path exists);
    3. Hub facts (model_inspection.inspect_model): repo and revision exist, pinned to the full commit sha;
       gated or private repos are refused (offline: not checkable, noted on the request). A duplicate (see 8) is
       answered before it when the revision is a full sha, instead of its refusal when the Hub (or the cache)
       cannot say which commit the revision is (leaderboard.submissions.outcomes), and right after it;
    4. remote code (auto_map) refused; architecture must be loadable (evaluator.api.describe_model_folder,
       or transformers' mappings when config.json is all there is); thinking on/off needs the template's switch;
    5. weights in *.safetensors;  6. parameter count <= settings.max_params_billions, and with the hf-jobs executor
       a model (float32 counting double) no larger than the largest hardware of settings.jobs_flavors;
    7. a licence in the model card (Hub models only); then a text-only model where every benchmark of this
       leaderboard needs images is refused (the CLI's preflight rule, evaluator.api.images_needed); then the run's
       cost plan (leaderboard.submissions.planning), refused with its numbers when it is more than the whole Jobs
       budget (hf-jobs, leaderboard.submissions.cost_plans.over_budget);
    8. duplicate (same model + sha + precision + thinking, not FAILED/CANCELLED) -> answered with the existing one;
    9. limits (admins have none; leaderboard.submissions.limits): the submitter's PENDING requests, their submissions
       in the last 7 days, the model organisation's PENDING requests;
    10. write the PENDING request (under the store lock, re-checking 8 and 9).

    Every message and note is scrubbed of every configured secret (settings.scrub).
    """
    try:
        choice = Choice(precision, settings.thinking if thinking is None else thinking, model_type)
        outcome = _submit(settings, store, model_id, revision, choice, by, api, queue)
    except Refusal as refusal:
        outcome = Outcome(False, str(refusal))
    except inspection.HubLookupError as error:
        outcome = Outcome(False, md(settings.scrub(error.message), limit=400) + next_step(settings, model_id, error))
    except Exception as error:  # a bug or an unexpected Hub answer: refuse clearly, log the detail
        log.exception("submission of %r failed unexpectedly", settings.scrub(str(model_id)))
        outcome = Outcome(False, "The submission could not be checked because of an internal error "
                                 f"({md(type(error).__name__)}); nothing was queued. Please try again later.")
    outcome.message = settings.scrub(outcome.message)
    if outcome.request is not None:
        outcome.request.notes = [settings.scrub(n) for n in outcome.request.notes]
    return outcome


def _submit(settings: Settings, store: Store, model_id, revision, choice: Choice, by: Visitor, api,
            queue: bool = True) -> Outcome:
    precision, thinking, model_type = choice
    # 0 + 1 + 2: who submitted what
    if not isinstance(by, Visitor) or not by.signed_in:
        raise Refusal(SIGN_IN_NEEDED)
    model_id, revision = read_model_input(model_id, revision)
    if evaluator_api.is_model_spec(model_id):  # the url is not echoed: it may hold a key
        raise Refusal(SERVED_BY_ADMINS)
    local = _is_path(model_id)
    if not local:
        check_model_id(model_id)
    check_choices(precision, model_type, revision, thinking)
    notes: list[str] = []
    if local:
        facts = inspection.inspect_folder(_local_folder(settings, model_id, by))
        if revision:
            notes.append(f"revision {revision!r} ignored: a local folder is pinned by its content hash")
    else:
        # 3: ask the Hub (or the local cache), after the duplicate of a pinned commit (its weights may be gone)
        path = request_path(model_id, revision, precision, thinking)
        known = existing_request(store, path) if is_full_sha(revision) else None
        if known is not None:
            return duplicate_of(store, known)
        try:
            facts = inspection.inspect_model(model_id, revision, token=settings.hf_token or None, api=api,
                                             lookups=settings.home / "cache" / "hub-lookups")
        except inspection.HubLookupError:
            known = stored_duplicate(store, model_id, revision, precision, thinking)
            if known is None:
                raise
            return duplicate_of(store, known, f" (The Hub could not say which commit {md(revision or 'main')} is now; "
                                              "this is the newest request of this model.)")
        if facts.gated:
            raise Refusal(f"Model {md(model_id)} is gated; this leaderboard only evaluates models anyone can download.")
        if facts.private:
            raise Refusal(f"Model {md(model_id)} is private; this leaderboard only evaluates public models.")
        if facts.offline:
            notes.append(OFFLINE_NOTE)
    name = facts.repo_id
    shown = md(model_id if not local else name)
    known = existing_request(store, request_path(name, facts.sha, precision, thinking))  # 8, before the model's checks
    if known is not None:
        return duplicate_of(store, known)

    # 4: remote code, then architecture
    if facts.config is None:
        raise Refusal(f"Model {shown} has no config.json, so its architecture cannot be checked.")
    custom = find_custom_code(facts.config, facts.side_configs)
    if custom:
        raise Refusal(f"Model {shown} needs trust_remote_code ({md(custom)}), which this leaderboard never enables.")
    architecture = check_architecture(facts)
    check_thinking(shown, thinking, facts.side_configs, facts.folder)

    # 5: safetensors weights
    if not facts.weights:
        bins = [f for f in facts.files if f.endswith(".bin")]
        found = f"only .bin weights were found ({md(', '.join(bins[:3]))})" if bins else "no weight files were found"
        raise Refusal(f"Model {shown} has no weights in .safetensors format: {found}. "
                      "Please upload safetensors weights.")

    # 6: size
    params = facts.params
    if params is None:
        raise Refusal(f"The number of parameters of {shown} could not be determined from its safetensors files.")
    limit = settings.max_params_billions * 1e9
    if params > limit:
        raise Refusal(f"Model {shown} has {params / 1e9:.2f}B parameters ({params:,}), more than this leaderboard's "
                      f"limit of {settings.max_params_billions:g}B.")
    params_billions = params / 1e9
    asked = settings.with_(thinking=thinking)  # planned as the request will run
    plan = check_hardware(asked, shown, params_billions, precision, facts.config, facts.side_configs)

    # 7: licence (Hub models); then what the evaluator's preflight would refuse
    if not local:
        check_license(shown, facts.card, facts.card_license)
    check_images(settings, shown, architecture)
    cost, run = plan_cost(asked, store, name, facts.config, facts.side_configs, architecture, params, precision, plan,
                          facts.folder)
    beyond = over_budget(settings, cost)
    if beyond:
        raise Refusal(f"{beyond}, so model {shown} cannot be evaluated here; nothing was queued.")

    request = Request(model=name, revision=facts.sha, precision=precision, thinking=thinking, model_type=model_type,
                      submitter=by.name,
                      source="local" if local else "hub", local_path=str(facts.folder) if local else None,
                      params_billions=params_billions, architecture=architecture, notes=notes,
                      run_plan=plan.record() if plan is not None else {}, cost_plan=cost.record() if cost else {})
    if not queue:
        return Outcome(True, f"Checked {shown_request(request)}; nothing was queued.", request=request, plan=run)
    outcome = enqueue(settings, store, request, by)
    outcome.plan = run if outcome.request is request else None
    return outcome


def enqueue(settings: Settings, store: Store, request: Request, by: Visitor) -> Outcome:
    """Steps 8-10 for a checked request while a person waits (never sleeping on the commit budget or a rate limit):
    the duplicate check, the limits and the write; Refusal when the store is busy, contended or out of reach."""
    try:
        with store.without_waiting():
            return _enqueue(settings, store, request, by)
    except StoreBusy as busy:
        raise Refusal(f"The leaderboard is busy; try again in {busy.minutes} minute{'s' if busy.minutes != 1 else ''}. "
                      "Nothing was queued.") from None
    except StoreConflict:
        raise Refusal("The queue is busy with other writers right now; nothing was queued. Please submit again in a "
                      "minute.") from None
    except OSError as error:  # the store (a Hub dataset, a disk) could not be reached
        log.warning("submission could not reach the store: %s", settings.scrub(str(error)))
        raise Refusal("The queue could not be reached right now; nothing was queued. Please try again later.") \
            from None


def _enqueue(settings: Settings, store: Store, request: Request, by: Visitor) -> Outcome:
    """Steps 8-10: the duplicate check, the limits and the write (under the store's lock)."""
    # 8: duplicate (answered before the limits: asking again about a queued model is not a new request)
    existing = existing_request(store, request.path)
    if existing is not None:
        return duplicate_of(store, existing)
    # 9: limits
    _check_limits(settings, store, request, by)
    # 10: write, re-checking under the lock
    def write() -> Outcome:
        existing = existing_request(store, request.path)
        if existing is not None:
            return duplicate_of(store, existing)
        _check_limits(settings, store, request, by)
        save(store, request)
        position = pending_position(store, request)
        return Outcome(True, f"Queued {shown_request(request)}: position {position} in the queue.", request=request,
                       position=position)

    return transact(store, write)


# ---------------------------------------------------------------- step 1: text checks
def _is_path(model_id: str) -> bool:
    return model_id.startswith(("/", "./", "../", "~")) or os.path.isabs(model_id)


_HUB = r"^(?:https?://)?(?:www\.)?(?:huggingface|hf)\.co"
_HUB_MODEL_URL = re.compile(_HUB + r"/([^/?#]+/[^/?#]+)(?:/tree/([^?#]+?))?/*(?:[?#].*)?$", re.IGNORECASE)


def read_model_input(model_id, revision) -> tuple[str, str]:
    """(model id, revision) as typed, stripped; a pasted Hub model page URL (https://huggingface.co/org/name, with
    /tree/<rev> or a trailing slash) is read as org/name and its revision. Refusal when the URL is no model page or
    names another revision than the revision field."""
    model_id = model_id.strip() if isinstance(model_id, str) else ""
    revision = revision.strip() if isinstance(revision, str) else ""
    if not re.match(_HUB + r"(?:/|$)", model_id, re.IGNORECASE):
        return model_id, revision
    found = _HUB_MODEL_URL.match(model_id)
    if not found or found.group(1).split("/")[0].lower() in ("datasets", "spaces", "models", "api"):
        raise Refusal(f"The URL {md(model_id, limit=120)} is not a Hub model page; paste one like "
                      "`https://huggingface.co/org/name`, or type the model id as org/name.")
    url_revision = unquote(found.group(2) or "").strip("/")
    if url_revision and revision and url_revision != revision:
        raise Refusal(f"The URL names the revision {md(url_revision, 60)} but the revision field says "
                      f"{md(revision, 60)}; please give one.")
    return found.group(1), revision or url_revision


def check_model_id(model_id: str) -> None:
    """Refusal unless `model_id` is a Hub id of the form org/name (the evaluator's rule, which its CLI applies too)."""
    problem = evaluator_api.model_id_problem(model_id, lambda text: md(text, limit=80))
    if problem:
        raise Refusal(problem)


def check_choices(precision: str, model_type: str, revision: str, thinking: str = "auto") -> None:
    """Refuse a precision, thinking or model type that is not one of the choices (a missing one included)."""
    if not isinstance(precision, str) or precision not in PRECISIONS:
        shown = md(precision, 40) if isinstance(precision, str) else "(none given)"
        raise Refusal(f"Precision {shown} is not one of: {', '.join(PRECISIONS)}.")
    if not isinstance(thinking, str) or thinking not in THINKING:
        shown = md(thinking, 40) if isinstance(thinking, str) else "(none given)"
        raise Refusal(f"Thinking {shown} is not one of: {', '.join(THINKING)}.")
    if not isinstance(model_type, str) or model_type not in MODEL_TYPES:
        shown = md(model_type, 40) if isinstance(model_type, str) else "(none given)"
        raise Refusal(f"Model type {shown} is not one of: {', '.join(MODEL_TYPES)}.")
    if revision and (not _REVISION_RE.match(revision) or ".." in revision or "//" in revision
                     or revision.endswith(("/", ".lock", "."))):
        raise Refusal(f"The revision {md(revision, 60)} is not a valid branch, tag or commit sha.")


# ---------------------------------------------------------------- step 2: local folders
SERVED_BY_ADMINS = ("A served model (an `endpoint:` spec) is added by this leaderboard's admins, in the Queue tab; "
                    "please submit a Hub model id (org/name). Nothing was queued.")
LOCAL_REFUSED = ("Local model folders can be submitted only by this leaderboard's admins, from its models folder; "
                 "please submit a Hub model id (org/name).")


def _local_folder(settings: Settings, model_id: str, by: Visitor) -> Path:
    """The folder a local submission names, once the visitor may submit it: local folders on, an admin, under the
    models root. Until then the answer is LOCAL_REFUSED whatever the path, so the server's files cannot be probed."""
    if not settings.allow_local_models or not by.admin:
        raise Refusal(LOCAL_REFUSED)
    folder = Path(model_id).expanduser().resolve()
    root = settings.local_models_root
    if root is not None and not folder.is_relative_to(root.expanduser().resolve()):
        raise Refusal(LOCAL_REFUSED)
    if not folder.is_dir():
        raise Refusal(f"The local folder {md(model_id, 120)} does not exist.")
    if not (folder / "config.json").is_file():
        raise Refusal(f"The local folder {md(model_id, 120)} has no config.json.")
    return folder


# ---------------------------------------------------------------- step 4: code and architecture
def find_custom_code(config: dict, side_configs: dict[str, dict] | None = None) -> str:
    """Where the model points at custom code ("" when it does not): an auto_map or custom_pipelines at any depth of
    its config.json or small JSON files, found as the CLI finds it (evaluator.api.remote_code)."""
    for name, data in {"config.json": config, **(side_configs or {})}.items():
        where = evaluator_api.remote_code(data) if isinstance(data, dict) else ""
        if where:
            return f"{name} has {where}"
    return ""


def check_architecture(facts: inspection.ModelFacts) -> str:
    """The architecture name to record; raises Refusal when no adapter can load the model."""
    config = facts.config or {}
    model_type = config.get("model_type")
    archs = config.get("architectures") or []
    architecture = archs[0] if archs and isinstance(archs[0], str) else (model_type or None)
    if not isinstance(model_type, str) or not model_type:
        raise Refusal("config.json has no model_type, so the architecture cannot be recognised.")
    if facts.folder is not None:
        try:
            described = evaluator_api.describe_model_folder(facts.folder)
        except evaluator_api.UnsupportedModelError as error:
            raise Refusal(f"This model is not supported: {md(error, 300)}") from None
        except Exception:  # the evaluator could not tell (e.g. only config.json fetched): use transformers' view
            log.warning("describe_model_folder failed on %s; falling back to transformers' mappings", facts.repo_id,
                        exc_info=True)
        else:
            found = described.get("architecture")
            return found if isinstance(found, str) and found else (architecture or model_type)
    _check_with_transformers(model_type)
    return architecture or model_type


def check_images(settings: Settings, shown: str, architecture: str) -> None:
    """Refusal when a model without a vision part would be asked only for benchmarks that need images (the CLI's
    preflight rule, evaluator.api.images_needed): queued, it would only fail."""
    if evaluator_api.architecture_has_vision(architecture) is not False:  # it sees, or it cannot be told here
        return
    needing = evaluator_api.images_needed(settings.benchmarks, False)
    if needing:
        raise Refusal(f"Model {shown} is text-only ({md(architecture, 60)}: no vision part), and every benchmark of "
                      f"this leaderboard ({', '.join(needing)}) needs image input, so nothing would run; please "
                      "submit a vision-language model. Nothing was queued.")


def next_step(settings: Settings, model_id, error: inspection.HubLookupError) -> str:
    """What to do when the Hub could not be asked about a model (offline and not in the cache, or out of reach), as
    the CLI says it: download it once with the Hub reachable, or give a local folder where this Space allows it."""
    if error.kind not in (inspection.NOT_CACHED, inspection.UNREACHABLE):
        return ""
    name = md(model_id, limit=80) if isinstance(model_id, str) else "the model"
    folder = (", or give the path of a local model folder instead (admins)" if settings.allow_local_models else "")
    return (f" To evaluate it, submit again once the Hub is reachable, or have it downloaded once into this machine's "
            f"Hugging Face cache with the Hub reachable (hf download {name}){folder}.")


def _check_with_transformers(model_type: str) -> None:
    import transformers
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)

    if model_type not in CONFIG_MAPPING:
        raise Refusal(f"The architecture {md(model_type, 60)} is not supported by transformers "
                      f"{transformers.__version__}, and remote code is never run here.")
    if model_type not in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES and model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise Refusal(f"The architecture {md(model_type, 60)} is neither an image-text-to-text nor a causal "
                      "language model, so it cannot be evaluated here.")


# ---------------------------------------------------------------- step 7: licence
def card_license(card: str | None) -> str | None:
    """The `license:` of a model card's YAML front matter (None when absent or unreadable)."""
    if not card:
        return None
    from huggingface_hub import ModelCard

    try:
        data = ModelCard(card, ignore_metadata_errors=True).data
    except Exception:  # unreadable YAML counts as no licence
        return None
    found = data.get("license") if hasattr(data, "get") else getattr(data, "license", None)
    if isinstance(found, list):
        found = ", ".join(str(x) for x in found if x)
    return str(found).strip() or None if found else None


def check_license(shown: str, card: str | None, hub_license: str | None = None) -> None:
    if card is None and not hub_license:
        raise Refusal(f"Model {shown} has no model card (README.md), so its licence is unknown; "
                      "please add a card with a `license:` field.")
    if not (card_license(card) or hub_license):
        raise Refusal(f"The model card of {shown} declares no licence; please add a `license:` field to its "
                      "metadata.")


# ---------------------------------------------------------------- steps 8-9: queue state
def _check_limits(settings: Settings, store: Store, request: Request, by: Visitor) -> None:
    if by.admin:
        return
    refusal = limits.refusal(settings, all_requests(store), request, now())
    if refusal:
        raise Refusal(refusal)


__all__ = ["Outcome", "submit", "find_custom_code", "card_license", "request_path", "LOCAL_REFUSED"]
