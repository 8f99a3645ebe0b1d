"""Run a team's code as the competition did (contract section 10): ``team_code/generate.py``'s
``setup_model_and_tokenizer``, ``generate_text`` and ``get_ppl`` called on every dialogue, into
``submission.jsonl`` and ``ppl_output.json``.

This module imports nothing outside Python's standard library and runs on Python 3.8 or newer, on its own
(``python3 runner.py --data DIR --code PATH --output DIR``) in whatever image holds the team's
dependencies; ``python -m scorer run`` is this module. The code never runs in this process: each phase
(generation, then perplexity) is a child process with a fresh import of the code and its own setup,
working in a scratch folder, its stdout and stderr passed to this run's stderr (``--discard-code-output``:
thrown away). Every answer is written and closed before ``answers.jsonl`` is opened. Faults of the code
are exit 1 and named (phase, function, dialog_id, turn); a call past ``--turn-timeout`` or a setup past
``--setup-timeout`` kills the child; no process the code started outlives its phase. Finished turns are
kept in ``OUTPUT/.run-state/``; ``--resume`` continues from there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import dataclass
from typing import Any

EXIT_OK, EXIT_CODE_FAULT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
FUNCTIONS = ("setup_model_and_tokenizer", "generate_text", "get_ppl")
STATE_DIR = ".run-state"
SUBMISSION, PPL, PPL_CHECK = "submission.jsonl", "ppl_output.json", "ppl_check.json"
DIALOGUES, ANSWERS = "dialogues.jsonl", "answers.jsonl"
DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT = 3600.0, 600.0
TRACEBACK_LINES = 20
EXCERPT = 60
PROGRESS_SECONDS = 5.0
_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_PR_SET_DUMPABLE = 4


class UsageFault(Exception):
    """A usage or data error of the run (exit 2)."""


class CodeFault(Exception):
    """A fault of the team's code (exit 1): ``kind`` (missing, exception, wrong_value, timeout, died)
    and where it happened; ``detail`` is text the code produced (a traceback, an excerpt of a value)."""

    def __init__(
        self,
        kind: str,
        message: str,
        phase: str = "",
        function: str = "",
        dialog_id: str | None = None,
        turn: int | None = None,
        detail: str = "",
    ):
        super().__init__(message)
        self.kind, self.message, self.phase, self.function = kind, message, phase, function
        self.dialog_id, self.turn, self.detail = dialog_id, turn, detail

    def where(self) -> str:
        parts = [f"phase {self.phase}"] if self.phase else []
        if self.function:
            parts.append(f"function {self.function}")
        if self.dialog_id is not None:
            parts.append(f"dialog_id {_excerpt(self.dialog_id)}")
        if self.turn is not None:
            parts.append(f"turn {self.turn}")
        return ", ".join(parts)

    def report(self, with_detail: bool = True) -> str:
        """The fault for stderr: its kind and place, then (``with_detail``) what the code produced."""
        text = f"error: the team's code failed ({self.kind}; {self.where()}): {self.message}"
        if with_detail and self.detail:
            text += "\n" + self.detail.rstrip()
        return text


def _printable(text: str) -> str:
    """``text`` with every character a terminal would not show as itself escaped (``\\n``, ``\\x1b``)."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _excerpt(value: object, limit: int = EXCERPT) -> str:
    text = _printable(value if isinstance(value, str) else repr(value))
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


# --- the data ----------------------------------------------------------------------------------------


def read_jsonl(path: str, what: str) -> list[dict]:
    """The JSON objects of a JSON Lines file; a UsageFault naming the file and line otherwise."""
    rows = []
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError as exc:
                    raise UsageFault(f"{path}, line {number}: not valid JSON ({exc})") from None
                if not isinstance(value, dict):
                    raise UsageFault(f"{path}, line {number}: {what} must be one JSON object a line")
                rows.append(value)
    except OSError as exc:
        raise UsageFault(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageFault(f"{path}: not valid UTF-8") from None
    return rows


def read_dialogues(data: str) -> list[dict]:
    """``dialogues.jsonl`` with every image and audio path made absolute against ``data``."""
    base = os.path.abspath(data)
    rows = read_jsonl(os.path.join(data, DIALOGUES), "a dialogue")
    dialogues, seen = [], set()
    for k, row in enumerate(rows, 1):
        dialog_id, turns = row.get("dialog_id"), row.get("turns")
        if not isinstance(dialog_id, str) or not dialog_id or dialog_id in seen:
            raise UsageFault(f"{DIALOGUES}, dialogue {k}: a missing, empty or repeated dialog_id")
        if not isinstance(turns, list) or not turns:
            raise UsageFault(f"{DIALOGUES}, dialog_id {dialog_id!r}: turns must be a non-empty list")
        fixed = []
        for turn in turns:
            if not isinstance(turn, list) or not all(
                isinstance(p, dict) and isinstance(p.get("content"), str) and p.get("type") for p in turn
            ):
                raise UsageFault(f"{DIALOGUES}, dialog_id {dialog_id!r}: a turn is not a list of parts")
            fixed.append(
                [
                    {"type": p["type"], "content": _media_path(base, p["content"])}
                    if p["type"] in ("image", "audio")
                    else {"type": p["type"], "content": p["content"]}
                    for p in turn
                ]
            )
        seen.add(dialog_id)
        dialogues.append({"dialog_id": dialog_id, "type": row.get("type"), "turns": fixed})
    if not dialogues:
        raise UsageFault(f"{os.path.join(data, DIALOGUES)} holds no dialogue")
    return dialogues


def _media_path(base: str, content: str) -> str:
    return content if os.path.isabs(content) else os.path.normpath(os.path.join(base, content))


def read_targets(data: str, dialogues: list[dict]) -> dict[str, list[str]] | None:
    """The first reference variant of every turn (``answers.jsonl``), or None when there is no such file."""
    path = os.path.join(data, ANSWERS)
    if not os.path.exists(path):
        return None
    targets = {}
    for row in read_jsonl(path, "a dialogue's references"):
        refs = row.get("references")
        if isinstance(row.get("dialog_id"), str) and isinstance(refs, list):
            targets[row["dialog_id"]] = [v[0] if isinstance(v, list) and v else "" for v in refs]
    for d in dialogues:
        if len(targets.get(d["dialog_id"], [])) != len(d["turns"]):
            raise UsageFault(f"{ANSWERS}: dialog_id {d['dialog_id']!r} has no references for every turn")
    return targets


def read_only(path: str, dialogues: list[dict]) -> set[tuple[str, int]]:
    """The turns ``--only`` names: the JSON Lines ``audit-sample`` writes (``dialog_id`` and ``turn``)."""
    turns = {d["dialog_id"]: len(d["turns"]) for d in dialogues}
    chosen = set()
    for k, row in enumerate(read_jsonl(path, "a turn"), 1):
        dialog_id, turn = row.get("dialog_id"), row.get("turn")
        if (
            not isinstance(dialog_id, str)
            or dialog_id not in turns
            or isinstance(turn, bool)
            or not isinstance(turn, int)
            or not 0 <= turn < turns[dialog_id]
        ):
            raise UsageFault(f"{path}, line {k}: not a turn of {DIALOGUES} (dialog_id and turn)")
        chosen.add((dialog_id, turn))
    return chosen


# --- the code ------------------------------------------------------------------------------------------


def find_code(path: str, scratch: str) -> str:
    """The folder that holds ``team_code/`` (at the upload's root or in its one top-level folder); a zip is
    unpacked into ``scratch`` first. A CodeFault listing what the upload holds when it has no package."""
    root = path = os.path.abspath(path)  # the child works in a scratch folder: no relative path reaches it
    if os.path.isfile(path) and zipfile.is_zipfile(path):
        root = os.path.join(scratch, "upload")
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = info.filename
                if name.startswith("/") or ".." in name.replace("\\", "/").split("/"):
                    raise UsageFault(f"{path}: the zip holds an unsafe name {_excerpt(name)}")
            archive.extractall(root)
    elif not os.path.isdir(path):
        raise UsageFault(f"--code {path}: not a folder or a .zip")
    for candidate in [root] + sorted(
        os.path.join(root, n) for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))
    ):
        package = os.path.join(candidate, "team_code")
        if os.path.isfile(os.path.join(package, "generate.py")) and os.path.isfile(
            os.path.join(package, "__init__.py")
        ):
            return candidate
    held = _listing(root)
    raise CodeFault(
        "missing",
        "the upload holds no package team_code/ with __init__.py and generate.py (at its root or in one "
        f"top-level folder); it holds: {held}",
    )


def _listing(root: str, limit: int = 20) -> str:
    names = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            names.append(os.path.relpath(os.path.join(folder, name), root))
            if len(names) >= limit:
                return ", ".join(names) + ", ..."
    return ", ".join(names) or "nothing"


# --- the child process ---------------------------------------------------------------------------------


def child_main(code_root: str, reader_fd: int, writer_fd: int, silent: bool) -> None:
    """The child: the code imported afresh, then one call a request, each answered on the protocol pipe.
    The code's own stdout goes to stderr (or nowhere with ``silent``)."""
    requests = os.fdopen(reader_fd, "r", encoding="utf-8")
    replies = os.fdopen(writer_fd, "w", encoding="utf-8")
    if silent:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    else:
        os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]  # the scorer's own modules
    sys.path.insert(0, code_root)
    try:
        import importlib

        module = importlib.import_module("team_code.generate")
    except BaseException:  # noqa: BLE001 - the team's import, whatever it raises
        reply({"fault": "exception", "function": "import team_code.generate", "trace": _trace()})
        return
    missing = [name for name in FUNCTIONS if not callable(getattr(module, name, None))]
    if missing:
        held = sorted(n for n in dir(module) if not n.startswith("_"))
        reply({"fault": "missing", "missing": missing, "held": held})
        return
    reply({"ready": True})
    model = tokenizer = None
    for line in requests:
        request = json.loads(line)
        call = request["call"]
        try:
            if call == "setup":
                found = module.setup_model_and_tokenizer()
                if not isinstance(found, (tuple, list)) or len(found) != 2:
                    reply({"fault": "wrong_value", "value": _describe(found)})
                    return
                model, tokenizer = found
                reply({"ok": None})
            elif call == "generate":
                history = [(q, a) for q, a in request["history"]]
                value = module.generate_text(model, tokenizer, request["query"], history)
                if isinstance(value, (tuple, list)) and value:
                    value = value[0]
                if not isinstance(value, str):
                    reply({"fault": "wrong_value", "value": _describe(value)})
                    return
                reply({"ok": value})
            else:
                history = [(q, t) for q, t in request["history"]]
                value = module.get_ppl(model, tokenizer, (request["query"], request["target"]), history)
                number = _real(value)
                if number is None:
                    reply({"fault": "wrong_value", "value": _describe(value)})
                    return
                reply({"ok": number})
        except BaseException:  # noqa: BLE001 - the team's call, whatever it raises
            reply({"fault": "exception", "trace": _trace()})
            return


def _trace() -> str:
    lines = traceback.format_exc().rstrip().splitlines()
    return "\n".join(lines[-TRACEBACK_LINES:])


def _describe(value: object) -> str:
    try:
        shown = repr(value)
    except BaseException:  # noqa: BLE001 - a repr of the team's object may raise too
        shown = "<no repr>"
    shown = _printable(shown)
    return f"{type(value).__name__} {shown if len(shown) <= EXCERPT else shown[:EXCERPT] + '...'}"


def _real(value: object) -> float | None:
    """A perplexity as a float: an int, a float or a numpy scalar (not a bool); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "shape", None) == ():
        item = value.item()
        return None if isinstance(item, bool) or not isinstance(item, (int, float)) else float(item)
    return None


class Child:
    """One phase's child process: its own session, its protocol pipes, the code's output passed on."""

    def __init__(self, phase: str, code_root: str, scratch: str, silent: bool):
        self.phase = phase
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        command = [
            sys.executable,
            os.path.abspath(__file__),
            "--child",
            code_root,
            str(down_r),
            str(up_w),
        ] + (["--discard-code-output"] if silent else [])
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
        message: dict | None,
        timeout: float,
        function: str,
        dialog_id: str | None = None,
        turn: int | None = None,
    ) -> dict:
        """Send ``message`` (None: only wait) and wait at most ``timeout`` seconds for the reply."""
        where: dict[str, Any] = dict(phase=self.phase, function=function, dialog_id=dialog_id, turn=turn)
        if message is not None:
            try:
                self.requests.write(json.dumps(message, ensure_ascii=False) + "\n")
                self.requests.flush()
            except (BrokenPipeError, OSError):
                raise self._died(**where) from None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise CodeFault(
                    "timeout", f"the call ran past its {timeout:g} s limit; it was stopped", **where
                )
            ready, _, _ = select.select([self.replies], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.replies, 1 << 16)
                if not chunk:
                    raise self._died(**where)
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        reply = json.loads(line.decode("utf-8"))
        if "fault" in reply:
            self.kill()
            raise _fault_of(reply, where)
        return reply

    def _died(self, **where: Any) -> CodeFault:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.process.returncode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
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
        self.kill()
        kill_descendants()


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _fault_of(reply: dict, where: dict) -> CodeFault:
    kind = reply["fault"]
    function = reply.get("function") or where["function"]
    where = dict(where, function=function)
    if kind == "missing":
        return CodeFault(
            "missing",
            f"team_code/generate.py defines no {', '.join(reply['missing'])}; it defines: "
            f"{', '.join(reply['held']) or 'nothing public'}",
            **where,
        )
    if kind == "wrong_value":
        wanted = {
            "setup_model_and_tokenizer": "a (model, tokenizer) pair",
            "generate_text": "a str (or a tuple whose first element is a str)",
            "get_ppl": "a real number (int, float or a numpy scalar)",
        }.get(function, "another value")
        return CodeFault("wrong_value", f"it returned {reply['value']}; it must return {wanted}", **where)
    return CodeFault(
        "exception", "it raised an exception (its traceback follows)", detail=reply.get("trace", ""), **where
    )


def become_undumpable() -> bool:
    """On Linux, make this process non-dumpable (``PR_SET_DUMPABLE`` 0): a process of the same user cannot
    read or write its memory (ptrace, /proc/PID/mem), nor the files it holds open through /proc."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """On Linux, make this process the child subreaper: whatever the code's processes leave behind (daemons
    included) is re-parented here, so :func:`kill_descendants` finds it."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def kill_descendants() -> None:
    """Kill every process below this one (a subreaper's orphans included), until none is left."""
    me = os.getpid()
    for _ in range(50):
        children = _children_of(me)
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        time.sleep(0.01)


def _children_of(parent: int) -> list[int]:
    """The processes whose parent is ``parent``, and their descendants (from /proc; empty elsewhere)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    parents: dict[int, int] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
            parents[int(name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [parent]
    while frontier:
        nxt = [pid for pid, ppid in parents.items() if ppid in frontier and pid != parent]
        nxt = [pid for pid in nxt if pid not in found]
        found.extend(nxt)
        frontier = nxt
    return found


# --- the run -------------------------------------------------------------------------------------------


class Progress:
    """One stderr line every few seconds: phase, dialogues and turns done, rate, time left."""

    def __init__(self, phase: str, dialogues: int, turns: int, quiet: bool):
        self.phase, self.dialogues, self.turns, self.quiet = phase, dialogues, turns, quiet
        self.started = self.shown = time.monotonic()
        self.done_before: int | None = None

    def __call__(self, dialogues_done: int, turns_done: int, force: bool = False) -> None:
        now = time.monotonic()
        if self.done_before is None:
            self.done_before = turns_done
        if self.quiet or (not force and now - self.shown < PROGRESS_SECONDS):
            return
        self.shown = now
        made = turns_done - self.done_before
        rate = made / max(now - self.started, 1e-9)
        left = (
            f", {int((self.turns - turns_done) / rate)} s left"
            if rate > 0 and turns_done < self.turns
            else ""
        )
        print(
            f"run: {self.phase}: {dialogues_done}/{self.dialogues} dialogues, "
            f"{turns_done}/{self.turns} turns, {rate:.2f} turns/s{left}",
            file=sys.stderr,
            flush=True,
        )


class State:
    """Finished turns of one phase, kept in ``OUTPUT/.run-state/<phase>.jsonl`` one line a turn."""

    def __init__(self, output: str, phase: str, resume: bool):
        self.folder = os.path.join(output, STATE_DIR)
        os.makedirs(self.folder, exist_ok=True)
        self.path = os.path.join(self.folder, f"{phase}.jsonl")
        self.done: dict[tuple[str, int], object] = {}
        if resume and os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self.done[(row["dialog_id"], row["turn"])] = row["value"]
                    except (ValueError, KeyError, TypeError):
                        break  # a line cut short by a kill: the turns after it are done again
        elif os.path.exists(self.path):
            os.unlink(self.path)
        self.file = open(self.path, "a", encoding="utf-8")

    def keep(self, dialog_id: str, turn: int, value: object) -> None:
        self.done[(dialog_id, turn)] = value
        self.file.write(
            json.dumps({"dialog_id": dialog_id, "turn": turn, "value": value}, ensure_ascii=False) + "\n"
        )
        self.file.flush()

    def close(self, finished: bool = False) -> None:
        """Close the file; once the phase is ``finished``, remove it (and the folder when it is empty)."""
        self.file.close()
        if finished:
            os.unlink(self.path)
            try:
                os.rmdir(self.folder)
            except OSError:
                pass


def _write_atomically(path: str, text: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
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


@dataclass(frozen=True)
class PhaseSettings:
    """How the phases run: ``output`` holds their kept turns (``.run-state/``), ``resume`` continues from
    them, ``quiet`` drops the progress lines, the two limits in seconds, and whether the code's own output is
    discarded (the scoring step's, where the code is hostile)."""

    output: str
    resume: bool = False
    quiet: bool = False
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    turn_timeout: float = DEFAULT_TURN_TIMEOUT
    discard_code_output: bool = False


def _start(phase: str, code_root: str, scratch: str, settings: PhaseSettings) -> Child:
    """The phase's child, its code imported and set up."""
    child = Child(phase, code_root, scratch, settings.discard_code_output)
    child.ask(None, settings.setup_timeout, "import team_code.generate")
    child.ask({"call": "setup"}, settings.setup_timeout, "setup_model_and_tokenizer")
    return child


class _Phase:
    """One phase of the run: its kept turns (:class:`State`), its child process, started at the first call
    the phase needs (none when every turn was kept), and its scratch folder. Leaving it closes all three;
    the kept turns are removed once the phase finished without a fault."""

    def __init__(self, name: str, state_name: str, code_root: str, settings: PhaseSettings):
        self.name, self.code_root, self.settings = name, code_root, settings
        self.state = State(settings.output, state_name, settings.resume)
        self.child: Child | None = None
        self.scratch = tempfile.mkdtemp(prefix="scorer-run-")

    def __enter__(self) -> _Phase:
        return self

    def call(self, request: dict, function: str, dialog_id: str, turn: int) -> Any:
        """The value the code's ``function`` returned for this turn's ``request``."""
        if self.child is None:
            self.child = _start(self.name, self.code_root, self.scratch, self.settings)
        return self.child.ask(request, self.settings.turn_timeout, function, dialog_id, turn)["ok"]

    def __exit__(self, kind: object, *rest: object) -> None:
        if self.child is not None:
            self.child.close()
        self.state.close(finished=kind is None)
        shutil.rmtree(self.scratch, ignore_errors=True)


def generate(dialogues: list[dict], code_root: str, settings: PhaseSettings) -> dict[str, list[str]]:
    """Every dialogue's answers: a_i = generate_text(model, tokenizer, q_i, [(q_k, a_k) for k < i])."""
    total = sum(len(d["turns"]) for d in dialogues)
    progress = Progress("generate", len(dialogues), total, settings.quiet)
    answers: dict[str, list[str]] = {}
    with _Phase("generate", "generate", code_root, settings) as phase:
        done = 0
        for n, d in enumerate(dialogues):
            found: list[str] = []
            for i, query in enumerate(d["turns"]):
                key = (d["dialog_id"], i)
                if key in phase.state.done:
                    found.append(str(phase.state.done[key]))
                else:
                    request = {"call": "generate", "query": query, "history": list(zip(d["turns"], found))}
                    answer = phase.call(request, "generate_text", d["dialog_id"], i)
                    found.append(answer)
                    phase.state.keep(d["dialog_id"], i, answer)
                done += 1
                progress(n, done)
            answers[d["dialog_id"]] = found
        progress(len(dialogues), done, force=True)
    return answers


def perplexities(
    dialogues: list[dict],
    targets: dict[str, list[str]],
    code_root: str,
    settings: PhaseSettings,
    only: set[tuple[str, int]] | None = None,
) -> dict[str, list[float | None]]:
    """p_i = get_ppl(model, tokenizer, (q_i, t_i), [(q_k, t_k) for k < i]) for every turn (or ``only``'s)."""
    wanted = [
        (d, i)
        for d in dialogues
        for i in range(len(d["turns"]))
        if only is None or (d["dialog_id"], i) in only
    ]
    progress = Progress("ppl", len({d["dialog_id"] for d, _ in wanted}), len(wanted), settings.quiet)
    values: dict[str, list[float | None]] = {d["dialog_id"]: [None] * len(d["turns"]) for d in dialogues}
    with _Phase("ppl", "ppl" if only is None else "ppl-only", code_root, settings) as phase:
        seen: set[str] = set()
        for done, (d, i) in enumerate(wanted, 1):
            dialog_id, turns, target = d["dialog_id"], d["turns"], targets[d["dialog_id"]]
            key = (dialog_id, i)
            if key in phase.state.done:
                value = phase.state.done[key]
            else:
                request = {
                    "call": "ppl",
                    "query": turns[i],
                    "target": target[i],
                    "history": [[turns[k], target[k]] for k in range(i)],
                }
                value = phase.call(request, "get_ppl", dialog_id, i)
                if not (isinstance(value, float) and math.isfinite(value) and value >= 1):
                    raise CodeFault(
                        "wrong_value",
                        f"it returned {value!r}; a perplexity must be finite and at least 1",
                        "ppl",
                        "get_ppl",
                        dialog_id,
                        i,
                    )
                phase.state.keep(dialog_id, i, value)
            values[dialog_id][i] = float(value)  # type: ignore[arg-type]
            seen.add(dialog_id)
            progress(len(seen), done)
        progress(len(seen), len(wanted), force=True)
    return values


def numbers(values: dict[str, list[float | None]]) -> dict[str, list[float]]:
    """The perplexities of a run of every turn (no ``only``), where each value is a number."""
    return {k: [float(v) for v in vs if v is not None] for k, vs in values.items()}


def run(options: argparse.Namespace) -> int:
    """The whole run of the command line's ``options`` (see the module docstring); its exit code."""
    settings = PhaseSettings(
        options.output,
        options.resume,
        options.quiet,
        options.setup_timeout,
        options.turn_timeout,
        options.discard_code_output,
    )
    os.makedirs(options.output, exist_ok=True)
    become_subreaper()
    dialogues = read_dialogues(options.data)
    only = read_only(options.only, dialogues) if options.only else None
    scratch = tempfile.mkdtemp(prefix="scorer-code-")
    try:
        code_root = find_code(options.code, scratch)
        submission_path = os.path.join(options.output, SUBMISSION)
        if options.phase in ("all", "generate") and only is None:
            for name in (SUBMISSION, PPL):
                if os.path.exists(os.path.join(options.output, name)):
                    os.unlink(os.path.join(options.output, name))  # nothing complete-looking is left
            answers = generate(dialogues, code_root, settings)
            lines = "".join(
                json.dumps(
                    {"dialog_id": d["dialog_id"], "answers": answers[d["dialog_id"]]}, ensure_ascii=False
                )
                + "\n"
                for d in dialogues
            )
            _write_atomically(submission_path, lines)
            if not options.quiet:
                print(f"run: wrote {submission_path}", file=sys.stderr)
            if options.keep_code:  # the prediction step hands the code on to the scoring step
                kept = os.path.join(options.output, "team_code")
                if os.path.lexists(kept):
                    shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(os.path.join(code_root, "team_code"), kept, symlinks=True)
        if options.phase in ("all", "ppl"):
            # every answer is written and closed before answers.jsonl is opened
            targets = read_targets(options.data, dialogues)
            if targets is None:
                print(
                    f"run: no {ANSWERS} in {options.data}: the perplexities are of the model's own answers "
                    f"({SUBMISSION}), not of the competition's targets",
                    file=sys.stderr,
                )
                targets = _own_answers(submission_path, dialogues)
            name = PPL if only is None else PPL_CHECK
            target_path = os.path.join(options.output, name)
            if os.path.exists(target_path):
                os.unlink(target_path)
            values = perplexities(dialogues, targets, code_root, settings, only)
            payload: object = (
                numbers(values)
                if only is None
                else {k: vs for k, vs in values.items() if any(v is not None for v in vs)}
            )
            _write_atomically(target_path, json.dumps(payload, ensure_ascii=False) + "\n")
            if not options.quiet:
                print(f"run: wrote {target_path}", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return EXIT_OK


def _own_answers(path: str, dialogues: list[dict]) -> dict[str, list[str]]:
    if not os.path.exists(path):
        raise UsageFault(
            f"there is no {ANSWERS} and no {path}: run the generate phase first (--phase all or generate)"
        )
    answers = {}
    for row in read_jsonl(path, "a dialogue's answers"):
        if isinstance(row.get("dialog_id"), str) and isinstance(row.get("answers"), list):
            answers[row["dialog_id"]] = [a if isinstance(a, str) else "" for a in row["answers"]]
    for d in dialogues:
        if len(answers.get(d["dialog_id"], [])) != len(d["turns"]):
            raise UsageFault(f"{path}: dialog_id {d['dialog_id']!r} has no answer for every turn")
    return answers


def build_parser(prog: str = "runner.py") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run a team's team_code/generate.py on every dialogue, as the competition does: "
        "submission.jsonl, then ppl_output.json.",
    )
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, metavar="DIR", help="holds dialogues.jsonl (and the media)")
    parser.add_argument("--code", required=True, metavar="PATH", help="a folder or .zip holding team_code/")
    parser.add_argument("--output", required=True, metavar="DIR", help="where the files are written")
    parser.add_argument("--phase", choices=("all", "generate", "ppl"), default="all")
    parser.add_argument(
        "--only",
        metavar="FILE",
        help="the JSONL of audit-sample: perplexities of those turns alone, "
        "written as ppl_check.json (the shape of score --ppl-check)",
    )
    parser.add_argument("--setup-timeout", type=float, default=DEFAULT_SETUP_TIMEOUT, metavar="S")
    parser.add_argument("--turn-timeout", type=float, default=DEFAULT_TURN_TIMEOUT, metavar="S")
    parser.add_argument("--resume", action="store_true", help="continue from OUTPUT/.run-state/")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--keep-code",
        action="store_true",
        help="copy team_code/ into --output after generating (a code competition's prediction step)",
    )
    parser.add_argument("--discard-code-output", action="store_true", help=argparse.SUPPRESS)


_STOPPED = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    for sig in _STOPPED:
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def main(argv: list[str] | None = None, prog: str = "runner.py") -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--child"]:
        child_main(argv[1], int(argv[2]), int(argv[3]), "--discard-code-output" in argv)
        return 0
    try:
        options = build_parser(prog).parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else 0
    if options.setup_timeout <= 0 or options.turn_timeout <= 0:
        print("error: the timeouts must be positive numbers of seconds", file=sys.stderr)
        return EXIT_USAGE
    previous = {sig: signal.signal(sig, _stop) for sig in _STOPPED}
    try:
        return run(options)
    except Stopped as exc:
        kill_descendants()
        print(
            f"run: stopped by {signal.Signals(exc.signum).name}; the finished turns are kept in "
            f"{os.path.join(options.output, STATE_DIR)} (run again with --resume)",
            file=sys.stderr,
        )
        return _STOPPED[signal.Signals(exc.signum)]
    except CodeFault as fault:
        kill_descendants()
        print(fault.report(not options.discard_code_output), file=sys.stderr)
        if fault.kind != "missing":
            print(
                f"run: the finished turns are kept in {os.path.join(options.output, STATE_DIR)}",
                file=sys.stderr,
            )
        return EXIT_CODE_FAULT
    except UsageFault as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:  # noqa: BLE001 - the runner's own bug
        kill_descendants()
        print(f"internal error: {traceback.format_exc().splitlines()[-1]}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


if __name__ == "__main__":
    sys.exit(main())
