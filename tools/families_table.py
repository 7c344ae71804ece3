"""docs/models.md, the families table, written from the code: every model type the pinned transformers maps to
AutoModelForImageTextToText, whether it runs here (evaluator/models/families.py) or why it is refused
(evaluator/models/family_table.py), whether the pinned vLLM serves a family that runs (evaluator/models/vllm_models.py),
and the rules for text-only models and remote code.

    python tools/families_table.py           # print the page
    python tools/families_table.py --write   # rewrite docs/models.md
    python tools/families_table.py --check   # exit 1 when docs/models.md differs from the code's page
"""
from __future__ import annotations

import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

PAGE = PROJECT / "docs" / "models.md"


def cell(text: str) -> str:
    """A table cell's text: a `|` would end the cell, so it is escaped."""
    return text.replace("|", "\\|")


def page() -> str:
    """The whole of docs/models.md."""
    import transformers

    from evaluator.models.family_table import REMOTE_RULE, TEXT_RULE, rows
    from evaluator.models.vllm_models import SOURCE, VLLM_IMAGE, VLLM_VERSION, vllm_note

    found = rows()
    running = [row for row in found if row.runs]
    refused = [row for row in found if not row.runs]
    lines = [
        "# Model families",
        "",
        f"Which models this leaderboard evaluates. transformers {transformers.__version__}, the version it pins, "
        f"maps {len(found)} model types to image-text-to-text models; {len(running)} of them run here, each checked "
        "on a tiny random-weight model of its family (loading, prompts with and without images, the same answers "
        "at any batch size, option scoring, the static KV cache, the image-features cache) before it was let in. "
        "A submission of any other type is refused at once, with the reason this page gives for it.",
        "",
        "This page is written from the code (`python tools/families_table.py --write`); a test fails when it is "
        "stale.",
        "",
        "## Vision-language families that run",
        "",
        "- **Options**: how a multiple-choice question's options are scored by likelihood: *batched* (many "
        "questions' prompts encoded together, every option over its prompt's KV cache), one question at a time "
        "over its prompt's cache, or one forward pass per option.",
        "- **Images**: whether each image's vision-tower output is kept for the run (an image shown again is not "
        "encoded again).",
        "- **On a GPU**: how generation keeps its KV cache there: a static cache with a compiled decode step (where "
        "transformers declares the model compilable in one graph), a static cache not compiled, or the dynamic "
        "cache. On the CPU every family runs the static cache uncompiled in the tests; a compile that fails on a GPU "
        "falls back to the dynamic cache for the rest of the run and the results say why.",
        f"- **vLLM**: whether vLLM {VLLM_VERSION} (`{VLLM_IMAGE}`, the engine a Job may run instead of "
        f"transformers) serves the class, as [its supported-models list]({SOURCE}) says: *yes*, with the list's "
        "caveats (one image a prompt; image tokens attended causally), or *no*, with why where known. A class "
        "the list does not name may still load through vLLM's Transformers backend, which the list does not vouch "
        "for. `evaluator/models/vllm_models.py` holds the list, text-only architectures too.",
        "",
        "| model type | class | options | images | on a GPU | vLLM |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [f"| `{row.model_type}` | `{row.model_class}` | {cell(row.options)} | {cell(row.images)} | "
              f"{cell(row.static_path)} | {cell(vllm_note(row.model_class))} |" for row in running]
    lines += ["", "## Text-only models", "", TEXT_RULE, "", "## Remote code", "", REMOTE_RULE, "",
              "## Every other image-text-to-text type", "",
              "Refused at submission, and by the evaluator's CLI, with this reason.", "",
              "| model type | class | why it does not run |", "| --- | --- | --- |"]
    lines += [f"| `{row.model_type}` | `{row.model_class}` | {cell(row.why)} |" for row in refused]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = page()
    if "--write" in argv:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            PAGE.write_text(text, encoding="utf-8")
            print(f"rewrote {PAGE.relative_to(PROJECT)}")
        else:
            print(f"{PAGE.relative_to(PROJECT)} is current")
        return 0
    if "--check" in argv:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(PROJECT)} differs from the code: python tools/families_table.py --write",
                  file=sys.stderr)
            return 1
        print(f"{PAGE.relative_to(PROJECT)} is current")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
