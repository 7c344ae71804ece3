"""The loopback Hub's 429s (used by tests/hub_server.py and tests/hub_repos.py).

- Commits (`CommitLimits`): the next commit to a repo failing on demand, and a budget of N commits per repo in a
  rolling window, answered 429 with `Retry-After` and the Hub's commit-quota message.
- Reads (`ReadBudget`), as https://huggingface.co/docs/hub/rate-limits documents them: requests counted in fixed
  windows (start = floor(now / w) * w, 300 s on the Hub) per bucket and per user of the bearer token (per client
  address when anonymous). Buckets (`bucket_of`): "resolvers" (a path with a `/resolve/` segment), "api" (every path
  under `/api/`, and the Git LFS endpoints `{repo}.git/info/lfs/...`); the LFS storage ("storage": a CDN or S3 on
  the Hub), OpenID/OAuth and login pages ("other") count in neither. With a budget set, every answer of the bucket
  carries `RateLimit: "<bucket>";r=<remaining>;t=<seconds to the window's end>` and
  `RateLimit-Policy: "fixed window";"<bucket>";q=<limit>;w=<window>` (the IETF draft huggingface_hub's
  `parse_ratelimit_headers` reads); over it the answer is a 429 in the Hub's error shape with those headers
  (r=0) and `Retry-After: <t>`.
- Any request (`RequestFailures`): the next one whose %-decoded path contains a pattern answered once with a given
  status in the Hub's error shape, before routing (a read of a file, a listing, a commit, a repo's info failing).
"""
from __future__ import annotations

import math
from collections import Counter, deque

from tests.hub_http import HubError

QUOTA_MESSAGE = "You have exceeded our hourly quotas for action: commit. We invite you to retry later."
BUCKETS = ("api", "resolvers")


def bucket_of(path: str, storage: bool = False) -> str:
    """The rate-limit bucket of a request path: "resolvers", "api", "storage" (the LFS storage) or "other"."""
    if storage:
        return "storage"
    if "/resolve/" in path:
        return "resolvers"
    if path.startswith("/api/") or ".git/info/lfs/" in path:
        return "api"
    return "other"


class CommitLimits:
    """Per-repo 429s: the next commit failing on demand, and a budget of N commits in a rolling window."""

    def __init__(self):
        self._next_failure: dict[str, HubError] = {}
        self._budgets: dict[str | None, tuple[int, float]] = {}  # repo (None: every repo) -> (max, window s)
        self._landed: dict[str, deque[float]] = {}

    def fail_next(self, repo_id: str, status: int, message: str, retry_after: float | None) -> None:
        headers = {"Retry-After": str(math.ceil(retry_after))} if retry_after is not None else {}
        self._next_failure[repo_id] = HubError(status, message, headers=headers)

    def set_budget(self, max_commits: int, window_seconds: float, repo_id: str | None = None) -> None:
        self._budgets[repo_id] = (max_commits, window_seconds)

    def check(self, repo_id: str, now: float) -> None:
        """Raise the injected failure, or a 429 when one more commit would go over the budget."""
        failure = self._next_failure.pop(repo_id, None)
        if failure is not None:
            raise failure
        budget = self._budgets.get(repo_id, self._budgets.get(None))
        if budget is None:
            return
        max_commits, window = budget
        landed = self._landed.setdefault(repo_id, deque())
        while landed and landed[0] <= now - window:
            landed.popleft()
        if len(landed) >= max_commits:
            wait = max(1, math.ceil(landed[0] + window - now))
            raise HubError(429, QUOTA_MESSAGE, headers={"Retry-After": str(wait)})

    def landed(self, repo_id: str, now: float) -> None:
        self._landed.setdefault(repo_id, deque()).append(now)


class RequestFailures:
    """Failures injected on demand, each answered once: (pattern, error), first added first matched (not
    thread-safe: the server holds its lock around it)."""

    def __init__(self):
        self._pending: list[tuple[str, HubError]] = []

    def add(self, pattern: str, status: int, message: str) -> None:
        self._pending.append((pattern, HubError(status, message)))

    def take(self, path: str) -> HubError | None:
        """The failure for a request to `path` (%-decoded), removed; None when none matches."""
        for index, (pattern, error) in enumerate(self._pending):
            if pattern in path:
                del self._pending[index]
                return error
        return None


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class ReadBudget:
    """Requests per bucket and caller in fixed windows (not thread-safe: the server holds its lock around it).
    `served` counts every request per bucket ("api", "resolvers", "storage", "other"), throttled or not;
    `throttled` the 429s per bucket."""

    def __init__(self):
        self.limits: dict[str, int | None] = {bucket: None for bucket in BUCKETS}
        self.window = 300.0
        self.served: Counter = Counter()
        self.throttled: Counter = Counter()
        self._counts: Counter = Counter()  # (bucket, caller, window start) -> requests

    def set(self, api: int | None = None, resolvers: int | None = None, window_seconds: float = 300.0) -> None:
        if window_seconds <= 0:
            raise ValueError("window_seconds must be positive")
        self.limits = {"api": api, "resolvers": resolvers}
        self.window = float(window_seconds)
        self._counts.clear()

    def take(self, bucket: str, caller: str, now: float) -> dict[str, str]:
        """Count one request; the RateLimit headers of its answer (none without a budget); raises the 429."""
        self.served[bucket] += 1
        limit = self.limits.get(bucket)
        if limit is None:
            return {}
        start = math.floor(now / self.window) * self.window
        reset = max(1, math.ceil(start + self.window - now))
        key = (bucket, caller, start)
        for old in [k for k in self._counts if k[2] != start]:
            del self._counts[old]
        policy = f'"fixed window";"{bucket}";q={limit};w={_number(self.window)}'
        if self._counts[key] >= limit:
            self.throttled[bucket] += 1
            headers = {"RateLimit": f'"{bucket}";r=0;t={reset}', "RateLimit-Policy": policy,
                       "Retry-After": str(reset)}
            raise HubError(429, f"You have exceeded our rate limit for {bucket} requests ({limit} per "
                                f"{_number(self.window)} seconds). Retry in {reset} seconds.", headers=headers)
        self._counts[key] += 1
        return {"RateLimit": f'"{bucket}";r={limit - self._counts[key]};t={reset}', "RateLimit-Policy": policy}
