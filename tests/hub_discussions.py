"""Pull requests and discussions on the loopback Hub (used by tests/hub_server.py and hub_repo_api.py), as
`huggingface_hub.HfApi(endpoint=hub.url, token=...)` 2.4 calls them and huggingface.co answers:

- `create_commit(..., create_pr=True)` (POST .../commit/main?create_pr=1, `Community.open_pr`) opens a NEW pull
  request each time, by anyone who may read the repo (tests/hub_access.py): number N (discussions and pull requests
  share one numbering per repo, from 1), a ref `refs/pr/N` holding one commit on main's head (or the header's
  parentCommit) with the changes; main is unchanged. Its title is the commit's summary, its first comment the
  commit's description; the answer adds `pullRequestUrl` ({repo url}/discussions/N);
- POST /api/{type}s/{repo}/discussions {title, description}: a discussion (create_discussion; pull requests are
  opened by create_pr only);
- GET /api/{type}s/{repo}/discussions ?p=K&type=all|discussion|pull_request&status=all|open|closed&author=NAME:
  50 a page, newest first, {discussions, count, start, numClosedDiscussions} ("closed" matches merged too);
- GET .../discussions/{num}: the details; events in order: the description (a comment), the commit, then comments
  and status changes; a pull request's `changes` {base: refs/heads/main, mergeCommitId once merged},
  `filesWithConflicts` (paths main and the pull request both changed, differently, since its base) and `diff`
  (unified, its files against its base; an LFS file's pointer);
- POST .../discussions/{num}/status {status: open|closed, comment?}: the author or the namespace (else 403); a
  merged pull request's is a 400; answers {"newStatus": <status-change event>};
- POST .../discussions/{num}/merge {comment?}: the namespace (else 403), an open pull request without conflicts
  (else 400, 409): one commit on main, by the merger, titled "Merge refs/pr/N", the pull request's changes
  (its commit against its parent) on main's head; the status becomes "merged".
A missing number is a 404. Everything changes under the repo store's lock (`RepoStore.locked`).
"""
from __future__ import annotations

import difflib
import html
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tests.hub_http import OPTIONAL, REQUIRED, HubError, Reply, Request, json_reply, route
from tests.hub_lfs import git_blob_oid, lfs_patterns, lfs_pointer
from tests.hub_repos import BRANCH, Commit, LfsLine, Repo, RepoStore, apply_changes, changed_paths, iso_time

if TYPE_CHECKING:
    from tests.hub_server import HubServer

PAGE = 50
TYPES = ("all", "discussion", "pull_request")
STATUSES = ("all", "open", "closed")
BASE = f"refs/heads/{BRANCH}"


def _event(kind: str, author: str, data: dict) -> dict:
    return {"id": secrets.token_hex(12), "type": kind, "createdAt": iso_time(time.time()),
            "author": {"name": author}, "data": data}


def comment_event(author: str, text: str) -> dict:
    latest = {"raw": text, "html": html.escape(text), "updatedAt": iso_time(time.time()), "author": {"name": author}}
    return _event("comment", author, {"edited": False, "hidden": False, "latest": latest, "numEdits": 0,
                                      "editors": [author], "reactions": [], "isReport": False})


@dataclass
class Discussion:
    num: int
    title: str
    author: str
    description: str
    is_pull_request: bool
    ref: str | None = None  # a pull request's "refs/pr/N"
    status: str = "open"  # open, closed, merged
    merge_commit: str | None = None
    created_at: float = field(default_factory=time.time)
    events: list[dict] = field(default_factory=list)

    def hook_view(self) -> dict:
        """What `hub.discussions()` answers."""
        return {"num": self.num, "title": self.title, "status": self.status, "author": self.author,
                "is_pull_request": self.is_pull_request, "description": self.description, "ref": self.ref,
                "merge_commit": self.merge_commit}

    def summary(self, repo: Repo) -> dict:
        """An item of the listing (and the common part of the details)."""
        return {"num": self.num, "title": self.title, "status": self.status, "createdAt": iso_time(self.created_at),
                "isPullRequest": self.is_pull_request, "author": {"name": self.author},
                "repo": {"name": repo.repo_id, "type": repo.repo_type}, "pinned": False,
                "numComments": sum(event["type"] == "comment" for event in self.events), "topReactions": []}

    def matches(self, kind: str, status: str, author: str | None) -> bool:
        return (kind == "all" or (kind == "pull_request") == self.is_pull_request) \
            and (status == "all" or (status == "open") == (self.status == "open")) \
            and (author is None or author == self.author)


# ---------------------------------------------------------------------------------------------------- diffs

def _blob(commit: Commit | None, path: str) -> bytes | None:
    """A file as git holds it (an LFS file: its pointer); None when absent."""
    if commit is None or path not in commit.files:
        return None
    data = commit.files[path]
    return lfs_pointer(data) if path in commit.lfs else data


def _lines(data: bytes) -> list[str]:
    lines = data.decode().splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def file_diff(path: str, before: bytes | None, after: bytes | None) -> str:
    """git's diff of one file (before or after None: added or deleted)."""
    short = {side: git_blob_oid(data)[:7] if data is not None else "0000000" for side, data in
             (("a", before), ("b", after))}
    head = [f"diff --git a/{path} b/{path}\n"]
    if before is None:
        head += ["new file mode 100644\n", f"index {short['a']}..{short['b']}\n"]
    elif after is None:
        head += ["deleted file mode 100644\n", f"index {short['a']}..{short['b']}\n"]
    else:
        head += [f"index {short['a']}..{short['b']} 100644\n"]
    old, new = (f"a/{path}" if before is not None else "/dev/null"), (f"b/{path}" if after is not None else "/dev/null")
    try:
        body = list(difflib.unified_diff(_lines(before or b""), _lines(after or b""), old, new, lineterm="\n"))
    except UnicodeDecodeError:
        return "".join(head) + f"Binary files {old} and {new} differ\n"
    if body:
        body[0], body[1] = f"--- {old}\n", f"+++ {new}\n"
    return "".join(head + body)


def unified_diff(base: Commit | None, commit: Commit) -> str:
    """A pull request's diff: its commit's files against its base."""
    return "".join(file_diff(path, _blob(base, path), _blob(commit, path))
                   for path in sorted(changed_paths(commit, base)))


def conflicts(base: Commit | None, commit: Commit, head: Commit) -> list[str]:
    """The paths both the pull request and main changed since its base, and differently."""
    ours = changed_paths(head, base) if base is not None and head.oid != base.oid else set()
    return sorted(path for path in changed_paths(commit, base) & ours
                  if (head.files.get(path), path in head.lfs) != (commit.files.get(path), path in commit.lfs))


# ---------------------------------------------------------------------------------------------------- the store

class Community:
    """Every repo's discussions and pull requests, kept on the repos themselves (RepoStore.locked)."""

    def __init__(self, repos: RepoStore):
        self.repos = repos

    def open_pr(self, repo_type: str, repo_id: str, revision: str | None, header: dict,
                lines: list[tuple[str, bytes | LfsLine | None]], author: str) -> dict:
        """A commit with create_pr=1: a new pull request against main; the commit answer with `pullRequestUrl`."""
        if revision not in (None, "", BRANCH, BASE):
            raise HubError(400, f"The test Hub opens pull requests against {BRANCH} only, not {revision}")
        now = time.monotonic()
        with self.repos.locked(repo_type, repo_id) as repo:
            base = repo.at(header.get("parentCommit"))
            changes = self.repos.resolve_lines(lines, lfs_patterns(base.files.get(".gitattributes")))
            self.repos.take_quota(repo_id, now)
            files, lfs = apply_changes(base.files, base.lfs, changes)
            num = len(repo.discussions) + 1
            title, description = header.get("summary", ""), header.get("description") or ""
            commit = repo.add_commit(files, title, lfs, author, description, ref=f"refs/pr/{num}", parent=base.oid)
            events = [comment_event(author, description), _event("commit", author, {"subject": title,
                                                                                    "oid": commit.oid})]
            repo.discussions.append(Discussion(num, title, author, description, True, f"refs/pr/{num}",
                                               events=events))
            self.repos.landed(repo_id, now, on_branch=False)
        url = self.repos.url(repo_type, repo_id)
        return {"success": True, "commitOid": commit.oid, "commitUrl": f"{url}/commit/{commit.oid}",
                "hookOutput": "", "pullRequestUrl": f"{url}/discussions/{num}"}

    def open_discussion(self, repo_type: str, repo_id: str, title: str, description: str, author: str) -> int:
        with self.repos.locked(repo_type, repo_id) as repo:
            num = len(repo.discussions) + 1
            repo.discussions.append(Discussion(num, title, author, description, False,
                                               events=[comment_event(author, description)]))
        return num

    @staticmethod
    def _get(repo: Repo, num: int) -> Discussion:
        if not 1 <= num <= len(repo.discussions):
            raise HubError(404, f"Discussion #{num} not found on {repo.repo_id}")
        return repo.discussions[num - 1]

    def listing(self, repo_type: str, repo_id: str, page: int, kind: str, status: str, author: str | None) -> dict:
        """One page of the listing, newest first."""
        with self.repos.locked(repo_type, repo_id) as repo:
            chosen = [d for d in reversed(repo.discussions) if d.matches(kind, "all", author)]
            shown = [d for d in chosen if d.matches("all", status, None)]
            items = [d.summary(repo) for d in shown[page * PAGE:(page + 1) * PAGE]]
        closed = sum(d.status != "open" for d in chosen)
        return {"discussions": items, "count": len(shown), "start": page * PAGE, "numClosedDiscussions": closed}

    def details(self, repo_type: str, repo_id: str, num: int) -> dict:
        with self.repos.locked(repo_type, repo_id) as repo:
            discussion = self._get(repo, num)
            answer = {**discussion.summary(repo), "events": list(discussion.events)}
            if discussion.is_pull_request:
                commit = repo.commits[repo.refs[discussion.ref]]
                base = repo.commits.get(commit.parent) if commit.parent else None
                changes = {"base": BASE}
                if discussion.merge_commit:
                    changes["mergeCommitId"] = discussion.merge_commit
                open_ = discussion.status == "open"
                answer.update(changes=changes, diff=unified_diff(base, commit),
                              filesWithConflicts=conflicts(base, commit, repo.commits[repo.head]) if open_ else [])
        return answer

    def change_status(self, repo_type: str, repo_id: str, num: int, status: str, user: str, member: bool,
                      comment: str | None) -> dict:
        """The author or a namespace member closes or reopens; the status-change event."""
        if status not in ("open", "closed"):
            raise HubError(400, "status must be 'open' or 'closed'")
        with self.repos.locked(repo_type, repo_id) as repo:
            discussion = self._get(repo, num)
            if not member and user != discussion.author:
                raise HubError(403, "Only the author or the repo's owners may change this discussion's status")
            if discussion.status == "merged":
                raise HubError(400, "A merged pull request cannot change status")
            if comment:
                discussion.events.append(comment_event(user, comment))
            event = _event("status-change", user, {"status": status})
            discussion.events.append(event)
            discussion.status = status
        return event

    def merge(self, repo_type: str, repo_id: str, num: int, user: str, comment: str | None) -> str:
        """The namespace merges an open pull request: one commit on main; its oid."""
        now = time.monotonic()
        with self.repos.locked(repo_type, repo_id) as repo:
            pr = self._get(repo, num)
            if not pr.is_pull_request or pr.status != "open":
                raise HubError(400, f"#{num} is not an open pull request")
            commit, head = repo.commits[repo.refs[pr.ref]], repo.commits[repo.head]
            base = repo.commits.get(commit.parent) if commit.parent else None
            conflicting = conflicts(base, commit, head)
            if conflicting:
                raise HubError(409, f"This pull request has conflicts with {BRANCH}: {', '.join(conflicting)}")
            self.repos.take_quota(repo_id, now)
            files, lfs = dict(head.files), set(head.lfs)
            for path in changed_paths(commit, base):
                files.pop(path, None)
                lfs.discard(path)
                if path in commit.files:
                    files[path] = commit.files[path]
                    lfs.update({path} & commit.lfs)
            merged = repo.add_commit(files, f"Merge {pr.ref}", frozenset(lfs), user, pr.title)
            self.repos.landed(repo_id, now)
            if comment:
                pr.events.append(comment_event(user, comment))
            pr.events.append(_event("status-change", user, {"status": "merged"}))
            pr.status, pr.merge_commit = "merged", merged.oid
        return merged.oid

    def hook_view(self, repo_type: str, repo_id: str) -> list[dict]:
        with self.repos.locked(repo_type, repo_id) as repo:
            return [discussion.hook_view() for discussion in repo.discussions]


# ---------------------------------------------------------------------------------------------------- endpoints

def _choice(request: Request, name: str, allowed: tuple[str, ...]) -> str:
    value = request.arg(name) or "all"
    if value not in allowed:
        raise HubError(400, f"`{name}` must be one of {', '.join(allowed)}")
    return value


def _number(text: str | None, name: str, low: int) -> int:
    try:
        number = int(text or low)
    except ValueError:
        number = low - 1
    if number < low:
        raise HubError(400 if name == "p" else 404, f"Invalid {name}: {text}")
    return number


class DiscussionEndpoints:
    def __init__(self, hub: "HubServer"):
        self.hub = hub
        self.community: Community = hub.community
        self.rules = hub.rules  # tests/hub_access.py

    def routes(self) -> list:
        base = r"/api/(?P<types>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)/discussions"
        return [route("GET", base, self.listing, OPTIONAL),
                route("POST", base, self.create, REQUIRED),
                route("GET", rf"{base}/(?P<num>[^/]+)", self.details, OPTIONAL),
                route("POST", rf"{base}/(?P<num>[^/]+)/status", self.status, REQUIRED),
                route("POST", rf"{base}/(?P<num>[^/]+)/merge", self.merge, REQUIRED)]

    def listing(self, request: Request) -> Reply:
        repo_type, repo_id = self.rules.contribute(request)
        kind, status = _choice(request, "type", TYPES), _choice(request, "status", STATUSES)
        return json_reply(self.community.listing(repo_type, repo_id, _number(request.arg("p"), "p", 0), kind,
                                                 status, request.arg("author") or None))

    def create(self, request: Request) -> Reply:
        repo_type, repo_id = self.rules.contribute(request)
        payload = request.json() or {}
        title = str(payload.get("title") or "").strip()
        if len(title) < 3:
            raise HubError(400, "A title of at least 3 characters is required")
        if payload.get("pullRequest"):
            raise HubError(400, "The test Hub opens pull requests through create_commit(create_pr=True) only")
        num = self.community.open_discussion(repo_type, repo_id, title, str(payload.get("description") or ""),
                                             request.user)
        return json_reply({"num": num, "url": f"{self.hub.repos.url(repo_type, repo_id)}/discussions/{num}"})

    def details(self, request: Request) -> Reply:
        repo_type, repo_id = self.rules.contribute(request)
        return json_reply(self.community.details(repo_type, repo_id, _number(request.params["num"], "num", 1)))

    def status(self, request: Request) -> Reply:
        repo_type, repo_id = self.rules.contribute(request)
        payload = request.json() or {}
        event = self.community.change_status(repo_type, repo_id, _number(request.params["num"], "num", 1),
                                             str(payload.get("status")), request.user, self.rules.member(request),
                                             payload.get("comment"))
        return json_reply({"newStatus": event})

    def merge(self, request: Request) -> Reply:
        repo_type, repo_id = self.rules.contribute(request)
        if not self.rules.member(request):
            raise HubError(403, "Only the repo's owners may merge a pull request")
        num = _number(request.params["num"], "num", 1)
        oid = self.community.merge(repo_type, repo_id, num, request.user, (request.json() or {}).get("comment"))
        return json_reply({"status": "merged", "mergeCommitId": oid})
