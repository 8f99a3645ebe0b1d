"""What the runner writes into ``--output`` (contract section 10): every file held in memory and written again
when the run ends, after whatever else stands there is removed (:class:`Outputs`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

from .names import OUTPUT_NAMES, STATE_DIR, TEAM_CODE, excerpt, printable


def remove(path: str) -> None:
    """Remove a file, a link or a whole folder (its links not followed); gone already is fine."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def write_atomically(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Outputs:
    """What the run writes into ``--output``, held in memory as well: every file is written when its phase
    ended (no process of the code left), and again from memory when the run ends, after everything else
    there has been removed, so nothing the code wrote stays (contract section 10)."""

    def __init__(self, folder: str, keep: tuple[str, ...]):
        self.folder = folder
        self.files: dict[str, bytes] = {}
        self.kept: dict[str, bytes] = {}
        self.code: str | None = None
        for entry in os.listdir(folder):
            path = os.path.join(folder, entry)
            if entry in keep and os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as fh:
                    self.kept[entry] = fh.read()
            elif entry != STATE_DIR:
                remove(path)

    def put(self, name: str, data: bytes, now: bool = True) -> None:
        """Hold the file ``name`` (one of :data:`~.names.OUTPUT_NAMES`) and, when ``now``, write it."""
        if name not in OUTPUT_NAMES:
            raise ValueError(f"{name} is not one of the runner's outputs (OUTPUT_NAMES)")
        self.files[name] = data
        if now:
            write_atomically(os.path.join(self.folder, name), data)

    def finish(self, keep_state: bool, named: bool = True) -> str | None:
        """Remove everything the run did not write, write every file from memory, then copy ``team_code/``
        from :attr:`code` (``--keep-code``; the caller removes an unpacked zip only after this). Why the
        code could not be copied (none of it is left then; naming the file only when ``named``), or None."""
        held = {**self.kept, **self.files}
        for entry in os.listdir(self.folder):
            if entry not in held and not (entry == STATE_DIR and keep_state) and entry != TEAM_CODE:
                remove(os.path.join(self.folder, entry))
        kept_code = os.path.join(self.folder, TEAM_CODE)
        if os.path.lexists(kept_code):
            remove(kept_code)
        for name, data in held.items():
            write_atomically(os.path.join(self.folder, name), data)
        if self.code is None:
            return None
        source = os.path.join(self.code, TEAM_CODE)
        try:
            shutil.copytree(source, kept_code, symlinks=True)
        except OSError as exc:
            remove(kept_code)
            return (
                f"--keep-code: {TEAM_CODE}/ cannot be copied into {excerpt(self.folder, 200)} "
                f"({_why(exc, source, named)}); the other outputs are written, but the scoring step needs "
                "the code beside them: run again once the reason is gone"
            )
        return None


def _why(exc: OSError, source: str, named: bool) -> str:
    """What stopped a copy of ``source``: the first file and reason of a :class:`shutil.Error` (which
    gathers one per file), else the error's own; without the file's name (which the code may have chosen)
    unless ``named``."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        first = exc.args[0][0]
        if isinstance(first, tuple) and len(first) == 3:
            if not named:
                return "one of its files cannot be copied"
            name = os.path.relpath(str(first[0]), os.path.dirname(source))
            why = str(first[2]).replace(os.path.dirname(source) + os.sep, "")
            return printable(why if name in why else f"{name}: {why}")[:300]
    text = exc.strerror or type(exc).__name__
    if exc.filename is not None and named:
        name = os.path.relpath(os.fsdecode(exc.filename), os.path.dirname(source))
        return f"{printable(name)[:200]}: {printable(text)[:200]}"
    return printable(text)[:200]


def json_bytes(value: object) -> bytes:
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")
