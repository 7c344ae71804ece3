"""Git LFS on the loopback Hub (used by tests/hub_repos.py and tests/hub_server.py), as huggingface_hub 2.4 drives
it with Xet off (HF_HUB_DISABLE_XET=1: the loopback Hub does not serve the Xet protocol).

- Which files are LFS (`upload_mode`, the preupload answer): a path matching an LFS pattern of the head's
  `.gitattributes` (`<pattern> filter=lfs ...`; a pattern without "/" matches the basename, with fnmatch), a file
  over 10 MiB, or a binary one (a NUL byte in the client's 512-byte sample); empty files are always regular.
  A commit's regular-file line is refused (400) for a tracked path, a file over 10 MiB or a binary one over 1 MB
  (`must_be_lfs`); an LFS file the `.gitattributes` does not track gets its own line there in the same commit,
  as the Hub adds one.
- `POST /[datasets/|spaces/]{repo}.git/info/lfs/objects/batch` (auth: the namespace, or anyone who may open a pull
  request on the repo, tests/hub_access.py): for each
  object not stored yet, an upload href on the storage server and a verify href on the Hub; no `actions` for one
  already stored. `PUT {storage}/lfs-storage/upload/{oid}` takes the bytes (400 when their sha256 or size is not
  what the batch announced); `POST {repo}.git/info/lfs/objects/verify`: 200 when stored, else 404.
- Downloads: /resolve/ of an LFS file answers 302 to `{storage}/lfs-storage/objects/{sha256}` (HEAD and GET, with
  Range). The storage is a second listening port: like huggingface.co's CDN it is another origin, so the client
  reads the file's metadata from the 302 itself and does not send the token there.
- A file's LFS pointer: `version https://git-lfs.github.com/spec/v1\\noid sha256:<hex>\\nsize <n>\\n`; the tree's
  `oid` of an LFS file is the git blob sha1 of that pointer.
"""
from __future__ import annotations

import fnmatch
import hashlib
import re
import threading
from typing import TYPE_CHECKING, NamedTuple

from tests.hub_http import REQUIRED, HubError, Reply, Request, byte_range, json_reply, route

if TYPE_CHECKING:
    from tests.hub_server import HubServer

LFS_SIZE_LIMIT = 10 * 1024 * 1024  # bigger regular files are refused: the Hub wants them in LFS
BINARY_SIZE_LIMIT = 1_000_000  # bigger binary regular files are refused too
LFS_CONTENT_TYPE = "application/vnd.git-lfs+json"
MISSING_OBJECT = ("Your push was rejected because an LFS pointer pointed to a file that does not exist. "
                  "Offending file: {path}")
NOT_REGULAR = ("Your push was rejected because {path} must be stored with Git LFS (it is tracked by .gitattributes, "
               "over 10 MiB, or binary and over 1 MB). Upload it as an LFS file.")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def blob_entry(path: str, data: bytes, lfs: bool) -> dict:
    """A file of the tree / paths-info answers: a regular file's oid is its blob sha1; an LFS file's, its pointer's."""
    if not lfs:
        return {"type": "file", "oid": git_blob_oid(data), "size": len(data), "path": path}
    pointer = lfs_pointer(data)
    return {"type": "file", "oid": git_blob_oid(pointer), "size": len(data), "path": path,
            "lfs": {"oid": sha256_hex(data), "size": len(data), "pointerSize": len(pointer)}}


def lfs_pointer(data: bytes) -> bytes:
    """The git blob an LFS file is in the repo."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256_hex(data)}\nsize {len(data)}\n".encode()


def lfs_patterns(gitattributes: bytes | None) -> list[str]:
    """The patterns of `.gitattributes` lines that set `filter=lfs`."""
    patterns = []
    for line in (gitattributes or b"").decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) > 1 and not parts[0].startswith("#") and "filter=lfs" in parts[1:]:
            patterns.append(parts[0])
    return patterns


def tracked(path: str, patterns: list[str]) -> bool:
    """Whether `path` matches one of the LFS patterns (no "/" in it: the basename; else the whole path)."""
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, p) if "/" not in p else fnmatch.fnmatchcase(path, p.lstrip("/"))
               for p in patterns)


def upload_mode(path: str, size: int, sample: bytes, patterns: list[str]) -> str:
    """The preupload answer for a file: "lfs" or "regular"."""
    if size == 0:
        return "regular"
    return "lfs" if tracked(path, patterns) or size > LFS_SIZE_LIMIT or b"\0" in sample[:512] else "regular"


def must_be_lfs(path: str, data: bytes, patterns: list[str]) -> bool:
    """Whether a regular-file commit line is refused: a path the head's `.gitattributes` tracks, a file over 10 MiB,
    or a binary one (a NUL byte in its first 8000 bytes, git's test) over 1 MB, which the Hub refuses as a git
    blob since 2022 (huggingface/huggingface_hub#657). Small binary files pass, though preupload says "lfs"."""
    binary = len(data) > BINARY_SIZE_LIMIT and b"\0" in data[:8000]
    return len(data) > 0 and (tracked(path, patterns) or len(data) > LFS_SIZE_LIMIT or binary)


def gitattributes_with(gitattributes: bytes, paths: list[str]) -> bytes:
    """`.gitattributes` with a line for each LFS path it does not track yet (what the Hub adds on such a commit)."""
    missing = [p for p in paths if not tracked(p, lfs_patterns(gitattributes))]
    if not missing:
        return gitattributes
    text = gitattributes if not gitattributes or gitattributes.endswith(b"\n") else gitattributes + b"\n"
    return text + b"".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n".encode() for p in missing)


class LfsLine(NamedTuple):
    """A commit's `lfsFile` line, before its object is looked up."""
    oid: str
    size: int | None


class LfsStorage:
    """The LFS objects (sha256 -> bytes) every repo shares, and the uploads the batch endpoint announced."""

    def __init__(self):
        self._objects: dict[str, bytes] = {}
        self._announced: dict[str, int] = {}  # sha256 -> size, from a batch answer
        self._lock = threading.Lock()

    def get(self, oid: str) -> bytes | None:
        with self._lock:
            return self._objects.get(oid)

    def batch(self, objects: list[dict], storage_url: str, verify_url: str) -> list[dict]:
        answers = []
        for item in objects:
            oid, size = item.get("oid"), item.get("size")
            if not isinstance(oid, str) or not re.fullmatch(r"[0-9a-f]{64}", oid) or not isinstance(size, int) \
                    or size < 0:
                raise HubError(422, "each object needs a sha256 `oid` and a `size`")
            answer = {"oid": oid, "size": size, "authenticated": True}
            with self._lock:
                stored = oid in self._objects
                if not stored:
                    self._announced[oid] = size
            if not stored:
                answer["actions"] = {"upload": {"href": f"{storage_url}/lfs-storage/upload/{oid}", "header": {}},
                                     "verify": {"href": verify_url, "header": {}}}
            answers.append(answer)
        return answers

    def put(self, oid: str, data: bytes) -> None:
        with self._lock:
            size = self._announced.get(oid)
        if size is None:
            raise HubError(403, "This upload URL was not issued by the LFS batch endpoint")
        if len(data) != size or sha256_hex(data) != oid:
            raise HubError(400, f"The uploaded bytes do not match the object {oid} (size {size})")
        with self._lock:
            self._objects[oid] = data

    def store(self, data: bytes) -> str:
        """Keep an object without an upload (a repo a test seeds); its sha256."""
        with self._lock:
            self._objects[sha256_hex(data)] = data
        return sha256_hex(data)

    def resolve(self, oid: str, size: int | None, path: str) -> bytes:
        """The bytes of a commit's `lfsFile` line; a 400 when the object was never uploaded (or its size differs)."""
        data = self.get(oid)
        if data is None or (size is not None and size != len(data)):
            raise HubError(400, MISSING_OBJECT.format(path=path))
        return data


class LfsEndpoints:
    """The Git LFS batch and verify endpoints (on the Hub) and the storage's upload and download paths."""

    def __init__(self, hub: "HubServer"):
        self.hub = hub
        self.storage: LfsStorage = hub.repos.storage
        self.rules = hub.rules  # tests/hub_access.py

    def routes(self) -> list:
        repo = r"/(?:(?P<types>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects"
        return [route("POST", rf"{repo}/batch", self.batch, REQUIRED),
                route("POST", rf"{repo}/verify", self.verify, REQUIRED)]

    def storage_routes(self) -> list:
        return [route("PUT", r"/lfs-storage/upload/(?P<oid>[0-9a-f]{64})", self.upload),
                route("HEAD GET", r"/lfs-storage/objects/(?P<oid>[0-9a-f]{64})", self.download)]

    def _repo(self, request: Request) -> tuple[str, str]:
        """The namespace, or anyone who may open a pull request (the objects of a PR's files); 404: no repo."""
        return self.rules.read(request) if self.rules.member(request) else self.rules.contribute(request)

    def batch(self, request: Request) -> Reply:
        repo_type, repo_id = self._repo(request)
        payload = request.json() or {}
        if payload.get("operation") != "upload":
            raise HubError(422, "the test Hub's LFS batch endpoint serves uploads only")
        if "basic" not in (payload.get("transfers") or ["basic"]) or payload.get("hash_algo", "sha256") != "sha256":
            raise HubError(422, "only the basic transfer and sha256 are supported")
        objects = payload.get("objects")
        if not isinstance(objects, list):
            raise HubError(422, "`objects` must be a list")
        verify_url = f"{self.hub.repos.url(repo_type, repo_id)}.git/info/lfs/objects/verify"
        answers = self.storage.batch(objects, self.hub.storage_url, verify_url)
        return json_reply({"transfer": "basic", "objects": answers}, content_type=LFS_CONTENT_TYPE)

    def verify(self, request: Request) -> Reply:
        self._repo(request)
        payload = request.json() or {}
        data = self.storage.get(str(payload.get("oid")))
        if data is None or payload.get("size") not in (None, len(data)):
            raise HubError(404, f"Object {payload.get('oid')} was not uploaded")
        return json_reply({"oid": payload["oid"], "size": len(data)}, content_type=LFS_CONTENT_TYPE)

    def upload(self, request: Request) -> Reply:
        self.storage.put(request.params["oid"], request.body)
        return Reply(200, b"", "text/plain", {"ETag": f'"{hashlib.md5(request.body).hexdigest()}"'})

    def download(self, request: Request) -> Reply:
        data = self.storage.get(request.params["oid"])
        if data is None:
            raise HubError(404, "NoSuchKey")
        headers = {"ETag": f'"{request.params["oid"]}"', "Accept-Ranges": "bytes"}
        status, body = byte_range(request.headers.get("Range"), data, headers)
        return Reply(status, body, "application/octet-stream", headers)
