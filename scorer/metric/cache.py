"""The one store of every persistent cache: untrusted files of marshal values, read defensively, written
atomically, in the cache directory (:mod:`scorer.metric.cache_dir`, only when it is usable). Nothing in
them is trusted (docs/security.md). A :class:`Store` (one per kind of cache) names each file by its kind,
a digest of its key, its layout version and the interpreter's marshal tag; it reads a file only as
:func:`~scorer.metric.cache_dir.read_trusted_bytes` allows, within its size cap; it seals each file with
the SHA-256 of its name and payload (a file written for another key, layout or interpreter, cut short or
edited in place is refused) and refuses a value its cache's shape check does not accept or fails on; it
writes a temporary file renamed into place, so two runs sharing the directory each see a whole file. Any
fault means "not cached": the caller rebuilds.
"""

from __future__ import annotations

import marshal
import os
import sys
import tempfile
from collections.abc import Callable
from contextlib import suppress
from hashlib import sha256
from itertools import chain
from pathlib import Path
from typing import Any

from .cache_dir import cache_dir, cache_dir_problem, read_trusted_bytes

_MAGIC = b"dialogue-scorer cache\n"


def marshal_tag() -> str:
    """The interpreter and marshal format a cached ``marshal`` file is only valid for, e.g. ``py311m4``."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"


def _digest(key: str, payload: bytes | memoryview) -> bytes:
    """SHA-256 of ``key``, a NUL and ``payload`` (hashed in place, not copied)."""
    digest = sha256(key.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(payload)
    return digest.digest()


def seal(key: str, payload: bytes) -> bytes:
    """``payload`` wrapped for :func:`unseal` with the same ``key``."""
    return _MAGIC + _digest(key, payload) + payload


def unseal(key: str, data: bytes | None) -> bytes | None:
    """The payload :func:`seal` wrapped with ``key``, or None when ``data`` is anything else."""
    start = len(_MAGIC) + 32
    if (
        data is None
        or not data.startswith(_MAGIC)
        or _digest(key, memoryview(data)[start:]) != data[start - 32 : start]
    ):
        return None
    return data[start:]


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
    except (OSError, ValueError):
        with suppress(OSError, TypeError):  # TypeError: no temporary file was made
            os.unlink(tmp)  # type: ignore[arg-type]
        return False


def sets_of_strings(table: object) -> bool:
    """Whether ``table`` is a dict of strings to frozensets of strings (types checked at C speed)."""
    return (
        type(table) is dict
        and set(map(type, table)) <= {str}
        and set(map(type, table.values())) <= {frozenset}
        and set(map(type, chain.from_iterable(table.values()))) <= {str}
    )


class Store:
    """One kind of cache file (``kind``), whose values have layout ``version`` and pass ``well_formed``."""

    def __init__(self, kind: str, version: int, max_bytes: int, well_formed: Callable[[Any], bool]):
        self.kind, self.version, self.max_bytes, self.well_formed = kind, version, max_bytes, well_formed

    def path(self, key: str) -> Path:
        """The file of ``key`` in the cache directory."""
        digest = sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return cache_dir() / f"{self.kind}-{digest}.v{self.version}.{marshal_tag()}.marshal"

    def load(self, path: Path, max_bytes: int | None = None) -> Any:
        """The value stored at ``path``, or None (see the module docstring); None too when the cache
        directory is not usable (:func:`cache_dir_problem`)."""
        if cache_dir_problem(path.parent) is not None:
            return None
        payload = unseal(path.name, read_trusted_bytes(path, max_bytes or self.max_bytes))
        try:
            value = None if payload is None else marshal.loads(payload)
            return value if value is not None and self.well_formed(value) else None
        except Exception:  # noqa: BLE001  a file that is not marshal, or a value the shape check fails on
            return None

    def save(self, path: Path, value: Any) -> bool:
        """Write ``value`` to ``path`` (best effort: False when it could not be written, or the cache
        directory is not usable)."""
        if cache_dir_problem(path.parent) is not None:
            return False
        return write_best_effort(path, seal(path.name, marshal.dumps(value)))
