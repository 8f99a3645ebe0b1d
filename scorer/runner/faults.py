"""The runner's two faults: :class:`UsageFault` (a usage or data error, exit 2) and :class:`CodeFault` (a
fault of the team's code, exit 1, named by the runner's own record of the call), with a sealed run's
messages.
"""

from __future__ import annotations

from typing import Any

from .names import SEALED_FAULT_LINE, fault_place

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
        return fault_place(self.phase, self.function, self.dialog_id, self.turn)

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
