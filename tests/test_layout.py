"""The package's layout (docs/architecture.md): imports only go down the pipeline, with no circles, and the
page names every module of the package, and no module that is not there. An import is an ``import``
statement or a module reached by its name: ``importlib.import_module``, ``__import__`` or ``sys.modules``."""

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
#: Layers from the bottom up, the floors of the page; a module may import from its own layer and those below.
LAYERS = [
    ("scorer.safe_text", "scorer.defaults", "scorer.stop", "scorer.runner"),
    ("scorer.errors", "scorer.progress", "scorer.workers"),
    ("scorer.metric.engine", "scorer._compiled"),
    ("scorer.metric",),
    ("scorer.version",),
    ("scorer.inputs",),
    ("scorer.scoring",),
    ("scorer.outputs",),
    ("scorer.bundle",),
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


#: The compiled copies of the engine's modules (``scorer/_compiled/``, built from them): looked for by name
#: when the engine is chosen, inside a function, since they may be missing.
COMPILED = "scorer._compiled"
#: What the command dispatcher (``scorer.cli.handler``, and ``run``'s runner) imports when a command is run:
#: the one place of the package that imports inside a function (docs/performance.md).
DISPATCHED = ("scorer.cli", "scorer.runner.main")


def by_name(node: ast.AST) -> str | None:
    """The module of the package that ``node`` reaches by its name, if it does: ``importlib.import_module(
    "scorer.x")``, ``__import__("scorer.x")``, ``sys.modules.get("scorer.x")``, ``sys.modules["scorer.x"]``
    (of an f-string, ``f"scorer.x.{name}"``, the part before the first value: ``scorer.x``)."""
    if isinstance(node, ast.Call) and node.args:
        called = ast.unparse(node.func)
        if not (called in ("importlib.import_module", "import_module", "__import__") or (
            called.startswith("sys.modules.") and called.count(".") == 2
        )):  # fmt: skip
            return None
        argument = node.args[0]
    elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules":
        argument = node.slice
    else:
        return None
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        text = argument.value
    elif isinstance(argument, ast.JoinedStr) and argument.values:
        first = argument.values[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or len(argument.values) < 2:
            return None
        text = first.value.rpartition(".")[0]
    else:
        return None
    return text if text == "scorer" or text.startswith("scorer.") else None


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, bool]]:
    """(imported module of the package, whether the import is inside a function)."""
    return imports_in(name, path.read_text(encoding="utf-8"), path.name == "__init__.py", known)


def imports_in(name: str, source: str, is_package: bool, known: dict[str, Path]) -> list[tuple[str, bool]]:
    """(imported module of the package, whether the import is inside a function) of module ``name``'s
    ``source``: its import statements and the modules it reaches by name (:func:`by_name`)."""
    tree = ast.parse(source)
    package = name if is_package else name.rsplit(".", 1)[0]
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            reached = by_name(child)
            if reached is not None:
                out.append((reached, inner))
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
            if name == "scorer.cli" and in_function and target.startswith(DISPATCHED):
                continue  # the command dispatcher: each command imports its own handlers' module
            if layer(target) > layer(name):
                upward.append(f"{name} -> {target}")
            if in_function and not target.startswith(COMPILED):
                in_functions.append(f"{name} -> {target}")
    assert not upward and not in_functions


def test_a_module_reached_by_its_name_is_an_import():
    """``import_module``, ``__import__`` and ``sys.modules`` name the module they reach: the rules above hold
    for it as for an import statement."""
    source = (
        "import importlib, sys\n"
        "STOP = sys.modules.get('scorer.stop')\n"
        "API = sys.modules['scorer.api']\n"
        "def f(name):\n"
        "    importlib.import_module('scorer.cli')\n"
        "    __import__('scorer.outputs.report')\n"
        "    return importlib.import_module(f'scorer.metric.{name}'), sys.modules.get('json')\n"
    )
    assert imports_in("scorer.runner.x", source, False, modules()) == [
        ("scorer.stop", False),
        ("scorer.api", False),
        ("scorer.cli", True),
        ("scorer.outputs.report", True),
        ("scorer.metric", True),
    ]
    found = modules()
    accelerator = imports(
        "scorer.metric.engine.accelerator", found["scorer.metric.engine.accelerator"], found
    )
    assert (COMPILED, True) in accelerator  # the compiled copies, looked for by name


def test_the_runner_imports_nothing_of_the_rest_of_the_package():
    """The runner ships alone as one file, without the scorer: none of its modules imports or reaches by name
    a module of the package outside ``scorer/runner/``."""
    found = modules()
    reaching = sorted(
        f"{name} -> {target}"
        for name, path in found.items()
        if name.startswith("scorer.runner")
        for target, _ in imports(name, path, found)
        if not target.startswith("scorer.runner")
    )
    assert reaching == [], reaching


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
    )  # the package itself: where its files are, which the bundle ships as one (bundle/runner_file.py)
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


def page_floors() -> list[set[str]]:
    """The floors of the page's "The floors", from the bottom up: each the modules it names."""
    text = ARCHITECTURE.read_text(encoding="utf-8").split("## The floors", 1)[1].split("\n## ", 1)[0]

    def module(path: str) -> str:
        return path.removesuffix("/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")

    floors = {
        int(n): {module(p) for p in paths.split()}
        for n, paths in re.findall(r"^ {4,}(\d+) +(scorer/.+)$", text, re.M)
    }
    return [floors[n] for n in sorted(floors)]


def test_the_pages_floors_are_the_layers_imports_are_held_to():
    assert page_floors() == [set(level) for level in LAYERS]


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
