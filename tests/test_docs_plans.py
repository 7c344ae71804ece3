"""The plan and lite pages say what the code computes: the expected widths and ReForm-Eval's dataset table in
docs/benchmarks.md, the plan excerpts in docs/cli.md (transformers and vLLM), and that vLLM's figures are
published, not measured."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluator import api
from evaluator.__main__ import main
from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.reform.counts import COUNTS
from tests import shaped_configs

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_lite_width_table_is_the_computed_one():
    text = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    for found in api.expected_widths():
        card = get_benchmark(found.benchmark).CARD
        row = (f"| {card.title} | {card.short_title} {card.metric(found.metric).label} | {found.lite_items:,} | "
               f"±{found.lite_half_width:.1f} | {found.full_items:,} | ±{found.full_half_width:.1f} |")
        assert row in text, row
    for name in ("cure", "simpleqa", "reform", "lave"):
        assert api.describe_lite(get_benchmark(name).CARD.lite) in text, name


def test_reform_evals_dataset_table_is_counts_py():
    text = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ([^|]+) \| [^|]+ \| ([\d,]+) \| (counted|published|derived|estimated) \|", text, re.M)
    assert [(name.strip(), int(items.replace(",", "")), basis) for name, items, basis in rows] == \
        [(c.name, c.items, c.basis) for c in COUNTS]
    assert f"{sum(c.items for c in COUNTS):,} items over its 61 datasets" in text


@pytest.mark.parametrize("heading,engine", [("A 7B LLaVA on the lite suites, no thinking", "transformers"),
                                            ("The same on vLLM (`--engine vllm`; excerpt)", "vllm")])
def test_the_cli_pages_plan_excerpts_are_what_plan_prints(tmp_path, capsys, heading, engine):
    folder = shaped_configs.write(tmp_path / "shapes" / "llava-1.5-7b", "llava-1.5-7b")
    assert main(["plan", "--model", str(folder), "--suite", "lite", "--thinking", "off", "--engine", engine]) == 0
    printed = capsys.readouterr().out.replace(str(tmp_path) + "/", "")
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    excerpt = page.split(heading)[1].split("```text\n")[1].split("```")[0]
    for line in excerpt.splitlines():
        assert line in printed.splitlines(), line


def test_the_docs_say_vllms_figures_are_published_until_a_gpu_measures_them():
    for page in ("cli.md", "benchmarks.md"):
        text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
        assert "--engine vllm" in text and "https://blog.vllm.ai/2024/09/05/perf-update.html" in text, page
        assert "published until a GPU measures" in text or "stays published until a GPU measures it" in text, page
