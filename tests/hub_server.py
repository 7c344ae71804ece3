"""A loopback stand-in for the parts of huggingface.co that answer over HTTP, so the real client code runs.

Today it is the OpenID Connect provider behind "Sign in with Hugging Face" (what a Space's OPENID_PROVIDER_URL
points at): discovery, an authorize page where a person says who they are (remembered in a `hub_user` cookie,
like the Hub's own session), a one-time authorization code, a token endpoint checking the client's secret and
answering an RS256-signed id_token, the key set and userinfo. Grow it here (one server for every feature that
talks to the Hub over HTTP) rather than writing another.

    with HubServer() as hub:
        env = oauth_env(hub)          # the variables a Space with `hf_oauth: true` gets
        hub.logins                    # [(username, client_id), ...] codes exchanged, in order
"""
from __future__ import annotations

import base64
import html
import json
import secrets
import threading
import time
import urllib.parse
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from joserfc import jwt
from joserfc.jwk import RSAKey

CLIENT_ID = "test-space-client"
CLIENT_SECRET = "test-space-secret"
SCOPES = "openid profile"
USER_COOKIE = "hub_user"


def oauth_env(hub: "HubServer", space_id: str = "test-org/leaderboard") -> dict[str, str]:
    """The environment of a Space with OAuth enabled, pointed at this server (no SPACE_HOST: the Space's own
    address is the one the browser used)."""
    return {"SYSTEM": "spaces", "SPACE_ID": space_id, "OAUTH_CLIENT_ID": CLIENT_ID,
            "OAUTH_CLIENT_SECRET": CLIENT_SECRET, "OAUTH_SCOPES": SCOPES, "OPENID_PROVIDER_URL": hub.url}


class HubServer:
    """The loopback Hub: a ThreadingHTTPServer on 127.0.0.1 and a free port, started and stopped as a context."""

    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "hub-test-key", "use": "sig"})
        self.logins: list[tuple[str, str]] = []
        self._codes: dict[str, dict] = {}  # code -> {user, client_id, redirect_uri, nonce}
        self._tokens: dict[str, str] = {}  # access token -> user
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="hub-server", daemon=True)

    def __enter__(self) -> "HubServer":
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    # ------------------------------------------------------------------------------------------------- OpenID

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

    def access_tokens(self) -> list[str]:
        """Every access token handed out (to check none leaks)."""
        with self._lock:
            return list(self._tokens)

    def profile(self, user: str) -> dict:
        return {"name": user.title(), "preferred_username": user, "profile": f"https://huggingface.co/{user}",
                "picture": f"https://huggingface.co/avatars/{user}.svg"}

    def userinfo(self, authorization: str | None) -> tuple[int, dict]:
        with self._lock:
            user = self._tokens.get((authorization or "").removeprefix("Bearer "))
        return (200, {"sub": f"sub-{user}", **self.profile(user)}) if user else (401, {"error": "invalid_token"})


def _login_page(query: str) -> str:
    """The authorize page for a visitor the Hub does not know yet: a name, then back to the authorize URL."""
    return ("<!doctype html><title>Sign in to the test Hub</title><form method='post' action='/login'>"
            f"<input type='hidden' name='next' value='{html.escape('/oauth/authorize?' + query, quote=True)}'>"
            "<label>Username <input id='hub-username' name='username'></label>"
            "<button id='hub-sign-in' type='submit'>Sign in</button></form>")


def _handler_for(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, payload: dict) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _redirect(self, location: str, headers: dict[str, str] | None = None) -> None:
            self._send(302, b"", "text/plain", {"Location": location, **(headers or {})})

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length") or 0)
            return dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))

        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            if url.path == "/.well-known/openid-configuration":
                return self._json(200, hub.discovery())
            if url.path == "/oauth/jwks":
                return self._json(200, {"keys": [hub.key.as_dict(private=False)]})
            if url.path == "/oauth/userinfo":
                return self._json(*hub.userinfo(self.headers.get("Authorization")))
            if url.path == "/oauth/authorize":
                if query.get("response_type") != "code" or query.get("client_id") != CLIENT_ID:
                    return self._json(400, {"error": "invalid_request"})
                cookie = SimpleCookie(self.headers.get("Cookie") or "").get(USER_COOKIE)
                if cookie is None or not cookie.value:
                    return self._send(200, _login_page(url.query).encode(), "text/html; charset=utf-8")
                code = hub.issue_code(cookie.value, query)
                back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
                separator = "&" if "?" in query["redirect_uri"] else "?"
                return self._redirect(query["redirect_uri"] + separator + urllib.parse.urlencode(back))
            return self._json(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            path = urllib.parse.urlsplit(self.path).path
            form = self._form()
            if path == "/oauth/token":
                return self._json(*hub.exchange(form, self.headers.get("Authorization")))
            if path == "/login":
                user, target = form.get("username", "").strip(), form.get("next", "/")
                if not user or not target.startswith("/oauth/authorize?"):
                    return self._json(400, {"error": "a username is needed"})
                return self._redirect(target, {"Set-Cookie": f"{USER_COOKIE}={user}; Path=/oauth; HttpOnly"})
            return self._json(404, {"error": "not found"})

    return Handler
