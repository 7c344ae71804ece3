"""The shape the code keeps: the Space talks to the evaluator through evaluator.api alone, names no benchmark, and
every benchmark package fits the contract."""
from __future__ import annotations

import ast
import functools
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


# -- the house's rooms: packages by role, imports one way, no circle, no long module --------------------------------

CODE_FILES = sorted((PROJECT / "leaderboard").rglob("*.py")) + sorted((PROJECT / "evaluator").rglob("*.py"))
# where each room of leaderboard/ may import from (its own room always); ui and app.py may import any room
ROOMS = {
    "settings": set(),
    "formatting": set(),
    "store": {"settings"},
    "submissions": {"store", "settings", "formatting"},
    "board": {"submissions", "store", "settings", "formatting"},
    "explorer": {"board", "submissions", "store", "settings", "formatting"},
    "running": {"board", "submissions", "store", "settings", "formatting"},
}
# leaves read from below their room: they import nothing of leaderboard/ but each other
LEAVES = {"leaderboard.submissions.vocabulary", "leaderboard.running.job_flavors", "leaderboard.running.run_memory",
          "leaderboard.explorer.queries"}  # the Explorer's URL: the board links to it too (eval_results.py)
# the evaluator's rooms, and where each may import from (its own room always); its top (__main__, api) imports any
EVALUATOR_ROOMS = {
    "inputs": set(),
    "endpoints": set(),
    "metrics": set(),
    "models": {"endpoints"},
    "judge": {"endpoints", "inputs", "models"},
    "benchmarks": {"inputs", "models", "metrics", "judge"},
    "runs": {"benchmarks", "judge", "models", "metrics", "endpoints", "inputs"},
    "plans": {"benchmarks", "models", "metrics", "inputs", "runs"},
}
# the only modules that reach a remote endpoint: they build the chat client
ENDPOINT_CALLERS = {"evaluator.judge.endpoint", "evaluator.models.served"}
MAX_MODULE_LINES = 400


def _module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """Our modules that `path` imports, at module level or inside a function (what `if TYPE_CHECKING:` imports
    aside: never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
               for child in node.body for n in ast.walk(child)}
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in known} - {_module_name(path)}


@functools.cache
def _import_graph() -> dict[str, set[str]]:
    """Each module of the Space and the evaluator -> ours it imports; read once a session (the tests only read it)."""
    known = {_module_name(path) for path in CODE_FILES}
    return {_module_name(path): _imports(path, known) for path in CODE_FILES}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles (strongly connected groups of more than one module, or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in graph:
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle_in_the_space_or_the_evaluator():
    graph = _import_graph()
    assert "leaderboard.running.scheduler" in graph and graph["leaderboard.running.scheduler"]  # the graph is read
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "leaderboard" and len(parts) > 1 else None


def test_each_room_imports_only_the_rooms_below_it():
    wrong = []
    for module, imported in _import_graph().items():
        room = _room(module)
        if room not in ROOMS:
            continue
        allowed = ROOMS[room] | {room}
        for other in imported:
            if _room(other) is not None and _room(other) not in allowed and other not in LEAVES:
                wrong.append(f"{module} -> {other}")
    assert wrong == []
    for leaf in LEAVES:  # of leaderboard/, a leaf imports other leaves only (evaluator.api, every room's door, too)
        assert {m for m in _import_graph()[leaf] if _room(m) is not None} <= LEAVES, leaf


def test_the_space_is_a_few_rooms_each_saying_what_it_holds():
    # the modules directly in leaderboard/ are its __init__ and formatting alone: every other module lives in a room
    top = sorted(p.name for p in (PROJECT / "leaderboard").glob("*.py"))
    assert top == ["__init__.py", "formatting.py"], top
    packages = [p for p in (PROJECT / "leaderboard").iterdir() if (p / "__init__.py").is_file()]
    assert {p.name for p in packages} >= {"board", "explorer", "running", "store", "submissions", "ui"}
    for package in packages:
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, f"{package.name}/__init__.py says what it holds"


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(PROJECT)): n for p in CODE_FILES
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}



def _evaluator_room(module: str) -> str | None:
    """The evaluator room a module is in (a room's package counts as in it); None for the top and for the Space."""
    parts = module.split(".")
    if parts[0] != "evaluator" or len(parts) < 2 or parts[1] in ("api", "__main__"):
        return None
    return parts[1]


def test_the_evaluator_is_a_few_rooms_each_saying_what_it_holds_and_may_import():
    # the modules directly in evaluator/ are its __init__, the command line and the Space's one door
    top = sorted(p.name for p in (PROJECT / "evaluator").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "api.py"], top
    packages = {p.name for p in (PROJECT / "evaluator").iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(EVALUATOR_ROOMS), packages
    for room in packages:
        doc = ast.get_docstring(ast.parse((PROJECT / "evaluator" / room / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, f"evaluator/{room}/__init__.py says what it holds"
        assert "import" in doc.lower(), f"evaluator/{room}/__init__.py says what it may import"


def test_each_evaluator_room_imports_only_the_rooms_below_it():
    graph = _import_graph()
    assert graph["evaluator.runs.runner"] and graph["evaluator.benchmarks.reform.scoring"]  # the graph is read
    wrong = []
    for module, imported in graph.items():
        room = _evaluator_room(module)
        if room is None:
            continue
        allowed = EVALUATOR_ROOMS[room] | {room}
        wrong += [f"{module} -> {other}" for other in imported
                  if (other_room := _evaluator_room(other)) is not None and other_room not in allowed]
        wrong += [f"{module} -> {other}" for other in imported if other in {"evaluator.api", "evaluator.__main__"}]
    assert wrong == []


def test_the_room_finder_names_the_room_of_a_module_and_none_for_the_top():
    assert _evaluator_room("evaluator.runs.runner") == "runs"
    assert _evaluator_room("evaluator.judge") == "judge"
    assert _evaluator_room("evaluator.api") is None and _evaluator_room("leaderboard.board.views") is None


def test_only_the_endpoint_judge_and_the_served_model_reach_an_endpoint():
    graph = _import_graph()
    reaching = {module for module, imported in graph.items()
                if not module.startswith("evaluator.endpoints")
                and imported & {"evaluator.endpoints.chat_client", "evaluator.endpoints.bounded_http"}}
    assert reaching == ENDPOINT_CALLERS
