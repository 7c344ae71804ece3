"""The shape the code keeps: the Space talks to the evaluator through evaluator.api alone, names no benchmark, and
every benchmark package fits the contract."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from evaluator.benchmarks import REGISTRY, card_problems, get_benchmark
from tests.conftest import PROJECT

SPACE_FILES = sorted((PROJECT / "leaderboard").rglob("*.py")) + [PROJECT / "app.py"]
BENCHMARK_NAME = re.compile("|".join(REGISTRY), re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _code_words(path: Path) -> list[str]:
    """Every string constant (docstrings aside), name and attribute of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, (ast.ImportFrom, ast.Import)):
            words.extend(alias.name for alias in node.names)
            words.append(getattr(node, "module", "") or "")
    return words


@pytest.mark.parametrize("path", SPACE_FILES, ids=lambda p: str(p.relative_to(PROJECT)))
def test_the_space_names_no_benchmark(path):
    named = [w for w in _code_words(path) if BENCHMARK_NAME.search(w)]
    assert named == [], f"{path.relative_to(PROJECT)} names a benchmark: {named[:5]}"


@pytest.mark.parametrize("path", SPACE_FILES, ids=lambda p: str(p.relative_to(PROJECT)))
def test_the_space_imports_only_the_evaluator_api(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    modules += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    evaluator = [m for m in modules if m == "evaluator" or m.startswith("evaluator.")]
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "evaluator"
                for alias in node.names]
    assert all(m == "evaluator.api" or (m == "evaluator" and set(imported) <= {"api"}) for m in evaluator), evaluator


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_benchmark_fits_the_contract(name):
    benchmark = get_benchmark(name)
    assert card_problems(benchmark.CARD, name) == []
    assert (PROJECT / "evaluator" / "benchmarks" / name / "__init__.py").is_file()  # one package each
    view = benchmark.CARD.item_view
    assert view.question and view.grade  # the explorer can show the question and how it was graded


def test_no_module_of_the_project_is_named_after_a_standard_library_module():
    import sys

    ours = [p for p in (PROJECT / "leaderboard").rglob("*.py")] + [p for p in (PROJECT / "evaluator").rglob("*.py")]
    shadowing = [str(p.relative_to(PROJECT)) for p in ours if p.stem in sys.stdlib_module_names]
    assert shadowing == []
