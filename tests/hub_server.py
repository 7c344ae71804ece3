"""A loopback stand-in for the parts of huggingface.co that answer over HTTP, so the real client code runs: one
server (a ThreadingHTTPServer on 127.0.0.1 and a free port) for every feature that talks to the Hub over HTTP.
Grow it here rather than writing another.

1. The OpenID Connect provider behind "Sign in with Hugging Face" (what a Space's OPENID_PROVIDER_URL points at):
   discovery, an authorize page where a person says who they are (remembered in a `hub_user` cookie, like the
   Hub's own session), a one-time code, a token endpoint checking the client's secret and answering an
   RS256-signed id_token, the key set and userinfo.
2. Repos (tests/hub_repos.py), as `huggingface_hub.HfApi(endpoint=hub.url, token=...)` 2.4 calls them:
   POST /api/repos/create, GET /api/{models,datasets,spaces}/{repo}[/revision/{rev}], GET .../tree/{rev}[/{path}],
   HEAD/GET /[datasets/|spaces/]{repo}/resolve/{rev}/{path}, POST .../preupload/{rev}, POST .../commit/{rev},
   and POST /api/validate-yaml (the client's check of a README.md's front matter before a commit that adds one).
3. Jobs (tests/hub_jobs.py), each command run as a local subprocess: GET /api/whoami-v2, GET /api/jobs/hardware,
   POST and GET /api/jobs/{ns}, GET /api/jobs/{ns}/{id}, GET /api/jobs/{ns}/{id}/logs (server-sent events),
   POST /api/jobs/{ns}/{id}/cancel.

Auth: writes (create, preupload, commit), whoami and every Jobs endpoint need `Authorization: Bearer <token>`
with a token of `hub.issue_token(user, orgs)` (or one handed out by the OpenID token endpoint); a repo or Job
namespace must be the user or one of their orgs (else 403). Reads work without a token; an unknown token is
refused (401) on every repo and Jobs endpoint. Every bearer token seen is kept in `hub.tokens_used`.

The client refuses every request while HF_HUB_OFFLINE=1 (tests/conftest.py sets it): inside this process, wrap
the calls in `hub_client_online()`; a subprocess talking to the server needs HF_HUB_OFFLINE=0 in its environment
(a Job too: Jobs inherit this process's environment unless the server is given `job_env`).
`HfApi.list_jobs` looks the default namespace up on huggingface.co itself: always pass `namespace=`.

    with HubServer() as hub, hub_client_online():
        token = hub.issue_token("ada", orgs=["test-org"])
        api = HfApi(endpoint=hub.url, token=token)
        hub.commits["test-org/results"]                 # commits landed (the initial one excluded)
        hub.fail_next_commit("test-org/results", status=429, retry_after=2)
        hub.set_commit_budget(3, window_seconds=1.0)    # a 4th commit to a repo within 1 s answers 429
        hub.files("test-org/results")                   # {path: bytes} at the head
        hub.jobs                                        # [JobRecord] (secret names only), with stage and pid
        hub.job_logs(job_id); hub.kill_job(job_id)
        hub.logins                                      # [(username, client_id), ...] OpenID codes exchanged
"""
from __future__ import annotations

import base64
import html
import json
import re
import secrets
import threading
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterable, Iterator

from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.hub_jobs import HARDWARE, JobRecord, JobRunner, log_stream
from tests.hub_repos import QUOTA_MESSAGE, HubError, RepoStore, git_blob_oid, iso_time

CLIENT_ID = "test-space-client"
CLIENT_SECRET = "test-space-secret"
SCOPES = "openid profile"
USER_COOKIE = "hub_user"
BAD_TOKEN = "Invalid credentials in Authorization header"  # the Hub's 401 message (the client keys on it)


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
def hub_client_online() -> Iterator[None]:
    """Let huggingface_hub make requests in this process despite HF_HUB_OFFLINE=1: every request of its HTTP
    client checks `constants.HF_HUB_OFFLINE` (hf_hub_download, repo_info, create_commit, run_job... alike)."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = False
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


# ---------------------------------------------------------------------------------------------------- HTTP plumbing

@dataclass
class Request:
    method: str
    path: str  # still %-encoded, query removed
    raw_query: str
    query: dict[str, list[str]]
    headers: object  # http.client.HTTPMessage
    body: bytes
    user: str | None = None  # the bearer token's user, when the token is known
    params: dict[str, str] = field(default_factory=dict)  # the route's named groups, %-decoded

    def arg(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, [default])[0]

    def json(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            raise HubError(400, "the body is not JSON") from None

    def form(self) -> dict[str, str]:
        return dict(urllib.parse.parse_qsl(self.body.decode()))


@dataclass
class Reply:
    status: int = 200
    body: bytes | Iterable[bytes] = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(payload, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(payload).encode(), "application/json", dict(headers or {}))


def error_reply(error: HubError) -> Reply:
    """The Hub's error answer: JSON {"error": message} with X-Error-Message (and X-Error-Code when known)."""
    headers = {"X-Error-Message": error.message, **error.headers}
    if error.code:
        headers["X-Error-Code"] = error.code
    return json_reply({"error": error.message}, error.status, headers)


NONE, OPTIONAL, REQUIRED = "none", "optional", "required"  # what a route asks of the Authorization header


@dataclass
class Route:
    methods: tuple[str, ...]
    pattern: re.Pattern
    handler: Callable[[Request], Reply]
    auth: str = NONE


class Router:
    def __init__(self, routes: list[Route]):
        self.routes = routes

    def find(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The route for a request (None: 404); raises a 405 for a known path asked with another method."""
        known_path = False
        for route in self.routes:
            match = route.pattern.fullmatch(path)
            if match is None:
                continue
            if method in route.methods:
                params = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items() if v is not None}
                return route, params
            known_path = True
        if known_path:
            raise HubError(405, f"{method} is not allowed here")
        return None


def _route(methods: str, pattern: str, handler, auth: str = NONE) -> Route:
    return Route(tuple(methods.split()), re.compile(pattern), handler, auth)


# ---------------------------------------------------------------------------------------------------- the server

class HubServer:
    """The loopback Hub, started and stopped as a context. `job_cwd` and `job_env` (default: this process's
    environment when the Job starts) apply to every Job's subprocess; `kill_grace`: SIGTERM to SIGKILL on cancel."""

    def __init__(self, job_cwd=None, job_env: dict[str, str] | None = None, kill_grace: float = 2.0) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "hub-test-key", "use": "sig"})
        self.logins: list[tuple[str, str]] = []
        self.tokens_used: set[str] = set()
        self.requests: list[tuple[str, str]] = []  # (method, path) served, in order (no query, no token)
        self._codes: dict[str, dict] = {}  # code -> {user, client_id, redirect_uri, nonce}
        self._tokens: dict[str, str] = {}  # token -> user (OpenID access tokens and issue_token's)
        self._orgs: dict[str, tuple[str, ...]] = {}  # user -> orgs
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.repos = RepoStore(self.url)
        self.runner = JobRunner(cwd=job_cwd, base_env=job_env, kill_grace=kill_grace)
        self.router = Router(OpenIdEndpoints(self).routes() + RepoEndpoints(self).routes()
                             + JobEndpoints(self).routes())
        self._thread = threading.Thread(target=self._server.serve_forever, name="hub-server", daemon=True)

    def __enter__(self) -> "HubServer":
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.runner.close()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

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

    def check_namespace(self, user: str, namespace: str) -> None:
        with self._lock:
            allowed = namespace == user or namespace in self._orgs.get(user, ())
        if not allowed:
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

    def set_commit_budget(self, max_commits: int, window_seconds: float = 3600.0, repo_id: str | None = None) -> None:
        """At most `max_commits` commits per repo (`repo_id`, or every repo) within a rolling window; more: 429."""
        self.repos.set_budget(max_commits, window_seconds, repo_id)

    def files(self, repo_id: str, repo_type: str = "dataset", revision: str | None = None) -> dict[str, bytes]:
        return dict(self.repos.snapshot(repo_type, repo_id, revision).files)

    def head(self, repo_id: str, repo_type: str = "dataset") -> str:
        return self.repos.snapshot(repo_type, repo_id).oid

    # ------------------------------------------------------------------------------------------------ job hooks

    @property
    def jobs(self) -> list[JobRecord]:
        """Every Job asked for, oldest first: what was asked (secret names only) and its stage, message, pid."""
        return self.runner.records()

    def job_logs(self, job_id: str) -> list[str]:
        return self.runner.by_id(job_id).log_lines()

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
        return [_route("GET", r"/\.well-known/openid-configuration", lambda r: json_reply(self.hub.discovery())),
                _route("GET", r"/oauth/jwks", lambda r: json_reply({"keys": [self.hub.key.as_dict(private=False)]})),
                _route("GET", r"/oauth/userinfo", self.userinfo),
                _route("GET", r"/oauth/authorize", self.authorize),
                _route("POST", r"/oauth/token", self.token),
                _route("POST", r"/login", self.login)]

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
        return _redirect(query["redirect_uri"] + separator + urllib.parse.urlencode(back))

    def token(self, request: Request) -> Reply:
        status, payload = self.hub.exchange(request.form(), request.headers.get("Authorization"))
        return json_reply(payload, status)

    def login(self, request: Request) -> Reply:
        form = request.form()
        user, target = form.get("username", "").strip(), form.get("next", "/")
        if not user or not target.startswith("/oauth/authorize?"):
            return json_reply({"error": "a username is needed"}, 400)
        return _redirect(target, {"Set-Cookie": f"{USER_COOKIE}={user}; Path=/oauth; HttpOnly"})


def _redirect(location: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(302, b"", "text/plain", {"Location": location, **(headers or {})})


_TYPES = r"(?P<types>models|datasets|spaces)"
_REPO = r"(?P<repo>[^/]+/[^/]+)"
_REV = r"(?P<rev>[^/]+)"


def _repo_type(request: Request) -> str:
    return request.params.get("types", "models")[:-1]


class RepoEndpoints:
    def __init__(self, hub: HubServer):
        self.hub = hub
        self.repos = hub.repos

    def routes(self) -> list[Route]:
        return [_route("POST", r"/api/repos/create", self.create, REQUIRED),
                _route("GET", rf"/api/{_TYPES}/{_REPO}(?:/revision/{_REV})?", self.info, OPTIONAL),
                _route("GET", rf"/api/{_TYPES}/{_REPO}/tree/{_REV}(?:/(?P<path>.*))?", self.tree, OPTIONAL),
                _route("POST", rf"/api/{_TYPES}/{_REPO}/preupload/{_REV}", self.preupload, REQUIRED),
                _route("POST", rf"/api/{_TYPES}/{_REPO}/commit/{_REV}", self.commit, REQUIRED),
                _route("POST", r"/api/validate-yaml", self.validate_yaml, OPTIONAL),
                _route("HEAD GET", rf"/(?:(?P<types>datasets|spaces)/)?{_REPO}/resolve/{_REV}/(?P<path>.+)",
                       self.resolve, OPTIONAL)]

    def _writer(self, request: Request) -> tuple[str, str]:
        repo_id = request.params["repo"]
        self.hub.check_namespace(request.user, repo_id.split("/")[0])
        return _repo_type(request), repo_id

    def create(self, request: Request) -> Reply:
        payload = request.json() or {}
        name = payload.get("name")
        if not name or "/" in name:
            raise HubError(400, "a repo name is required")
        namespace = payload.get("organization") or request.user
        self.hub.check_namespace(request.user, namespace)
        status, answer = self.repos.create(payload.get("type") or "model", f"{namespace}/{name}")
        return json_reply(answer, status)

    def info(self, request: Request) -> Reply:
        params = request.params
        return json_reply(self.repos.info(_repo_type(request), params["repo"], params.get("rev")))

    def tree(self, request: Request) -> Reply:
        recursive = (request.arg("recursive") or "").lower() in ("1", "true")
        params = request.params
        return json_reply(self.repos.tree(_repo_type(request), params["repo"], params["rev"],
                                          params.get("path", ""), recursive))

    def preupload(self, request: Request) -> Reply:
        repo_type, repo_id = self._writer(request)
        files = (request.json() or {}).get("files") or []
        return json_reply(self.repos.preupload(repo_type, repo_id, request.params["rev"], files))

    def commit(self, request: Request) -> Reply:
        repo_type, repo_id = self._writer(request)
        try:
            lines = [json.loads(line) for line in request.body.splitlines() if line.strip()]
        except ValueError:
            raise HubError(400, "the commit body is not NDJSON") from None
        return json_reply(self.repos.commit(repo_type, repo_id, request.params["rev"], lines))

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
        params = request.params
        oid, data = self.repos.file(_repo_type(request), params["repo"], params["rev"], params["path"])
        name = urllib.parse.quote(params["path"].rsplit("/", 1)[-1])
        headers = {"X-Repo-Commit": oid, "ETag": f'"{git_blob_oid(data)}"', "Accept-Ranges": "bytes",
                   "Content-Disposition": f"inline; filename*=UTF-8''{name}"}
        status, body = _byte_range(request.headers.get("Range"), data, headers)
        return Reply(status, body, "application/octet-stream", headers)


def _byte_range(header: str | None, data: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """(status, body) for an optional `Range: bytes=start-[end]` (what the client sends to resume a download)."""
    match = re.fullmatch(r"bytes=(\d+)-(\d*)", header or "")
    if match is None:
        return 200, data
    start = int(match.group(1))
    end = min(int(match.group(2)) if match.group(2) else len(data) - 1, len(data) - 1)
    headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
    return 206, data[start:end + 1]


class JobEndpoints:
    def __init__(self, hub: HubServer):
        self.hub = hub
        self.runner = hub.runner

    def routes(self) -> list[Route]:
        ns, job = r"(?P<ns>[^/]+)", r"(?P<job>[^/]+)"
        return [_route("GET", r"/api/whoami-v2", lambda r: json_reply(self.hub.whoami(r.user)), REQUIRED),
                _route("GET", r"/api/jobs/hardware", lambda r: json_reply(HARDWARE), OPTIONAL),
                _route("POST", rf"/api/jobs/{ns}", self.run, REQUIRED),
                _route("GET", rf"/api/jobs/{ns}", self.list_jobs, REQUIRED),
                _route("GET", rf"/api/jobs/{ns}/{job}", self.inspect, REQUIRED),
                _route("GET", rf"/api/jobs/{ns}/{job}/logs", self.logs, REQUIRED),
                _route("POST", rf"/api/jobs/{ns}/{job}/cancel", self.cancel, REQUIRED)]

    def _namespace(self, request: Request) -> str:
        namespace = request.params["ns"]
        self.hub.check_namespace(request.user, namespace)
        return namespace

    def run(self, request: Request) -> Reply:
        namespace = self._namespace(request)
        spec = request.json()
        if not isinstance(spec, dict):
            raise HubError(400, "a job spec is required")
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

def _handler_for(hub: HubServer) -> type[BaseHTTPRequestHandler]:
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

        def _serve(self, method: str) -> None:
            url = urllib.parse.urlsplit(self.path)
            with hub._lock:
                hub.requests.append((method, url.path))
            try:
                reply = self._answer(method, url)
            except HubError as error:
                reply = error_reply(error)
            self._write(method, reply)

        def _answer(self, method: str, url: urllib.parse.SplitResult) -> Reply:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raise HubError(411, "the test Hub needs a Content-Length")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            found = hub.router.find(method, url.path)
            if found is None:
                raise HubError(404, "Not Found")
            route, params = found
            request = Request(method, url.path, url.query, urllib.parse.parse_qs(url.query, keep_blank_values=True),
                              self.headers, body, params=params)
            if route.auth != NONE:
                request.user = hub.authenticate(self.headers.get("Authorization"), route.auth == REQUIRED)
            return route.handler(request)

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
