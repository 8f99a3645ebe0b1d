"""Mutation testing of the pure engine: does the test suite notice when the engine's code is changed?

Each mutant changes one site of one engine module (an operator, a comparison,
a constant one up or one down, a boolean connective, a ``not``, or deletes an
assignment or a call statement), is written into a copy of the
project, and the engine's tests run against it with the compiled core off.
A mutant the tests fail on is *killed*; one they pass on *survived*.

    python scripts/mutation.py                  # every site of the four modules of the definition
    python scripts/mutation.py --list           # the sites only
    python scripts/mutation.py --sample 8       # every 8th site: a study of about 15 minutes
    python scripts/mutation.py --only alignment.py:227:2   # one site (module:line:index)
    python scripts/mutation.py --deep run.log   # the survivors listed in a run's log, against many more cases

The survivors are printed with their site and change; docs/testing.md records
the score and why each survivor is equivalent (no input can tell it apart).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("links.py", "counting.py", "alignment.py", "formula.py")  # in scorer/metric/engine
ENGINE = Path("scorer", "metric", "engine")
#: Seconds after which a run counts as hanging (the unmutated tests take about 12 s).
TIMEOUT = 90
TESTS = (
    "tests/test_s4_meteor.py",
    "tests/test_s4_rule_1_counts.py",
    "tests/test_s4_alignment.py",
    "tests/test_s1_integral.py",
    "tests/test_formula.py",
)

_BINARY = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Pow: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.BitXor: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
_COMPARE = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    index: int  # the how-many-th site on that line
    change: str

    @property
    def site(self) -> str:
        return f"{self.module}:{self.line}:{self.index}"


class _Sites(ast.NodeTransformer):
    """Walks a module; finds the sites, or applies the change at site number ``target``."""

    def __init__(self, target: int | None = None):
        self.target = target
        self.found: list[tuple[int, str]] = []

    def _site(self, node: ast.AST, change: str) -> bool:
        """Record a site; True when it is the one to mutate."""
        self.found.append((getattr(node, "lineno", 0), change))
        return len(self.found) - 1 == self.target

    def _swap_operator(self, node: ast.BinOp | ast.AugAssign, suffix: str) -> ast.AST:
        """An arithmetic operator and its partner (``a + b``, or ``a += b`` with ``suffix`` "=")."""
        self.generic_visit(node)
        new = _BINARY.get(type(node.op))
        if new and self._site(node, f"{type(node.op).__name__}{suffix} -> {new.__name__}{suffix}"):
            node.op = new()
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        return self._swap_operator(node, "")

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        return self._deletable(self._swap_operator(node, "="), "augmented assignment")

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        return self._deletable(self.generic_visit(node), "assignment")

    def _deletable(self, node: ast.AST, kind: str) -> ast.AST:
        """A statement that can be deleted (replaced by ``pass``)."""
        if self._site(node, f"delete {kind}"):
            return ast.copy_location(ast.Pass(), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for k, op in enumerate(node.ops):
            new = _COMPARE.get(type(op))
            if new and self._site(node, f"{type(op).__name__} -> {new.__name__}"):
                node.ops[k] = new()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        if self._site(node, f"{type(node.op).__name__} -> {new.__name__}"):
            node.op = new()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and self._site(node, "not x -> x"):
            return node.operand
        if isinstance(node.op, ast.USub) and self._site(node, "-x -> x"):
            return node.operand
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, bool):
            if self._site(node, f"{value} -> {not value}"):
                return ast.copy_location(ast.Constant(not value), node)
        elif isinstance(value, (int, float)):  # both ways
            if self._site(node, f"{value!r} -> {value + 1!r}"):
                return ast.copy_location(ast.Constant(value + 1), node)
            if self._site(node, f"{value!r} -> {value - 1!r}"):
                return ast.copy_location(ast.Constant(value - 1), node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # a docstring
        node = self.generic_visit(node)
        return self._deletable(node, "call") if isinstance(node.value, ast.Call) else node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node  # the annotation is not code

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node  # annotations of parameters

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        # the return annotation (node.returns) is left alone
        node.args = self.visit(node.args)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.body = [self.visit(s) for s in node.body]
        return node


def _tree(module: str) -> ast.Module:
    return ast.parse((ROOT / ENGINE / module).read_text(encoding="utf-8"))


def mutants(module: str) -> list[Mutant]:
    walker = _Sites()
    walker.visit(_tree(module))
    per_line: dict[int, int] = {}
    found = []
    for line, change in walker.found:
        found.append(Mutant(module, line, per_line.get(line, 0), change))
        per_line[line] = per_line.get(line, 0) + 1
    return found


def mutated_source(mutant: Mutant, number: int) -> str:
    tree = _tree(mutant.module)
    walker = _Sites(target=number)
    tree = ast.fix_missing_locations(walker.visit(tree))
    return ast.unparse(tree)


def _copy_project(into: Path) -> None:
    shutil.copytree(
        ROOT / "scorer", into / "scorer", ignore=shutil.ignore_patterns("_compiled", "*.so", "__pycache__")
    )
    shutil.copytree(ROOT / "tests", into / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("reference_data", "submissions_examples"):
        shutil.copytree(ROOT / folder, into / folder)
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")


def _tests_fail(workdir: Path) -> bool:
    """Run the engine's tests in ``workdir`` (the compiled core off); True when they fail or hang."""
    env = dict(
        os.environ,
        SCORER_PURE_PYTHON="1",
        PYTHONPATH=str(workdir),
        SCORER_CACHE_DIR=str(workdir / "cache"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                "--hypothesis-seed=0",
                "-o",
                "addopts=",
                *TESTS,
            ],
            cwd=workdir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return True  # a mutant that makes a test hang is noticed
    return done.returncode != 0


def _deep_check_fails(workdir: Path) -> bool:
    """scripts/mutation_deep.py in ``workdir``: True when it finds a difference from the brute force."""
    env = dict(os.environ, SCORER_PURE_PYTHON="1", PYTHONPATH=str(workdir), PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "mutation_deep.py"), str(DEEP_CASES), DEEP_MODE],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT * 4,
        )
    except subprocess.TimeoutExpired:
        return True
    if done.returncode:
        print(f"    {done.stdout.strip()[:300]}", flush=True)
    return done.returncode != 0


#: How many random cases the deep check compares, and how they are drawn ("dense": two or three words).
DEEP_CASES = 6000
DEEP_MODE = os.environ.get("MUTATION_DEEP_MODE", "")


def run(mutant: Mutant, number: int, workdir: Path, deep: bool = False) -> tuple[Mutant, bool, float]:
    """(mutant, killed, seconds)."""
    target = workdir / ENGINE / mutant.module
    original = (ROOT / ENGINE / mutant.module).read_text(encoding="utf-8")
    target.write_text(mutated_source(mutant, number), encoding="utf-8")
    started = time.monotonic()
    try:
        killed = _deep_check_fails(workdir) if deep else _tests_fail(workdir)
    finally:
        target.write_text(original, encoding="utf-8")
    return mutant, killed, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the sites and stop")
    parser.add_argument("--only", action="append", default=[], help="module:line:index of a site to run")
    parser.add_argument("--deep", metavar="LOG", help="run the deep check on the survivors a run's log lists")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--sample", type=int, default=1, metavar="K", help="every K-th site only (a quick study)"
    )
    args = parser.parse_args()
    from importlib.util import find_spec

    missing = [name for name in ("pytest", "hypothesis", "pymorphy3", "numpy") if find_spec(name) is None]
    if missing:
        print(
            f"error: this Python ({sys.executable}) lacks what the tests need "
            f"(missing: {', '.join(missing)}); run ./run_tests.sh once to set up .venv, then "
            ".venv/bin/python scripts/mutation.py",
            file=sys.stderr,
        )
        return 2
    everything = [(m, n) for module in MODULES for n, m in enumerate(mutants(module))][:: args.sample]
    if args.deep:
        args.only += [
            line.split()[1]
            for line in Path(args.deep).read_text(encoding="utf-8").splitlines()
            if line.startswith("survived: ")
        ]
    if args.only:
        everything = [(m, n) for m, n in everything if m.site in args.only]
    if args.list:
        for m, _ in everything:
            print(f"{m.site:<22} {m.change}")
        print(f"{len(everything)} sites")
        return 0
    workdirs = []
    for _ in range(args.jobs):
        workdir = Path(tempfile.mkdtemp(prefix="mutation-"))
        _copy_project(workdir)
        workdirs.append(workdir)
    free = list(workdirs)
    if _tests_fail(workdirs[0]):
        print("the tests fail on the unmutated engine: nothing to measure", file=sys.stderr)
        return 1
    survivors = []

    def one(item: tuple[Mutant, int]) -> tuple[Mutant, bool, float]:
        workdir = free.pop()
        try:
            return run(*item, workdir, deep=bool(args.deep))
        finally:
            free.append(workdir)

    killed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for k, (mutant, dead, seconds) in enumerate(pool.map(one, everything), 1):
            killed += dead
            if not dead:
                survivors.append(mutant)
            print(
                f"[{k}/{len(everything)}] {mutant.site:<22} {'killed  ' if dead else 'SURVIVED'} "
                f"{seconds:5.1f} s  {mutant.change}",
                flush=True,
            )
    for workdir in workdirs:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\n{killed} of {len(everything)} mutants killed ({100 * killed / max(1, len(everything)):.1f}%)")
    for mutant in survivors:
        print(f"survived: {mutant.site} {mutant.change}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
