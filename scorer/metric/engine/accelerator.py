"""Which build of the engine runs: the definition's modules compiled, or pure Python.

The pure-Python modules (:mod:`~scorer.metric.engine.links`, :mod:`~scorer.metric.engine.counting`,
:mod:`~scorer.metric.engine.alignment`, :mod:`~scorer.metric.engine.formula`) define the metric. When a C
compiler was there at install time, the same modules sit beside them compiled with Cython
(``scorer._compiled.*``, built by ``setup.py``), with one helper more:
:mod:`~scorer.metric.engine.id_counts`, rule 1's counts on interned token ids (the default mode), which
settles nearly every pair and declines (None) where the definition's flow is needed. Modules with a
``.pxd`` beside them are compiled with its C types (Cython's pure-Python mode).

The compiled modules are used when all were built from the sources installed beside them (each carries
``__source_sha256__``, stamped by the build: an edited checkout, or one whose rebuild failed, runs the
pure engine until rebuilt) and ``SCORER_PURE_PYTHON`` is unset or ``0``. Both give the same numbers; CI
checks it. ``scorer --version`` says which one is active and why.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Collection, Container, Iterable, Sequence
from functools import lru_cache
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from . import alignment, counting, formula, links
from .alignment import NODE_BUDGET, Alignment
from .compiled_modules import COMPILED, source_digest
from .links import KeyFunction, counts_of

Keys = tuple[KeyFunction, ...]  # the key function of each stage
Texts = Sequence[Sequence[str]]  # token lists
Counted = list[int] | None  # links of each stage, or None: no tokens, or declined

PURE_ENV = "SCORER_PURE_PYTHON"
_SOURCES = Path(__file__).resolve().parent  # the engine's sources, which the compiled modules must match


def _extension(name: str) -> ModuleType | None:
    """The compiled module ``scorer._compiled.<name>``, or None when it is missing or not an extension
    module."""
    try:
        module = importlib.import_module(f"scorer._compiled.{name}")
    except ImportError:
        return None
    file = getattr(module, "__file__", "") or ""
    return module if any(file.endswith(suffix) for suffix in EXTENSION_SUFFIXES) else None


@lru_cache(maxsize=1)
def _built() -> tuple[dict[str, ModuleType], str]:
    """The compiled modules by name when all are built and fresh, else ``({}, why not)``."""
    found = {name: _extension(name) for name in COMPILED}
    modules = {name: module for name, module in found.items() if module is not None}
    if len(modules) < len(found):
        missing = ", ".join(name for name in COMPILED if name not in modules)
        return {}, f"compiled engine not built: {missing}"
    stale = [
        name for name, module in modules.items() if module.__dict__.get("__source_sha256__") != _digest(name)
    ]
    if stale:
        return {}, f"compiled engine out of date: {', '.join(stale)} built from another source"
    return modules, ""


def _digest(name: str) -> str | None:
    """The SHA-256 of the source the compiled module ``name`` must have been built from."""
    try:
        return source_digest(_SOURCES, COMPILED[name])
    except OSError:
        return None


def compiled() -> bool:
    """Whether the compiled engine was built, and from the sources beside it."""
    return bool(_built()[0])


def active() -> bool:
    """Whether the compiled engine is built, fresh and not switched off."""
    return compiled() and os.environ.get(PURE_ENV, "").strip() in ("", "0")


def description() -> str:
    """``engine: compiled (Cython)``, or ``engine: pure Python`` and why (``scorer --version``)."""
    if active():
        return "engine: compiled (Cython)"
    if compiled():
        return f"engine: pure Python ({PURE_ENV} set)"
    return f"engine: pure Python ({_built()[1]})"


class StoredTable(NamedTuple):
    """A token table as ``KeyTable.export`` gives it, the key strings in id order (``token_cache``)."""

    tokens: list[str]
    keys: list[str]
    start: bytes
    length: bytes
    data: bytes


class FastCounts:
    """Rule 1's per-stage counts through the compiled ``id_counts``, for one matcher's key functions: a
    token is interned on first sight, its keys at every stage after the leading exact one made key ids."""

    def __init__(self, id_counts: ModuleType, key_functions: Sequence[KeyFunction]):
        self.later = [f for f in key_functions[1:] if f is not None]
        self.table = id_counts.KeyTable(len(self.later), self._intern)
        self.key_ids: dict[str, int] = {}
        self.restored = 0  # tokens taken from a stored table

    def restore(self, stored: StoredTable) -> bool:
        """Take a stored table (:mod:`scorer.metric.token_cache`) into this empty one; False, nothing
        taken, when it does not fit (its arrays, ids or tokens fail ``KeyTable.restore``'s checks)."""
        if self.key_ids or self.table.n_tokens:
            return False
        if not self.table.restore(stored.tokens, stored.start, stored.length, stored.data, len(stored.keys)):
            return False
        self.key_ids = {key: k for k, key in enumerate(stored.keys)}
        self.restored = len(stored.tokens)
        return True

    def stored(self, skip: Container[str], more: Iterable[str] = ()) -> StoredTable | None:
        """This table to store, the tokens of ``more`` interned first and those in ``skip`` left out; None
        when it holds nothing beyond what was restored."""
        for token in more:
            if token not in self.table.ids and token not in skip:
                self._intern(token)
        if self.table.n_tokens <= self.restored:
            return None
        tokens, start, length, data = self.table.export(skip)
        if tokens == self.table.tokens[: self.restored]:
            return None  # all that grew was left out
        keys = sorted(self.key_ids, key=self.key_ids.__getitem__)  # the key strings in id order (0, 1, ...)
        return StoredTable(tokens, keys, start, length, data)

    def grew(self, keep: Container[str] | None = None) -> bool:
        """Whether tokens were interned since the table was made or restored (of ``keep``, when given)."""
        return any(keep is None or t in keep for t in self.table.tokens[self.restored :])

    def _intern(self, token: str) -> int:
        found: int = self.table.add_keys(token, [f(token) for f in self.later], self.key_ids)
        return found


class Engine:
    """What METEOR asks of the engine (contract section 4), from ``links``, ``counting``, ``alignment`` and
    ``formula``: the pure modules, or the same modules compiled with the compiled ``id_counts`` in front of
    them."""

    def __init__(
        self,
        name: str,
        links: ModuleType,
        counting: ModuleType,
        alignment: ModuleType,
        id_counts: Any = None,
        formula: ModuleType = formula,
    ):
        self.name, self.links, self.counting, self.alignment = name, links, counting, alignment
        self.formula = formula  # METEOR's figures from links (the best variant of each turn, without penalty)
        self.id_counts = id_counts  # None: rule 1 is counted by the definition
        self.counts_on_ids = id_counts is not None
        self._fast: dict[Keys, FastCounts | None] = {}
        self._looked_up: dict[Keys, set[str]] = {}  # by the pure engine (:meth:`_look_up`)

    def fast_counts(self, key_functions: Keys) -> FastCounts | None:
        """The compiled ``id_counts`` counter for these key functions, or None where it does not apply."""
        if key_functions not in self._fast:  # it applies to stages led by exact alone
            self._fast[key_functions] = (
                FastCounts(self.id_counts, key_functions) if self.id_counts and _led(key_functions) else None
            )
        return self._fast[key_functions]

    def unknown_tokens(self, texts: Texts, key_functions: Keys) -> Collection[str]:
        """The distinct tokens of ``texts`` whose keys the engine may still ask for: on the compiled engine
        those its token table for these key functions has not interned (found at C speed), else all."""
        fast = self.fast_counts(key_functions)
        return set().union(*texts) if fast is None else fast.table.unknown(texts)

    def variant_counts(self, cand: Sequence[str], variants: Texts, key_functions: Keys) -> list[Counted]:
        return self.variant_counts_each([cand], [variants], key_functions)[0]

    def variant_counts_each(
        self, cands: Texts, variants: Sequence[Texts], key_functions: Keys
    ) -> list[list[Counted]]:
        """Rule 1's per-stage counts of each answer against each of its variants (None: an empty one)."""
        fast = self.fast_counts(key_functions)
        if fast is None:
            self._look_up([t for c, v in zip(cands, variants) if c for t in (c, *v)], key_functions)
            return [self._declined(c, v, [None] * len(v), key_functions) for c, v in zip(cands, variants)]
        counts_each, declined = fast.table.counts_each, self._declined
        found = [counts_each(c, v) for c, v in zip(cands, variants)]
        return [
            f if None not in f else declined(c, v, f, key_functions)
            for c, v, f in zip(cands, variants, found)
        ]

    def _look_up(self, texts: Texts, key_functions: Keys) -> None:
        """On the pure engine, what the compiled one's token table does as it takes in the tokens of a turn
        with a non-empty answer (``texts``: its answer and variants): with stages led by exact alone, the keys
        of every token looked up (memoised), once an engine. The definition itself looks up only the tokens
        the exact stage leaves; after this, the words found unanalysable (the run's warnings) and the keys
        the caches keep are the same on both engines."""
        if not _led(key_functions):
            return
        seen = self._looked_up.setdefault(key_functions, set())
        fresh = set().union(*texts)
        fresh -= seen
        if fresh:
            seen |= fresh
            later = [keys for keys in key_functions[1:] if keys is not None]
            for token in fresh:
                for keys in later:
                    keys(token)

    def _declined(
        self, cand: Sequence[str], variants: Texts, found: list[Counted], key_functions: Keys
    ) -> list[Counted]:
        """``found``, with the counts the compiled table declined (None for a non-empty variant) from the
        definition, on the type graph the table finds on ids where it finds one."""
        cand_counts = None
        fast = self._fast.get(key_functions)
        for k, ref in enumerate(variants):
            if found[k] is None and ref:  # declined, or no compiled counts: the definition answers
                fields = fast.table.graph(cand, ref) if fast is not None else None
                if fields is not None:
                    graph = self.links.TypeGraph(*fields)
                else:
                    cand_counts = cand_counts or counts_of(cand)
                    graph = self.links.type_graph(cand_counts, counts_of(ref), key_functions)
                found[k] = self.counting.stage_counts(graph, len(key_functions))
        return found

    def links_and_chunks(
        self,
        cand: Sequence[str],
        ref: Sequence[str],
        key_functions: Keys,
        budget: int = NODE_BUDGET,
        counts: Sequence[int] | None = None,
    ) -> tuple[int, int, bool]:
        """The alignment's number of links, its chunks and whether its search was exact (``counts``: rule 1's
        links by stage, when known): on the compiled engine read off the token ids when every link is forced
        (``KeyTable.forced_or_graph``), else from the alignment."""
        fast = self.fast_counts(key_functions)
        graph = None
        if fast is not None:
            found = fast.table.forced_or_graph(cand, ref)
            if found is not None and len(found) == 2:
                return found[0], found[1], True
            graph = self.links.TypeGraph(*found) if found is not None else None
        aligned = self.alignment.align(cand, ref, key_functions, budget, graph, counts)
        return len(aligned.links), aligned.chunks, aligned.exact

    def align(
        self, cand: Sequence[str], ref: Sequence[str], key_functions: Keys, budget: int = NODE_BUDGET
    ) -> Alignment:
        """Rules 1-5's alignment; on the compiled engine the type graph is found on ids (``id_counts``)."""
        fast = self.fast_counts(key_functions)
        fields = fast.table.graph(cand, ref) if fast is not None else None
        graph = self.links.TypeGraph(*fields) if fields is not None else None
        found = self.alignment.align(cand, ref, key_functions, budget, graph)
        return found if type(found) is Alignment else Alignment(found.links, found.chunks, found.exact)


def _led(key_functions: Keys) -> bool:
    """Whether the stages are led by exact alone (where the compiled engine counts on token ids)."""
    return bool(key_functions) and key_functions[0] is None and None not in key_functions[1:]


def engine() -> Engine:
    """A new engine for one metric object: compiled when built, fresh and not switched off (:func:`active`),
    else pure. Chosen once; it keeps the compiled token table for that metric's key functions."""
    return _new_engine(active())


@lru_cache(maxsize=2)
def shared_engine(compiled: bool) -> Engine:
    """One engine of each build, kept for callers that score without a metric object: the compiled one when
    ``compiled`` (what :func:`active` says), else the pure one."""
    return _new_engine(compiled)


def _new_engine(compiled: bool) -> Engine:
    if compiled:
        modules = _built()[0]
        return Engine(
            "compiled (Cython)",
            modules["links"],
            modules["counting"],
            modules["alignment"],
            modules["id_counts"],
            modules["formula"],
        )
    return Engine("pure Python", links, counting, alignment)
