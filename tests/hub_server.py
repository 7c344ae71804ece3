"""A loopback stand-in for the parts of huggingface.co that answer over HTTP, so the real client code runs: one
server (ThreadingHTTPServers on 127.0.0.1: the Hub's port, `hub.url`, and its LFS storage's, `hub.storage_url`,
another origin like the Hub's CDN) for every feature that talks to the Hub over HTTP. Grow it rather than writing
another; its pieces: tests/hub_http.py (plumbing), hub_repos.py and hub_repo_api.py (repos), hub_lfs.py (Git LFS),
hub_access.py (private, gated repos), hub_discussions.py (pull requests), hub_limits.py (429s), hub_jobs.py (Jobs).

1. The OpenID Connect provider behind "Sign in with Hugging Face" (what a Space's OPENID_PROVIDER_URL points at):
   discovery, an authorize page where a person says who they are (remembered in a `hub_user` cookie, like the
   Hub's own session), a one-time code, a token endpoint checking the client's secret and answering an
   RS256-signed id_token, the key set and userinfo.
2. Repos, as `huggingface_hub.HfApi(endpoint=hub.url, token=...)` 2.4 calls them (tests/hub_repo_api.py lists the
   endpoints): create, info (with `expand`), tree (paginated by cursor and Link), paths-info, the commit listing
   (X-Total-Count, Link), super-squash, preupload, commit, resolve, validate-yaml; and Git LFS (tests/hub_lfs.py):
   the batch and verify endpoints, uploads to and downloads from the storage port. Pull requests and discussions
   (tests/hub_discussions.py): commit ?create_pr=1 opens refs/pr/N; GET and POST /api/{type}s/{repo}/discussions,
   GET .../discussions/{num} (events, diff), POST .../{num}/status and .../{num}/merge. Private and gated repos,
   discussions disabled: tests/hub_access.py.
3. Jobs (tests/hub_jobs.py), each command run as a local subprocess: GET /api/whoami-v2, GET /api/jobs/hardware,
   POST and GET /api/jobs/{ns}, GET /api/jobs/{ns}/{id}, GET /api/jobs/{ns}/{id}/logs (server-sent events),
   POST /api/jobs/{ns}/{id}/cancel.
4. Rate limits and failures (tests/hub_limits.py): commit 429s per repo, read budgets per 5-minute fixed window for
   the "api" and "resolvers" buckets, answered with the Hub's RateLimit headers (off unless `set_read_budget`), and
   any request failing once on demand (`fail_next_request`).

Auth: writes (create, preupload, commit, super-squash, LFS batch), whoami and every Jobs endpoint need
`Authorization: Bearer <token>` with a token of `hub.issue_token(user, orgs)` (or one handed out by the OpenID token
endpoint); a repo or Job namespace must be the user or one of their orgs (else 403), but opening a pull request
needs only read access. Reads work without a token (not of a private repo, nor a gated repo's files); an
unknown token is refused (401) on every repo and Jobs endpoint. Every bearer token seen is kept in `hub.tokens_used`.
The storage port takes no token (the Hub's are signed URLs) and the client sends it none.

The client refuses every request while HF_HUB_OFFLINE=1 (tests/conftest.py sets it): inside this process, wrap
the calls in `hub_client_online()`; a subprocess talking to the server needs HF_HUB_OFFLINE=0 in its environment
(a Job too: Jobs inherit this process's environment unless the server is given `job_env`). Any process talking to
the server also needs CLIENT_ENV (HF_HUB_DISABLE_XET=1) set before it imports huggingface_hub, else it uploads
LFS files through Xet, which this server does not serve (conftest sets it; `hub_client_online()` turns Xet off in
this process; a given `job_env` gets it).
`HfApi.list_jobs` looks the default namespace up on huggingface.co itself: always pass `namespace=`.

    with HubServer() as hub, hub_client_online():
        token = hub.issue_token("ada", orgs=["test-org"])
        api = HfApi(endpoint=hub.url, token=token)
        hub.commits["test-org/results"]                 # commits landed (the initial one excluded)
        hub.squashes["test-org/results"]                # super-squashes
        hub.fail_next_commit("test-org/results", status=429, retry_after=2)
        hub.fail_next_request("/tree/", 500, "boom")    # the next request whose path holds "/tree/": a 500, once
        hub.set_commit_budget(3, window_seconds=1.0)    # a 4th commit to a repo within 1 s answers 429
        hub.set_read_budget(api=100, resolvers=None, window_seconds=300.0)   # a 101st API call in a window: 429
        hub.calls_by_bucket(); hub.rate_limited()       # Counters per bucket: requests served, read-budget 429s
        hub.files("test-org/results")                   # {path: bytes} at the head (LFS files' real bytes)
        hub.lfs_paths("test-org/results")               # the paths stored with Git LFS
        hub.create_model("bob/m", {"a.txt": b"1"})      # a model repo with those files (no token); its head oid
        hub.set_repo_access("bob/m", private=True, gated="manual", discussions_disabled=True, granted=["ada"])
        hub.discussions("bob/m")                        # [{num, title, status, author, ref, merge_commit...}]
        hub.files("bob/m", "model", revision="refs/pr/1")   # a pull request's files
        hub.requests                                    # [(method, path)] served, both ports, in order
        hub.jobs                                        # [JobRecord] (secret names only), with stage and pid
        hub.job_logs(job_id); hub.kill_job(job_id)
        hub.add_bucket("test-org/cache")                # a storage bucket a Job may mount (runner.mount_folder)
        hub.logins                                      # [(username, client_id), ...] OpenID codes exchanged
"""
from __future__ import annotations

import base64
import html
import secrets
import threading
import time
import urllib.parse
from collections import Counter
from contextlib import contextmanager
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterable, Iterator

from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.hub_access import AccessRules, seed_repo, set_access
from tests.hub_discussions import Community, DiscussionEndpoints
from tests.hub_http import (NONE, OPTIONAL, REQUIRED, HubError, Reply, Request, Route, Router, error_reply,
                            json_reply, redirect, route)
from tests.hub_jobs import HARDWARE, JobRecord, JobRunner, log_stream, volumes
from tests.hub_lfs import LfsEndpoints
from tests.hub_limits import QUOTA_MESSAGE, ReadBudget, RequestFailures, bucket_of
from tests.hub_repo_api import RepoEndpoints
from tests.hub_repos import RepoStore, iso_time

CLIENT_ID = "test-space-client"
CLIENT_SECRET = "test-space-secret"
SCOPES = "openid profile"
USER_COOKIE = "hub_user"
BAD_TOKEN = "Invalid credentials in Authorization header"  # the Hub's 401 message (the client keys on it)
# What a process talking to this server needs in its environment before it imports huggingface_hub: with hf_xet
# installed the client uploads LFS files through Xet, a protocol this server does not serve; with Xet off it takes
# the Git LFS path, which it serves. (tests/conftest.py sets it; Jobs get it; a bench script must set it too.)
CLIENT_ENV = {"HF_HUB_DISABLE_XET": "1"}


def oauth_env(hub: "HubServer", space_id: str = "test-org/leaderboard") -> dict[str, str]:
    """The environment of a Space with OAuth enabled, pointed at this server (no SPACE_HOST: the Space's own
    address is the one the browser used)."""
    return {"SYSTEM": "spaces", "SPACE_ID": space_id, "OAUTH_CLIENT_ID": CLIENT_ID,
            "OAUTH_CLIENT_SECRET": CLIENT_SECRET, "OAUTH_SCOPES": SCOPES, "OPENID_PROVIDER_URL": hub.url}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-answer (a log stream it stopped reading) is not an error of the server's."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@contextmanager
def jobs_running_here(job_cwd) -> Iterator["HubServer"]:
    """The loopback Hub with the client online, whose Jobs run as subprocesses in `job_cwd` with this project
    importable and the Hub reachable (what the Jobs tests and the cost tests share)."""
    import os
    import sys
    from pathlib import Path

    project = str(Path(__file__).resolve().parent.parent)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN")}
    env.update(HF_HUB_OFFLINE="0", PYTHONPATH=project, OMP_NUM_THREADS="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    with HubServer(job_cwd=job_cwd, job_env=env, kill_grace=2.0) as server, hub_client_online():
        yield server


@contextmanager
def hub_client_online() -> Iterator[None]:
    """Let huggingface_hub make requests in this process despite HF_HUB_OFFLINE=1: every request of its HTTP
    client checks `constants.HF_HUB_OFFLINE` (hf_hub_download, repo_info, create_commit, run_job... alike). Xet is
    switched off meanwhile too (`constants.HF_HUB_DISABLE_XET`, read on each upload): see CLIENT_ENV."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET
    constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET = False, True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, constants.HF_HUB_DISABLE_XET = before


# ---------------------------------------------------------------------------------------------------- the server

class HubServer:
    """The loopback Hub, started and stopped as a context. `job_cwd` and `job_env` (default: this process's
    environment when the Job starts; CLIENT_ENV is added to a given one) apply to every Job's subprocess;
    `kill_grace`: SIGTERM to SIGKILL on cancel; `job_scheduling`: seconds a new Job waits in SCHEDULING (also
    `hub.runner.scheduling_seconds`). A second port (`storage_url`) is the LFS storage."""

    def __init__(self, job_cwd=None, job_env: dict[str, str] | None = None, kill_grace: float = 2.0,
                 job_scheduling: float = 0.0) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "hub-test-key", "use": "sig"})
        self.logins: list[tuple[str, str]] = []
        self.tokens_used: set[str] = set()
        self.requests: list[tuple[str, str]] = []  # (method, path) served, in order (no query, no token)
        self._codes: dict[str, dict] = {}  # code -> {user, client_id, redirect_uri, nonce}
        self._tokens: dict[str, str] = {}  # token -> user (OpenID access tokens and issue_token's)
        self._orgs: dict[str, tuple[str, ...]] = {}  # user -> orgs
        self.buckets: set[str] = set()  # storage buckets (`<owner>/<name>`) a Job may mount
        self._lock = threading.Lock()
        self.budget = ReadBudget()
        self.failures = RequestFailures()
        self._servers = [_QuietServer(("127.0.0.1", 0), _handler_for(self, storage)) for storage in (False, True)]
        self.url, self.storage_url = (f"http://127.0.0.1:{server.server_address[1]}" for server in self._servers)
        self.repos = RepoStore(self.url)
        self.rules, self.community = AccessRules(self), Community(self.repos)
        job_env = None if job_env is None else {**CLIENT_ENV, **job_env}
        self.runner = JobRunner(cwd=job_cwd, base_env=job_env, kill_grace=kill_grace,
                                scheduling_seconds=job_scheduling)
        lfs = LfsEndpoints(self)
        self.router = Router(OpenIdEndpoints(self).routes() + RepoEndpoints(self).routes() + lfs.routes()
                             + DiscussionEndpoints(self).routes() + JobEndpoints(self).routes())
        self.storage_router = Router(lfs.storage_routes())
        # a short poll: shutdown() waits out one poll (serve_forever's default is 0.5 s, paid per server and module)
        self._threads = [threading.Thread(target=server.serve_forever, name=name, kwargs={"poll_interval": 0.02},
                                          daemon=True)
                         for server, name in zip(self._servers, ("hub-server", "hub-lfs-storage"))]

    def __enter__(self) -> "HubServer":
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.runner.close()
        for server, thread in zip(self._servers, self._threads):
            server.shutdown()
            server.server_close()
            thread.join(10)

    # ------------------------------------------------------------------------------------------------ auth

    def issue_token(self, user: str = "ada", orgs: Iterable[str] = ()) -> str:
        """A Hub access token for `user`, a member of `orgs`."""
        token = "hf_" + secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = user
            self._orgs[user] = tuple(dict.fromkeys([*self._orgs.get(user, ()), *orgs]))
        return token

    def access_tokens(self) -> list[str]:
        """Every token handed out (to check none leaks)."""
        with self._lock:
            return list(self._tokens)

    def authenticate(self, authorization: str | None, required: bool) -> str | None:
        """The user of a `Bearer` token (None without one, when allowed); raises 401 for an unknown token."""
        token = authorization[7:].strip() if authorization and authorization.startswith("Bearer ") else None
        if token is None:
            if required:
                raise HubError(401, BAD_TOKEN)
            return None
        with self._lock:
            self.tokens_used.add(token)
            user = self._tokens.get(token)
        if user is None:
            raise HubError(401, BAD_TOKEN)
        return user

    def caller(self, authorization: str | None, address: str) -> str:
        """Whom a request counts against: the bearer token's user, else the client's address."""
        token = authorization[7:].strip() if authorization and authorization.startswith("Bearer ") else None
        with self._lock:
            user = self._tokens.get(token) if token else None
        return f"user:{user}" if user else f"ip:{address}"

    def in_namespace(self, user: str, namespace: str) -> bool:
        with self._lock:
            return namespace == user or namespace in self._orgs.get(user, ())

    def check_namespace(self, user: str, namespace: str) -> None:
        if not self.in_namespace(user, namespace):
            raise HubError(403, f"You don't have the rights to act in the namespace {namespace}")

    def whoami(self, user: str) -> dict:
        with self._lock:
            orgs = self._orgs.get(user, ())
        return {"type": "user", "id": user.encode().hex()[:24], "name": user, "fullname": user.title(),
                "email": f"{user}@example.com", "emailVerified": True, "isPro": False, "canPay": False,
                "avatarUrl": f"{self.url}/avatars/{user}.svg",
                "orgs": [{"type": "org", "name": org, "fullname": org, "roleInOrg": "write"} for org in orgs],
                "auth": {"type": "access_token", "accessToken": {"displayName": "test token", "role": "write",
                                                                 "createdAt": iso_time(time.time())}}}

    # ------------------------------------------------------------------------------------------------ repo hooks

    @property
    def commits(self):
        """Counter: repo id -> commits landed (the initial one excluded)."""
        return self.repos.commits

    def fail_next_commit(self, repo_id: str, status: int = 429, retry_after: float | None = 2,
                         message: str | None = None) -> None:
        """The next commit to `repo_id` fails with `status` (and Retry-After), in the Hub's error shape."""
        text = message or (QUOTA_MESSAGE if status == 429 else f"Injected failure ({status})")
        self.repos.fail_next(repo_id, status, text, retry_after)

    def fail_next_request(self, pattern: str, status: int, message: str) -> None:
        """The next request (either port) whose %-decoded path contains `pattern` ("/resolve/", "/tree/",
        "/commit/", "/paths-info/", a repo's info path...) is answered once with `status` in the Hub's error shape
        (JSON {"error": message}, X-Error-Message), before routing."""
        with self._lock:
            self.failures.add(pattern, status, message)

    def set_commit_budget(self, max_commits: int, window_seconds: float = 3600.0, repo_id: str | None = None) -> None:
        """At most `max_commits` commits per repo (`repo_id`, or every repo) within a rolling window; more: 429."""
        self.repos.set_budget(max_commits, window_seconds, repo_id)

    def files(self, repo_id: str, repo_type: str = "dataset", revision: str | None = None) -> dict[str, bytes]:
        """{path: bytes} at the head (or `revision`); an LFS file's real content."""
        return dict(self.repos.snapshot(repo_type, repo_id, revision).files)

    def lfs_paths(self, repo_id: str, repo_type: str = "dataset", revision: str | None = None) -> set[str]:
        """The paths stored with Git LFS at the head (or `revision`)."""
        return set(self.repos.snapshot(repo_type, repo_id, revision).lfs)

    def create_model(self, repo_id: str, files: dict[str, bytes] | None = None) -> str:
        """A model repo (any namespace, no token) holding `files` in one commit; its head oid."""
        return seed_repo(self.repos, "model", repo_id, files)

    def set_repo_access(self, repo_id: str, repo_type: str = "model", private: bool | None = None,
                        gated: bool | str | None = None, discussions_disabled: bool | None = None,
                        granted: Iterable[str] = ()) -> None:
        """A repo's settings (None: unchanged; gated: False, "auto" or "manual"); `granted` users are given access
        to it (tests/hub_access.py)."""
        set_access(self.repos, repo_type, repo_id, private=private, gated=gated,
                   discussions_disabled=discussions_disabled, granted=granted)

    def discussions(self, repo_id: str, repo_type: str = "model") -> list[dict]:
        """Oldest first: {num, title, status, author, is_pull_request, description, ref, merge_commit}."""
        return self.community.hook_view(repo_type, repo_id)

    @property
    def squashes(self):
        """Counter: repo id -> super-squashes."""
        return self.repos.squashes

    # ------------------------------------------------------------------------------------------------ read budgets

    def set_read_budget(self, api: int | None = None, resolvers: int | None = None,
                        window_seconds: float = 300.0) -> None:
        """At most `api` / `resolvers` requests per caller in each fixed window (None: unlimited; both None by
        default); more: 429 with RateLimit headers (tests/hub_limits.py). The windows' counts start afresh."""
        with self._lock:
            self.budget.set(api, resolvers, window_seconds)

    def take_budget(self, bucket: str, authorization: str | None, address: str) -> dict[str, str]:
        """Count a request against its bucket's budget: the RateLimit headers of its answer; raises the 429."""
        caller = self.caller(authorization, address)
        with self._lock:
            return self.budget.take(bucket, caller, time.time())

    def calls_by_bucket(self) -> Counter:
        """Counter of the requests served per bucket: "api", "resolvers", "storage", "other"."""
        with self._lock:
            return Counter(self.budget.served)

    def rate_limited(self) -> Counter:
        """Counter of the 429s the read budgets answered, per bucket."""
        with self._lock:
            return Counter(self.budget.throttled)

    def head(self, repo_id: str, repo_type: str = "dataset") -> str:
        return self.repos.snapshot(repo_type, repo_id).oid

    # ------------------------------------------------------------------------------------------------ job hooks

    @property
    def jobs(self) -> list[JobRecord]:
        """Every Job asked for, oldest first: what was asked (secret names only) and its stage, message, pid."""
        return self.runner.records()

    def job_logs(self, job_id: str) -> list[str]:
        return self.runner.by_id(job_id).log_lines()

    def add_bucket(self, bucket_id: str) -> None:
        """A storage bucket that Jobs of its owner's namespace may mount (hub.jobs' volumes, runner.mount_folder)."""
        self.buckets.add(bucket_id)

    def kill_job(self, job_id: str) -> None:
        """The Job's processes die mid-run (SIGKILL); it ends in ERROR."""
        self.runner.kill(job_id)

    # ------------------------------------------------------------------------------------------------ OpenID

    def discovery(self) -> dict:
        return {"issuer": self.url, "authorization_endpoint": f"{self.url}/oauth/authorize",
                "token_endpoint": f"{self.url}/oauth/token", "userinfo_endpoint": f"{self.url}/oauth/userinfo",
                "jwks_uri": f"{self.url}/oauth/jwks", "response_types_supported": ["code"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "profile"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]}

    def issue_code(self, user: str, query: dict[str, str]) -> str:
        code = secrets.token_urlsafe(16)
        with self._lock:
            self._codes[code] = {"user": user, "client_id": query.get("client_id", ""),
                                 "redirect_uri": query.get("redirect_uri", ""), "nonce": query.get("nonce")}
        return code

    def exchange(self, form: dict[str, str], authorization: str | None) -> tuple[int, dict]:
        """The token endpoint: (status, JSON answer)."""
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if authorization and authorization.startswith("Basic "):
            decoded = base64.b64decode(authorization[6:]).decode()
            client_id, _, secret = (urllib.parse.unquote(p) for p in decoded.partition(":"))
        if (client_id, secret) != (CLIENT_ID, CLIENT_SECRET):
            return 401, {"error": "invalid_client"}
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)
        if form.get("grant_type") != "authorization_code" or grant is None or grant["client_id"] != client_id \
                or grant["redirect_uri"] != form.get("redirect_uri"):
            return 400, {"error": "invalid_grant"}
        user, now = grant["user"], int(time.time())
        access = "hf_oauth_" + secrets.token_urlsafe(16)
        claims = {"iss": self.url, "sub": f"sub-{user}", "aud": client_id, "iat": now, "exp": now + 3600,
                  "auth_time": now, **self.profile(user)}
        if grant["nonce"]:
            claims["nonce"] = grant["nonce"]
        id_token = jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)
        with self._lock:
            self._tokens[access] = user
            self.logins.append((user, client_id))
        return 200, {"access_token": access, "token_type": "bearer", "expires_in": 3600, "scope": SCOPES,
                     "id_token": id_token}

    def profile(self, user: str) -> dict:
        return {"name": user.title(), "preferred_username": user, "profile": f"https://huggingface.co/{user}",
                "picture": f"https://huggingface.co/avatars/{user}.svg"}

    def userinfo(self, authorization: str | None) -> tuple[int, dict]:
        with self._lock:
            user = self._tokens.get((authorization or "").removeprefix("Bearer "))
        return (200, {"sub": f"sub-{user}", **self.profile(user)}) if user else (401, {"error": "invalid_token"})


# ---------------------------------------------------------------------------------------------------- endpoints

def _login_page(query: str) -> str:
    """The authorize page for a visitor the Hub does not know yet: a name, then back to the authorize URL."""
    return ("<!doctype html><title>Sign in to the test Hub</title><form method='post' action='/login'>"
            f"<input type='hidden' name='next' value='{html.escape('/oauth/authorize?' + query, quote=True)}'>"
            "<label>Username <input id='hub-username' name='username'></label>"
            "<button id='hub-sign-in' type='submit'>Sign in</button></form>")


class OpenIdEndpoints:
    def __init__(self, hub: HubServer):
        self.hub = hub

    def routes(self) -> list[Route]:
        return [route("GET", r"/\.well-known/openid-configuration", lambda r: json_reply(self.hub.discovery())),
                route("GET", r"/oauth/jwks", lambda r: json_reply({"keys": [self.hub.key.as_dict(private=False)]})),
                route("GET", r"/oauth/userinfo", self.userinfo),
                route("GET", r"/oauth/authorize", self.authorize),
                route("POST", r"/oauth/token", self.token),
                route("POST", r"/login", self.login)]

    def userinfo(self, request: Request) -> Reply:
        status, payload = self.hub.userinfo(request.headers.get("Authorization"))
        return json_reply(payload, status)

    def authorize(self, request: Request) -> Reply:
        query = dict(urllib.parse.parse_qsl(request.raw_query))
        if query.get("response_type") != "code" or query.get("client_id") != CLIENT_ID:
            return json_reply({"error": "invalid_request"}, 400)
        cookie = SimpleCookie(request.headers.get("Cookie") or "").get(USER_COOKIE)
        if cookie is None or not cookie.value:
            return Reply(200, _login_page(request.raw_query).encode(), "text/html; charset=utf-8")
        code = self.hub.issue_code(cookie.value, query)
        back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
        separator = "&" if "?" in query["redirect_uri"] else "?"
        return redirect(query["redirect_uri"] + separator + urllib.parse.urlencode(back))

    def token(self, request: Request) -> Reply:
        status, payload = self.hub.exchange(request.form(), request.headers.get("Authorization"))
        return json_reply(payload, status)

    def login(self, request: Request) -> Reply:
        form = request.form()
        user, target = form.get("username", "").strip(), form.get("next", "/")
        if not user or not target.startswith("/oauth/authorize?"):
            return json_reply({"error": "a username is needed"}, 400)
        return redirect(target, {"Set-Cookie": f"{USER_COOKIE}={user}; Path=/oauth; HttpOnly"})


class JobEndpoints:
    def __init__(self, hub: HubServer):
        self.hub = hub
        self.runner = hub.runner

    def routes(self) -> list[Route]:
        ns, job = r"(?P<ns>[^/]+)", r"(?P<job>[^/]+)"
        return [route("GET", r"/api/whoami-v2", lambda r: json_reply(self.hub.whoami(r.user)), REQUIRED),
                route("GET", r"/api/jobs/hardware", lambda r: json_reply(HARDWARE), OPTIONAL),
                route("POST", rf"/api/jobs/{ns}", self.run, REQUIRED),
                route("GET", rf"/api/jobs/{ns}", self.list_jobs, REQUIRED),
                route("GET", rf"/api/jobs/{ns}/{job}", self.inspect, REQUIRED),
                route("GET", rf"/api/jobs/{ns}/{job}/logs", self.logs, REQUIRED),
                route("POST", rf"/api/jobs/{ns}/{job}/cancel", self.cancel, REQUIRED)]

    def _namespace(self, request: Request) -> str:
        namespace = request.params["ns"]
        self.hub.check_namespace(request.user, namespace)
        return namespace

    def run(self, request: Request) -> Reply:
        namespace = self._namespace(request)
        spec = request.json()
        if not isinstance(spec, dict):
            raise HubError(400, "a job spec is required")
        for volume in volumes(spec):  # a bucket must exist, and be its caller's (or its org's) to mount
            if volume["type"] == "bucket":
                if volume["source"] not in self.hub.buckets:
                    raise HubError(404, f"Bucket {volume['source']} not found")
                self.hub.check_namespace(request.user, volume["source"].split("/")[0])
        return json_reply(self.runner.run(namespace, request.user, spec).json())

    def list_jobs(self, request: Request) -> Reply:
        jobs = self.runner.select(self._namespace(request), request.query.get("stage", []),
                                request.query.get("label", []))
        return json_reply([job.json() for job in jobs])

    def inspect(self, request: Request) -> Reply:
        return json_reply(self.runner.get(self._namespace(request), request.params["job"]).json())

    def logs(self, request: Request) -> Reply:
        job = self.runner.get(self._namespace(request), request.params["job"])
        tail = request.arg("tail")
        return Reply(200, log_stream(job, int(tail) if tail else None), "text/event-stream",
                     {"Cache-Control": "no-cache"})

    def cancel(self, request: Request) -> Reply:
        self.runner.cancel(self._namespace(request), request.params["job"])
        return Reply(200, b"", "text/plain")


# ---------------------------------------------------------------------------------------------------- handler

def _handler_for(hub: HubServer, storage: bool = False) -> type[BaseHTTPRequestHandler]:
    """The request handler of the Hub's port, or of the LFS storage's (`storage`)."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (the http.server names)
            self._serve("GET")

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve("HEAD")

        def do_POST(self) -> None:  # noqa: N802
            self._serve("POST")

        def do_DELETE(self) -> None:  # noqa: N802
            self._serve("DELETE")

        def do_PUT(self) -> None:  # noqa: N802
            self._serve("PUT")

        def _serve(self, method: str) -> None:
            url = urllib.parse.urlsplit(self.path)
            with hub._lock:
                hub.requests.append((method, url.path))
                failure = hub.failures.take(urllib.parse.unquote(url.path))
            rate: dict[str, str] = {}
            try:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raise HubError(411, "the test Hub needs a Content-Length")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if failure is not None:
                    raise failure
                rate = hub.take_budget(bucket_of(url.path, storage), self.headers.get("Authorization"),
                                       self.client_address[0])
                reply = self._answer(method, url, body)
            except HubError as error:
                reply = error_reply(error)
            reply.headers.update(rate)
            self._write(method, reply)

        def _answer(self, method: str, url: urllib.parse.SplitResult, body: bytes) -> Reply:
            found = (hub.storage_router if storage else hub.router).find(method, url.path)
            if found is None:
                raise HubError(404, "Not Found")
            target, params = found
            request = Request(method, url.path, url.query, urllib.parse.parse_qs(url.query, keep_blank_values=True),
                              self.headers, body, params=params, base_url=hub.storage_url if storage else hub.url)
            if target.auth != NONE:
                request.user = hub.authenticate(self.headers.get("Authorization"), target.auth == REQUIRED)
            return target.handler(request)

        def _write(self, method: str, reply: Reply) -> None:
            streaming = not isinstance(reply.body, bytes)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            if not streaming:
                self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if method == "HEAD":
                return
            if not streaming:
                self.wfile.write(reply.body)
                return
            try:  # HTTP/1.0 without a length: the stream ends when the connection closes
                for chunk in reply.body:
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                getattr(reply.body, "close", lambda: None)()

    return Handler
