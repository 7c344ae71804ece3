"""Build a tiny random-weight vision-language model (LLaVA-shaped, a few hundred KB, about a second) into a folder,
with no download, and optionally queue it on the local store: a way to try the Space with no Hub access at all. Its
answers are noise; the run shows the machinery (the queue, the evaluator, the board, the Explorer) end to end.

    .venv/bin/python tools/tiny_model.py ./tiny-llava            # build it; submit the folder's path in Submit
    .venv/bin/python tools/tiny_model.py ./tiny-llava --submit   # build it and queue it as the local user

--submit goes through the Submit tab's own checks, on the store the settings name (the local default:
./leaderboard-data), as the machine's user; local folders are accepted there when sign-in is off and the store is
local (LEADERBOARD_ALLOW_LOCAL_MODELS, on by default in that case).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))


def build(folder: Path) -> Path:
    """The tiny LLaVA the tests use (tests/tiny_models.py: its tokenizer, processor and seeded weights are made
    here, nothing is fetched) written to `folder`."""
    from tests.tiny_models import build_tiny_llava

    return build_tiny_llava(folder)


def submit(folder: Path) -> str:
    """Queue the folder as the local user, through the Submit tab's checks; the answer it gives."""
    from leaderboard.settings import Settings
    from leaderboard.store import open_store
    from leaderboard.submissions.checks import submit as submit_model
    from leaderboard.submissions.identity import visitor

    settings = Settings.from_env_or_exit()
    outcome = submit_model(settings, open_store(settings), str(folder.resolve()), by=visitor(settings))
    return outcome.message if outcome.ok else f"Not submitted: {outcome.message}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="where to write the model (created; an existing model is kept)")
    parser.add_argument("--submit", action="store_true", help="queue it on the local store as the local user")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here needs the Hub
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    folder = args.folder.expanduser()
    if not (folder / "config.json").is_file():
        build(folder)
        print(f"built a tiny random-weight LLaVA in {folder.resolve()}")
    else:
        print(f"{folder.resolve()} already holds a model; kept")
    if args.submit:
        said = submit(folder)
        print(said)
        return 0 if not said.startswith("Not submitted") else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
