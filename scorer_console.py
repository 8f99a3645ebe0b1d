"""The ``scorer`` console script (``[project.scripts]`` of ``pyproject.toml``): SIGINT and SIGTERM are held
from this module's first lines, while the package is imported (a while), and handed to the command line's
process (:func:`scorer.cli.run`), which stops on the first with 130 or 143 (contract section 3).

It stands beside the package, not in it: Python imports a package before any of its modules, so a module of
the package could hold the signals only once the package is imported; and the package holds them itself for
``python -m scorer`` alone, never for a program that imports the library.
"""

from __future__ import annotations

import signal

#: The signals received while the package is imported, in order.
HELD: list[int] = []
for _signal in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signal, lambda signum, frame: HELD.append(signum))

from scorer.cli import run as _run  # noqa: E402  (after the signals are held)


def run() -> None:
    """The ``scorer`` command: the command line's process, given the signals held so far."""
    _run(held=HELD)
