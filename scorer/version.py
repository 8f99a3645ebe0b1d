"""The scorer's version (it appears in every signature), the engine it runs, and the dependencies this
Python lacks."""

import importlib.util
import re
from pathlib import Path

from scorer.metric.engine.accelerator import description

__version__ = "0.2.0"


def engine_description() -> str:
    """Which METEOR engine path is active (printed by ``scorer --version``)."""
    return description()


#: The scorer's dependencies, one requirement a line: the list ``pyproject.toml`` installs.
DEPENDENCIES = Path(__file__).with_name("dependencies.txt")


def missing_dependencies() -> list[str]:
    """The dependencies (:data:`DEPENDENCIES`, by name) this Python lacks: looked up, not imported, each by
    its import name (the distribution's, ``-`` made ``_``), else by its installed distribution."""
    try:
        lines = DEPENDENCIES.read_text(encoding="utf-8").splitlines()
    except OSError:  # not installed whole: nothing to check against
        return []
    names = [m.group(0) for line in lines if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line.strip()))]
    return [
        name
        for name in names
        if not _importable(IMPORT_NAMES.get(name, name.replace("-", "_"))) and not _installed(name)
    ]


#: The import name of a dependency whose name is neither it nor it with ``-`` made ``_`` (looked up
#: without ``importlib.metadata``, which costs every command about 7 ms to import). A dependency counts as
#: present when the module the code imports is found, as for every other dependency.
IMPORT_NAMES = {"pyyaml": "yaml"}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _installed(distribution: str) -> bool:
    """Whether ``distribution`` is installed, asked only of one whose import name is another (a run would
    otherwise import ``importlib.metadata``, 15-20 ms)."""
    import importlib.metadata

    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True
