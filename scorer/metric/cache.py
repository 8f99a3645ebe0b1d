"""The scorer's cache directory: untrusted data, read defensively, written atomically.

``$SCORER_CACHE_DIR``, else ``$XDG_CACHE_HOME/dialogue-scorer``, else
``~/.cache/dialogue-scorer``. Nothing in it is trusted (docs/security.md):

* :func:`read_trusted_bytes` reads a file only when it is a regular file
  (``lstat``, no links, no FIFOs or devices), owned by this user and not
  writable by anyone else, and no larger than the reader's cap; it is opened
  without following links and without blocking, and checked again once open;
* :func:`seal` / :func:`unseal` wrap a payload with a magic tag and the
  SHA-256 of the reader's key and the payload, so a file written for another
  key (another thesaurus, another dictionary version, another format), a
  truncated file, or one edited in place is refused;
* any fault, of any kind, means "not cached": the caller rebuilds.

Writes go to a temporary file renamed into place, so two runs sharing the
directory each see a whole file, never half of one; a directory that cannot
be written only costs the next run the rebuild.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import tempfile
from hashlib import sha256
from pathlib import Path

ENV_CACHE = "SCORER_CACHE_DIR"
_MAGIC = b"dialogue-scorer cache\n"
_DIGEST = 32


def cache_dir() -> Path:
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dialogue-scorer"


def marshal_tag() -> str:
    """The interpreter and marshal format a cached ``marshal`` file is only valid for, e.g. ``py311m4``."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"


def _trusted(info: os.stat_result) -> bool:
    """A regular file of this user's that no one else may write."""
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid == os.geteuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def read_trusted_bytes(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the cache file ``path``, or None when it is missing, not a regular file of this user's
    that only this user may write, larger than ``max_bytes``, or unreadable for any reason."""
    try:
        before = os.lstat(path)
        if not _trusted(before) or before.st_size > max_bytes:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    try:
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not _trusted(after):
            return None
        chunks, size = [], 0
        while size <= max_bytes:  # the size it had when opened in one read, normally; more if it grew
            chunk = os.read(fd, min(max(1 << 20, after.st_size + 1 - size), max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return None if size > max_bytes else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def seal(key: str, payload: bytes) -> bytes:
    """``payload`` wrapped for :func:`unseal` with the same ``key``."""
    return _MAGIC + _digest(key, payload) + payload


def unseal(key: str, data: bytes | None) -> bytes | None:
    """The payload :func:`seal` wrapped with ``key``, or None when ``data`` is anything else."""
    if data is None or not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _DIGEST:
        return None
    digest, payload = data[len(_MAGIC) : len(_MAGIC) + _DIGEST], memoryview(data)[len(_MAGIC) + _DIGEST :]
    if _digest(key, payload) != digest:
        return None
    return bytes(payload)


def _digest(key: str, payload: bytes | memoryview) -> bytes:
    """SHA-256 of ``key``, a NUL and ``payload`` (hashed in place, not copied)."""
    digest = sha256(key.encode("utf-8") + b"\0")
    digest.update(payload)
    return digest.digest()


def read_sealed(path: Path, key: str, max_bytes: int) -> bytes | None:
    """The payload sealed with ``key`` in the cache file ``path``, or None (see the module docstring)."""
    return unseal(key, read_trusted_bytes(path, max_bytes))


def loads_marshal(payload: bytes | None) -> object | None:
    """``marshal.loads(payload)``, or None when it fails in any way (a declared size beyond memory
    included)."""
    if payload is None:
        return None
    try:
        return marshal.loads(payload)
    except (ValueError, EOFError, TypeError, MemoryError, RecursionError, OverflowError):
        return None


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
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
