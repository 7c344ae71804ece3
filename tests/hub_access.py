"""Who may see a repo of the loopback Hub and open pull requests or discussions on it (used by tests/hub_repo_api.py,
hub_lfs.py, hub_discussions.py and hub_server.py's hooks), as huggingface.co answers:

- a private repo: every repo endpoint (info, tree, paths-info, commits, resolve, preupload, commit, LFS, the
  discussions) answers 404 RepoNotFound to anyone neither in its namespace nor granted access;
- a gated repo ("auto" or "manual"): info and listings are public; a file's /resolve/ answers 403 GatedRepo to
  anyone neither in the namespace nor granted (no token too); opening a pull request and the discussion
  endpoints answer them 404 RepoNotFound;
- discussions disabled: the discussion endpoints and opening a pull request answer 403 DISABLED, to everyone.

Opening a pull request (`create_pr=1`) needs only read access; writing to a branch needs the namespace.
`seed_repo` makes a repo with files in one commit (the `create_model` hook).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from tests.hub_http import HubError, Request
from tests.hub_lfs import gitattributes_with, lfs_patterns, upload_mode

if TYPE_CHECKING:
    from tests.hub_repos import RepoStore
    from tests.hub_server import HubServer

DISABLED = "Discussions are disabled for this repo"
GATES = (False, "auto", "manual")


def repo_not_found() -> HubError:
    return HubError(404, "Repository not found", "RepoNotFound")


@dataclass(frozen=True)
class Access:
    """A repo's access settings."""
    private: bool = False
    gated: bool | str = False  # False, "auto" or "manual"
    discussions_disabled: bool = False
    granted: frozenset[str] = frozenset()  # users given access to a private or gated repo

    def updated(self, private: bool | None = None, gated: bool | str | None = None,
                discussions_disabled: bool | None = None, granted: Iterable[str] = ()) -> "Access":
        """These settings with some changed (None: unchanged); `granted` users are added."""
        if gated not in (None, *GATES):
            raise ValueError(f"gated must be False, 'auto' or 'manual', not {gated!r}")
        changes = {name: value for name, value in (("private", private), ("gated", gated),
                                                   ("discussions_disabled", discussions_disabled))
                   if value is not None}
        return replace(self, **changes, granted=self.granted | frozenset(granted))


def set_access(repos: "RepoStore", repo_type: str, repo_id: str, **changes) -> None:
    """The `set_repo_access` hook: change a repo's settings (Access.updated's arguments)."""
    with repos.locked(repo_type, repo_id) as repo:
        repo.access = repo.access.updated(**changes)


def seed_repo(repos: "RepoStore", repo_type: str, repo_id: str, files: dict[str, bytes] | None) -> str:
    """Create a repo (no token needed) holding `files` in one commit by its namespace (LFS where the Hub would
    store them so); its head oid. A repo that exists already is a ValueError."""
    status, _answer = repos.create(repo_type, repo_id)
    if status != 200:
        raise ValueError(f"the {repo_type} repo {repo_id} exists already")
    with repos.locked(repo_type, repo_id) as repo:
        if files:
            head = repo.commits[repo.head]
            patterns = lfs_patterns(head.files.get(".gitattributes"))
            lfs = {path for path, data in files.items() if upload_mode(path, len(data), data[:512], patterns) == "lfs"}
            for path in lfs:
                repos.storage.store(files[path])
            merged = {**head.files, **files}
            merged[".gitattributes"] = gitattributes_with(merged[".gitattributes"], sorted(lfs))
            repo.add_commit(merged, "Upload files", frozenset(lfs), repo_id.split("/")[0])
        return repo.head


class AccessRules:
    """The checks the endpoints make, on a request whose route names `types` (optional) and `repo`: each answers
    (repo type, repo id) or raises the Hub's error."""

    def __init__(self, hub: "HubServer"):
        self.hub = hub

    def _settings(self, request: Request) -> tuple[str, str, Access, bool]:
        """(type, id, settings, whether the user is in the namespace or granted); 404 for a missing repo."""
        repo_type, repo_id = request.params.get("types", "models")[:-1], request.params["repo"]
        with self.hub.repos.locked(repo_type, repo_id) as repo:
            access = repo.access
        user = request.user
        allowed = user is not None and (self.hub.in_namespace(user, repo_id.split("/")[0]) or user in access.granted)
        return repo_type, repo_id, access, allowed

    def read(self, request: Request) -> tuple[str, str]:
        """Info, listings: a private repo is not found but by its namespace and granted users."""
        repo_type, repo_id, access, allowed = self._settings(request)
        if access.private and not allowed:
            raise repo_not_found()
        return repo_type, repo_id

    def download(self, request: Request) -> tuple[str, str]:
        """A file: read access, and a gated repo's needs the namespace or a grant (else 403 GatedRepo)."""
        repo_type, repo_id, access, allowed = self._settings(request)
        if access.private and not allowed:
            raise repo_not_found()
        if access.gated and not allowed:
            raise HubError(403, f"Access to {repo_type} {repo_id} is restricted and you are not in the authorized "
                                f"list. Visit {self.hub.repos.url(repo_type, repo_id)} to ask for access.",
                           "GatedRepo")
        return repo_type, repo_id

    def contribute(self, request: Request) -> tuple[str, str]:
        """Discussions and opening a pull request: read access (a gated repo's: the namespace or a grant, else
        404), and discussions enabled (else 403)."""
        repo_type, repo_id, access, allowed = self._settings(request)
        if (access.private or access.gated) and not allowed:
            raise repo_not_found()
        if access.discussions_disabled:
            raise HubError(403, DISABLED)
        return repo_type, repo_id

    def write(self, request: Request) -> tuple[str, str]:
        """A branch: read access, then the namespace's (else 403)."""
        repo_type, repo_id = self.read(request)
        self.hub.check_namespace(request.user, repo_id.split("/")[0])
        return repo_type, repo_id

    def member(self, request: Request) -> bool:
        return request.user is not None and self.hub.in_namespace(request.user, request.params["repo"].split("/")[0])
