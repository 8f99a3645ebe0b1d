"""The cache directory and every file in it (contract section 3; docs/security.md, "The cache directory").

The directory (:func:`cache_dir`) is used only when it is this user's own or root's, not a link, and not
writable by others unless sticky (:func:`cache_dir_problem`); otherwise every cache reads as empty and
nothing is written. Every file in it is named, opened and checked here, and none is trusted: it is read
only when it is a regular file of this user's or root's that no one else may write (:func:`trusted`), and
any fault means "not cached" (the caller rebuilds).

- A :class:`Store`, one per kind of marshal cache, names each file by its kind, a digest of its key, its
  layout version and the interpreter's marshal tag; reads it without following links or blocking, within
  its size cap; seals it with the SHA-256 of its name and payload (a file written for another key, layout
  or interpreter, cut short or edited in place is refused); refuses a value its cache's shape check does
  not accept or fails on; and writes a temporary file renamed into place, so that runs sharing the
  directory each see a whole file.
- An SQLite cache (:func:`connect`) lives in a folder no one else may write (:func:`private_folder`), and
  the files SQLite keeps beside it are read only when they are this user's own (:func:`side_files_own`);
  otherwise it is opened read-only and ``immutable``.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from hashlib import sha256
from itertools import chain
from pathlib import Path
from typing import Any

ENV_CACHE = "SCORER_CACHE_DIR"
#: Temporary files of killed runs older than this are removed by a later run (contract section 3).
STALE_SECONDS = 600
#: The files SQLite reads beside a database: its rollback journal, write-ahead log and shared-memory index.
SIDE_FILES = ("-journal", "-wal", "-shm")
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_MAGIC = b"dialogue-scorer cache\n"
#: The interpreter and marshal format a cached ``marshal`` file is only valid for, e.g. ``py311m4``.
_MARSHAL_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"


def cache_dir() -> Path:
    """``$SCORER_CACHE_DIR``, else ``$XDG_CACHE_HOME/dialogue-scorer``, else ``~/.cache/dialogue-scorer``."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dialogue-scorer"


def cache_dir_problem(folder: Path | None = None) -> str | None:
    """Why the cache directory cannot be used, or None when it can (contract section 3): it must be a
    folder, not a symbolic link, of this user's (or root's: trusted like the installed code), and not
    writable by group or others unless its sticky bit is set. A missing one is created (mode 0700).
    Temporary files a killed run left there more than ten minutes ago are removed on the way."""
    folder = cache_dir() if folder is None else folder
    try:
        info = _made(folder)
    except (OSError, ValueError) as exc:
        return f"it cannot be made or read ({getattr(exc, 'strerror', None) or exc})"
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(mode):
        return "it is not a folder"
    if info.st_uid not in (os.geteuid(), 0):
        return "it belongs to another user"
    if mode & _OTHERS_WRITE and not mode & stat.S_ISVTX:
        return "others may write to it and it has no sticky bit"
    if folder not in _swept:  # once a process
        _swept.add(folder)
        _remove_stale_temporaries(folder)
    return None


_swept: set[Path] = set()


def _made(folder: Path) -> os.stat_result:
    """``lstat`` of ``folder``, made first (mode 0700) when missing (by this run or another meanwhile)."""
    try:
        return os.lstat(folder)
    except FileNotFoundError:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return os.lstat(folder)


def _remove_stale_temporaries(folder: Path) -> None:
    """Remove this user's temporary cache files (``.*.tmp``) older than :data:`STALE_SECONDS`."""
    limit = time.time() - STALE_SECONDS
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    with suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        if (
                            stat.S_ISREG(info.st_mode)
                            and info.st_uid == os.geteuid()
                            and info.st_mtime < limit
                        ):
                            os.unlink(entry.path)
    except OSError:
        pass


def _ours(info: os.stat_result) -> bool:
    """Whether this user or root owns it and no one else may write it."""
    return info.st_uid in (os.geteuid(), 0) and not info.st_mode & _OTHERS_WRITE


def trusted(info: os.stat_result) -> bool:
    """A regular file of this user's, or root's (an image's prebuilt caches), that no one else may write."""
    return stat.S_ISREG(info.st_mode) and _ours(info)


def private_folder(folder: Path) -> bool:
    """Whether ``folder`` (made, mode 0700, when missing) is a folder, not a symbolic link, of this user's or
    root's that no one else may write, sticky bit or not: no other user can place a file in it (an SQLite
    side file beside a database there, say)."""
    try:
        info = _made(folder)
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(info.st_mode) and _ours(info)


def side_files_own(path: Path) -> bool:
    """Whether each file SQLite would read beside the database ``path`` (:data:`SIDE_FILES`) is missing or
    this user's own: a regular file of this user's (not root's, when this user is another) that no one else
    may write. SQLite rolls a hot journal back into the database, and takes pages from a write-ahead log,
    when it opens it: with any other side file the database is to be read alone (``immutable``) or not at
    all, so another user can make a run slower, never its numbers different (contract section 3)."""
    for suffix in SIDE_FILES:
        try:
            info = os.lstat(f"{path}{suffix}")
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            return False
        if not trusted(info) or info.st_uid != os.geteuid():
            return False
    return True


def read_trusted_bytes(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the cache file ``path``, or None when it is missing, not :func:`trusted`, larger than
    ``max_bytes`` (or growing), or unreadable for any reason."""
    try:
        before = os.lstat(path)
        if not trusted(before) or before.st_size > max_bytes:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            after = os.fstat(fd)
            if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not trusted(after):
                return None
            data = fh.read(after.st_size + 1)  # one byte more than it had: a file that grew is refused
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    return data if len(data) <= min(after.st_size, max_bytes) else None


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


def sets_of_strings(table: object) -> bool:
    """Whether ``table`` is a dict of strings to frozensets of strings (types checked at C speed)."""
    return (
        type(table) is dict
        and set(map(type, table)) <= {str}
        and set(map(type, table.values())) <= {frozenset}
        and set(map(type, chain.from_iterable(table.values()))) <= {str}
    )


def file_name(kind: str, version: int, key: str) -> str:
    """``<kind>-<digest of key>.v<version>``: the name of a cache's file (or folder) for ``key``, so that no
    key can name a path."""
    return f"{kind}-{sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}.v{version}"


class Store:
    """One kind of marshal cache file (``kind``), whose values have layout ``version`` and pass
    ``well_formed``."""

    def __init__(self, kind: str, version: int, max_bytes: int, well_formed: Callable[[Any], bool]):
        self.kind, self.version, self.max_bytes, self.well_formed = kind, version, max_bytes, well_formed

    def path(self, key: str) -> Path:
        """The file of ``key`` in the cache directory."""
        return cache_dir() / f"{file_name(self.kind, self.version, key)}.{_MARSHAL_TAG}.marshal"

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
        """Write ``value`` to ``path`` atomically (best effort: False, and nothing left behind, when it could
        not be written or the cache directory is not usable)."""
        if cache_dir_problem(path.parent) is not None:
            return False
        data, tmp = seal(path.name, marshal.dumps(value)), None
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


def connect(path: Path, schema: str) -> tuple[sqlite3.Connection, bool] | None:
    """A connection to the SQLite cache ``path`` (``<folder of its own>/<file>`` in the cache directory) and
    whether it may be written to (then ``schema`` is run on it), or None when it may not be opened (see the
    module docstring). A missing database is made, mode 0600 (which SQLite gives its journals too), when
    its side files are this user's own."""
    folder = path.parent
    if cache_dir_problem(folder.parent) is not None or not private_folder(folder):
        return None
    info = _lstat(path)
    if info is None and side_files_own(path):
        with suppress(OSError, ValueError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | _CLOEXEC, 0o600))
        info = _lstat(path)
    if info is None or not trusted(info):
        return None
    # Written to only when it is this user's and so is every side file; otherwise read alone, immutable.
    writable = info.st_uid == os.geteuid() and side_files_own(path)
    uri = path.resolve().as_uri() + ("?mode=rw" if writable else "?mode=ro&immutable=1")
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
        connection.execute("PRAGMA trusted_schema = OFF")
        if writable:
            connection.execute(schema)
    except sqlite3.Error:
        return None
    return connection, writable


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None
