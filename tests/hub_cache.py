"""Lay model folders into a hand-made Hugging Face Hub cache, so production loading code runs offline.

Layout (what huggingface_hub resolves with HF_HUB_OFFLINE=1):
  <cache>/models--<org>--<name>/refs/<branch>      holding a 40-hex commit sha
  <cache>/models--<org>--<name>/snapshots/<sha>/   holding plain files
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

LICENSED_CARD = "---\nlicense: apache-2.0\ntags:\n- test\n---\n# A tiny random-weight test model\n"


def fake_sha(*parts: str) -> str:
    """A deterministic 40-hex commit sha."""
    return hashlib.sha1("/".join(parts).encode()).hexdigest()


def lay_into_hub_cache(cache_dir: Path, repo_id: str, folder: Path | None = None, files: dict[str, bytes | str] | None = None,
                       sha: str | None = None, refs: tuple[str, ...] = ("main",), repo_type: str = "model",
                       add_card: bool = True) -> str:
    """Copy `folder` (and/or write `files`) as snapshot `sha` of `repo_id`; point each ref at it. Returns the sha."""
    sha = sha or fake_sha(repo_id, *refs)
    org, name = repo_id.split("/")
    root = Path(cache_dir) / f"{repo_type}s--{org}--{name}"
    snapshot = root / "snapshots" / sha
    snapshot.mkdir(parents=True, exist_ok=True)
    if folder is not None:
        for item in Path(folder).rglob("*"):
            if item.is_file():
                target = snapshot / item.relative_to(folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(item, target)
    for rel, content in (files or {}).items():
        target = snapshot / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
    if add_card and not (snapshot / "README.md").exists():
        (snapshot / "README.md").write_text(LICENSED_CARD)
    (root / "refs").mkdir(parents=True, exist_ok=True)
    for ref in refs:
        ref_file = root / "refs" / ref
        ref_file.parent.mkdir(parents=True, exist_ok=True)
        ref_file.write_text(sha)
    return sha
