"""Run a team's code as the competition did (contract section 10): ``team_code/generate.py``'s
``setup_model_and_tokenizer``, ``generate_text`` and ``get_ppl`` called on every dialogue, into
``submission.jsonl`` and ``ppl_output.json``.

This module imports nothing outside Python's standard library and runs on Python 3.8 or newer, on its own
(``python3 runner.py --data DIR --code PATH --output DIR``) in whatever image holds the team's
dependencies; ``python -m scorer run`` is this module. The code never runs in this process: each phase
(generation, then perplexity) is a child process with a fresh import of the code and its own setup,
working in a scratch folder, its stdout and stderr passed to this run's stderr (``--sealed``: thrown
away). Every answer is written and closed before ``answers.jsonl`` is opened. What the child sends back is
untrusted: a reply that is not one of the protocol's shapes is a fault of the code (``protocol``), and
every fault is named by this process's own record of the call (phase, function, dialog_id, turn). Faults
of the code are exit 1 and recorded in ``run_fault.json``; a call past ``--turn-timeout`` or a setup past
``--setup-timeout`` kills the child; no process the code started outlives its phase. Finished turns are
kept in ``OUTPUT/.run-state/`` with digests of the code and the data; ``--resume`` continues from there.
When the run ends, ``--output`` holds only what the runner wrote there.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import math
import os
import random
import re
import select
import shlex
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Dict, Tuple, TypedDict  # noqa: UP035 - Dict and Tuple: Python 3.8

EXIT_OK, EXIT_CODE_FAULT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
#: The three functions ``team_code/generate.py`` defines.
TEAM_FUNCTIONS = ("setup_model_and_tokenizer", "generate_text", "get_ppl")
#: The functions a fault may name (``run_fault.json``'s ``function``, or null): the code's three, and ``step``
#: (the whole phase ran past ``--step-timeout``).
FUNCTIONS = TEAM_FUNCTIONS + ("step",)
STATE_DIR = ".run-state"
SUBMISSION, PPL, PPL_CHECK = "submission.jsonl", "ppl_output.json", "ppl_check.json"
PPL_PROBES, PPL_TARGETS = "ppl_probes.json", "ppl_targets.json"
RUN_FAULT, TEAM_CODE = "run_fault.json", "team_code"
#: Every name the runner writes into ``--output``; anything else found there when a run ends is removed.
OUTPUT_NAMES = (SUBMISSION, PPL, PPL_PROBES, PPL_TARGETS, PPL_CHECK, TEAM_CODE, STATE_DIR, RUN_FAULT)
DIALOGUES, ANSWERS, CONFIG = "dialogues.jsonl", "answers.jsonl", "config.toml"
DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT = 3600.0, 600.0
#: The probe calls' defaults (``[audit]`` probe_turns and probe_min_words, contract section 9) and seed.
PROBE_TURNS, PROBE_MIN_WORDS, PROBE_SEED = 100, 5, 12345
#: ``[competition] network``'s settings, the built-in one first (contract sections 7 and 10).
NETWORK_SETTINGS = ("refused", "allowed")
#: The kinds of fault (``run_fault.json``'s ``kind``): a closed set. ``network`` is the machine's, not the
#: code's: a network interface other than loopback was up where ``--offline`` forbids one (exit 2).
FAULT_KINDS = ("upload", "missing", "exception", "wrong_value", "timeout", "died", "protocol", "network")
#: The one line that reports a fault of the code in a phase that has the answers (``--sealed`` with
#: ``answers.jsonl`` in ``--data``): no kind, function, place, signal, exit status or excerpt.
SEALED_FAULT_LINE = "the team's code failed in the scoring step"
#: The setting of a Codabench worker that runs the steps without a network.
NETWORK_DISABLED = "COMPETITION_CONTAINER_NETWORK_DISABLED=True"
_SIOCGIFFLAGS, _IFF_UP, _IFF_LOOPBACK = 0x8913, 0x1, 0x8  # <linux/sockios.h>, <net/if.h>
TRACEBACK_LINES = 20
EXCERPT = 60
#: The longest reply line the runner reads from the code's process.
MAX_REPLY_BYTES = 64 << 20
PROGRESS_SECONDS = 5.0
#: The rounding of a marked progress line's times (:class:`ProgressLines`), in seconds.
PROGRESS_ROUNDING = 10.0
_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_PR_SET_DUMPABLE = 4

#: What each function must return, as faults say it.
WANTED = {
    "setup_model_and_tokenizer": "a (model, tokenizer) pair",
    "generate_text": "a str (or a tuple whose first element is a str)",
    "get_ppl": "a real number: a float, an int, or a value whose float() is one (float(x) or x.item() of a "
    "0-d tensor)",
}
#: A fault's message when the run is sealed: by its kind alone, never text the code produced.
SEALED_MESSAGES = {
    "upload": "the upload cannot be unpacked",
    "missing": "the upload lacks team_code/generate.py or one of its three functions",
    "exception": "it raised an exception",
    "wrong_value": "it returned a value the protocol does not accept",
    "timeout": "the call ran past its time limit; it was stopped",
    "died": "the code's process ended during the call",
    "protocol": "the code's process sent a reply that is not the protocol's",
    "network": "a network interface other than loopback is up",
}


class Part(TypedDict):
    """One part of a turn as the code receives it: ``type`` (text, image, audio) and ``content`` (a text, or
    a media file's absolute path)."""

    type: str
    content: str


class CodeDialogue(TypedDict):
    """A dialogue of ``dialogues.jsonl`` as the runner holds it: its id, type and turns (lists of parts)."""

    dialog_id: str
    type: object
    turns: list[list[Part]]


class Request(TypedDict, total=False):
    """What the runner asks the code's process: ``call`` (setup, generate or ppl), the turn's ``query``, its
    ``history`` of (query, answer or target) pairs and, for ppl, the ``target``."""

    call: str
    query: list[Part]
    history: list[tuple[list[Part], str]]
    target: str


#: A reply of the code's process once checked (:func:`checked_reply`): ``{"ok": value}`` or ``{"ready": 1}``.
Reply = Dict[str, Any]  # noqa: UP006 - evaluated at run time: Python 3.8 has no dict[...]
#: A kept turn: (dialog_id, turn, whether it is a probe call's value).
Key = Tuple[str, int, bool]  # noqa: UP006


class UsageFault(Exception):
    """A usage or data error of the run (exit 2)."""


class CodeFault(Exception):
    """A fault of the team's code (exit 1): ``kind`` (one of :data:`FAULT_KINDS`) and where it happened,
    from the runner's own record of the call; ``detail`` is text the code produced (a traceback)."""

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
        #: Whether the fault is reported by :data:`SEALED_FAULT_LINE` alone (:meth:`withhold`).
        self.withheld = False

    def withhold(self) -> CodeFault:
        """This fault as a phase that has the answers reports it: :data:`SEALED_FAULT_LINE` alone, and a
        ``run_fault.json`` of nulls (contract section 10, "the fault")."""
        fault = CodeFault(self.kind, SEALED_FAULT_LINE)
        fault.withheld = True
        return fault

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
        """The fault for stderr: its kind and place, then what went wrong; ``with_detail`` False (sealed)
        gives the kind's fixed message instead of one that may hold text the code produced; a withheld fault
        is :data:`SEALED_FAULT_LINE`, whatever ``with_detail``."""
        if self.withheld:
            return SEALED_FAULT_LINE
        message = self.message if with_detail else SEALED_MESSAGES[self.kind]
        where = self.where()
        text = f"error: the team's code failed ({self.kind}{'; ' + where if where else ''}): {message}"
        if with_detail and self.detail:
            text += "\n" + self.detail.rstrip()
        return text

    def record(self) -> dict[str, Any]:
        """``run_fault.json``: the kind and the place, nothing the code produced (all null when withheld)."""
        if self.withheld:
            return dict.fromkeys(("kind", "phase", "function", "dialog_id", "turn"))
        return {
            "kind": self.kind,
            "phase": self.phase or None,
            "function": self.function or None,
            "dialog_id": self.dialog_id,
            "turn": self.turn,
        }


# --- text made harmless ----------------------------------------------------------------------------------

#: The format characters (Unicode category Cf, the bidirectional controls among them) and the line and
#: paragraph separators (Zl, Zp) as of Unicode 15.1; a test checks this Python's Unicode has no others.
FORMAT_CHARACTERS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
#: Every character :func:`printable` escapes: C0, DEL, C1 and the format characters.
UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{FORMAT_CHARACTERS}]")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(char: str) -> str:
    """One character as an escape: ``\\n``, ``\\r`` or ``\\t``, else ``\\xhh``, ``\\uhhhh`` or
    ``\\Uhhhhhhhh``."""
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every control and format character escaped (``\\n``, ``\\x1b``, ``\\u202e``): one line
    that can neither drive a terminal nor reorder what follows it. The scorer's own rule for what people
    read (``scorer/safe_text.py``) is this function."""
    return UNSAFE.sub(lambda match: escaped(match.group()), text)


def _excerpt(value: object, limit: int = EXCERPT) -> str:
    text = printable(value if isinstance(value, str) else repr(value))
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


# --- the data ----------------------------------------------------------------------------------------


def read_jsonl(path: str, what: str) -> list[dict[str, Any]]:
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


def read_dialogues(data: str) -> list[CodeDialogue]:
    """``dialogues.jsonl`` with every image and audio path made absolute against ``data``."""
    base = os.path.abspath(data)
    rows = read_jsonl(os.path.join(data, DIALOGUES), "a dialogue")
    dialogues, seen = [], set()
    for k, row in enumerate(rows, 1):
        dialog_id, turns = row.get("dialog_id"), row.get("turns")
        if not isinstance(dialog_id, str) or not dialog_id or dialog_id in seen:
            raise UsageFault(f"{DIALOGUES}, dialogue {k}: a missing, empty or repeated dialog_id")
        if not isinstance(turns, list) or not turns:
            raise UsageFault(f"{DIALOGUES}, dialog_id {_excerpt(dialog_id)}: turns must be a non-empty list")
        fixed = []
        for turn in turns:
            if not isinstance(turn, list) or not all(
                isinstance(p, dict) and isinstance(p.get("content"), str) and p.get("type") for p in turn
            ):
                raise UsageFault(
                    f"{DIALOGUES}, dialog_id {_excerpt(dialog_id)}: a turn is not a list of parts"
                )
            fixed.append(
                [
                    Part(
                        type=p["type"],
                        content=_media_path(base, p["content"])
                        if p["type"] in ("image", "audio")
                        else p["content"],
                    )
                    for p in turn
                ]
            )
        seen.add(dialog_id)
        dialogues.append(CodeDialogue(dialog_id=dialog_id, type=row.get("type"), turns=fixed))
    if not dialogues:
        raise UsageFault(f"{os.path.join(data, DIALOGUES)} holds no dialogue")
    return dialogues


def _media_path(base: str, content: str) -> str:
    return content if os.path.isabs(content) else os.path.normpath(os.path.join(base, content))


def read_targets(data: str, dialogues: list[CodeDialogue]) -> dict[str, list[str]] | None:
    """The first reference variant of every turn (``answers.jsonl``), or None when there is no such file."""
    path = os.path.join(data, ANSWERS)
    if not os.path.exists(path):
        return None
    targets = {}
    for k, row in enumerate(read_jsonl(path, "a dialogue's references"), 1):
        refs = row.get("references")
        if isinstance(row.get("dialog_id"), str) and isinstance(refs, list):
            if not all(isinstance(v, list) and v and isinstance(v[0], str) for v in refs):
                raise UsageFault(f"{path}, line {k}: every turn's references must be a list of texts")
            targets[row["dialog_id"]] = [v[0] for v in refs]
    for d in dialogues:
        if len(targets.get(d["dialog_id"], [])) != len(d["turns"]):
            raise UsageFault(f"{path}: dialog_id {_excerpt(d['dialog_id'])} has no references for every turn")
    return targets


def read_only(path: str, dialogues: list[CodeDialogue]) -> set[tuple[str, int]]:
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

#: The compression methods the runner unpacks: stored, deflate, bzip2, LZMA.
_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


def find_code(path: str, scratch: str) -> str:
    """The folder that holds ``team_code/`` (at the upload's root or in its one top-level folder); a zip is
    unpacked into ``scratch`` first. A CodeFault listing what the upload holds when it has no package."""
    # the child works in a scratch folder: no relative path reaches it; --code itself is the organizer's path
    root = path = os.path.realpath(path)
    if os.path.isfile(path) and zipfile.is_zipfile(path):
        root = os.path.join(scratch, "upload")
        os.makedirs(root)
        unzip(path, root)
    elif not os.path.isdir(path):
        raise UsageFault(f"--code {_excerpt(path, 200)}: not a folder or a .zip")
    irregular = irregular_entries(root)  # before anything of the upload is read
    if irregular:
        raise CodeFault(
            "upload",
            "the upload holds entries that are neither regular files nor folders (a link, a FIFO, a socket "
            f"or a device), which the runner never opens: {', '.join(_excerpt(n, 200) for n in irregular)}"
            f"{', ...' if len(irregular) >= 5 else ''}; upload plain files and folders (zip team_code/ with "
            "zip -r, without links)",
        )
    for candidate in [root] + sorted(
        os.path.join(root, n) for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))
    ):
        package = os.path.join(candidate, TEAM_CODE)
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


def irregular_entries(root: str, limit: int = 5) -> list[str]:
    """The entries under ``root`` (relative paths, in sorted walking order, at most ``limit``) that are
    neither regular files nor folders: links (whatever they point to), FIFOs, sockets, devices, and folders
    that cannot be listed. Walked with :func:`os.scandir` without following a link and without opening
    anything but folders, so a FIFO or a link to ``/dev/zero`` is named, never read. ``root`` itself must be
    a folder, not a link to one (ValueError otherwise)."""
    if os.path.islink(root) or not os.path.isdir(root):
        raise ValueError(f"{root}: not a folder")
    found: list[str] = []
    top = _sorted_entries(root)
    if top is None:
        return ["."]
    stack = [("", iter(top))]
    while stack and len(found) < limit:
        relative, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name = os.path.join(relative, entry.name) if relative else entry.name
        try:
            folder, regular = entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
        except OSError:
            folder = regular = False
        if folder:
            inside = _sorted_entries(os.path.join(root, name))
            if inside is None:
                found.append(name)
            else:
                stack.append((name, iter(inside)))
        elif not regular:
            found.append(name)
    return found


def _sorted_entries(folder: str) -> list[os.DirEntry[str]] | None:
    """A folder's entries by name, or None when it cannot be listed."""
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return None


#: The kinds of zip entry (a Unix mode's file type) that are neither a regular file nor a folder.
_IRREGULAR = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def unzip(path: str, root: str) -> None:
    """Unpack the upload's zip into ``root``, every entry checked before one is written: an unsafe name, an
    encrypted entry, a compression method not unpacked here, a name that is both a file and a folder, or a
    damaged entry (a bad CRC) is the upload's fault (``upload``, exit 1), naming the entry."""
    try:
        with zipfile.ZipFile(path) as archive:
            files: set[str] = set()
            folders: set[str] = set()
            for info in archive.infolist():
                name = info.filename
                parts = name.replace("\\", "/").split("/")
                if name.startswith("/") or ".." in parts or "\x00" in name or ":" in parts[0]:
                    raise CodeFault("upload", f"the zip holds an unsafe name {_excerpt(name)}")
                if info.flag_bits & 0x1:
                    raise CodeFault("upload", f"the zip's entry {_excerpt(name)} is encrypted")
                kind = stat.S_IFMT(info.external_attr >> 16)
                if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                    raise CodeFault(
                        "upload",
                        f"the zip's entry {_excerpt(name)} is {_IRREGULAR.get(kind, 'not a regular file')}: "
                        "an upload holds regular files and folders only (zip team_code/ with zip -r, without "
                        "links)",
                    )
                if info.compress_type not in _ZIP_METHODS:
                    raise CodeFault(
                        "upload",
                        f"the zip's entry {_excerpt(name)} uses compression method {info.compress_type}, "
                        "which is not unpacked here (use deflate)",
                    )
                clean = [part for part in parts if part not in ("", ".")]
                if not clean:
                    continue
                key = "/".join(clean)
                (folders if info.is_dir() else files).add(key)
                folders.update("/".join(clean[:k]) for k in range(1, len(clean)))
            clash = sorted(files & folders)
            if clash:
                raise CodeFault(
                    "upload", f"the zip holds {_excerpt(clash[0])} both as a file and as a folder"
                )
            for info in archive.infolist():
                try:
                    archive.extract(info, root)
                except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
                    raise CodeFault(
                        "upload",
                        f"the zip's entry {_excerpt(info.filename)} is damaged ({_excerpt(str(exc))})",
                    ) from None
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise CodeFault("upload", f"the zip cannot be read ({_excerpt(str(exc))})") from None
    except OSError as exc:
        raise CodeFault("upload", f"the zip cannot be unpacked ({exc.strerror or exc})") from None


def _listing(root: str, limit: int = 20) -> str:
    names = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            names.append(printable(os.path.relpath(os.path.join(folder, name), root))[:200])
            if len(names) >= limit:
                return ", ".join(names) + ", ..."
    return ", ".join(names) or "nothing"


def code_digest(code_root: str) -> str:
    """A digest of ``team_code/``: every file's path and content (of a file over 16 MiB, its size and its
    first and last MiB), so that kept turns are refused once the code changed."""
    digest = hashlib.sha256()
    package = os.path.join(code_root, TEAM_CODE)
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, package).encode("utf-8", "surrogateescape") + b"\0")
            try:
                with open(path, "rb") as fh:
                    size = os.fstat(fh.fileno()).st_size
                    digest.update(str(size).encode() + b"\0")
                    if size <= 16 << 20:
                        digest.update(fh.read())
                    else:
                        digest.update(fh.read(1 << 20))
                        fh.seek(size - (1 << 20))
                        digest.update(fh.read(1 << 20))
            except OSError:
                digest.update(b"unreadable\0")
    return digest.hexdigest()


def data_digest(*values: object) -> str:
    """A digest of the inputs a phase's calls are made of (the dialogues, the targets, the turns chosen)."""
    return hashlib.sha256(json.dumps(values, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


# --- the network ---------------------------------------------------------------------------------------


def network_refusal() -> str | None:
    """None when no network interface but loopback is up in this process's own network namespace; else the
    one line that refuses to run the code, naming the interfaces that are up (or saying that they could not
    be listed or read: the check fails closed) and the worker's setting that takes the network away.

    The names come from ``socket.if_nameindex()`` and ``/proc/self/net/dev`` (both this namespace's; never
    ``/sys/class/net``, which shows the host's interfaces inside another namespace), each one's flags from
    the ``SIOCGIFFLAGS`` ioctl: up means ``IFF_UP`` without ``IFF_LOOPBACK``."""
    names, problem = _interface_names()
    up: list[str] = []
    if not problem:
        try:
            import fcntl

            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        except (ImportError, OSError) as exc:
            problem = f"no socket to ask for their flags ({_reason(exc)})"
        else:
            with probe:
                for name in names:
                    flags, problem = _interface_flags(fcntl, probe, name)
                    if problem:
                        break
                    if flags is not None and flags & _IFF_UP and not flags & _IFF_LOOPBACK:
                        up.append(name)
    how = (
        f"run the code without a network (on Codabench, a worker with {NETWORK_DISABLED}; docker run "
        '--network none), or, where the competition allows one, say [competition] network = "allowed" in its '
        "configuration (its steps then run without this check: no --offline)"
    )
    if problem:
        return (
            f"the network interfaces cannot be checked here ({problem}), so a network may be up: the team's "
            f"code is not run; {how}"
        )
    if up:
        shown = ", ".join(_excerpt(name, 40) for name in up[:10]) + (", ..." if len(up) > 10 else "")
        return (
            f"a network interface other than loopback is up in this process's network namespace ({shown}): "
            f"the team's code is not run; {how}"
        )
    return None


def _interface_names() -> tuple[list[str], str]:
    """This namespace's interfaces (``if_nameindex`` and ``/proc/self/net/dev`` together), and what went
    wrong when neither could list them."""
    names: set[str] = set()
    problems = []
    try:
        names.update(name for _, name in socket.if_nameindex())
        listed = True
    except (AttributeError, OSError) as exc:
        problems.append(f"if_nameindex: {_reason(exc)}")
        listed = False
    try:
        with open("/proc/self/net/dev", "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8", "surrogateescape")
        for line in text.splitlines()[2:]:
            name, colon, _ = line.partition(":")
            if colon and name.strip():
                names.add(name.strip())
        listed = True
    except OSError as exc:
        problems.append(f"/proc/self/net/dev: {_reason(exc)}")
    return sorted(names), "" if listed else "; ".join(problems)


def _interface_flags(fcntl: Any, probe: socket.socket, name: str) -> tuple[int | None, str]:
    """An interface's flags (None when it is gone since it was listed), or what went wrong."""
    encoded = name.encode("utf-8", "surrogateescape")
    if not 0 < len(encoded) < 16:
        return None, f"an interface name of {len(encoded)} bytes"
    try:
        reply = fcntl.ioctl(probe.fileno(), _SIOCGIFFLAGS, struct.pack("16s24x", encoded))
    except OSError as exc:
        if exc.errno == 19:  # ENODEV: gone since it was listed
            return None, ""
        return None, f"SIOCGIFFLAGS of {_excerpt(name, 40)}: {_reason(exc)}"
    return int(struct.unpack_from("H", reply, 16)[0]), ""


def _reason(exc: BaseException) -> str:
    return printable(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)


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

    def reply(message: dict[str, Any]) -> None:
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]  # the scorer's own modules
    sys.path.insert(0, code_root)
    try:
        import importlib

        module = importlib.import_module("team_code.generate")
    except BaseException:  # noqa: BLE001 - the team's import, whatever it raises
        reply({"fault": "exception", "trace": _trace()})
        return
    missing = [name for name in TEAM_FUNCTIONS if not callable(getattr(module, name, None))]
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
                if not isinstance(value, str) or not _is_text(value):
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


def _is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text that UTF-8 can hold (no lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _describe(value: object) -> str:
    try:
        shown = repr(value)
    except BaseException:  # noqa: BLE001 - a repr of the team's object may raise too
        shown = "<no repr>"
    shown = printable(shown)
    kind = type(value).__name__
    if isinstance(value, str) and not _is_text(value):
        kind = "str holding a lone surrogate (half of a UTF-16 pair, not text)"
    return f"{kind} {shown if len(shown) <= EXCERPT else shown[:EXCERPT] + '...'}"


def _real(value: object) -> float | None:
    """A perplexity as a float: an int, a float, or any value whose ``float()`` is a real number (a numpy
    scalar, a 0-d tensor), converted here in the code's own process; None otherwise (a bool, a str)."""
    if isinstance(value, (bool, str, bytes, bytearray, complex)):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return None
    if not hasattr(type(value), "__float__"):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except BaseException:  # noqa: BLE001 - the team's object, whatever its __float__ raises
        return None
    return number if isinstance(number, float) else None


class Child:
    """One phase's child process: its own session, its protocol pipes, the code's output passed on (or
    discarded when ``silent``). What it replies is checked against the protocol's shapes."""

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
    ) -> Reply:
        """Send ``message`` (None: only wait for the code's import) and wait at most ``timeout`` seconds for
        the reply to ``call`` (``ready``, ``setup``, ``generate`` or ``ppl``), checked."""
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
        self.kill()  # the rest of what the code started: the phase kills it (_Phase.__exit__)


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _strings(value: object, limit: int = 1000) -> bool:
    return isinstance(value, list) and len(value) <= limit and all(isinstance(v, str) for v in value)


def checked_reply(line: bytes, call: str) -> Reply:
    """One reply of the code's process, read as untrusted data: the ``ok`` value of ``call`` in its
    protocol shape, or a CodeFault (a fault the child reported, ``protocol`` for anything else). The fault
    carries no place: the caller names it from its own record of the call."""
    try:
        reply = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CodeFault("protocol", "a reply that is not the protocol's JSON") from None
    if not isinstance(reply, dict):
        raise CodeFault("protocol", "a reply that is not the protocol's JSON object")
    fault = reply.get("fault")
    if fault is not None:
        if fault == "exception" and set(reply) == {"fault", "trace"} and isinstance(reply["trace"], str):
            raise (
                CodeFault(
                    "exception",
                    "it raised an exception (its traceback follows)",
                    detail="\n".join(
                        printable(x)[:1000] for x in reply["trace"].splitlines()[-TRACEBACK_LINES:]
                    ),
                )
            )
        if fault == "wrong_value" and set(reply) == {"fault", "value"} and isinstance(reply["value"], str):
            raise (CodeFault("wrong_value", f"it returned {printable(reply['value'])[: EXCERPT + 80]}"))
        if (
            fault == "missing"
            and set(reply) == {"fault", "missing", "held"}
            and _strings(reply["missing"])
            and set(reply["missing"]) <= set(TEAM_FUNCTIONS)
            and reply["missing"]
            and _strings(reply["held"], 10_000)
        ):
            held = ", ".join(printable(n)[:EXCERPT] for n in reply["held"][:50]) or "nothing public"
            raise (
                CodeFault(
                    "missing",
                    f"team_code/generate.py defines no {', '.join(reply['missing'])}; it defines: {held}",
                )
            )
        raise CodeFault("protocol", "a fault report that is not the protocol's")
    if call == "ready":
        if reply == {"ready": True} and reply["ready"] is True:
            return reply
    elif set(reply) == {"ok"}:
        value = reply["ok"]
        if call == "setup" and value is None:
            return reply
        if call == "generate" and isinstance(value, str):
            if not _is_text(value):
                raise CodeFault("wrong_value", f"it returned {_describe(value)}")
            return reply
        if call == "ppl" and isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return {"ok": float(value)}
            except OverflowError:
                raise CodeFault("wrong_value", "it returned an int too large for a float") from None
    raise CodeFault("protocol", f"a reply that is not the protocol's answer to a {call} call")


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


# --- the run -------------------------------------------------------------------------------------------


class ProgressLines:
    """One stderr line every few seconds: phase, dialogues and turns done, rate, time left. The rate and the
    time left count the turns computed since the first one (import and setup are reported once, apart).

    With ``marks`` n of 2 or more, a line only when the turns done first reach k/n of the phase's turns (k =
    1 .. n - 1), its times counted from the phase's start and rounded down to :data:`PROGRESS_ROUNDING`
    seconds, and no other line (no setup line, no last line): what the lines tell beyond the data's own
    counts is when each mark was reached, at most (n - 1) x log2(L / 10 + 1) bits for a phase of L
    seconds."""

    def __init__(self, phase: str, dialogues: int, turns: int, quiet: bool, marks: int = 0):
        self.phase, self.dialogues, self.turns, self.quiet = phase, dialogues, turns, quiet
        self.started = self.shown = time.monotonic()
        self.first: tuple[float, int] | None = None
        self.marks = sorted({max(1, -(-k * turns // marks)) for k in range(1, marks)}) if marks >= 2 else None

    @classmethod
    def of(cls, phase: str, dialogues: int, turns: int, settings: PhaseSettings) -> ProgressLines:
        return cls(phase, dialogues, turns, settings.quiet, settings.progress_marks)

    def setup_done(self, seconds: float) -> None:
        if not self.quiet and self.marks is None:
            print(f"run: {self.phase}: import and setup took {seconds:.1f} s", file=sys.stderr, flush=True)

    def __call__(self, dialogues_done: int, turns_done: int, force: bool = False) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = (now, turns_done)
        if self.marks is not None:
            self._mark(dialogues_done, turns_done, now)
            return
        if self.quiet or (not force and now - self.shown < PROGRESS_SECONDS):
            return
        self.shown = now
        since, before = self.first
        self._line(dialogues_done, turns_done, turns_done - before, now - since, "")

    def _mark(self, dialogues_done: int, turns_done: int, now: float) -> None:
        reached = False
        while self.marks and turns_done >= self.marks[0]:
            self.marks.pop(0)
            reached = True
        if reached and not self.quiet:
            seconds = (now - self.started) // PROGRESS_ROUNDING * PROGRESS_ROUNDING
            self._line(
                dialogues_done,
                turns_done,
                turns_done,
                seconds,
                f" (after {seconds:.0f} s, to {PROGRESS_ROUNDING:.0f} s)",
            )

    def _line(self, dialogues_done: int, turns_done: int, made: int, seconds: float, after: str) -> None:
        rate = made / seconds if seconds > 0 and made > 0 else 0.0
        left = (
            f", {int((self.turns - turns_done) / rate)} s left"
            if rate > 0 and turns_done < self.turns
            else ""
        )
        print(
            f"run: {self.phase}: {dialogues_done}/{self.dialogues} dialogues, "
            f"{turns_done}/{self.turns} turns, {rate:.2f} turns/s{left}{after}",
            file=sys.stderr,
            flush=True,
        )


class State:
    """Finished turns of one phase, kept in ``OUTPUT/.run-state/<name>.jsonl``: a first line of the digests
    of the code and the data, then a line a turn; in memory only when ``folder`` is None (a sealed run).
    Kept lines are read back as untrusted: one that is torn, forged or holds a value the phase would refuse
    is dropped (its turn is computed again); digests that differ refuse ``--resume`` (exit 2)."""

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
            _remove(folder)
        os.makedirs(folder, exist_ok=True)
        if os.path.lexists(self.path):
            kept = self._read(turns, accept) if resume else None
            where = _excerpt(self.path, 200)
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
            _remove(self.path)
        self.file = open(self.path, "w", encoding="utf-8")
        self._write({"digests": digests})
        for (dialog_id, turn, probe), value in self.done.items():
            self._write(self._row(dialog_id, turn, probe, value))

    def _count(self) -> int:
        try:
            with open(self.path or "", "rb") as fh:
                return max(sum(1 for line in fh if line.strip()) - 1, 0)
        except OSError:
            return 0

    def _read(self, turns: dict[str, int], accept: Callable[[object], bool]) -> dict[Key, object]:
        """The kept turns that pass every check; UsageFault when the code or the data changed."""
        try:
            with open(self.path or "", "rb") as fh:
                lines = fh.read().split(b"\n")
        except OSError as exc:
            raise UsageFault(f"cannot read the kept turns {self.path}: {exc.strerror or exc}") from None
        header = _json_line(lines[0])
        found = header.get("digests") if isinstance(header, dict) else None
        if found != self.digests:
            changed = (
                [k for k in ("code", "data") if found.get(k) != self.digests.get(k)]
                if isinstance(found, dict)
                else ["code", "data"]
            )
            what = {"code": "team_code/ (the code)", "data": "the data (dialogues, targets or --only)"}
            raise UsageFault(
                f"--resume: the turns kept in {_excerpt(self.path, 200)} were computed with other "
                f"{' and '.join(what[k] for k in changed)}; mixing them would give answers of two versions. "
                "Run again without --resume to start over (the kept turns are then discarded)"
            )
        kept: dict[Key, object] = {}
        for line in lines[1:]:
            row = _json_line(line)
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


def _json_line(line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def is_answer(value: object) -> bool:
    """An answer the generate phase accepts: a str of Unicode text."""
    return isinstance(value, str) and _is_text(value)


def is_perplexity(value: object) -> bool:
    """A perplexity the ppl phase accepts: a finite float of at least 1."""
    return isinstance(value, float) and math.isfinite(value) and value >= 1


def _remove(path: str) -> None:
    """Remove a file, a link or a whole folder (its links not followed); gone already is fine."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _write_atomically(path: str, data: bytes) -> None:
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


@dataclass(frozen=True)
class PhaseSettings:
    """How the phases run: ``state`` is the folder of their kept turns (None: kept in memory only),
    ``resume`` continues from them, ``quiet`` drops the progress lines, the two limits in seconds, whether
    the run is ``sealed`` (the code's output discarded, faults by kind and place only), whether the ppl
    phase makes ``probes`` calls, and the folder the phases' scratch folders are made in (None: the
    system's).

    ``step_timeout`` bounds a whole phase in seconds (its import, setup and every call, probes included;
    None: no bound): each call may take the least of its own limit and the time the phase has left, and
    past it the fault is ``timeout`` with function ``step``. Progress lines (``quiet`` False) hold counts
    and times only, never text of the code, sealed or not. Their turns done, rate and time left follow the
    code's pace, which the code sets: where participants read them, ``progress_marks`` n (2 or more) prints
    a line only at each k/n of the turns, its times rounded down to 10 s (:class:`ProgressLines`)."""

    state: str | None
    resume: bool = False
    quiet: bool = False
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    turn_timeout: float = DEFAULT_TURN_TIMEOUT
    sealed: bool = False
    probes: bool = False
    scratch: str | None = None
    probe_turns: int = PROBE_TURNS
    probe_min_words: int = PROBE_MIN_WORDS
    step_timeout: float | None = None
    progress_marks: int = 0

    @classmethod
    def of(cls, options: RunOptions, state: str | None, probes: bool = False) -> PhaseSettings:
        """The phases' settings of a run of the command line (``probes``: whether this phase makes them)."""
        return cls(
            state,
            options.resume,
            options.quiet,
            options.setup_timeout,
            options.turn_timeout,
            options.sealed,
            probes,
            probe_turns=options.probe_turns,
            probe_min_words=options.probe_min_words,
            step_timeout=options.step_timeout,
        )


class _Phase:
    """One phase of the run: its kept turns (:class:`State`), its child process, started at the first call
    the phase needs (none when every turn was kept), and its scratch folder. Leaving it closes all three
    (no process of the code outlives it); the kept turns are removed once the phase finished without a
    fault."""

    def __init__(
        self,
        name: str,
        state_name: str,
        code_root: str,
        settings: PhaseSettings,
        digests: dict[str, str],
        turns: dict[str, int],
        accept: Callable[[object], bool],
        progress: ProgressLines,
    ):
        self.name, self.code_root, self.settings, self.progress = name, code_root, settings, progress
        self.state = State(
            settings.state, state_name, digests, settings.resume, turns, accept, settings.quiet
        )
        self.child: Child | None = None
        self.scratch = tempfile.mkdtemp(prefix="scorer-run-", dir=settings.scratch)
        step = settings.step_timeout
        self.deadline = None if step is None else time.monotonic() + step

    def __enter__(self) -> _Phase:
        return self

    def call(self, request: Request, function: str, dialog_id: str, turn: int) -> Any:
        """The value the code's ``function`` returned for this turn's ``request``."""
        if self.child is None:
            started = time.monotonic()
            self.child = Child(self.name, self.code_root, self.scratch, self.settings.sealed)
            limit = self.settings.setup_timeout
            self._ask(None, "ready", limit, "import team_code.generate", dialog_id, turn)
            self._ask({"call": "setup"}, "setup", limit, "setup_model_and_tokenizer", dialog_id, turn)
            self.progress.setup_done(time.monotonic() - started)
        return self._ask(request, request["call"], self.settings.turn_timeout, function, dialog_id, turn)[
            "ok"
        ]

    def _ask(
        self, message: Request | None, call: str, limit: float, function: str, dialog_id: str, turn: int
    ) -> Reply:
        """The child's reply, waited for at most ``limit`` seconds or the time the phase has left, whichever
        is less; a call that the phase's limit stops is the fault ``timeout`` of function ``step``, in the
        turn it was made for. The setup and the import are named by their function, with no turn."""
        assert self.child is not None
        place = (dialog_id, turn) if call in ("generate", "ppl") else (None, None)
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and left <= 0:
            raise self._past_step(*place)
        try:
            return self.child.ask(
                message, call, limit if left is None else min(limit, left), function, *place
            )
        except CodeFault as fault:
            if fault.kind == "timeout" and left is not None and left < limit:
                raise self._past_step(*place) from None
            raise

    def _past_step(self, dialog_id: str | None, turn: int | None) -> CodeFault:
        if self.child is not None:
            self.child.kill()
        return CodeFault(
            "timeout",
            f"the phase ran past --step-timeout {self.settings.step_timeout:g} s (the import, the setup and "
            "every call together); it was stopped",
            self.name,
            "step",
            dialog_id,
            turn,
        )

    def __exit__(self, kind: object, *rest: object) -> None:
        if self.child is not None:
            self.child.close()
        kill_descendants()
        self.state.close(finished=kind is None)
        shutil.rmtree(self.scratch, ignore_errors=True)


def generate(
    dialogues: list[CodeDialogue], code_root: str, settings: PhaseSettings, digest: str = ""
) -> dict[str, list[str]]:
    """Every dialogue's answers: a_i = generate_text(model, tokenizer, q_i, [(q_k, a_k) for k < i])."""
    total = sum(len(d["turns"]) for d in dialogues)
    progress = ProgressLines.of("generate", len(dialogues), total, settings)
    answers: dict[str, list[str]] = {}
    digests = {"code": digest or code_digest(code_root), "data": data_digest("generate", dialogues)}
    turns = {d["dialog_id"]: len(d["turns"]) for d in dialogues}
    with _Phase("generate", "generate", code_root, settings, digests, turns, is_answer, progress) as phase:
        done = 0
        for n, d in enumerate(dialogues):
            found: list[str] = []
            for i, query in enumerate(d["turns"]):
                key = (d["dialog_id"], i, False)
                if key in phase.state.done:
                    found.append(str(phase.state.done[key]))
                else:
                    request = Request(call="generate", query=query, history=list(zip(d["turns"], found)))
                    answer = phase.call(request, "generate_text", d["dialog_id"], i)
                    found.append(answer)
                    phase.state.keep(d["dialog_id"], i, answer)
                done += 1
                progress(n, done)
            answers[d["dialog_id"]] = found
        progress(len(dialogues), done, force=True)
    return answers


def choose_probes(
    dialogues: list[CodeDialogue],
    targets: dict[str, list[str]],
    count: int = PROBE_TURNS,
    min_words: int = PROBE_MIN_WORDS,
    seed: int = PROBE_SEED,
) -> dict[tuple[str, int], tuple[str, bool]]:
    """The probe calls (contract section 10): for up to ``count`` turns whose target has at least
    ``min_words`` whitespace-separated words (and two different ones), drawn reproducibly from ``seed``,
    the target's words in another order and whether the probe is made before the turn's own call."""
    eligible = [
        (d["dialog_id"], i)
        for d in dialogues
        for i, target in enumerate(targets[d["dialog_id"]])
        if len(target.split()) >= min_words and len(set(target.split())) > 1
    ]
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(eligible)), min(count, len(eligible))))
    probes = {}
    for k in chosen:
        dialog_id, i = eligible[k]
        words = targets[dialog_id][i].split()
        shuffled = list(words)
        while shuffled == words:
            rng.shuffle(shuffled)
        probes[(dialog_id, i)] = (" ".join(shuffled), rng.random() < 0.5)
    return probes


def perplexities(
    dialogues: list[CodeDialogue],
    targets: dict[str, list[str]],
    code_root: str,
    settings: PhaseSettings,
    only: set[tuple[str, int]] | None = None,
    digest: str = "",
) -> tuple[dict[str, list[float | None]], dict[str, list[float | None]] | None]:
    """p_i = get_ppl(model, tokenizer, (q_i, t_i), [(q_k, t_k) for k < i]) for every turn (or ``only``'s),
    and with ``settings.probes`` the probe calls' values (None for a turn without a probe; None for both
    without probes)."""
    wanted = [
        (d, i)
        for d in dialogues
        for i in range(len(d["turns"]))
        if only is None or (d["dialog_id"], i) in only
    ]
    probes = (
        choose_probes(dialogues, targets, settings.probe_turns, settings.probe_min_words)
        if settings.probes and only is None
        else {}
    )
    progress = ProgressLines.of("ppl", len({d["dialog_id"] for d, _ in wanted}), len(wanted), settings)
    values: dict[str, list[float | None]] = {d["dialog_id"]: [None] * len(d["turns"]) for d in dialogues}
    probed: dict[str, list[float | None]] = {d["dialog_id"]: [None] * len(d["turns"]) for d in dialogues}
    digests = {
        "code": digest or code_digest(code_root),
        "data": data_digest("ppl", dialogues, targets, sorted(only or []), sorted(probes.items())),
    }
    turns = {d["dialog_id"]: len(d["turns"]) for d in dialogues}
    name = "ppl" if only is None else "ppl-only"
    with _Phase("ppl", name, code_root, settings, digests, turns, is_perplexity, progress) as phase:
        seen: set[str] = set()

        def value_of(
            dialog_id: str, i: int, target: str, probe: bool, history: list[Any], query: Any
        ) -> float:
            key = (dialog_id, i, probe)
            if key in phase.state.done:
                return float(phase.state.done[key])  # type: ignore[arg-type]
            request = Request(call="ppl", query=query, target=target, history=history)
            value = phase.call(request, "get_ppl", dialog_id, i)
            if not is_perplexity(value):
                raise CodeFault(
                    "wrong_value",
                    f"it returned {value!r}{' (a probe call)' if probe else ''}; a perplexity must be finite "
                    "and at least 1",
                    "ppl",
                    "get_ppl",
                    dialog_id,
                    i,
                )
            phase.state.keep(dialog_id, i, value, probe)
            return float(value)

        for done, (d, i) in enumerate(wanted, 1):
            dialog_id, queries, target = d["dialog_id"], d["turns"], targets[d["dialog_id"]]
            history = [[queries[k], target[k]] for k in range(i)]
            probe = probes.get((dialog_id, i))
            if probe is not None and probe[1]:
                probed[dialog_id][i] = value_of(dialog_id, i, probe[0], True, history, queries[i])
            values[dialog_id][i] = value_of(dialog_id, i, target[i], False, history, queries[i])
            if probe is not None and not probe[1]:
                probed[dialog_id][i] = value_of(dialog_id, i, probe[0], True, history, queries[i])
            seen.add(dialog_id)
            progress(len(seen), done)
        progress(len(seen), len(wanted), force=True)
    return values, (probed if settings.probes and only is None else None)


def numbers(values: dict[str, list[float | None]]) -> dict[str, list[float]]:
    """The perplexities of a run of every turn (no ``only``), where each value is a number."""
    return {k: [float(v) for v in vs if v is not None] for k, vs in values.items()}


@dataclass(frozen=True)
class RunOptions:
    """One run of the command line, built once from its arguments (:func:`options_of`)."""

    data: str
    code: str
    output: str
    phase: str = "all"
    only: str | None = None
    limit: int | None = None
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    turn_timeout: float = DEFAULT_TURN_TIMEOUT
    resume: bool = False
    sealed: bool = False
    keep_code: bool = False
    quiet: bool = False
    probe_turns: int = PROBE_TURNS
    probe_min_words: int = PROBE_MIN_WORDS
    step_timeout: float | None = None
    offline: bool = False
    trusted_code: bool = False
    network: str = NETWORK_SETTINGS[0]
    salt: str | None = None


# --- the configuration ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunConfig:
    """What ``run`` reads from the configuration (contract sections 7 and 10): ``[audit]`` probe_turns and
    probe_min_words, ``[competition] network``, ``[hidden_metric] salt`` (which keys ``ppl_targets.json``),
    and ``source``, the phrase that says on stderr which configuration it is."""

    probe_turns: int = PROBE_TURNS
    probe_min_words: int = PROBE_MIN_WORDS
    network: str = NETWORK_SETTINGS[0]
    salt: str | None = field(default=None, repr=False)
    source: str = "the built-in default configuration"


#: The most of a configuration file that is read.
MAX_CONFIG_BYTES = 1 << 20


def read_configuration(explicit: str | None, data: str) -> RunConfig:
    """The configuration of contract section 7's rule: ``--config FILE``, else ``config.toml`` in
    ``--data``, else the built-in default; read with ``tomllib`` (Python 3.11 or newer), the keys ``run``
    reads checked and the rest left to the scorer. A configuration found on a Python without ``tomllib`` is
    a UsageFault (exit 2) saying what to do instead."""
    if explicit is not None:
        path, source = explicit, f"config file {explicit}"
    else:
        path = os.path.join(data, CONFIG)
        source = f"{path} (next to the reference data)"
        if not os.path.lexists(path):
            return RunConfig()
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise UsageFault(
            f"{_excerpt(path, 200)}: this Python ({sys.version.split()[0]}) cannot read a configuration (it "
            "has no tomllib, new in Python 3.11): pass the options instead (no --config, a --data without "
            f"{CONFIG}), or use python -m scorer run, which reads it"
        ) from None
    if not os.path.isfile(path):
        raise UsageFault(f"config file {_excerpt(path, 200)} does not exist or is not a regular file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise UsageFault(f"cannot read config file {_excerpt(path, 200)}: {_reason(exc)}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise UsageFault(f"config file {_excerpt(path, 200)} is larger than {MAX_CONFIG_BYTES >> 20} MiB")
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageFault(f"config file {_excerpt(path, 200)} is not valid TOML ({_reason(exc)})") from None
    audit, competition, hidden = (_section(table, name) for name in ("audit", "competition", "hidden_metric"))
    network = competition.get("network", NETWORK_SETTINGS[0])
    if network not in NETWORK_SETTINGS:
        raise UsageFault(
            f'config key competition.network must be "refused" or "allowed", got {_excerpt(network)}'
        )
    salt = hidden.get("salt")
    if salt is not None and not (isinstance(salt, str) and len(salt) >= 16):
        raise UsageFault("config key hidden_metric.salt must be a string of at least 16 characters")
    return RunConfig(
        _whole("audit.probe_turns", audit.get("probe_turns", PROBE_TURNS), 0, 10_000_000),
        _whole("audit.probe_min_words", audit.get("probe_min_words", PROBE_MIN_WORDS), 2, 10_000),
        network,
        salt,
        source,
    )


def _section(table: dict[str, Any], name: str) -> dict[str, Any]:
    value = table.get(name, {})
    if not isinstance(value, dict):
        raise UsageFault(f"config key {name} must be a [section] table")
    return value


def _whole(key: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageFault(
            f"config key {key} must be a whole number from {low} to {high}, got {_excerpt(value)}"
        )
    return value


def target_digest(targets: list[str], salt: str | None) -> str:
    """A dialogue's targets [t_0, ..., t_n] as ``ppl_targets.json`` holds them: the first 16 hex digits of the
    HMAC-SHA-256 keyed with ``salt`` (its UTF-8 bytes), or of the plain SHA-256 without one, of their
    canonical JSON: ``json.dumps(targets, ensure_ascii=True, sort_keys=True, separators=(",", ":"))``, whose
    bytes are ASCII (every character past U+007F, a lone surrogate included, a ``\\uXXXX`` escape)."""
    canonical = json.dumps(list(targets), ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode(
        "ascii"
    )
    if salt is None:
        return hashlib.sha256(canonical).hexdigest()[:16]
    return hmac.new(salt.encode("utf-8"), canonical, hashlib.sha256).hexdigest()[:16]


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
                _remove(path)

    def put(self, name: str, data: bytes, now: bool = True) -> None:
        self.files[name] = data
        if now:
            _write_atomically(os.path.join(self.folder, name), data)

    def finish(self, keep_state: bool) -> None:
        """Remove everything the run did not write, then write every file from memory."""
        held = {**self.kept, **self.files}
        for entry in os.listdir(self.folder):
            if entry not in held and not (entry == STATE_DIR and keep_state) and entry != TEAM_CODE:
                _remove(os.path.join(self.folder, entry))
        kept_code = os.path.join(self.folder, TEAM_CODE)
        if os.path.lexists(kept_code):
            _remove(kept_code)
        if self.code is not None:
            shutil.copytree(os.path.join(self.code, TEAM_CODE), kept_code, symlinks=True)
        for name, data in held.items():
            _write_atomically(os.path.join(self.folder, name), data)


def _json_bytes(value: object) -> bytes:
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def run(options: RunOptions) -> int:
    """The whole run of the command line's ``options`` (see the module docstring); its exit code."""
    if _inside(options.code, options.output) or _inside(options.data, options.output):
        raise UsageFault(
            f"--output {_excerpt(options.output, 200)} holds --code or --data: give the run a folder of its "
            "own (whatever else stands in it is removed when the run ends)"
        )
    if options.resume and options.sealed:
        raise UsageFault("--sealed keeps no turns on disk, so there is nothing to --resume from")
    with_answers = os.path.lexists(os.path.join(options.data, ANSWERS))
    generating = options.phase in ("all", "generate") and not options.only
    if generating and with_answers:
        if not options.trusted_code:
            raise UsageFault(answers_refusal(options))
        print(
            f"run: --trusted-code: the code runs beside {_excerpt(os.path.join(options.data, ANSWERS), 200)} "
            "and could read the answers while it generates; use it only for code you trust",
            file=sys.stderr,
        )
    withheld = options.sealed and with_answers  # a phase that has the answers: one fixed line for a fault
    os.makedirs(options.output, exist_ok=True)
    become_subreaper()
    if options.sealed:
        become_undumpable()
        print(
            "run: sealed: the code's output is discarded and "
            + ("a fault is reported by one fixed line" if withheld else "faults are named by kind and place"),
            file=sys.stderr,
        )
    dialogues = read_dialogues(options.data)
    if options.limit is not None:
        total = len(dialogues)
        dialogues = dialogues[: options.limit]
        print(
            f"run: --limit {options.limit}: a trial on the first {len(dialogues)} of {total} dialogues; the "
            "outputs do not cover the data set (validate names the dialogues they miss)",
            file=sys.stderr,
        )
    only = read_only(options.only, dialogues) if options.only else None
    keep = {
        "all": (),
        "generate": (),
        "ppl": (SUBMISSION,) if only is None else (SUBMISSION, PPL, PPL_PROBES, PPL_TARGETS),
    }[options.phase if only is None else "ppl"]
    outputs = Outputs(options.output, keep)
    if options.offline:
        if options.network == "allowed" and not options.quiet:
            print(
                "run: --offline: the network is checked, although the configuration says [competition] "
                'network = "allowed"',
                file=sys.stderr,
            )
        refusal = network_refusal()
        if refusal is not None:
            outputs.put(RUN_FAULT, _json_bytes(NETWORK_FAULT), now=False)
            outputs.finish(keep_state=not options.sealed)
            raise UsageFault(refusal)
    state = None if options.sealed else os.path.join(options.output, STATE_DIR)
    scratch = tempfile.mkdtemp(prefix="scorer-code-")
    settings = PhaseSettings.of(options, state)
    try:
        code_root = find_code(options.code, scratch)
        digest = code_digest(code_root)
        answers: dict[str, list[str]] | None = None
        if generating:
            answers = generate(dialogues, code_root, settings, digest)
            lines = "".join(
                json.dumps(
                    {"dialog_id": d["dialog_id"], "answers": answers[d["dialog_id"]]}, ensure_ascii=False
                )
                + "\n"
                for d in dialogues
            )
            outputs.put(SUBMISSION, lines.encode("utf-8"))
            if not options.quiet:
                print(f"run: wrote {os.path.join(options.output, SUBMISSION)}", file=sys.stderr)
            if options.keep_code:  # the prediction step hands the code on to the scoring step
                outputs.code = code_root
        if options.phase in ("all", "ppl"):
            # every answer is written and closed before answers.jsonl is opened
            targets = read_targets(options.data, dialogues)
            with_targets = targets is not None
            if targets is None:
                print(
                    f"run: no {ANSWERS} in {options.data}: the perplexities are of the model's own answers "
                    f"({SUBMISSION}), not of the competition's targets",
                    file=sys.stderr,
                )
                targets = answers or _own_answers(outputs.kept.get(SUBMISSION), options.output, dialogues)
            settings = PhaseSettings.of(options, state, probes=with_targets)
            values, probed = perplexities(dialogues, targets, code_root, settings, only, digest)
            if only is None:
                outputs.put(PPL, _json_bytes(numbers(values)))
                if probed is not None:
                    outputs.put(PPL_PROBES, _json_bytes(probed))
                if with_targets:
                    digests = {
                        d["dialog_id"]: target_digest(targets[d["dialog_id"]], options.salt)
                        for d in dialogues
                    }
                    outputs.put(PPL_TARGETS, _json_bytes({"digests": digests}))
            else:
                check = {k: vs for k, vs in values.items() if any(v is not None for v in vs)}
                outputs.put(PPL_CHECK, _json_bytes(check))
            if not options.quiet:
                for name in (PPL, PPL_PROBES, PPL_TARGETS, PPL_CHECK):
                    if name in outputs.files:
                        print(f"run: wrote {os.path.join(options.output, name)}", file=sys.stderr)
                if PPL_TARGETS in outputs.files and options.salt is None:
                    print(
                        f"run: {PPL_TARGETS} is unsalted (the configuration has no [hidden_metric] salt): "
                        "like audit.json, it is for the organizer only",
                        file=sys.stderr,
                    )
    except CodeFault as fault:
        if withheld:
            fault = fault.withhold()
        outputs.put(RUN_FAULT, _json_bytes(fault.record()), now=False)
        raise fault from None
    finally:
        left = kill_descendants()
        shutil.rmtree(scratch, ignore_errors=True)
        if not left:
            outputs.finish(keep_state=not options.sealed)
    return EXIT_OK


#: ``run_fault.json`` when a network interface other than loopback is up under ``--offline``.
NETWORK_FAULT = {"kind": "network", "phase": None, "function": None, "dialog_id": None, "turn": None}


def answers_refusal(options: RunOptions) -> str:
    """Why ``run --phase all`` or ``generate`` refuses a ``--data`` holding ``answers.jsonl``, and the two
    ways out."""
    data, code, output = (_shown_path(x) for x in (options.data, options.code, options.output))
    return (
        f"--data {data} holds {ANSWERS}, and the team's code could read the answers while it generates (it "
        "runs as your user). Generate on data without answers (a bundle's input_data/, or a folder holding "
        f"only {DIALOGUES} and its media): run --phase generate --data PUBLIC --code {code} --output "
        f"{output}, then run --phase ppl --data {data} --code {code} --output {output}, which keeps the "
        f"{SUBMISSION} it finds there and writes {PPL} and {PPL_PROBES}; or, for code you trust (your own "
        "baseline, a demo on the bundled example), add --trusted-code"
    )


def _shown_path(path: str) -> str:
    """A path as a command line would take it (quoted for the shell), or an excerpt of a long one."""
    return shlex.quote(printable(path)) if len(path) <= 200 else _excerpt(path, 200)


def _own_answers(kept: bytes | None, output: str, dialogues: list[CodeDialogue]) -> dict[str, list[str]]:
    path = os.path.join(output, SUBMISSION)
    if kept is None:
        raise UsageFault(
            f"there is no {ANSWERS} and no {path}: run the generate phase first (--phase all or generate)"
        )
    answers = {}
    for number, line in enumerate(kept.split(b"\n"), 1):
        if not line.strip():
            continue
        row = _json_line(line)
        if not isinstance(row, dict):
            raise UsageFault(f"{path}, line {number}: not a JSON object")
        if isinstance(row.get("dialog_id"), str) and isinstance(row.get("answers"), list):
            answers[row["dialog_id"]] = [a if isinstance(a, str) else "" for a in row["answers"]]
    for d in dialogues:
        if len(answers.get(d["dialog_id"], [])) != len(d["turns"]):
            raise UsageFault(f"{path}: dialog_id {_excerpt(d['dialog_id'])} has no answer for every turn")
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
    parser.add_argument(
        "--output",
        required=True,
        metavar="DIR",
        help="the run's own folder: the files are written there, and whatever else stands there is removed",
    )
    parser.add_argument("--phase", choices=("all", "generate", "ppl"), default="all")
    parser.add_argument(
        "--only",
        metavar="FILE",
        help="the JSONL of audit-sample: perplexities of those turns alone, "
        "written as ppl_check.json (the shape of score --ppl-check)",
    )
    parser.add_argument(
        "--limit", type=int, metavar="N", help="a trial: run the phases on the first N dialogues only"
    )
    parser.add_argument("--setup-timeout", type=float, default=DEFAULT_SETUP_TIMEOUT, metavar="S")
    parser.add_argument("--turn-timeout", type=float, default=DEFAULT_TURN_TIMEOUT, metavar="S")
    parser.add_argument(
        "--step-timeout",
        type=float,
        metavar="S",
        help="bound each phase as a whole (import, setup and every call); default: no bound",
    )
    parser.add_argument("--resume", action="store_true", help="continue from OUTPUT/.run-state/")
    parser.add_argument(
        "--sealed",
        action="store_true",
        help="for code that can read what must not be shown: its output discarded, faults by kind and place "
        "(with answers.jsonl in --data, by one fixed line)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="refuse to run the code where a network interface other than loopback is up",
    )
    parser.add_argument(
        "--trusted-code",
        action="store_true",
        help="generate although --data holds answers.jsonl, which the code could read (your own baseline)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file (default: config.toml in --data when present); run reads [audit] probe_turns and "
        "probe_min_words, [competition] network and [hidden_metric] salt",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--keep-code",
        action="store_true",
        help="copy team_code/ into --output after generating (a code competition's prediction step)",
    )


def check_timeouts(setup: float, turn: float, step: float | None = None) -> str | None:
    """What is wrong with the limits (each a positive, finite number of seconds; ``step`` may be None), or
    None."""
    for name, value in (("--setup-timeout", setup), ("--turn-timeout", turn), ("--step-timeout", step)):
        if value is not None and not 0 < value < math.inf:
            return f"{name} {value:g}: give a positive number of seconds"
    return None


def options_of(arguments: argparse.Namespace, configuration: RunConfig | None = None) -> RunOptions:
    """The run's options, once, from the parsed command line and the ``configuration`` it reads (None: the
    built-in one); UsageFault for values out of range."""
    configuration = configuration or RunConfig()
    problem = check_timeouts(arguments.setup_timeout, arguments.turn_timeout, arguments.step_timeout)
    if problem:
        raise UsageFault(problem)
    if arguments.limit is not None and arguments.limit < 1:
        raise UsageFault(f"--limit {arguments.limit}: give how many dialogues to run (1 or more)")
    return RunOptions(
        data=arguments.data,
        code=arguments.code,
        output=arguments.output,
        phase=arguments.phase,
        only=arguments.only,
        limit=arguments.limit,
        setup_timeout=arguments.setup_timeout,
        turn_timeout=arguments.turn_timeout,
        resume=arguments.resume,
        sealed=arguments.sealed,
        keep_code=arguments.keep_code,
        quiet=arguments.quiet,
        probe_turns=configuration.probe_turns,
        probe_min_words=configuration.probe_min_words,
        step_timeout=arguments.step_timeout,
        offline=arguments.offline,
        trusted_code=arguments.trusted_code,
        network=configuration.network,
        salt=configuration.salt,
    )


_STOPPED = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    for sig in _STOPPED:
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def main(
    argv: list[str] | None = None,
    prog: str = "runner.py",
    configure: Callable[[str | None, str], RunConfig] | None = None,
) -> int:
    """The command line (``argv``, default ``sys.argv[1:]``) and its exit code. ``configure`` reads the
    configuration (``--config`` or None, ``--data``) into a :class:`RunConfig`, raising UsageFault for one
    that cannot be used: ``python -m scorer run`` passes the scorer's reader; the default is
    :func:`read_configuration`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--child"]:
        child_main(argv[1], int(argv[2]), int(argv[3]), "--silent" in argv)
        return 0
    try:
        arguments = build_parser(prog).parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else 0
    previous = {sig: signal.signal(sig, _stop) for sig in _STOPPED}
    sealed = bool(arguments.sealed)
    try:
        configuration = (configure or read_configuration)(arguments.config, arguments.data)
        if not arguments.quiet:
            print(f"config: {configuration.source}", file=sys.stderr)
        return run(options_of(arguments, configuration))
    except Stopped as exc:
        kill_descendants()
        where = "" if sealed else f" in {os.path.join(arguments.output, STATE_DIR)} (run again with --resume)"
        print(
            f"run: stopped by {signal.Signals(exc.signum).name}"
            + (f"; the finished turns are kept{where}" if where else ""),
            file=sys.stderr,
        )
        return _STOPPED[signal.Signals(exc.signum)]
    except CodeFault as fault:
        kill_descendants()
        print(fault.report(not sealed), file=sys.stderr)
        if fault.kind == "exception" and not sealed and "ModuleNotFoundError" in fault.detail:
            print(
                f"run: the code ran under {sys.executable}; install what it imports there, or run the runner "
                "with the Python that has the team's packages (python3 runner.py ..., the runner needs only "
                "the standard library)",
                file=sys.stderr,
            )
        if fault.kind not in ("missing", "upload") and not sealed:
            print(
                f"run: the finished turns are kept in {os.path.join(arguments.output, STATE_DIR)}",
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
