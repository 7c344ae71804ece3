"""Inspecting a submitted model: the facts submission checks, for a Hub repo and a local folder alike.

`inspect_model` asks the Hub (or, offline, the local Hub cache); `inspect_folder` reads a local model folder. Both
return complete `ModelFacts` (pinned commit sha or content hash, file names, the weight files that would load,
gated / private, config.json, model card text, parameter count), or raise `HubLookupError` whose `kind` names the
problem and whose message is one clear sentence. Nothing here downloads weights: offline the snapshot folder is
already on disk, online only config.json, README.md and a few small JSON files are fetched, read from the Hub cache
when it holds them and otherwise downloaded into `lookups` (the leaderboard's own folder), never into the Hub cache:
the cache may be the user's own, and a snapshot folder this leaderboard made there would later pass for theirs.

`huggingface_hub.constants.HF_HUB_OFFLINE` is read when huggingface_hub is imported; `OFFLINE` here overrides it
(tests set it to False to exercise the online path with a stand-in for HfApi).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from huggingface_hub import constants

from evaluator import api as evaluator_api

# None: follow huggingface_hub.constants.HF_HUB_OFFLINE; True / False: force the offline / online path.
OFFLINE: bool | None = None

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
# small JSON files that may point at custom code (auto_map) besides config.json
GENERATION_CONFIG = "generation_config.json"  # read to be checked only (evaluator.api.read_generation_config)
SIDE_CONFIGS = ("tokenizer_config.json", "processor_config.json", "preprocessor_config.json")

# kinds of HubLookupError
NOT_FOUND, REVISION_NOT_FOUND, GATED, DISABLED, UNREACHABLE, HUB_ERROR, BAD_FILES = (
    "not_found", "revision_not_found", "gated", "disabled", "unreachable", "hub_error", "bad_files")
NOT_CACHED = "not_cached"  # offline: the model, or its revision, is not in the local Hub cache


class HubLookupError(Exception):
    """The Hub (or the local cache) could not answer about this model. `kind` is one of the constants above."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class ModelFacts:
    repo_id: str
    sha: str                              # full 40-hex commit
    files: list[str]                      # repo-relative file names
    gated: Any = None                     # False / "auto" / "manual"; None when unknown (offline)
    private: bool | None = None           # None when unknown (offline)
    config: dict | None = None            # config.json
    card: str | None = None               # README.md text (None when the repo has none)
    folder: Path | None = None            # the snapshot folder (offline; online: where config.json landed)
    params: int | None = None             # total parameter count, when known
    card_license: str | None = None       # licence from the Hub's parsed card data (online), if any
    side_configs: dict[str, dict] = field(default_factory=dict)  # tokenizer/processor configs present
    offline: bool = False
    local: bool = False                   # a local folder, pinned by its content hash
    weights: list[str] = field(default_factory=list)  # the *.safetensors files that would load


def is_offline() -> bool:
    return bool(constants.HF_HUB_OFFLINE) if OFFLINE is None else OFFLINE


def inspect_model(repo_id: str, revision: str = "", token: str | None = None, api=None,
                  lookups: Path | None = None) -> ModelFacts:
    """Resolve `repo_id` at `revision` (branch, tag or sha; "" = default branch) to its facts. `lookups`: where the
    small files fetched online go (default: a Hub-cache-shaped folder of its own in the system's temporary folder)."""
    if is_offline():
        return _inspect_offline(repo_id, revision)
    return _inspect_online(repo_id, revision, token, api, lookups)


# ---------------------------------------------------------------- offline: the local Hub cache
def _inspect_offline(repo_id: str, revision: str) -> ModelFacts:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    org, name = repo_id.split("/", 1)
    repo_dir = Path(constants.HF_HUB_CACHE) / f"models--{org}--{name}"
    if not repo_dir.is_dir():
        raise HubLookupError(NOT_CACHED, f"Model {repo_id} is not in the local Hub cache; the Hub is offline.")
    wanted = revision or "main"
    try:
        folder = Path(snapshot_download(repo_id, revision=wanted, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, ValueError):
        raise HubLookupError(NOT_CACHED,
                             f"Revision {wanted} of {repo_id} is not in the local Hub cache; the Hub is offline.") from None
    sha = folder.name
    if not SHA_RE.match(sha):
        raise HubLookupError(REVISION_NOT_FOUND, f"Revision {wanted} of {repo_id} does not resolve to a commit sha.")
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    facts = ModelFacts(repo_id=repo_id, sha=sha, files=files, folder=folder, offline=True)
    read_folder(facts, folder)
    facts.weights = weight_files(files, folder)
    facts.params = count_folder_params(folder, files)
    return facts


# ---------------------------------------------------------------- a local folder
def safe_name(name: str) -> str:
    return re.sub(r"[^\w.\-]", "-", name).strip(".-") or "model"


def folder_files(folder: Path) -> list[str]:
    """Relative paths of the folder's files, sorted; hidden files and folders (.cache, .git) are left out."""
    found = []
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            found.append(rel.as_posix())
    return sorted(found)


def folder_sha(folder: Path, files: list[str] | None = None) -> str:
    """sha1 over the sorted files' relative paths and contents: the 'revision' of a local folder (40 hex)."""
    folder = Path(folder)
    digest = hashlib.sha1()
    for rel in files if files is not None else folder_files(folder):
        path = folder / rel
        digest.update(f"{rel}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def inspect_folder(folder: Path) -> ModelFacts:
    """A local model folder's facts: named local/<folder name>, pinned by its content hash."""
    folder = Path(folder)
    files = folder_files(folder)
    facts = ModelFacts(repo_id=f"local/{safe_name(folder.name)}", sha=folder_sha(folder, files), files=files,
                       folder=folder, offline=True, local=True)
    read_folder(facts, folder)
    facts.weights = weight_files(files, folder)
    facts.params = count_folder_params(folder, files)
    return facts


def read_folder(facts: ModelFacts, folder: Path) -> None:
    facts.config = read_config_file(folder / "config.json")
    read_json_file(folder / GENERATION_CONFIG, evaluator_api.read_generation_config)
    readme = folder / "README.md"
    facts.card = readme.read_text(encoding="utf-8", errors="replace") if readme.is_file() else None
    for name in SIDE_CONFIGS:
        data = read_json_file(folder / name)
        if data is not None:
            facts.side_configs[name] = data


def read_json_file(path: Path, read=None) -> dict | None:
    """A JSON object from one of the model's small files, read as the evaluator's CLI reads it (evaluator.api
    read_model_json, or `read`); None when the file is missing. HubLookupError (BAD_FILES), whose message is the
    evaluator's "unreadable <file>: <reason>", when it cannot be read: too large, not JSON, nested too deep, not an
    object."""
    if not path.is_file():
        return None
    try:
        return (read or evaluator_api.read_model_json)(path)
    except evaluator_api.UnreadableConfig as error:
        said = str(error)
        raise HubLookupError(BAD_FILES, f"{said[:1].upper()}{said[1:]}; nothing was queued.") from None


def read_config_file(path: Path) -> dict | None:
    """The model's config.json (read_json_file), its fields that name the model checked as the CLI checks them
    (evaluator.api.read_model_config: `architectures` a list of class names, `model_type` text, ...)."""
    return read_json_file(path, evaluator_api.read_model_config)


# ---------------------------------------------------------------- counting parameters without loading tensors
def safetensors_header_params(path: Path) -> int:
    """Parameters in one safetensors file, from its header (evaluator.api.safetensors_parameters, the one reader of
    such headers); HubLookupError (BAD_FILES) naming the file when it is not one."""
    try:
        return evaluator_api.safetensors_parameters(path)
    except ValueError as error:
        raise HubLookupError(BAD_FILES, str(error)) from None


def weight_files(files: list[str], folder: Path | None = None) -> list[str]:
    """The top-level *.safetensors files transformers would load (the index's shards when there is one)."""
    top = sorted(f for f in files if "/" not in f and f.endswith(".safetensors"))
    if folder is not None and "model.safetensors.index.json" in files:
        index = read_json_file(folder / "model.safetensors.index.json") or {}
        weight_map = index.get("weight_map")
        shards = sorted({v for v in weight_map.values() if isinstance(v, str)}) if isinstance(weight_map, dict) else []
        if shards and all(s in files for s in shards):
            return shards
    return top


def count_folder_params(folder: Path, files: list[str] | None = None) -> int | None:
    """Sum of parameters over the folder's weight files; None when it has no safetensors files."""
    folder = Path(folder)
    if files is None:
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    shards = weight_files(files, folder)
    if not shards:
        return None
    return sum(safetensors_header_params(folder / shard) for shard in shards)


# ---------------------------------------------------------------- online: HfApi
def _inspect_online(repo_id: str, revision: str, token: str | None, api, lookups: Path | None) -> ModelFacts:
    from huggingface_hub import HfApi

    api = api or HfApi(token=token or None)
    info = _ask(repo_id, revision, lambda: api.model_info(repo_id, revision=revision or None, files_metadata=False))
    sha = getattr(info, "sha", None) or ""
    if not SHA_RE.match(sha):
        raise HubLookupError(HUB_ERROR, f"The Hub did not return a commit sha for {repo_id}.")
    siblings = getattr(info, "siblings", None) or []
    files = sorted(getattr(s, "rfilename", s) for s in siblings)
    card_data = getattr(info, "card_data", None)
    card_license = None
    if card_data is not None:
        card_license = card_data.get("license") if hasattr(card_data, "get") else getattr(card_data, "license", None)
    facts = ModelFacts(repo_id=repo_id, sha=sha, files=files, gated=getattr(info, "gated", None),
                       private=getattr(info, "private", None), card_license=card_license, offline=False)
    if facts.gated or facts.private:
        return facts  # submission refuses these; fetching files would fail or leak nothing useful
    safetensors = getattr(info, "safetensors", None)
    total = getattr(safetensors, "total", None) if safetensors is not None else None
    if total is None and isinstance(safetensors, dict):
        total = safetensors.get("total")
    facts.params = int(total) if total is not None else None

    def fetch(name: str) -> Path | None:
        if name not in files:
            return None
        endpoint = getattr(api, "endpoint", None)  # the Hub the client asks (HF_ENDPOINT on a Space)
        return Path(_ask(repo_id, sha, lambda: _download(repo_id, name, sha, token, lookups, endpoint)))

    config_path = fetch("config.json")
    if config_path is not None:
        facts.folder = config_path.parent
        facts.config = read_config_file(config_path)
    generation = fetch(GENERATION_CONFIG)
    if generation is not None:  # checked as the CLI checks it: its token ids, lengths and probabilities
        read_json_file(generation, evaluator_api.read_generation_config)
    readme = fetch("README.md")
    facts.card = readme.read_text(encoding="utf-8", errors="replace") if readme is not None else None
    for name in SIDE_CONFIGS:
        path = fetch(name)
        if path is not None:
            data = read_json_file(path)
            if data is not None:
                facts.side_configs[name] = data
    facts.weights = weight_files(files)
    if facts.params is None and facts.weights:
        facts.params = _params_from_headers(api, repo_id, sha)
    return facts


def _download(repo_id: str, filename: str, sha: str, token: str | None, lookups: Path | None,
              endpoint: str | None = None) -> str:
    """One small file of the model at `sha`: the Hub cache's copy when it has one (read, never written), else
    downloaded into `lookups` from `endpoint` (the Hub the client asked: None, huggingface_hub's own)."""
    import tempfile

    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return hf_hub_download(repo_id, filename, revision=sha, local_files_only=True)
    except (LocalEntryNotFoundError, FileNotFoundError):
        pass
    folder = lookups or Path(tempfile.gettempdir()) / "leaderboard-hub-lookups"
    return hf_hub_download(repo_id, filename, revision=sha, token=token or None, cache_dir=folder,
                           endpoint=endpoint)


def _params_from_headers(api, repo_id: str, sha: str) -> int | None:
    getter = getattr(api, "get_safetensors_metadata", None)
    if getter is None:
        return None
    try:
        meta = _ask(repo_id, sha, lambda: getter(repo_id, revision=sha))
    except HubLookupError as error:
        if error.kind in (UNREACHABLE,):
            raise
        return None
    counts = getattr(meta, "parameter_count", None) or {}
    return int(sum(counts.values())) if counts else None


def transport_errors() -> tuple[type[BaseException], ...]:
    """Connection-level errors of the HTTP clients huggingface_hub may use (httpx2 in 2.x, httpx before)."""
    found = []
    for module in ("httpx2", "httpx"):
        try:
            found.append(__import__(module).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(found)


def _ask(repo_id: str, revision: str, call):
    """Run one Hub call, turning its errors into HubLookupError with a clear message."""
    from huggingface_hub.errors import (DisabledRepoError, GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError,
                                        OfflineModeIsEnabled, RepositoryNotFoundError, RevisionNotFoundError)

    try:
        return call()
    except GatedRepoError:
        raise HubLookupError(GATED, f"Model {repo_id} is gated; this leaderboard only evaluates openly downloadable models.") from None
    except RepositoryNotFoundError:
        raise HubLookupError(NOT_FOUND, f"Model {repo_id} was not found on the Hub (or it is private).") from None
    except RevisionNotFoundError:
        raise HubLookupError(REVISION_NOT_FOUND, f"Revision {revision or 'main'} of {repo_id} was not found on the Hub.") from None
    except DisabledRepoError:
        raise HubLookupError(DISABLED, f"Model {repo_id} has been disabled on the Hub.") from None
    except HfHubHTTPError as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        raise HubLookupError(HUB_ERROR, f"The Hub answered with an error{f' (HTTP {status})' if status else ''} "
                                        f"about {repo_id}; please try again later.") from None
    except (OfflineModeIsEnabled, LocalEntryNotFoundError, ConnectionError, TimeoutError, *transport_errors()) as error:
        raise HubLookupError(UNREACHABLE, f"The Hub could not be reached ({type(error).__name__}); "
                                          "please try again later.") from None
