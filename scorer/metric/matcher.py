"""What each stage knows of a token, memoised: its lemma set and its synset set.

Two tokens are related at a stage when their keys at that stage intersect
(contract section 4): the exact stage's key is the token itself, the lemma
stage's the ``normal_form`` of every pymorphy3 parse, the synonym stage's
the RuWordNet synsets having a single-word sense equal to one of its lemmas.
Keys are memoised per run and, unless asked otherwise, kept across runs in
the persistent token cache (:mod:`scorer.metric.token_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from . import key_table_cache, morphology, token_cache
from .stages import KeyFunction, needs_morphology, stage_plan
from .thesaurus import Thesaurus

_EMPTY: frozenset[str] = frozenset()


class _Memo(dict):
    """``memo[token]`` computes ``fn(token)`` once; ``added`` lists what was computed here."""

    def __init__(self, fn: Callable[[str], frozenset[str]], known: dict[str, frozenset[str]] | None = None):
        super().__init__(known or ())
        self.fn = fn
        self.added: dict[str, frozenset[str]] = {}

    def __missing__(self, token: str) -> frozenset[str]:
        value = self[token] = self.added[token] = self.fn(token)
        return value


class Matcher:
    """Stage keys of tokens, for the stages of one run.

    ``thesaurus`` is needed by the synonym stage only. With ``persistent``
    the keys of earlier runs are read from the token cache, and
    :meth:`save` adds this run's new ones.
    """

    def __init__(self, thesaurus: Thesaurus | None, *, persistent: bool = True):
        self.thesaurus = thesaurus
        self._cache_file = (
            token_cache.cache_path(morphology.morphology_id(), thesaurus.identity if thesaurus else None)
            if persistent
            else None
        )
        lemmas, synsets = token_cache.load(self._cache_file) if self._cache_file else ({}, {})
        #: Tokens the morphology could not analyse (each its own lemma), with the reason; never cached on
        #: disk.
        self.unanalysed: dict[str, str] = {}
        self.lemmas = _Memo(self._lemmas_of, lemmas)
        self.synsets = _Memo(self._synsets_of, synsets if thesaurus is not None else None)
        self._key_functions: dict[tuple[str, ...], tuple[KeyFunction, ...]] = {}
        self._any_keys: dict[tuple[str, ...], _Memo] = {}

    def _lemmas_of(self, token: str) -> frozenset[str]:
        found, why = morphology.analyse(token)
        if why is not None:
            self.unanalysed[token] = why
        return found

    def _synsets_of(self, token: str) -> frozenset[str]:
        if self.thesaurus is None:
            raise ValueError("the synonym stage needs a thesaurus")
        found = [self.thesaurus.synsets(lemma) for lemma in self.lemmas[token]]
        return frozenset().union(*found) if found else _EMPTY

    def table_file(self, stages: tuple[str, ...]) -> Path | None:
        """Where the compiled engine's token table for ``stages`` is kept beside the token cache; None when
        this matcher keeps nothing across runs."""
        return key_table_cache.table_path(self._cache_file, stages) if self._cache_file is not None else None

    def prepare(self, stages: tuple[str, ...]) -> None:
        """Load now what computing keys at ``stages`` needs (the morphology's analyser, 0.06-0.1 s), so that
        processes forked afterwards share it instead of each loading it."""
        if needs_morphology(stages):
            morphology.analyzer()

    def key_function(self, stage: str) -> KeyFunction:
        """Keys of a token at ``stage``; None for the exact stage."""
        return stage_plan((stage,))[0].keys_from(self)

    def key_functions(self, stages: tuple[str, ...]) -> tuple[KeyFunction, ...]:
        """:meth:`key_function` of each of ``stages``, in order."""
        found = self._key_functions.get(stages)
        if found is None:
            found = self._key_functions[stages] = tuple(self.key_function(s) for s in stages)
        return found

    def any_keys(self, stages: tuple[str, ...]) -> Callable[[str], frozenset[str]]:
        """A token's keys at every non-exact stage of ``stages`` together: tokens whose
        ``any_keys`` do not intersect can link only if equal."""
        memo = self._any_keys.get(stages)
        if memo is None:
            functions = [f for f in self.key_functions(stages) if f is not None]
            memo = self._any_keys[stages] = _Memo(
                lambda t: frozenset().union(*(f(t) for f in functions)) if functions else _EMPTY
            )
        return memo.__getitem__

    def keys(self, stage: str, token: str) -> frozenset[str]:
        function = self.key_function(stage)
        return frozenset((token,)) if function is None else function(token)

    def take_new(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]], dict[str, str]]:
        """The keys computed since the last call and the tokens found unanalysable (to hand from a worker
        to its parent)."""
        new = (self.lemmas.added, self.synsets.added, dict(self.unanalysed))
        self.lemmas.added, self.synsets.added = {}, {}
        return new

    def absorb(
        self,
        lemmas: dict[str, frozenset[str]],
        synsets: dict[str, frozenset[str]],
        unanalysed: dict[str, str],
    ) -> None:
        """Take keys computed elsewhere (by a worker) as if computed here."""
        self.unanalysed.update(unanalysed)
        for memo, new in ((self.lemmas, lemmas), (self.synsets, synsets)):
            for token, keys in new.items():
                if token not in memo:
                    memo[token] = memo.added[token] = keys

    def save(self) -> None:
        """Add the keys computed in this run to the token cache (best effort). Tokens that could not be
        analysed are left out, so every run that meets them says so."""
        if self._cache_file is not None:
            lemmas, synsets, unanalysed = self.take_new()
            for token in unanalysed:
                lemmas.pop(token, None)
            if not lemmas and not synsets:
                return
            token_cache.save(self._cache_file, lemmas, synsets)


def related(a: str, b: str, key_functions: Iterable[KeyFunction]) -> int | None:
    """The index of the first stage whose relation holds for ``a`` and ``b``, or None."""
    for s, keys in enumerate(key_functions):
        if keys is None:
            if a == b:
                return s
        elif not keys(a).isdisjoint(keys(b)):
            return s
    return None
