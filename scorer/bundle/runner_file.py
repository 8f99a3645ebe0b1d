"""The runner as one file (contract section 10): the package ``scorer/runner/`` as a zip archive that Python
runs as a script, which a code competition's bundle ships as ``ingestion_program/runner.py`` and
``starting_kit/runner.py``. CPython runs any zip archive given as its script by the archive's
``__main__.py`` (whatever the file's name), so ``python3 runner.py --data ... --code ...`` runs the
runner's :func:`~scorer.runner.main.main` on Python 3.8 or newer with the standard library alone.

The archive is made the same way every time, so the same sources give the same bytes: its entries stored
(not compressed: the modules' text stays readable in the file), in the order of their names, each dated
1980-01-01 00:00 with the mode 0644, after a first line for a shell (``#!``) and a comment, which Python
and zip readers skip.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from scorer import runner

#: The lines before the archive: how to run the file and how to read what it holds.
HEADER = (
    b"#!/usr/bin/env python3\n"
    b"# The scorer's runner of a team's code (python3 runner.py --help): a zip archive of its modules,\n"
    b"# which Python runs as a script. List them with: python3 -m zipfile -l runner.py\n"
)
#: The archive's ``__main__.py``: the runner's command line, ``runner/__main__.py`` (which holds the signals
#: from its first line, then runs ``main``).
MAIN = b'"""The runner\'s command line: runner/__main__.py."""\n\nimport runner.__main__  # noqa: F401\n'
#: The date of every entry (the earliest a zip archive holds).
DATE = (1980, 1, 1, 0, 0, 0)


def runner_file(package: Path | None = None) -> bytes:
    """The runner's one file: ``__main__.py``, then every module of ``package`` (default: the runner's own,
    ``scorer/runner/``) as ``runner/<name>.py``, in a zip archive after :data:`HEADER`."""
    folder = Path(runner.__file__).parent if package is None else package
    entries = [("__main__.py", MAIN)]
    entries += [(f"runner/{path.name}", path.read_bytes()) for path in sorted(folder.glob("*.py"))]
    buffer = io.BytesIO()
    buffer.write(HEADER)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in sorted(entries):
            entry = zipfile.ZipInfo(name, DATE)
            entry.create_system = 3  # Unix, whatever machine builds it: the mode below is a Unix mode
            entry.external_attr = 0o100644 << 16
            archive.writestr(entry, data)
    return buffer.getvalue()
