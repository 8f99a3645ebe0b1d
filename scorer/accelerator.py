"""The optional compiled core of rule 1 (:mod:`scorer._rule1`) and when it is used.

The pure-Python engine is the definition of the metric; the compiled core,
built at install time when a C compiler is there, computes the same link
counts faster for the default mode (penalty off). It is used when it was
built, the stages start with ``exact`` (and name it once), and the
environment variable ``SCORER_PURE_PYTHON`` is unset or ``0``; for a pair it
cannot settle (a general component, a very long text) it answers None and
the pure engine scores that pair. ``scorer --version`` says which path is
active.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

try:
    from . import _rule1
except ImportError:  # not built: no compiler at install time
    _rule1 = None

if TYPE_CHECKING:
    from .matcher import KeyFunction

PURE_ENV = "SCORER_PURE_PYTHON"


def compiled() -> bool:
    """Whether the compiled core was built."""
    return _rule1 is not None


def active() -> bool:
    """Whether the compiled core is built and not switched off."""
    return _rule1 is not None and os.environ.get(PURE_ENV, "").strip() in ("", "0")


def description() -> str:
    """``engine: compiled core`` or ``engine: pure Python`` and why (``scorer --version``)."""
    if active():
        return "engine: compiled core"
    if compiled():
        return f"engine: pure Python ({PURE_ENV} set)"
    return "engine: pure Python (compiled core not built)"


class FastCounts:
    """Rule 1's per-stage counts through the compiled core, for one matcher's key functions.

    Tokens are interned on first sight: their keys at every stage after the
    leading exact one become sorted lists of key ids.
    """

    def __init__(self, key_functions: Sequence[KeyFunction]):
        self.later = [f for f in key_functions[1:] if f is not None]
        self.table = _rule1.KeyTable(len(self.later))
        self.table.intern = self._intern
        self.key_ids: dict[str, int] = {}

    def _intern(self, token: str) -> int:
        key_ids = self.key_ids
        return self.table.add(token, [sorted({key_ids.setdefault(k, len(key_ids)) for k in f(token)})
                                      for f in self.later])

    def counts(self, cand: list[str], ref: list[str]) -> list[int] | None:
        """Per-stage counts of two non-empty token lists, or None where the pure engine must answer."""
        return self.table.counts(cand, ref)


def fast_counts(key_functions: Sequence[KeyFunction]) -> FastCounts | None:
    """A :class:`FastCounts` for these stages, or None when the pure engine is to be used."""
    if not active() or not key_functions or key_functions[0] is not None or None in key_functions[1:]:
        return None
    return FastCounts(key_functions)
