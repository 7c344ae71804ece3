"""The loopback Hub's repo endpoints (used by tests/hub_server.py; the repos themselves are tests/hub_repos.py), as
`huggingface_hub.HfApi(endpoint=hub.url, token=...)` 2.4 calls them:

    POST /api/repos/create
    GET  /api/{models,datasets,spaces}/{repo}[/revision/{rev}]   ?expand=sha&expand=... (only those, + _id and id)
    GET  .../tree/{rev}[/{path}]      ?recursive=true&expand=false&cursor=...: 1,000 entries a page (50 with
                                      expand=true, which adds lastCommit), `Link: <next url>; rel="next"`
    POST .../paths-info/{rev}         form: paths=a&paths=b&expand=false (the entries of the paths that exist)
    GET  .../commits/{rev}            ?limit=N (default 50, at most 1000)&p=K: newest first, X-Total-Count, Link
    POST .../super-squash/{branch}    {"message": ...}
    POST .../preupload/{rev}, POST .../commit/{rev} (NDJSON), POST /api/validate-yaml
         ?create_pr=1: a new pull request (refs/pr/N) on main, answering its `pullRequestUrl` too
    HEAD/GET /[datasets/|spaces/]{repo}/resolve/{rev}/{path}     (an LFS file: 302 to the LFS storage)
    GET  .../discussions              ?p=K&type=&status=&author=: 50 a page, newest first (count, start)
    POST .../discussions              {title, description}: a discussion (pull requests: create_pr above)
    GET  .../discussions/{num}        ?diff=1: events, changes {base, mergeCommitId}, filesWithConflicts, diff
    POST .../discussions/{num}/status {status: open|closed, comment?}: the author or the namespace
    POST .../discussions/{num}/merge  {comment?}: the namespace; one commit on main
    (the discussion routes: tests/hub_discussions.py; `{rev}` may be a pull request's `refs%2Fpr%2FN`)

Writes (create, preupload, commit, super-squash) need a token of the repo's namespace; opening a pull request
(create_pr=1) only read access (tests/hub_access.py: private and gated repos, discussions disabled).
"""
from __future__ import annotations

import base64
import json
import urllib.parse
from typing import TYPE_CHECKING

from tests.hub_http import OPTIONAL, REQUIRED, HubError, Reply, Request, byte_range, json_reply, page, route
from tests.hub_lfs import LfsLine, git_blob_oid, lfs_pointer, sha256_hex

if TYPE_CHECKING:
    from tests.hub_server import HubServer

TREE_PAGE, TREE_PAGE_EXPANDED = 1000, 50
COMMITS_PAGE, COMMITS_PAGE_MAX = 50, 1000

_TYPES = r"(?P<types>models|datasets|spaces)"
_REPO = r"(?P<repo>[^/]+/[^/]+)"
_REV = r"(?P<rev>[^/]+)"


def _repo_type(request: Request) -> str:
    return request.params.get("types", "models")[:-1]


def _next_link(url: str) -> dict[str, str]:
    return {"Link": f'<{url}>; rel="next"'}


def _count(request: Request, name: str, default: int, low: int, high: int | None = None) -> int:
    value = request.arg(name)
    try:
        number = default if value in (None, "") else int(value)
    except ValueError:
        number = low - 1
    if number < low or (high is not None and number > high):
        raise HubError(400, f"`{name}` must be an integer from {low}" + (f" to {high}" if high else ""))
    return number


class RepoEndpoints:
    def __init__(self, hub: "HubServer"):
        self.hub = hub
        self.repos = hub.repos
        self.rules = hub.rules  # tests/hub_access.py

    def routes(self) -> list:
        api = rf"/api/{_TYPES}/{_REPO}"
        return [route("POST", r"/api/repos/create", self.create, REQUIRED),
                route("GET", rf"{api}(?:/revision/{_REV})?", self.info, OPTIONAL),
                route("GET", rf"{api}/tree/{_REV}(?:/(?P<path>.*))?", self.tree, OPTIONAL),
                route("POST", rf"{api}/paths-info/{_REV}", self.paths_info, OPTIONAL),
                route("GET", rf"{api}/commits/{_REV}", self.commits, OPTIONAL),
                route("POST", rf"{api}/super-squash/{_REV}", self.squash, REQUIRED),
                route("POST", rf"{api}/preupload/{_REV}", self.preupload, REQUIRED),
                route("POST", rf"{api}/commit/{_REV}", self.commit, REQUIRED),
                route("POST", r"/api/validate-yaml", self.validate_yaml, OPTIONAL),
                route("HEAD GET", rf"/(?:(?P<types>datasets|spaces)/)?{_REPO}/resolve/{_REV}/(?P<path>.+)",
                      self.resolve, OPTIONAL)]

    def _writer(self, request: Request, opens_pr: bool = False) -> tuple[str, str]:
        """A branch's writer: the namespace; a pull request's (`opens_pr`: preupload or commit with create_pr=1):
        anyone who may open one."""
        if opens_pr and request.flag("create_pr"):
            return self.rules.contribute(request)
        return self.rules.write(request)

    def create(self, request: Request) -> Reply:
        payload = request.json() or {}
        name = payload.get("name")
        if not name or "/" in name:
            raise HubError(400, "a repo name is required")
        namespace = payload.get("organization") or request.user
        self.hub.check_namespace(request.user, namespace)
        status, answer = self.repos.create(payload.get("type") or "model", f"{namespace}/{name}",
                                           payload.get("visibility") == "private" or bool(payload.get("private")))
        return json_reply(answer, status)

    def info(self, request: Request) -> Reply:
        self.rules.read(request)
        expand = request.query.get("expand", []) + request.query.get("expand[]", [])
        return json_reply(self.repos.info(_repo_type(request), request.params["repo"], request.params.get("rev"),
                                          expand))

    def tree(self, request: Request) -> Reply:
        self.rules.read(request)
        params, expand = request.params, request.flag("expand")
        entries = self.repos.tree(_repo_type(request), params["repo"], params["rev"], params.get("path", ""),
                                  request.flag("recursive"))
        entries, cursor = page(entries, request.arg("cursor"), TREE_PAGE_EXPANDED if expand else TREE_PAGE)
        if expand:
            self.repos.with_last_commits(_repo_type(request), params["repo"], params["rev"], entries)
        return json_reply(entries, headers=_next_link(request.url_with(cursor=cursor)) if cursor else None)

    def paths_info(self, request: Request) -> Reply:
        self.rules.read(request)
        content_type = request.headers.get("Content-Type") or ""
        if content_type.startswith("application/json"):
            body = request.json() or {}
            paths, expand = body.get("paths") or [], bool(body.get("expand"))
        else:
            form = request.form_lists()
            paths, expand = form.get("paths", []), (form.get("expand") or [""])[0].lower() in ("1", "true")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise HubError(400, "`paths` must be a list of paths")
        params = request.params
        entries = self.repos.paths_info(_repo_type(request), params["repo"], params["rev"], paths)
        if expand:
            self.repos.with_last_commits(_repo_type(request), params["repo"], params["rev"], entries)
        return json_reply(entries)

    def commits(self, request: Request) -> Reply:
        self.rules.read(request)
        limit = _count(request, "limit", COMMITS_PAGE, 1, COMMITS_PAGE_MAX)
        number = _count(request, "p", 0, 0)
        formatted = "formatted" in request.query.get("expand[]", []) + request.query.get("expand", [])
        items, total = self.repos.history(_repo_type(request), request.params["repo"], request.params["rev"],
                                          number, limit, formatted)
        headers = {"X-Total-Count": str(total)}
        if (number + 1) * limit < total:
            headers.update(_next_link(request.url_with(p=str(number + 1))))
        return json_reply(items, headers=headers)

    def squash(self, request: Request) -> Reply:
        repo_type, repo_id = self._writer(request)
        branch = request.params["rev"]
        message = (request.json() or {}).get("message") or f"Super-squash branch '{branch}'"
        commit = self.repos.squash(repo_type, repo_id, branch, message, request.user)
        return json_reply({"commitOid": commit.oid})

    def preupload(self, request: Request) -> Reply:
        repo_type, repo_id = self._writer(request, opens_pr=True)
        files = (request.json() or {}).get("files") or []
        return json_reply(self.repos.preupload(repo_type, repo_id, request.params["rev"], files))

    def commit(self, request: Request) -> Reply:
        repo_type, repo_id = self._writer(request, opens_pr=True)
        try:
            lines = [json.loads(line) for line in request.body.splitlines() if line.strip()]
        except ValueError:
            raise HubError(400, "the commit body is not NDJSON") from None
        header, changes = parse_commit(lines)
        if request.flag("create_pr"):
            return json_reply(self.hub.community.open_pr(repo_type, repo_id, request.params["rev"], header, changes,
                                                         request.user))
        return json_reply(self.repos.commit(repo_type, repo_id, request.params["rev"], header, changes, request.user))

    def validate_yaml(self, request: Request) -> Reply:
        """A README.md's front matter: 400 with the errors when it is not a YAML mapping or its `configs` are not
        a list of {config_name, data_files}, else 200 with no errors or warnings."""
        import yaml

        content = (request.json() or {}).get("content") or ""
        errors = []
        if content.startswith("---"):
            try:
                meta = yaml.safe_load(content[3:].split("\n---", 1)[0])
            except yaml.YAMLError as exc:
                meta, errors = None, [{"message": f"invalid YAML: {exc}"}]
            if not errors and not isinstance(meta, dict):
                errors.append({"message": "the metadata is not a mapping"})
            configs = meta.get("configs", []) if isinstance(meta, dict) else []
            if not isinstance(configs, list) or not all(
                    isinstance(c, dict) and isinstance(c.get("config_name"), str) and c.get("data_files")
                    for c in configs):
                errors.append({"message": "configs must be a list of {config_name, data_files}"})
        return json_reply({"errors": errors, "warnings": []}, 400 if errors else 200)

    def resolve(self, request: Request) -> Reply:
        """A file's bytes (with Range); an LFS file: a 302 to the LFS storage carrying the file's metadata, as the
        Hub's redirect to its CDN does (X-Linked-Etag: the sha256, X-Linked-Size: the real size)."""
        params = request.params
        self.rules.download(request)
        oid, data, lfs = self.repos.file(_repo_type(request), params["repo"], params["rev"], params["path"])
        name = urllib.parse.quote(params["path"].rsplit("/", 1)[-1])
        headers = {"X-Repo-Commit": oid, "Content-Disposition": f"inline; filename*=UTF-8''{name}"}
        if lfs:
            sha = sha256_hex(data)
            headers.update({"ETag": f'"{git_blob_oid(lfs_pointer(data))}"', "X-Linked-Etag": f'"{sha}"',
                            "X-Linked-Size": str(len(data)),
                            "Location": f"{self.hub.storage_url}/lfs-storage/objects/{sha}"})
            return Reply(302, b"", "text/plain", headers)
        headers.update({"ETag": f'"{git_blob_oid(data)}"', "Accept-Ranges": "bytes"})
        status, body = byte_range(request.headers.get("Range"), data, headers)
        return Reply(status, body, "application/octet-stream", headers)


def parse_commit(lines: list[dict]) -> tuple[dict, list[tuple[str, bytes | LfsLine | None]]]:
    """The NDJSON lines of a commit: (header value, [(path, bytes, an LfsLine, or None for a deletion; a folder
    deletion ends with "/")])."""
    header: dict = {}
    changes: list[tuple[str, bytes | LfsLine | None]] = []
    for line in lines:
        key, value = line.get("key"), line.get("value") or {}
        if key == "header":
            header = value
        elif key == "file":
            if value.get("encoding") != "base64":
                raise HubError(400, f"unsupported encoding {value.get('encoding')!r}")
            changes.append((value["path"], base64.b64decode(value["content"])))
        elif key == "lfsFile":
            if value.get("algo", "sha256") != "sha256" or not isinstance(value.get("oid"), str):
                raise HubError(400, "an lfsFile needs a sha256 `oid`")
            changes.append((value["path"], LfsLine(value["oid"], value.get("size"))))
        elif key == "deletedFile":
            changes.append((value["path"], None))
        elif key == "deletedFolder":
            changes.append((value["path"].rstrip("/") + "/", None))
        else:
            raise HubError(400, f"unknown commit operation {key!r}")
    if not header.get("summary"):
        raise HubError(400, "A commit summary is required")
    return header, changes
