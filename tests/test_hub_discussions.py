"""The loopback Hub's pull requests and discussions (tests/hub_discussions.py) and repo access settings
(tests/hub_access.py), through the REAL `huggingface_hub.HfApi` client: create_commit(create_pr=True) by anyone who
may read, the PR's ref read back, the listing (pages, filters), details (events, diff), status changes, merges,
and private, gated and discussions-disabled repos."""
from __future__ import annotations

import uuid

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, hf_hub_download
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.utils import get_session

from tests.hub_server import HubServer, hub_client_online

OWNER, ORG = "bob", "bob-org"
RESULTS = ".eval_results/x.yaml"


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server, hub_client_online():
        yield server


@pytest.fixture(scope="module")
def owner(hub) -> HfApi:
    return HfApi(endpoint=hub.url, token=hub.issue_token(OWNER, orgs=[ORG]))


@pytest.fixture(scope="module")
def ada(hub) -> HfApi:
    """A user of no namespace the repos live in."""
    return HfApi(endpoint=hub.url, token=hub.issue_token("ada"))


@pytest.fixture
def model(hub) -> str:
    repo_id = f"{ORG}/model-{uuid.uuid4().hex[:8]}"
    hub.create_model(repo_id, {"README.md": b"# a model\n", "config.json": b"{}"})
    return repo_id


def open_pr(api: HfApi, repo_id: str, data: bytes = b"score: 1\n", title: str = "Add evaluation results",
            description: str = "Results of <run> & co", **kwargs):
    return api.create_commit(repo_id, operations=[CommitOperationAdd(RESULTS, data)], commit_message=title,
                             commit_description=description, create_pr=True, **kwargs)


def status_of(call) -> int:
    with pytest.raises(HfHubHTTPError) as failed:
        call()
    return failed.value.response.status_code


def test_anyone_who_reads_opens_a_new_pull_request_each_time(hub, ada, model):
    head = hub.head(model, "model")
    first = open_pr(ada, model)
    assert (first.pr_num, first.pr_revision) == (1, "refs/pr/1")
    assert first.pr_url == f"{hub.url}/{model}/discussions/1"
    assert first.commit_url == f"{hub.url}/{model}/commit/{first.oid}"
    assert hub.head(model, "model") == head and RESULTS not in hub.files(model, "model") and hub.commits[model] == 0
    second = open_pr(ada, model, b"score: 2\n", title="Again")
    assert second.pr_num == 2 and second.oid != first.oid
    assert hub.discussions(model) == [
        {"num": 1, "title": "Add evaluation results", "status": "open", "author": "ada", "is_pull_request": True,
         "description": "Results of <run> & co", "ref": "refs/pr/1", "merge_commit": None},
        {"num": 2, "title": "Again", "status": "open", "author": "ada", "is_pull_request": True,
         "description": "Results of <run> & co", "ref": "refs/pr/2", "merge_commit": None}]
    assert status_of(lambda: ada.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=model)) == 403


def test_a_pull_request_on_a_dataset_from_an_older_parent(hub, owner, ada):
    repo_id = f"{ORG}/data-{uuid.uuid4().hex[:8]}"
    owner.create_repo(repo_id, repo_type="dataset")
    parent = hub.head(repo_id)
    owner.upload_file(path_or_fileobj=b"new", path_in_repo="later.txt", repo_id=repo_id, repo_type="dataset")
    info = open_pr(ada, repo_id, repo_type="dataset", parent_commit=parent)
    assert info.pr_url == f"{hub.url}/datasets/{repo_id}/discussions/1"
    assert info.commit_url == f"{hub.url}/datasets/{repo_id}/commit/{info.oid}"
    assert set(hub.files(repo_id, revision="refs/pr/1")) == {".gitattributes", RESULTS}
    assert [c.commit_id for c in ada.list_repo_commits(repo_id, repo_type="dataset", revision="refs/pr/1")] == [
        info.oid, parent]


def test_a_pull_requests_files_read_back_from_its_ref(hub, ada, model, tmp_path):
    info = open_pr(ada, model)
    weights = CommitOperationAdd("model.safetensors", b"\0weights" * 10)  # an LFS file: ada uploads it too
    lfs = ada.create_commit(model, operations=[weights], commit_message="Weights", create_pr=True)
    path = hf_hub_download(model, RESULTS, revision="refs/pr/1", endpoint=hub.url, cache_dir=tmp_path,
                           token=ada.token)
    assert open(path, "rb").read() == b"score: 1\n"
    assert RESULTS in ada.list_repo_files(model, revision="refs/pr/1")
    assert ada.model_info(model, revision="refs/pr/1").sha == info.oid
    assert hub.files(model, repo_type="model", revision="refs/pr/1")[RESULTS] == b"score: 1\n"
    assert hub.lfs_paths(model, "model", revision=lfs.pr_revision) == {"model.safetensors"}
    weights_path = hf_hub_download(model, "model.safetensors", revision="refs/pr/2", endpoint=hub.url,
                                   cache_dir=tmp_path)
    assert open(weights_path, "rb").read() == b"\0weights" * 10


def test_the_listing_pages_newest_first_and_filters(hub, owner, ada, model):
    carl = HfApi(endpoint=hub.url, token=hub.issue_token("carl"))
    for number in range(1, 54):
        open_pr(carl if number % 10 == 0 else ada, model, f"score: {number}\n".encode(), title=f"PR {number}")
    talk = owner.create_discussion(model, "A question", description="Why?")
    assert talk.num == 54 and not talk.is_pull_request
    owner.change_discussion_status(model, 3, "closed")
    listed = list(ada.get_repo_discussions(model))
    assert [d.num for d in listed] == list(range(54, 0, -1)) and listed[0].title == "A question"
    assert listed[1].is_pull_request and listed[1].author == "ada" and listed[1].repo_id == model
    assert [d.num for d in ada.get_repo_discussions(model, discussion_type="discussion")] == [54]
    assert len(list(ada.get_repo_discussions(model, discussion_type="pull_request"))) == 53
    assert [d.num for d in ada.get_repo_discussions(model, discussion_status="closed")] == [3]
    assert len(list(ada.get_repo_discussions(model, discussion_status="open"))) == 53
    assert [d.num for d in ada.get_repo_discussions(model, author="carl")] == [50, 40, 30, 20, 10]
    page = get_session().get(f"{hub.url}/api/models/{model}/discussions", params={"p": 1}).json()
    assert (page["count"], page["start"], len(page["discussions"]), page["numClosedDiscussions"]) == (54, 50, 4, 1)
    item = page["discussions"][0]
    assert item["num"] == 4 and item["createdAt"].endswith("Z") and item["pinned"] is False
    assert item["repo"] == {"name": model, "type": "model"} and item["numComments"] == 1
    assert item["topReactions"] == [] and item["author"] == {"name": "ada"}


def test_details_hold_the_description_the_commit_and_the_diff(hub, owner, ada, model):
    info = open_pr(ada, model, b"score: 1\nrank: 2\n")
    details = ada.get_discussion_details(model, info.pr_num)
    assert (details.title, details.status, details.author, details.is_pull_request) == (
        "Add evaluation results", "open", "ada", True)
    assert details.target_branch == "refs/heads/main" and details.conflicting_files == []
    assert details.merge_commit_oid is None and details.git_reference == "refs/pr/1"
    comment, commit = details.events
    assert (comment.type, comment.content, comment.author) == ("comment", "Results of <run> & co", "ada")
    assert comment.rendered == "Results of &lt;run&gt; &amp; co" and not comment.edited and not comment.hidden
    assert (commit.type, commit.summary, commit.oid) == ("commit", "Add evaluation results", info.oid)
    assert details.diff.startswith(f"diff --git a/{RESULTS} b/{RESULTS}\nnew file mode 100644\n")
    assert f"--- /dev/null\n+++ b/{RESULTS}\n@@ -0,0 +1,2 @@\n+score: 1\n+rank: 2\n" in details.diff
    missing = status_of(lambda: ada.get_discussion_details(model, 99))
    assert missing == 404


def test_the_author_or_the_owners_change_the_status(hub, owner, ada, model):
    open_pr(ada, model)
    mallory = HfApi(endpoint=hub.url, token=hub.issue_token("mallory"))
    assert status_of(lambda: mallory.change_discussion_status(model, 1, "closed")) == 403
    closed = ada.change_discussion_status(model, 1, "closed", comment="Wrong numbers")
    assert (closed.type, closed.new_status, closed.author) == ("status-change", "closed", "ada")
    assert owner.change_discussion_status(model, 1, "open").new_status == "open"
    events = ada.get_discussion_details(model, 1).events
    assert [e.type for e in events] == ["comment", "commit", "comment", "status-change", "status-change"]
    assert events[2].content == "Wrong numbers" and [e.new_status for e in events[3:]] == ["closed", "open"]
    assert status_of(lambda: ada.change_discussion_status(model, 7, "closed")) == 404


def test_the_owners_merge_a_pull_request_onto_main(hub, owner, ada, model):
    info = open_pr(ada, model)
    owner.upload_file(path_or_fileobj=b"more", path_in_repo="later.txt", repo_id=model)  # main moves on
    assert status_of(lambda: ada.merge_pull_request(model, 1)) == 403
    owner.merge_pull_request(model, 1)
    files = hub.files(model, "model")
    assert files[RESULTS] == b"score: 1\n" and files["later.txt"] == b"more"
    details = ada.get_discussion_details(model, 1)
    assert details.status == "merged" and details.merge_commit_oid == hub.head(model, "model")
    assert details.events[-1].new_status == "merged"
    merge = owner.list_repo_commits(model)[0]
    assert merge.title == "Merge refs/pr/1" and merge.authors == [OWNER] and info.oid != hub.head(model, "model")
    assert status_of(lambda: owner.merge_pull_request(model, 1)) == 400
    assert status_of(lambda: owner.change_discussion_status(model, 1, "closed")) == 400
    assert hub.discussions(model)[0]["merge_commit"] == details.merge_commit_oid


def test_a_conflicting_pull_request_is_not_merged(hub, owner, ada, model):
    open_pr(ada, model, b"score: 1\n")
    open_pr(ada, model, b"score: 2\n")
    owner.merge_pull_request(model, 1)
    assert ada.get_discussion_details(model, 2).conflicting_files == [RESULTS]
    assert status_of(lambda: owner.merge_pull_request(model, 2)) == 409
    talk = owner.create_discussion(model, "Just a talk")
    assert status_of(lambda: owner.merge_pull_request(model, talk.num)) == 400


def test_a_super_squash_keeps_the_pull_requests(hub, owner, ada, model):
    info = open_pr(ada, model)
    owner.super_squash_history(model)
    assert hub.files(model, "model", revision="refs/pr/1")[RESULTS] == b"score: 1\n"
    assert ada.model_info(model, revision="refs/pr/1").sha == info.oid


def test_a_private_repo_is_not_found_but_by_its_namespace_and_granted_users(hub, owner, ada, model, tmp_path):
    open_pr(ada, model)
    hub.set_repo_access(model, private=True)
    anonymous = HfApi(endpoint=hub.url, token=False)
    for api in (ada, anonymous):
        for call in (lambda: api.model_info(model), lambda: api.list_repo_files(model),
                     lambda: api.get_paths_info(model, ["README.md"]), lambda: api.list_repo_commits(model),
                     lambda: hf_hub_download(model, "README.md", endpoint=hub.url, cache_dir=tmp_path,
                                             token=api.token or False),
                     lambda: list(api.get_repo_discussions(model)), lambda: api.get_discussion_details(model, 1)):
            with pytest.raises(RepositoryNotFoundError):
                call()
    with pytest.raises(RepositoryNotFoundError):
        open_pr(ada, model)
    assert owner.model_info(model).private is True and owner.get_discussion_details(model, 1).num == 1
    hub.set_repo_access(model, granted=["ada"])
    assert ada.model_info(model).private is True and len(list(ada.get_repo_discussions(model))) == 1
    assert open_pr(ada, model).pr_num == 2
    created = f"{OWNER}/secret-{uuid.uuid4().hex[:6]}"
    owner.create_repo(created, private=True)
    with pytest.raises(RepositoryNotFoundError):
        anonymous.model_info(created)


def test_a_gated_repo_shows_its_info_and_guards_its_files(hub, owner, ada, model, tmp_path):
    hub.set_repo_access(model, gated="manual")
    assert ada.model_info(model).gated == "manual" and ada.model_info(model).private is False
    assert [f for f in ada.list_repo_files(model)] == [".gitattributes", "README.md", "config.json"]
    for token in (ada.token, False):
        with pytest.raises(GatedRepoError) as gated:
            hf_hub_download(model, "README.md", endpoint=hub.url, cache_dir=tmp_path / str(bool(token)),
                            token=token)
        assert gated.value.response.status_code == 403
    for call in (lambda: open_pr(ada, model), lambda: list(ada.get_repo_discussions(model))):
        with pytest.raises(RepositoryNotFoundError):
            call()
    assert open_pr(owner, model).pr_num == 1
    hub.set_repo_access(model, granted=["ada"])
    path = hf_hub_download(model, "README.md", endpoint=hub.url, cache_dir=tmp_path, token=ada.token)
    assert open(path, "rb").read() == b"# a model\n" and open_pr(ada, model).pr_num == 2
    hub.set_repo_access(model, gated="auto")
    assert owner.model_info(model).gated == "auto"
    hub.set_repo_access(model, gated=False)
    assert hf_hub_download(model, "config.json", endpoint=hub.url, cache_dir=tmp_path / "open", token=False)


def test_disabled_discussions_refuse_pull_requests_and_listings(hub, owner, ada, model):
    open_pr(ada, model)
    hub.set_repo_access(model, discussions_disabled=True)
    for call in (lambda: list(ada.get_repo_discussions(model)), lambda: ada.get_discussion_details(model, 1),
                 lambda: open_pr(ada, model), lambda: open_pr(owner, model)):
        with pytest.raises(HfHubHTTPError) as refused:
            call()
        assert refused.value.response.status_code == 403
        assert refused.value.response.headers["X-Error-Message"] == "Discussions are disabled for this repo"
    owner.upload_file(path_or_fileobj=b"ok", path_in_repo="still.txt", repo_id=model)  # main: still writable
    hub.set_repo_access(model, discussions_disabled=False)
    assert [d["num"] for d in hub.discussions(model)] == [1]
    with pytest.raises(ValueError):
        hub.set_repo_access(model, gated="sometimes")
    with pytest.raises(ValueError):
        hub.create_model(model)
