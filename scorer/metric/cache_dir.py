"""The cache directory and which of its files may be read (contract section 3): ``$SCORER_CACHE_DIR``, else
``$XDG_CACHE_HOME/dialogue-scorer``, else ``~/.cache/dialogue-scorer``, used only when it is this user's
own (or root's, an image's prebuilt caches): not a symbolic link, and not writable by group or others
unless its sticky bit is set. Otherwise every cache reads as empty and nothing is written (the command
line says so in one line). Temporary files that killed runs left there are removed once they are ten
minutes old. A file in it is read only when it is a regular file (no link, FIFO or device) of this user's
or root's that no one else may write (:func:`trusted`), opened without following links or blocking. The
files SQLite keeps beside a database (its ``-journal``, ``-wal`` and ``-shm``) are cache files too, read or
rolled back into it only when they are this user's own (:func:`side_files_own`); an SQLite cache lives in
a folder no one else may write (:func:`private_folder`), so no other user can place one there.
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import suppress
from pathlib import Path

ENV_CACHE = "SCORER_CACHE_DIR"


def cache_dir() -> Path:
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dialogue-scorer"


#: Temporary files of killed runs older than this are removed by a later run (contract section 3).
STALE_SECONDS = 600


def cache_dir_problem(folder: Path | None = None) -> str | None:
    """Why the cache directory cannot be used, or None when it can (contract section 3): it must be a
    folder, not a symbolic link, of this user's (or root's: trusted like the installed code), and not
    writable by group or others unless its sticky bit is set. A missing one is created (mode 0700).
    Temporary files a killed run left there more than ten minutes ago are removed on the way."""
    folder = cache_dir() if folder is None else folder
    try:
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(folder)
    except (OSError, ValueError) as exc:
        return f"it cannot be made or read ({getattr(exc, 'strerror', None) or exc})"
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(mode):
        return "it is not a folder"
    if info.st_uid not in (os.geteuid(), 0):
        return "it belongs to another user"
    if mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
        return "others may write to it and it has no sticky bit"
    if folder not in _swept:  # once a process
        _swept.add(folder)
        _remove_stale_temporaries(folder)
    return None


_swept: set[Path] = set()


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


def trusted(info: os.stat_result) -> bool:
    """A regular file of this user's, or root's (an image's prebuilt caches), that no one else may write."""
    mode = info.st_mode
    return (
        stat.S_ISREG(mode) and info.st_uid in (os.geteuid(), 0) and not mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


#: The files SQLite reads beside a database: its rollback journal, write-ahead log and shared-memory index.
SIDE_FILES = ("-journal", "-wal", "-shm")


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


def private_folder(folder: Path) -> bool:
    """Whether ``folder`` (made, mode 0700, when missing) is a folder, not a symbolic link, of this user's or
    root's that no one else may write, sticky bit or not: no other user can place a file in it (an SQLite
    side file beside a database there, say)."""
    try:
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            with suppress(FileExistsError):  # made by another run meanwhile: checked below like any
                folder.mkdir(mode=0o700)
            info = os.lstat(folder)
    except (OSError, ValueError):
        return False
    mode = info.st_mode
    return (
        stat.S_ISDIR(mode) and info.st_uid in (os.geteuid(), 0) and not mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def read_trusted_bytes(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the cache file ``path``, or None when it is missing, not a regular file of this user's
    that only this user may write, larger than ``max_bytes`` (or growing), or unreadable for any reason."""
    try:
        before = os.lstat(path)
        if not trusted(before) or before.st_size > max_bytes:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            after = os.fstat(fd)
            if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not trusted(after):
                return None
            data = fh.read(after.st_size + 1)  # one byte more than it had: a file that grew is refused
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    return data if len(data) <= min(after.st_size, max_bytes) else None
