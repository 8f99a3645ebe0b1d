"""The one list of compiled modules, and the stamp of what each was compiled from. ``setup.py`` reads this
file by itself (the package cannot be imported at build time); ``accelerator`` checks the stamps."""

import hashlib
from pathlib import Path

#: name -> the Python source in this folder it is compiled from (a ``.pxd`` beside it adds C types).
COMPILED = {
    "links": "links.py",
    "counting": "counting.py",
    "alignment": "alignment.py",
    "id_counts": "id_counts.py",
    "formula": "formula.py",
}


def source_digest(folder: Path, source: str) -> str:
    """The SHA-256 of ``source`` in ``folder`` followed by its ``.pxd``, when there is one."""
    digest = hashlib.sha256((folder / source).read_bytes())
    pxd = (folder / source).with_suffix(".pxd")
    if pxd.exists():
        digest.update(pxd.read_bytes())
    return digest.hexdigest()
