"""The suite's own layout (docs/testing.md, "Rules the tests follow" and "Where a test goes"): what tests
share is in the module of helpers, and ``conftest.py`` holds pytest's fixtures and hooks alone; no module of
the suite imports ``conftest`` or a test module; every test file is named by a section of the contract
(``test_s<N>_<subject>.py``, in row N of the page's table) or listed on the page as a module's or the
project's, every file the page names is there, and every section of the contract has a file."""

import ast
import re
from pathlib import Path

from helpers import ROOT

TESTS = ROOT / "tests"
TESTING = ROOT / "docs" / "testing.md"
CONTRACT = ROOT / "docs" / "contract.md"
SECTION_FILE = re.compile(r"test_s(\d+)_[a-z0-9_]+\.py")


def suite_files() -> list[Path]:
    """The suite's test files."""
    return sorted(TESTS.glob("test_*.py"))


def where_a_test_goes() -> str:
    """docs/testing.md's section "Where a test goes", up to the next section."""
    text = TESTING.read_text(encoding="utf-8")
    start = text.index("## Where a test goes")
    return text[start : text.index("\n## ", start + 1)]


def is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target) == "pytest.fixture"


def test_conftest_holds_fixtures_and_hooks_alone(request):
    """Its statements are its docstring, imports, and functions that are fixtures or pytest hooks: every other
    helper, constant or class the tests share is in ``helpers.py``."""
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    hooks = request.config.hook
    others = []
    for k, node in enumerate(tree.body):
        if k == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(is_fixture(d) for d in node.decorator_list):
                continue
            if node.name.startswith("pytest_") and hasattr(hooks, node.name):
                continue
            others.append(f"line {node.lineno}: function {node.name}, neither a fixture nor a pytest hook")
        else:
            others.append(f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}")
    assert others == []


def test_no_module_of_the_suite_imports_conftest_or_a_test_module():
    """A test module takes what it shares from the helpers, never from ``conftest`` or another test module;
    the helper modules import no test module either."""
    found = []
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "conftest" or top.startswith("test_"):
                    found.append(f"{path.name}:{node.lineno} imports {name}")
    assert found == []


def test_every_test_file_is_named_by_its_section_or_listed():
    """A section file is in its section's row of the page's table; any other test file is listed on the page
    (the unit tests of a module, the project as a whole); every file the page names is there."""
    page = where_a_test_goes()
    rows = {}
    for line in page.splitlines():
        row = re.match(r"\| (\d+)\. ", line)
        if row:
            rows[int(row.group(1))] = set(re.findall(r"`(test_\w+\.py)`", line))
    named = set(re.findall(r"`(test_\w+\.py)`", page))
    present = {path.name for path in suite_files()}
    assert sorted(named - present) == []  # the page names no file that is not there
    unlisted, misplaced = [], []
    for name in sorted(present):
        section = SECTION_FILE.fullmatch(name)
        if section is None:
            if name not in named:
                unlisted.append(name)
        elif name not in rows.get(int(section.group(1)), set()):
            misplaced.append(name)
    assert (unlisted, misplaced) == ([], [])
    for number, files in rows.items():  # a row names the files of its own section alone
        assert [f for f in sorted(files) if not f.startswith(f"test_s{number}_")] == [], number


def test_every_section_of_the_contract_has_a_file():
    sections = {int(n) for n in re.findall(r"^## (\d+)\. ", CONTRACT.read_text(encoding="utf-8"), re.M)}
    covered = {int(m.group(1)) for path in suite_files() if (m := SECTION_FILE.fullmatch(path.name))}
    assert sections and sorted(sections - covered) == []
    assert sorted(covered - sections) == []  # no file names a section the contract does not have
