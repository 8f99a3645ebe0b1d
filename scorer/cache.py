"""The scorer's cache directory and best-effort atomic writes into it.

``$SCORER_CACHE_DIR``, else ``$XDG_CACHE_HOME/dialogue-scorer``, else
``~/.cache/dialogue-scorer``. Nothing in it is trusted: a file that cannot be
read or does not have the expected shape is ignored and rebuilt. Writes go to
a temporary file renamed into place, so two runs sharing the directory each
see a whole file, never half of one; a directory that cannot be written only
costs the next run the rebuild.
"""
from __future__ import annotations

import marshal
import os
import sys
import tempfile
from pathlib import Path

ENV_CACHE = "SCORER_CACHE_DIR"


def cache_dir() -> Path:
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dialogue-scorer"


def marshal_tag() -> str:
    """The interpreter and marshal format a cached ``marshal`` file is only valid for, e.g. ``py311m4``."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"


def write_best_effort(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; False (and nothing left behind) when that fails."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
