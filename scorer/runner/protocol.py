"""The protocol between the runner and the code's process (contract section 10): the child's side
(:func:`child_main`: the code imported afresh, one call a request), the replies checked as untrusted data
(:func:`checked_reply`), and the values each phase accepts.
"""

from __future__ import annotations

import json
import math
import os
import sys
import traceback
from typing import Any, Dict, TypedDict  # noqa: UP035 - Dict: Python 3.8

from .data import Part
from .faults import CodeFault
from .limits import keep_limits_of
from .names import EXCERPT, TEAM_FUNCTIONS, TRACEBACK_LINES, printable

#: What each function must return, as faults say it.
WANTED = {
    "setup_model_and_tokenizer": "a (model, tokenizer) pair",
    "generate_text": "a str (or a tuple whose first element is a str)",
    "get_ppl": "a real number: a float, an int, or a value whose float() is one (float(x) or x.item() of a "
    "0-d tensor)",
}


class Request(TypedDict, total=False):
    """What the runner asks the code's process: ``call`` (setup, generate or ppl), the turn's ``query``, its
    ``history`` of (query, answer or target) pairs and, for ppl, the ``target``."""

    call: str
    query: list[Part]
    history: list[tuple[list[Part], str]]
    target: str


#: The most names of the module a ``missing`` report may list (``held``; the message shows the first 50). The
#: functions it says are missing (``missing``) are among the three, each named once.
MAX_HELD = 10_000

#: A reply of the code's process once checked (:func:`checked_reply`): ``{"ok": value}`` or
#: ``{"ready": True}``.
Reply = Dict[str, Any]  # noqa: UP006 - evaluated at run time: Python 3.8 has no dict[...]


def child_main(code_root: str, reader_fd: int, writer_fd: int, silent: bool) -> None:
    """The child: the code imported afresh, then one call a request, each answered on the protocol pipe.
    The code's own stdout goes to stderr (or nowhere with ``silent``). First, before any of the code runs,
    neither this process nor any it starts may change the runner's resource limits (its parent's:
    :func:`~.limits.keep_limits_of`)."""
    keep_limits_of()
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

    # the runner's own modules, neither on the import path (the folder or zip archive that holds them: the
    # scorer's modules with them) nor by name (a module ``runner`` of the code is the code's)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != root]
    package = __name__.rpartition(".")[0]
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]
    sys.path.insert(0, code_root)
    try:
        import importlib

        module = importlib.import_module("team_code.generate")
    except BaseException:  # noqa: BLE001 - the team's import, whatever it raises
        reply({"fault": "exception", "trace": _trace()})
        return
    missing = [name for name in TEAM_FUNCTIONS if not callable(getattr(module, name, None))]
    if missing:
        held = sorted(n for n in dir(module) if not n.startswith("_"))[:MAX_HELD]
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
                if not isinstance(value, str) or not is_text(value):
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


def is_text(value: str) -> bool:
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
    if isinstance(value, str) and not is_text(value):
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
            and _strings(reply["missing"], len(TEAM_FUNCTIONS))
            and set(reply["missing"]) <= set(TEAM_FUNCTIONS)
            and len(set(reply["missing"])) == len(reply["missing"]) > 0
            and _strings(reply["held"], MAX_HELD)
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
            if not is_text(value):
                raise CodeFault("wrong_value", f"it returned {_describe(value)}")
            return reply
        if call == "ppl" and isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return {"ok": float(value)}
            except OverflowError:
                raise CodeFault("wrong_value", "it returned an int too large for a float") from None
    raise CodeFault("protocol", f"a reply that is not the protocol's answer to a {call} call")


def is_answer(value: object) -> bool:
    """An answer the generate phase accepts: a str of Unicode text."""
    return isinstance(value, str) and is_text(value)


def is_perplexity(value: object) -> bool:
    """A perplexity the ppl phase accepts: a finite float of at least 1."""
    return isinstance(value, float) and math.isfinite(value) and value >= 1
