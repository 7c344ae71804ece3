"""Propose a finished run's results to its model page: one pull request on the model repo, opened with the Space's
token (HF_TOKEN, `create_commit(create_pr=True)`), adding `.eval_results/<leaderboard slug>.yaml`: the run's entries
in the Hub's evaluation-results format (eval_results.py), each linking back to the questions behind its number. The
model page shows them as community-provided while the pull request is open, and as the model's own once merged.

- **Who**: any signed-in visitor (LEADERBOARD_EVAL_RESULTS_PRS=on, the default), the admins only (`admins`), or
  nobody (`off`).
- **Which runs**: FINISHED runs of a Hub model (never a served endpoint or a local folder), complete and unflagged
  (the board ranks them), with at least one entry, whose revision is still the head of the model's main branch, on
  a public repo.
- **One pull request per (model, run)**: its description ends with a marker naming the run's key. Asking again finds
  it among the repo's pull requests opened by the Space's token's user (the same title, then the marker in its
  first comment) and links it, whether open, merged or closed: nothing reopens one its authors closed, or opens
  another. A pull request someone else opened with the same title and marker is never taken for ours.
- **Limits**: LEADERBOARD_EVAL_PRS_PER_DAY for the whole Space and PER_PERSON_PER_DAY per person over the last 24
  hours, counted from the requests' recorded actions, so they hold across restarts.
- **Across processes**: before it opens a pull request, a proposal reserves the run in its request under the store's
  own lock (the local store's file lock, the Hub store's `parent_commit`; leaderboard.submissions.actions
  reserve_proposal), where the limits are counted with every reservation and pull request recorded, then looks for
  the marker on the Hub again. So two Space replicas, a worker and a Space, or two store clients on one store open
  one pull request per run and keep the limits; a reservation is replaced by the pull request's record, removed on
  a Hub error, and one left by a crash holds the run 10 minutes at most.
- **The record**: each pull request opened (or found and not yet recorded) is appended to the run's request
  (`actions`: propose, who, when, url; leaderboard.submissions.actions.record_proposal), and the board links it
  beside the run (leaderboard.parquet rebuilt).
- A refusal, a private or gated repo, a repo whose authors turned discussions off, or a Hub error: one sentence, and
  nothing opened or written.
"""
from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from datetime import timedelta

from evaluator import api
from leaderboard.board.dataset_card import TITLE, space_url
from leaderboard.board.eval_results import benchmark_entries, entries, explorer_link, file_text, flag
from leaderboard.board.file import read_results
from leaderboard.board.publish import rebuild_board
from leaderboard.formatting import escape_markdown as md
from leaderboard.settings import Settings
from leaderboard.store import DamagedFile, Store, StoreBusy, StoreConflict
from leaderboard.submissions import records as q
from leaderboard.submissions.actions import (PROPOSE, pending_proposal, proposed, record_proposal, release_proposal,
                                             reserve_proposal)
from leaderboard.submissions.identity import SIGN_IN_NEEDED, Visitor
from leaderboard.submissions.model_inspection import transport_errors

log = logging.getLogger(__name__)

PER_PERSON_PER_DAY = 3  # pull requests one person may have the Space open in any 24 hours
DAY = timedelta(days=1)
MARKER = "open-vlm-leaderboard-run"  # in an HTML comment at the end of the description: <!-- MARKER: <key> -->
NOTHING = "no pull request was opened"


@dataclass(frozen=True)
class Proposal:
    """What a request to propose a run came to: whether this call opened a pull request, what to tell the visitor
    (Markdown, one sentence) and the pull request's URL (a new one, or the one found; "" when none)."""

    opened: bool
    message: str
    url: str = ""


def slug(title: str = TITLE) -> str:
    """The leaderboard's name as a file name: lower case, words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def repo_file() -> str:
    """Where the pull request puts the results in the model repo."""
    return f".eval_results/{slug()}.yaml"


def marker(key: str) -> str:
    """The line that names the run in the pull request's description (invisible on the Hub: an HTML comment)."""
    return f"<!-- {MARKER}: {key} -->"


def pr_title(request: q.Request) -> str:
    return f"Add {TITLE} results (revision {request.revision[:12]}, {request.precision})"


def pr_description(settings: Settings, request: q.Request, found: dict[str, dict], by: Visitor) -> str:
    """The pull request's text, our own words: what the numbers are (`found`: the run's entries by benchmark), how
    they were measured, where every question behind them is, and what the model's authors may do with it; the
    marker last."""
    space = space_url(settings.space_id)
    board = f"[{TITLE}]({space})" if space else TITLE
    lines = [f"This pull request adds `{repo_file()}`: the scores the {board} measured for this model at revision "
             f"`{request.revision[:12]}` ({md(request.precision, 20)}), in the Hub's evaluation-results format. Once "
             "merged they show on the model page and on each benchmark's leaderboard on the Hub; while it is open they "
             "show there as community-provided.", "",
             "| benchmark | Hub dataset | task | score |", "| --- | --- | --- | --- |"]
    evidence, measured = [], []
    for name, entry in found.items():
        dataset, task, title = entry["dataset"]["id"], entry["dataset"]["task_id"], api.card(name).title
        percent = "%" if settings.hub_evals[name].scale == "percent" else ""
        lines.append(f"| {md(title, 80)} | `{dataset}` | `{task}` | {entry['value']}{percent} |")
        measured.append(f"- {md(title, 80)}: {md(entry.get('notes', ''), 300)}")
        link = explorer_link(settings, request.key, name)
        if link:
            evidence.append(f"[{md(title, 80)}]({link})")
    lines += ["", "How they were measured:", *measured, ""]
    lines.append("Every question behind each score, with the model's answer and how it was graded, is one click away "
                 f"in the leaderboard's Explorer: {', '.join(evidence)}." if evidence else
                 "The leaderboard keeps every question behind each score, with the model's answer and how it was "
                 "graded, in its Explorer.")
    lines += ["", f"Asked for by {md(by.name, 60)} on the leaderboard. Merge it to show these scores on the model "
              "page, or close it if you would rather not: the leaderboard never opens it again for this run.", "",
              marker(request.key)]
    return "\n".join(lines)


def space_problem(settings: Settings) -> str:
    """Why this Space can propose no run at all ("" when it can): turned off, or no Hub token (the Explorer greys its
    button out with this reason; what a run lacks, such as a benchmark with a registered dataset, is run_problem's)."""
    if settings.eval_results_prs == "off":
        return "Proposing results to model pages is turned off on this leaderboard; " + NOTHING + "."
    if not settings.hf_token:
        return "This leaderboard has no Hub token (HF_TOKEN), so it cannot open pull requests; " + NOTHING + "."
    return ""


def visitor_problem(settings: Settings, by: Visitor) -> str:
    """Why this visitor may not propose results here ("" when they may): turned off, signed out, not an admin."""
    if settings.eval_results_prs == "off":
        return space_problem(settings)
    if not by.signed_in:
        return SIGN_IN_NEEDED
    if settings.eval_results_prs == "admins" and not by.admin:
        return "Only the leaderboard's admins can propose results to model pages here; " + NOTHING + "."
    return ""



def stored_run(store: Store, key: str) -> tuple[q.Request | None, dict | None]:
    """The run's request and results as stored (results None without a request); DamagedFile, OSError or
    StoreConflict when the store cannot say."""
    request = q.load(store, f"requests/{key}.json")
    return request, read_results(store, f"results/{key}.json") if request is not None else None


def run_problem(settings: Settings, request: q.Request | None, results: dict | None) -> str:
    """Why this run's results may not be proposed ("" when they may), from the store alone."""
    if request is None:
        return "No such run; " + NOTHING + "."
    if request.status != q.FINISHED:
        return f"Only a finished run can be proposed; this one is {request.status}; {NOTHING}."
    if request.source != "hub":
        return ("Only a Hugging Face Hub model has a model page to propose results to; this run is of a "
                f"{'served endpoint' if request.served else 'local folder'}, so {NOTHING}.")
    if results is None:
        return "The run's results could not be read; " + NOTHING + "."
    flagged = flag(results, settings, request.hidden)
    if flagged:
        return f"Only runs the board ranks are proposed, and this one is flagged ({md(flagged, 200)}); {NOTHING}."
    if not entries(results, settings):
        return ("None of this run's benchmarks has a registered Hub dataset to report to (the About tab lists them), "
                f"so {NOTHING}.")
    return ""


def refused_run(settings: Settings, request: q.Request | None, results: dict | None) -> str:
    """Why this run cannot be proposed here ("" when it can): the run's own reason first (a local folder's or a
    served endpoint's run has no model page, whatever this Space's token), else the Space's (space_problem). The
    Explorer greys its button out with this sentence."""
    return run_problem(settings, request, results) or space_problem(settings)


def proposals_in_window(requests: list[q.Request], moment) -> list[dict]:
    """Every pull request the Space opened over the last 24 hours (the propose actions recorded, across all requests;
    one found on the Hub and recorded later does not count)."""
    found = []
    for request in requests:
        for action in request.actions:
            ours = isinstance(action, dict) and action.get("action") == PROPOSE and action.get("opened") is not False
            at = q.parse_time(action.get("at")) if ours else None
            if at is not None and at > moment - DAY:
                found.append(action)
    return found


def over_limit(settings: Settings, requests: list[q.Request], by: Visitor, moment) -> str:
    """Why one more pull request may not be opened now ("" when it may): the Space's daily limit, or the person's."""
    recent = proposals_in_window(requests, moment)
    if len(recent) >= settings.eval_prs_per_day:
        return (f"This leaderboard has opened {len(recent)} pull requests to model pages in the last 24 hours, the "
                f"most it opens in a day (LEADERBOARD_EVAL_PRS_PER_DAY); try again tomorrow; {NOTHING}.")
    mine = [a for a in recent if a.get("by") == by.name]
    if len(mine) >= PER_PERSON_PER_DAY:
        return (f"You have had {len(mine)} pull requests opened in the last 24 hours, the most one person may "
                f"({PER_PERSON_PER_DAY}); try again tomorrow; {NOTHING}.")
    return ""


def may_open(settings: Settings, request: q.Request, requests: list[q.Request], by: Visitor, moment) -> str:
    """Why this call may not open the run's pull request, read under the store's lock ("" when it may): one is
    recorded already, another call is opening one now, or a daily limit is reached (reservations counted)."""
    url = proposed(request)
    if url:
        return f"This run was proposed already: [its pull request]({url})."
    if pending_proposal(request, moment) is not None:
        return f"A pull request for this run is being opened right now; {NOTHING} by this request."
    return over_limit(settings, requests, by, moment)


def find_pull_request(hub, request: q.Request, author: str):
    """The model repo's pull request for this run opened by `author` (the Space's token's user: a pull request
    anyone else opened, with our title and marker or not, is never taken for ours), by its title, then the marker in
    its first comment; None when there is none."""
    title, mark = pr_title(request), marker(request.key)
    for discussion in hub.get_repo_discussions(request.model, author=author, discussion_type="pull_request"):
        if discussion.title != title or discussion.author != author:
            continue
        details = hub.get_discussion_details(request.model, discussion.num)
        first = details.events[0] if details.events else None
        if mark in (getattr(first, "content", "") or ""):
            return discussion
    return None


def hub_problem(error: Exception, model: str, gated: bool) -> str:
    """One sentence for a Hub error on the model's repo (never the error's own text: it may name the request)."""
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    name = f"**{md(model, 120)}**"
    if isinstance(error, GatedRepoError) or (gated and isinstance(error, RepositoryNotFoundError)):
        return f"{name} is gated and this leaderboard's token has no access to it, so {NOTHING}."
    if isinstance(error, RepositoryNotFoundError):
        return f"{name} was not found on the Hub, or it is private, so {NOTHING}."
    status = getattr(getattr(error, "response", None), "status_code", None)
    if isinstance(error, HfHubHTTPError) and status == 403:
        return f"The authors of {name} have turned off pull requests (discussions) on its repo, so {NOTHING}."
    if isinstance(error, HfHubHTTPError) and status == 429:
        return f"The Hub is limiting how fast this leaderboard opens pull requests, so {NOTHING}: try again later."
    if isinstance(error, HfHubHTTPError):
        return f"The Hub answered with an error (HTTP {status or '?'}); {NOTHING}: please try again later."
    return f"The Hub could not be reached ({type(error).__name__}); {NOTHING}: please try again later."


def propose(settings: Settings, store: Store, key: str, by: Visitor, hub=None,
            lock: threading.Lock | None = None) -> Proposal:
    """Propose the run named by `key` to its model page as `by` (see the module). `hub`: the huggingface_hub.HfApi to
    use (default: a new one on the Hub, with HF_TOKEN; the Space keeps one, whose whoami is asked once); `lock`: the
    Space's, so two clicks cannot both open one."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    problem = visitor_problem(settings, by)
    if problem:
        return Proposal(False, problem)
    if not q.is_request_key(key):
        return Proposal(False, "Pick a run first; " + NOTHING + ".")
    try:
        request, results = stored_run(store, key)
    except DamagedFile:
        return Proposal(False, "The run's request file is damaged (the admins see it in the Queue tab); " + NOTHING
                        + ".")
    except (OSError, StoreConflict) as error:  # the Hub store unreachable, say
        log.warning("proposing %s: the store could not be read: %s", key, settings.scrub(str(error))[:300])
        return Proposal(False, "The leaderboard's results could not be read right now; " + NOTHING + ".")
    problem = refused_run(settings, request, results)
    if problem:
        return Proposal(False, problem)
    hub = hub or HfApi(token=settings.hf_token)
    gated = False
    with lock or threading.Lock():
        try:
            info = hub.model_info(request.model)
            gated = bool(getattr(info, "gated", False))
            if getattr(info, "private", False):
                return Proposal(False, f"**{md(request.model, 120)}** is private: results are proposed to public "
                                       f"model pages only, so {NOTHING}.")
            author = hub.whoami(cache=True)["name"]  # the client keeps it: the Hub limits whoami hard
            existing = find_pull_request(hub, request, author)
            if existing is not None:
                return _found(settings, store, request, by, existing)
            if getattr(info, "sha", None) != request.revision:
                return Proposal(False, f"**{md(request.model, 120)}** has changed since this run (revision "
                                       f"{request.revision[:12]}, now {str(getattr(info, 'sha', ''))[:12]}): its "
                                       f"results are for an older revision, so {NOTHING}.")
            reservation, why = reserve_proposal(
                store, request.path, by, lambda current, requests, moment: may_open(settings, current, requests, by,
                                                                                    moment))
            if why:
                return Proposal(False, why)
        except (HfHubHTTPError, OfflineModeIsEnabled, ConnectionError, TimeoutError, *transport_errors()) as error:
            log.warning("proposing %s to its model page failed: %s", key, settings.scrub(str(error))[:300])
            return Proposal(False, hub_problem(error, request.model, gated))
        except StoreBusy as busy:
            return Proposal(False, f"The leaderboard is busy; try again in {busy.minutes} minute"
                                   f"{'s' if busy.minutes != 1 else ''}; {NOTHING}.")
        except (OSError, StoreConflict, DamagedFile) as error:  # the requests, for the daily limits
            log.warning("proposing %s: the store could not be read: %s", key, settings.scrub(str(error))[:300])
            return Proposal(False, "The leaderboard's requests could not be read right now; " + NOTHING + ".")
        try:
            existing = find_pull_request(hub, request, author)  # again: the run is ours now
            if existing is not None:
                return _found(settings, store, request, by, existing, reservation)
            found = benchmark_entries(results, settings)
            added = CommitOperationAdd(repo_file(), file_text(list(found.values())))
            commit = hub.create_commit(request.model, [added],
                                       commit_message=pr_title(request),
                                       commit_description=pr_description(settings, request, found, by),
                                       create_pr=True)
        except (HfHubHTTPError, OfflineModeIsEnabled, ConnectionError, TimeoutError, *transport_errors()) as error:
            log.warning("proposing %s to its model page failed: %s", key, settings.scrub(str(error))[:300])
            _release(settings, store, request, reservation)
            return Proposal(False, hub_problem(error, request.model, gated))
        except BaseException:
            _release(settings, store, request, reservation)
            raise
        url = commit.pr_url or ""
        _record(settings, store, request, by, url, reservation=reservation)
    log.info("proposed %s to its model page: %s", key, url)
    return Proposal(True, f"Opened [pull request #{commit.pr_num}]({url}) on **{md(request.model, 120)}**: its "
                          "authors can merge it to show these scores on the model page.", url)


def _found(settings: Settings, store: Store, request: q.Request, by: Visitor, existing,
           reservation: str | None = None) -> Proposal:
    """The run's pull request exists: say where and in what state (recording it if it was not yet, in place of this
    call's reservation)."""
    url = existing.url
    _record(settings, store, request, by, url, opened=False, reservation=reservation)
    link = f"[pull request #{existing.num}]({url})"
    if existing.status == "merged":
        return Proposal(False, f"This run was proposed already, and the model's authors merged {link}.", url)
    if existing.status == "closed":
        return Proposal(False, f"This run was proposed already, and the model's authors closed {link}; the "
                               "leaderboard does not open it again.", url)
    return Proposal(False, f"This run was proposed already: {link} is {existing.status}.", url)


def _release(settings: Settings, store: Store, request: q.Request, reservation: str) -> None:
    """Remove this call's reservation (nothing was opened); a failure is logged (it lapses after RESERVED_S)."""
    try:
        release_proposal(store, request.path, reservation)
    except (StoreBusy, StoreConflict, DamagedFile, OSError, ValueError) as error:
        log.warning("the reservation to propose %s could not be removed (it lapses by itself): %s", request.key,
                    settings.scrub(str(error))[:300])


def _record(settings: Settings, store: Store, request: q.Request, by: Visitor, url: str, opened: bool = True,
            reservation: str | None = None) -> None:
    """The pull request into the request's actions (in place of `reservation`) and onto the board; a failure is
    logged, never raised (the next ask finds the pull request on the Hub and records it then)."""
    if not url:
        if reservation is not None:
            _release(settings, store, request, reservation)
        return
    try:
        if record_proposal(store, request.path, by, url, opened, reservation):
            rebuild_board(settings, store)
    except (StoreBusy, StoreConflict, OSError, ValueError) as error:
        log.warning("the pull request %s of %s could not be recorded yet: %s", url, request.key,
                    settings.scrub(str(error))[:300])
