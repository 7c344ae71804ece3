"""One pull request per run, and the daily limits, hold across processes: proposals made at once through two store
clients on one store (two Space replicas, a worker beside a Space), with no lock they share, open one pull request
per run and at most PER_PERSON_PER_DAY for one person. The local store (two clients on one folder: its file lock)
and the Hub store (two clients on one requests repo of the loopback Hub: `parent_commit`), each proposal with its own
Hub client, as a second process would have."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from leaderboard.board import proposals
from leaderboard.store import open_store
from leaderboard.submissions import records as queue
from leaderboard.submissions.actions import RESERVED_S, reserve_proposal
from leaderboard.submissions.identity import Visitor
from tests.published_runs import publish_hub_model_run

# two store clients racing each other (threads, a Hub fake): the whole suite runs them; the quick tier leaves them
pytestmark = pytest.mark.slow

SPACE_USER = "leaderboard-bot"
ADA = Visitor("ada")
_models = iter(range(10_000))


@pytest.fixture(params=["local", "hub"])
def space(request, hub, settings, repos):
    """The Space's settings on a local store or on Hub dataset repos of the loopback Hub."""
    token = hub.issue_token(SPACE_USER, orgs=["test-org"])
    chosen = settings.with_(hf_token=token, space_id="test-org/leaderboard")
    if request.param == "hub":
        chosen = chosen.with_(store_backend="hub", results_repo=repos[0], requests_repo=repos[1])
    return chosen


def _client(hub, space):
    """A store client and a Hub client of their own, as another process has."""
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.url, token=space.hf_token)
    return open_store(space, api), api


def _published(hub, space, store, tmp_path):
    model = f"acme/vlm-across-{next(_models)}"
    return model, publish_hub_model_run(hub, space, store, tmp_path / model.replace("/", "_"), model)


def _at_once(calls: list) -> list:
    """Every call started together, each on its own thread."""
    start = threading.Barrier(len(calls))

    def run(call):
        start.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def _pull_requests(hub, model: str) -> list[dict]:
    return [d for d in hub.discussions(model) if d["is_pull_request"]]


def test_six_proposals_of_one_run_through_two_store_clients_open_one_pull_request(hub, space, tmp_path):
    first, second = _client(hub, space), _client(hub, space)
    model, request = _published(hub, space, first[0], tmp_path)
    people = [Visitor(name) for name in ("ada", "bob", "cy", "dee", "eve", "fay")]
    clients = [first, second] * 3
    done = _at_once([lambda who=who, client=client: proposals.propose(space, client[0], request.key, who,
                                                                      hub=client[1])
                     for who, client in zip(people, clients)])
    assert [d.opened for d in done].count(True) == 1, [d.message for d in done]
    assert len(_pull_requests(hub, model)) == 1
    [opened] = [d for d in done if d.opened]
    refused = [d.message for d in done if not d.opened]
    assert all("proposed already" in m or "being opened right now" in m for m in refused), refused
    first[0].refresh()
    actions = queue.load(first[0], request.path).actions
    assert [a["url"] for a in actions] == [opened.url] and not any(a.get("pending") for a in actions)


def test_one_persons_limit_holds_across_two_store_clients(hub, space, tmp_path):
    first, second = _client(hub, space), _client(hub, space)
    runs = [_published(hub, space, first[0], tmp_path) for _ in range(5)]
    second[0].refresh()
    clients = [first, second, first, second, first]
    done = _at_once([lambda request=request, client=client: proposals.propose(space, client[0], request.key, ADA,
                                                                              hub=client[1])
                     for (_, request), client in zip(runs, clients)])
    assert [d.opened for d in done].count(True) == proposals.PER_PERSON_PER_DAY, [d.message for d in done]
    assert all("3 pull requests opened in the last 24 hours" in d.message for d in done if not d.opened)
    assert sum(len(_pull_requests(hub, model)) for model, _ in runs) == proposals.PER_PERSON_PER_DAY


def test_a_reservation_counts_at_once_and_a_crashed_one_lapses(hub, space, tmp_path):
    store, api = _client(hub, space)
    model, request = _published(hub, space, store, tmp_path)
    taken, why = reserve_proposal(store, request.path, ADA, lambda r, rs, m: proposals.may_open(space, r, rs, ADA, m))
    assert taken and not why
    # a second process now: the run is being opened, nothing more is opened
    other, other_api = _client(hub, space)
    busy = proposals.propose(space, other, request.key, Visitor("bob"), hub=other_api)
    assert not busy.opened and "being opened right now" in busy.message and _pull_requests(hub, model) == []
    # the first process crashed: after RESERVED_S its reservation holds the run no longer
    store.refresh()
    stored = queue.load(store, request.path)
    stale = queue.iso(queue.now() - queue.timedelta(seconds=RESERVED_S + 1))
    stored.actions = [{**a, "at": stale} for a in stored.actions]
    queue.save(store, stored)
    other.refresh()
    done = proposals.propose(space, other, request.key, Visitor("bob"), hub=other_api)
    assert done.opened and len(_pull_requests(hub, model)) == 1
    other.refresh()
    assert [a.get("url") for a in queue.load(other, request.path).actions] == [done.url]


def test_a_hub_error_releases_the_reservation(hub, space, tmp_path):
    store, api = _client(hub, space)
    model, request = _published(hub, space, store, tmp_path)
    hub.fail_next_request(f"/api/models/{model}/commit/", 500, "boom")
    failed = proposals.propose(space, store, request.key, ADA, hub=api)
    assert not failed.opened and "HTTP 500" in failed.message
    store.refresh()
    assert queue.load(store, request.path).actions == []  # released: it holds the run no longer, counts toward no limit
    assert proposals.propose(space, store, request.key, ADA, hub=api).opened
