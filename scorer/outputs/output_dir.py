"""The output directory: checked before any work, locked while a run writes, filled in one step.

* :func:`prepare` makes the directory (parents too) and checks it can be
  written; a path that is a file, or cannot be made or written, is a usage
  error naming it (exit 2), found before anything is scored.
* :func:`locked` holds an exclusive ``flock`` on a lock file the run creates
  (mode 0600, in this user's own lock folder; never the directory itself,
  which any user who can read it could lock), so two runs given the same
  directory never mix their files: the second waits.
* :func:`publish` writes every file to a temporary name, then, with SIGINT
  and SIGTERM held back, removes the commit marker (``scores.json``,
  ``leaderboard.json`` or ``correlation.json``), renames the other files into
  place, removes every other output a run can write, and renames the marker
  into place last. Whenever the marker is there, it agrees with every file
  beside it, even after a SIGKILL; temporaries of killed runs are removed
  by the next run, under the lock.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from scorer.errors import UsageError
from scorer.stop import STOP

_PROBE = ".write-check."


def prepare(output: str | os.PathLike[str]) -> Path:
    """``output`` as a writable directory (created if missing); raises UsageError naming it."""
    path = Path(output)
    if path.exists() and not path.is_dir():
        raise UsageError(f"output {path} is a file, not a directory; give a directory for the outputs")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"output directory {path} cannot be created: {exc.strerror}") from None
    try:  # a real write: permissions, read-only mounts and full disks all show here
        fd, probe = tempfile.mkstemp(dir=path, prefix=_PROBE)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(
            f"output directory {path} cannot be written ({exc.strerror}); make it writable or give another"
        ) from None
    return path


#: The lock file of an output directory when the user's lock folder cannot be used (contract section 3).
LOCK_FILE = ".scorer.lock"


def _lock_folder() -> Path | None:
    """This user's own folder of lock files (``$XDG_RUNTIME_DIR/dialogue-scorer``, else
    ``dialogue-scorer-<uid>`` in the temporary folder), mode 0700, made when missing; None when it is a
    link, another user's, or open to others."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = (
        Path(runtime) / "dialogue-scorer"
        if runtime
        else Path(tempfile.gettempdir()) / f"dialogue-scorer-{os.geteuid()}"
    )
    try:
        with suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        info = os.lstat(folder)
    except (OSError, ValueError):
        return None
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077
    return folder if mine else None


def _lock_file(output: Path) -> int:
    """A descriptor of the output directory's lock file, one the run creates itself (mode 0600), never the
    directory: in this user's lock folder, named by the directory's device and inode, so no other user can
    hold it; where that folder cannot be used, ``.scorer.lock`` inside the directory, replaced when it is
    anyone else's (or open to others)."""
    info = os.stat(output)
    folder = _lock_folder()
    places = (
        [folder / f"output-{info.st_dev}-{info.st_ino}.lock"]
        if folder is not None
        else [output / LOCK_FILE, output / f"{LOCK_FILE}.{os.geteuid()}"]
    )
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    for path in places:
        for _ in range(3):
            try:
                fd = os.open(path, flags, 0o600)
            except OSError:
                with suppress(OSError):
                    os.unlink(path)  # a link, a FIFO, another user's file of that name: not a lock of ours
                continue
            found = os.fstat(fd)
            if stat.S_ISREG(found.st_mode) and found.st_uid == os.geteuid() and not found.st_mode & 0o077:
                return fd
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                break  # not ours to remove (a sticky folder): the next place
    raise UsageError(f"output directory {output}: cannot create a lock file for it (tried {places[0]})")


@contextmanager
def locked(path: Path, notice: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the output directory ``path`` through its lock file; ``notice()`` is
    called when another run holds it."""
    fd = _lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if notice:
                notice()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _temporary(path: Path, data: bytes) -> str:
    """``data`` in a new temporary file beside ``path``; its name. An OSError (a full disk, too many open
    files) names ``path``."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # readable like any other output, not mkstemp's 0600
    except OSError as exc:
        _unlink(tmp)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_file(path: Path, data: bytes) -> None:
    """Write one file atomically (a temporary file beside it, renamed into place); an OSError names it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(_temporary(path, data), path)


def publish(output: Path, files: Mapping[str, bytes], outputs: Iterable[str], marker: str) -> None:
    """Put ``files`` (name -> bytes) into ``output`` and remove the other names of ``outputs`` there.

    ``marker`` (one of ``files``) is the commit marker: it is removed before any
    other output is replaced or removed, and written last, so a run killed at
    any instant, SIGKILL included, leaves either no marker or one that agrees
    with every file beside it. Temporary files that killed runs left behind are
    removed first (the caller holds the directory's lock).
    """
    if marker not in files:
        raise ValueError(f"the commit marker {marker} must be among the files written")
    STOP.raise_received()  # a stop the run went on past (Python reported it and carried on): nothing written
    remove_leftovers(output, list(files) + list(outputs))
    temporaries: dict[str, str] = {}
    try:
        for name, data in files.items():
            target = output / name
            target.parent.mkdir(parents=True, exist_ok=True)
            temporaries[name] = _temporary(target, data)
        with STOP.deferred():  # a signal meanwhile is delivered once the marker is in place
            _unlink(output / marker)
            _sync_directory(output)
            for name, tmp in temporaries.items():
                if name != marker:
                    os.replace(tmp, output / name)
            for name in outputs:
                if name not in files:
                    _remove(output / name)
            for folder in {(output / name).parent for name in files}:
                _sync_directory(folder)
            os.replace(temporaries[marker], output / marker)
            temporaries.clear()
            _sync_directory(output)
    finally:
        for tmp in temporaries.values():
            _unlink(tmp)


def _remove(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target, ignore_errors=True)
    else:
        _unlink(target)


def _sync_directory(folder: Path) -> None:
    """Make the renames and removals in ``folder`` durable before the next step (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_leftovers(output: Path, names: Iterable[str]) -> None:
    """Remove the temporary files (``.<name>.*.tmp``) and write probes that killed runs left in ``output``
    and in the folders of ``names``."""
    folders = {output} | {(output / name).parent for name in names}
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(_PROBE) or (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                if entry.is_file(follow_symlinks=False):
                    _unlink(entry.path)
