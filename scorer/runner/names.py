"""The runner's names, which the rest of the scorer imports (contract sections 2, 7, 9 and 10): exit codes,
the files of ``--data`` and ``--output``, the fault kinds and the functions a fault may name, the one line of
a withheld fault, the network's settings, the defaults of the runner's limits and probe calls, the rules of
the configuration's keys the runner reads (the scorer's reader checks them by the same values), the signals
held before the runner takes them; and the rules the runner shares with the rest: the one that makes text
harmless to read (:func:`printable`), a signal's name (:func:`signal_name`), a fault's place as it is said
(:func:`fault_place`) and the digest of ``ppl_targets.json`` (:func:`target_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import signal

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
#: Every name the runner writes into ``--output`` (``outputs.py`` writes no file of another name); anything
#: else found there when a run ends is removed.
OUTPUT_NAMES = (SUBMISSION, PPL, PPL_PROBES, PPL_TARGETS, PPL_CHECK, TEAM_CODE, STATE_DIR, RUN_FAULT)
DIALOGUES, ANSWERS, CONFIG = "dialogues.jsonl", "answers.jsonl", "config.toml"
DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT = 3600.0, 600.0
#: The probe calls' defaults (``[audit]`` probe_turns and probe_min_words, contract section 9) and seed.
PROBE_TURNS, PROBE_MIN_WORDS, PROBE_SEED = 100, 5, 12345
#: The bounds of ``[audit]`` probe_turns and probe_min_words (contract section 7), which the scorer's reader
#: of the configuration (``scorer/inputs/config.py``) and the runner's (``configuration.py``) both check: no
#: probes at all is allowed; a shuffle that differs from its text needs two words.
PROBE_BOUNDS = {"probe_turns": (0, 10_000_000), "probe_min_words": (2, 10_000)}
#: ``[competition] network``'s settings, the built-in one first (contract sections 7 and 10), and the words a
#: message names them with.
NETWORK_SETTINGS = ("refused", "allowed")
NETWORK_CHOICES = " or ".join(f'"{setting}"' for setting in NETWORK_SETTINGS)
#: The fewest characters of ``[hidden_metric] salt`` (contract section 7).
MIN_SALT_CHARS = 16
#: The kinds of fault (``run_fault.json``'s ``kind``): a closed set. ``network`` is the machine's, not the
#: code's: a network interface other than loopback was up where ``--offline`` forbids one (exit 2).
FAULT_KINDS = ("upload", "missing", "exception", "wrong_value", "timeout", "died", "protocol", "network")
#: The one line that reports a fault of the code in a phase that has the answers (``--sealed`` with
#: ``answers.jsonl`` in ``--data``): no kind, function, place, signal, exit status or excerpt.
SEALED_FAULT_LINE = "the team's code failed in the scoring step"
#: The setting of a Codabench worker that runs the steps without a network.
NETWORK_DISABLED = "COMPETITION_CONTAINER_NETWORK_DISABLED=True"
#: The last lines of the code's traceback that a fault shows.
TRACEBACK_LINES = 20
#: The characters of a value that a fault shows.
EXCERPT = 60
#: ``run_fault.json`` when a network interface other than loopback is up under ``--offline``.
NETWORK_FAULT = {"kind": "network", "phase": None, "function": None, "dialog_id": None, "turn": None}
#: The SIGINT and SIGTERM received before the runner's ``main`` takes the signals, in order: under ``python -m
#: scorer.runner`` the scorer's stop (``scorer/stop.py``) holds them here while the package is imported, and
#: the runner's ``__main__`` hands them on to ``main`` (in the one file nothing holds them here).
HELD_SIGNALS: list[int] = []


def signal_name(signum: int) -> str:
    """A signal as messages name it: ``SIGTERM``, or ``signal 40`` for a number without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


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


def excerpt(value: object, limit: int = EXCERPT) -> str:
    """``value`` (a text, or the repr of anything else) made printable, quoted, and cut at ``limit``."""
    text = printable(value if isinstance(value, str) else repr(value))
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def reason(exc: BaseException) -> str:
    """What went wrong in ``exc``, printable: its strerror, else its text, else its type's name."""
    return printable(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)


def fault_place(phase: str, function: str, dialog_id: str | None, turn: int | None) -> str:
    """Where a fault of the code happened, as its report and a repeated ``run_fault.json`` say it:
    ``phase ppl, function get_ppl, dialog_id 'd-1', turn 0`` (the parts known)."""
    parts = [f"phase {phase}"] if phase else []
    if function:
        parts.append(f"function {function}")
    if dialog_id is not None:
        parts.append(f"dialog_id {excerpt(dialog_id)}")
    if turn is not None:
        parts.append(f"turn {turn}")
    return ", ".join(parts)


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
