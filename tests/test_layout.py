"""The package's layout (docs/architecture.md): imports only go down the pipeline, with no circles, and the
page names every module of the package, and no module that is not there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import scorer

PACKAGE = Path(scorer.__file__).resolve().parent
ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: A path of the package as the page writes it: whole, from the repository's root (``scorer/metric/cache.py``,
#: ``scorer/outputs/``).
NAMED = re.compile(r"(?<![\w./-])scorer/[\w./-]*\w")
#: Layers from the bottom up; a module may import from its own layer or one below.
LAYERS = [
    ("scorer.safe_text", "scorer.defaults", "scorer.stop", "scorer.runner"),
    ("scorer.errors", "scorer.progress", "scorer.workers"),
    ("scorer.metric.engine",),
    ("scorer.metric",),
    ("scorer.version",),
    ("scorer.inputs",),
    ("scorer.scoring",),
    ("scorer.outputs",),
    ("scorer.api", "scorer.code_step"),
    ("scorer.cli", "scorer.streams", "scorer.__main__", "scorer"),
]


def layer(module: str) -> int:
    best = max((p for level in LAYERS for p in level if module == p or module.startswith(p + ".")), key=len)
    return next(k for k, level in enumerate(LAYERS) if best in level)


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "_compiled" in path.parts:
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, bool]]:
    """(imported module of the package, whether the import is inside a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - child.level + 1]
                        + ([base] if base else [])
                    )
                if base == "scorer" or base.startswith("scorer."):
                    for alias in child.names:
                        full = f"{base}.{alias.name}"
                        out.append((full if full in known else base, inner))
            elif isinstance(child, ast.Import):
                out.extend((a.name, inner) for a in child.names if a.name.startswith("scorer"))
            visit(child, inner)

    visit(tree, False)
    return out


def test_imports_only_go_down_and_never_from_inside_a_function():
    found = modules()
    assert "scorer.metric.engine.alignment" in found and "scorer.scoring.result" in found
    upward, in_functions = [], []
    for name, path in found.items():
        for target, in_function in imports(name, path, found):
            if name == "scorer" and in_function:
                continue  # the package docstring's example
            if layer(target) > layer(name):
                upward.append(f"{name} -> {target}")
            if in_function:
                in_functions.append(f"{name} -> {target}")
    assert not upward and not in_functions


#: The two that run a team's code besides the runner itself, and so use its machinery: the command line (whose
#: ``run`` is the runner) and the scoring step of a code competition.
RUNNERS_USERS = ("scorer.cli", "scorer.code_step")


def test_the_rest_of_the_scorer_imports_only_the_runners_names():
    """The runner ships alone (standard library only): the library takes its shared names and rules from
    ``scorer.runner.names`` and nothing else of it; only the runner's two users reach further."""
    found = modules()
    reaching = sorted(
        f"{name} -> {target}"
        for name, path in found.items()
        if not name.startswith("scorer.runner") and not name.startswith(RUNNERS_USERS)
        for target, _ in imports(name, path, found)
        if target.startswith("scorer.runner") and target not in ("scorer.runner.names", "scorer.runner")
    )  # the package itself: where its files are, which the bundle ships as one (outputs/runner_file.py)
    assert reaching == [], reaching
    used = {
        target
        for name, path in found.items()
        if name.startswith(RUNNERS_USERS)
        for target, _ in imports(name, path, found)
        if target.startswith("scorer.runner.")
    }
    assert "scorer.runner.main" in used and "scorer.runner.phases" in used  # the test sees their imports


def test_the_modules_import_graph_has_no_circle():
    found = modules()
    graph = {
        name: {t for t, _ in imports(name, path, found) if t in found and t != name}
        for name, path in found.items()
    }
    graph = {
        name: {t for t in targets if not (name.startswith(t + ".") or name == t)}
        for name, targets in graph.items()
    }
    state: dict[str, int] = {}

    def circle_from(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return trail + [node, nxt]
            if nxt not in state and (found_circle := circle_from(nxt, trail + [node])):
                return found_circle
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            assert circle_from(node, []) is None


def page_paths() -> set[str]:
    """Every path of the package that docs/architecture.md names."""
    return set(NAMED.findall(ARCHITECTURE.read_text(encoding="utf-8")))


def package_modules() -> set[str]:
    """Every module under ``scorer/`` (not the compiled copies in ``scorer/_compiled/``), by its path."""
    package = ROOT / "scorer"
    return {
        path.relative_to(ROOT).as_posix()
        for path in package.rglob("*.py")
        if not {"_compiled", "__pycache__"} & set(path.relative_to(package).parts)
    }


def test_the_architecture_page_names_every_module():
    found = package_modules()
    assert "scorer/runner/main.py" in found and "scorer/metric/engine/alignment.py" in found
    assert not sorted(found - page_paths())


def test_every_path_the_architecture_page_names_exists():
    named = page_paths()
    assert "scorer/metric/token_cache.py" in named
    assert not sorted(path for path in named if not (ROOT / path).exists())
