"""The code's processes (contract section 10): a phase's child (:class:`Child`, its own session, its
replies read with a deadline and checked), and this process made the child subreaper and non-dumpable, and
rid of every process below it (:func:`kill_descendants`). The child keeps the code from this process's
resource limits with :func:`.limits.keep_limits_of`.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any

from .faults import CodeFault
from .names import signal_name
from .protocol import WANTED, Reply, Request, checked_reply

#: The longest reply line the runner reads from the code's process.
MAX_REPLY_BYTES = 64 << 20
_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_PR_SET_DUMPABLE = 4
#: The folder or zip archive that holds the runner's package (``scorer/``, or the one file a bundle ships),
#: and the package's name there.
_ROOT, _PACKAGE = os.path.split(os.path.dirname(os.path.abspath(__file__)))
#: The child's program (``python -c``): the runner's package imported from ``_ROOT`` (its first argument, in
#: place of the current folder on the import path), then :func:`~.protocol.child_main` on the rest.
CHILD_PROGRAM = (
    "import sys; root = sys.argv.pop(1); "
    "sys.path[:1] = [root] if sys.path[:1] == [''] else [root] + sys.path[:1]; "
    f"from {_PACKAGE}.protocol import child_main; "
    "child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), '--silent' in sys.argv[4:])"
)


class Child:
    """One phase's child process: its own session, its protocol pipes, the code's output passed on (or
    discarded when ``silent``). What it replies is checked against the protocol's shapes."""

    def __init__(self, phase: str, code_root: str, scratch: str, silent: bool):
        self.phase = phase
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        command = [
            sys.executable,
            "-c",
            CHILD_PROGRAM,
            _ROOT,
            code_root,
            str(down_r),
            str(up_w),
        ] + (["--silent"] if silent else [])
        self.process = subprocess.Popen(
            command,
            cwd=scratch,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL if silent else sys.stderr.fileno(),
            stderr=subprocess.DEVNULL if silent else None,
            pass_fds=(down_r, up_w),
            start_new_session=True,
            env=_child_environment(),
        )
        os.close(down_r)
        os.close(up_w)
        self.requests = os.fdopen(down_w, "w", encoding="utf-8")
        self.replies = up_r
        self.buffer = b""

    def ask(
        self,
        message: Request | None,
        call: str,
        timeout: float,
        function: str,
        dialog_id: str | None = None,
        turn: int | None = None,
        limit: float | None = None,
    ) -> Reply:
        """Send ``message`` (None: only wait for the code's import) and wait at most ``timeout`` seconds for
        the reply to ``call`` (``ready``, ``setup``, ``generate`` or ``ppl``), checked. Past it, the fault
        names ``limit`` (default: ``timeout``): the call's limit, of which less may have been left."""
        where: dict[str, Any] = dict(phase=self.phase, function=function, dialog_id=dialog_id, turn=turn)
        if message is not None:
            try:
                self.requests.write(json.dumps(message, ensure_ascii=False) + "\n")
                self.requests.flush()
            except (BrokenPipeError, OSError):
                raise self._died(**where) from None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_REPLY_BYTES:
                self.kill()
                raise CodeFault("protocol", f"a reply longer than {MAX_REPLY_BYTES >> 20} MiB", **where)
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                named = timeout if limit is None else limit
                raise CodeFault(
                    "timeout", f"the call ran past its {named:g} s limit; it was stopped", **where
                )
            ready, _, _ = select.select([self.replies], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.replies, 1 << 16)
                if not chunk:
                    raise self._died(**where)
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = checked_reply(line, call)
        except CodeFault as fault:
            self.kill()
            said = fault.message
            if fault.kind == "wrong_value" and function in WANTED:
                said += f"; it must return {WANTED[function]}"
            raise CodeFault(fault.kind, said, detail=fault.detail, **where) from None
        return reply

    def _died(self, **where: Any) -> CodeFault:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        if code is not None and code < 0:
            how = f"killed by {signal_name(-code)}"
            if -code == signal.SIGKILL:
                how += " (the out-of-memory killer, or another process)"
        else:
            how = f"it exited with code {code}"
        return CodeFault("died", f"the code's process ended during the call ({how})", **where)

    def kill(self) -> None:
        """Kill the child's whole session (its process group)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def close(self) -> None:
        for closing in (self.requests.close, lambda: os.close(self.replies)):
            try:
                closing()
            except OSError:
                pass
        self.kill()  # the rest of what the code started: the phase kills it (_Phase.__exit__)


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def become_undumpable() -> bool:
    """On Linux, make this process non-dumpable (``PR_SET_DUMPABLE`` 0): a process of the same user cannot
    read or write its memory (ptrace, /proc/PID/mem), nor the files it holds open through /proc."""
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """On Linux, make this process the child subreaper: whatever the code's processes leave behind (daemons
    included) is re-parented here, so :func:`kill_descendants` finds it."""
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def kill_descendants(patience: float = 5.0, strict: bool = False) -> list[int]:
    """Kill every process below this one (a subreaper's orphans included), until none is left or
    ``patience`` seconds have passed; the ones still there (none, unless a process cannot be killed).
    ``strict``: an OSError when the processes cannot be listed (``/proc`` unreadable, no descriptor left)."""
    me = os.getpid()
    deadline = time.monotonic() + patience
    while True:
        children = _children_of(me, strict)
        if not children or time.monotonic() > deadline:
            return children
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        time.sleep(0.01)


def _parent_of(pid: int, strict: bool = False) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        return int(stat[stat.rindex(")") + 2 :].split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
        return None
    except OSError:
        if strict:
            raise
        return None


def _children_of(parent: int, strict: bool = False) -> list[int]:
    """The processes whose parent is ``parent``, and their descendants (from /proc; empty elsewhere)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        if strict and sys.platform.startswith("linux"):
            raise
        return []
    parents: dict[int, int] = {}
    for name in names:
        if name.isdigit():
            found = _parent_of(int(name), strict)
            if found is not None:
                parents[int(name)] = found
    found_pids: list[int] = []
    frontier = [parent]
    while frontier:
        nxt = [pid for pid, ppid in parents.items() if ppid in frontier and pid != parent]
        nxt = [pid for pid in nxt if pid not in found_pids]
        found_pids.extend(nxt)
        frontier = nxt
    return found_pids
