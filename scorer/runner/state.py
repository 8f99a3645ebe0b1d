"""The kept turns of a phase (contract section 10): ``OUTPUT/.run-state/<name>.jsonl``, read back as untrusted
for ``--resume`` and refused when the code or the data changed (:class:`State`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, Tuple  # noqa: UP035 - Tuple: Python 3.8

from .faults import UsageFault
from .names import excerpt
from .outputs import remove

#: A kept turn: (dialog_id, turn, whether it is a probe call's value).
Key = Tuple[str, int, bool]  # noqa: UP006


class State:
    """Finished turns of one phase, kept in ``OUTPUT/.run-state/<name>.jsonl``: a first line of the digests
    of the code and the data, then a line a turn; in memory only when ``folder`` is None (a sealed run).
    Kept lines are read back as untrusted: one that is torn, forged or holds a value the phase would refuse
    is dropped (its turn is computed again); digests that differ refuse ``--resume`` (exit 2). Whatever
    stands at the file's path that is not a regular file (a link, a FIFO, a device, a folder) holds no turn
    the runner kept: it is removed unopened, so no link is followed and no FIFO blocks the run, and the new
    file is made where nothing stands (``O_EXCL | O_NOFOLLOW``)."""

    def __init__(
        self,
        folder: str | None,
        name: str,
        digests: dict[str, str],
        resume: bool,
        turns: dict[str, int],
        accept: Callable[[object], bool],
        quiet: bool,
    ):
        self.digests, self.name = digests, name
        self.done: dict[Key, object] = {}
        self.folder = folder
        self.path = os.path.join(folder, f"{name}.jsonl") if folder is not None else None
        self.file: Any = None
        if self.path is None or folder is None:
            return
        if os.path.lexists(folder) and not (os.path.isdir(folder) and not os.path.islink(folder)):
            remove(folder)
        os.makedirs(folder, exist_ok=True)
        if os.path.lexists(self.path) and not stat.S_ISREG(os.lstat(self.path).st_mode):
            remove(self.path)  # not a file the runner wrote: never opened, never written through
        if os.path.lexists(self.path):
            kept = self._read(turns, accept) if resume else None
            where = excerpt(self.path, 200)
            if kept is None:
                count = self._count()
                if count and not quiet:
                    print(
                        f"run: {name}: discarding {count} kept turn(s) in {where} (give --resume to "
                        "continue from them)",
                        file=sys.stderr,
                    )
            else:
                self.done = kept
                if not quiet:
                    print(f"run: {name}: reusing {len(kept)} kept turn(s) from {where}", file=sys.stderr)
            remove(self.path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self.file = os.fdopen(os.open(self.path, flags, 0o666), "w", encoding="utf-8")
        self._write({"digests": digests})
        for (dialog_id, turn, probe), value in self.done.items():
            self._write(self._row(dialog_id, turn, probe, value))

    def _count(self) -> int:
        try:
            with _kept_file(self.path or "") as fh:
                return max(sum(1 for line in fh if line.strip()) - 1, 0)
        except OSError:
            return 0

    def _read(self, turns: dict[str, int], accept: Callable[[object], bool]) -> dict[Key, object]:
        """The kept turns that pass every check; UsageFault when the code or the data changed."""
        try:
            with _kept_file(self.path or "") as fh:
                lines = fh.read().split(b"\n")
        except OSError as exc:
            raise UsageFault(f"cannot read the kept turns {self.path}: {exc.strerror or exc}") from None
        header = json_line(lines[0])
        found = header.get("digests") if isinstance(header, dict) else None
        if found != self.digests:
            changed = (
                [k for k in ("code", "data") if found.get(k) != self.digests.get(k)]
                if isinstance(found, dict)
                else ["code", "data"]
            )
            what = {"code": "team_code/ (the code)", "data": "the data (dialogues, targets or --only)"}
            raise UsageFault(
                f"--resume: the turns kept in {excerpt(self.path, 200)} were computed with other "
                f"{' and '.join(what[k] for k in changed)}; mixing them would give answers of two versions. "
                "Run again without --resume to start over (the kept turns are then discarded)"
            )
        kept: dict[Key, object] = {}
        for line in lines[1:]:
            row = json_line(line)
            if not isinstance(row, dict) or set(row) - {"dialog_id", "turn", "value", "probe"}:
                continue
            dialog_id, turn, probe = row.get("dialog_id"), row.get("turn"), row.get("probe", False)
            if (
                isinstance(dialog_id, str)
                and dialog_id in turns
                and isinstance(turn, int)
                and not isinstance(turn, bool)
                and 0 <= turn < turns[dialog_id]
                and probe in (True, False)
                and accept(row.get("value"))
            ):
                kept[(dialog_id, turn, probe)] = row["value"]
        return kept

    @staticmethod
    def _row(dialog_id: str, turn: int, probe: bool, value: object) -> dict[str, Any]:
        row: dict[str, Any] = {"dialog_id": dialog_id, "turn": turn, "value": value}
        if probe:
            row["probe"] = True
        return row

    def _write(self, row: dict[str, Any]) -> None:
        self.file.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.file.flush()

    def keep(self, dialog_id: str, turn: int, value: object, probe: bool = False) -> None:
        self.done[(dialog_id, turn, probe)] = value
        if self.file is not None:
            self._write(self._row(dialog_id, turn, probe, value))

    def close(self, finished: bool = False) -> None:
        """Close the file; once the phase is ``finished``, remove it (and the folder when it is empty)."""
        if self.file is None or self.path is None or self.folder is None:
            return
        self.file.close()
        if finished:
            os.unlink(self.path)
            try:
                os.rmdir(self.folder)
            except OSError:
                pass


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _kept_file(path: str) -> BinaryIO:
    """The kept turns' file opened for reading, only if it is a regular file: opened without following a link
    and without blocking (a FIFO swapped in since it was checked), then checked through its descriptor."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def json_line(line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def data_digest(*values: object) -> str:
    """A digest of the inputs a phase's calls are made of (the dialogues, the targets, the turns chosen)."""
    return hashlib.sha256(json.dumps(values, sort_keys=True, ensure_ascii=True).encode()).hexdigest()
