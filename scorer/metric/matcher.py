"""What each stage knows of a token, memoised: its lemma set and its synset set.

Two tokens are related at a stage when their keys at that stage intersect
(contract section 4): the exact stage's key is the token itself, the lemma
stage's the ``normal_form`` of every pymorphy3 parse, the synonym stage's
the RuWordNet synsets having a single-word sense equal to one of its lemmas.
Keys are memoised per run and, unless asked otherwise, kept across runs in
the persistent token cache (:mod:`scorer.metric.token_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container
from pathlib import Path
from typing import Any

from . import morphology, token_cache
from .stages import KeyFunction, needs_morphology, stage_plan
from .thesaurus import Thesaurus


class _Memo(dict[str, Any]):
    """``memo[token]`` looks ``token`` up in the token cache's keys of the stage (``known()``, read the first
    time a token is missing, or when :meth:`read_known` is called), then in ``stored`` (the store of words
    outside the reference data), else computes ``fn(token)``, once; ``added`` lists what was computed here.
    Once the token cache is read, a stage it does not hold is looked up in the store no more (nothing of it
    was kept); before, :meth:`Matcher.prefetch` may ask the store about it, which finds the same keys or
    none."""

    def __init__(
        self,
        fn: Callable[[str], frozenset[str]],
        known: Callable[[], dict[str, frozenset[str]] | None] | None = None,
        stored: Callable[[str], frozenset[str] | None] | None = None,
    ):
        super().__init__()
        self.fn, self.known, self.stored = fn, known, stored
        self.added: dict[str, frozenset[str]] = {}

    def read_known(self) -> None:
        """Take in the token cache's keys of the stage now, if not yet (a token computed or stored meanwhile
        keeps its keys: they are the same)."""
        if self.known is not None:
            known, self.known = self.known(), None
            if known is None:
                self.stored = None
            elif self:
                for token, keys in known.items():
                    self.setdefault(token, keys)
            else:
                self.update(known)

    def __missing__(self, token: str) -> frozenset[str]:
        if self.known is not None:
            self.read_known()
            if token in self:
                return self[token]  # type: ignore[no-any-return]
        found = self.stored(token) if self.stored is not None else None
        if found is not None:
            self[token] = found
            return found
        value = self[token] = self.added[token] = self.fn(token)
        return value


class Matcher:
    """Stage keys of tokens, for the stages of one run: one memo per stage of the registry
    (:mod:`scorer.metric.stages`), made when the stage is first asked for.

    ``thesaurus`` is needed by the synonym stage only. With ``persistent``
    the keys of earlier runs are read from the token cache, and
    :meth:`save` adds this run's new ones.
    """

    def __init__(self, thesaurus: Thesaurus | None, *, persistent: bool = True):
        self.thesaurus = thesaurus
        identities = (morphology.morphology_id(), thesaurus.identity if thesaurus else None)
        self._cache_file = token_cache.cache_path(*identities) if persistent else None
        self._store = token_cache.TokenStore(token_cache.store_path(*identities)) if persistent else None
        #: Whether the token cache is there: its keys are read when first needed, and the word store is used.
        self._cached = self._cache_file is not None and token_cache.holds_keys(self._cache_file)
        self._loaded: dict[str, dict[str, frozenset[str]]] | None = None
        #: Tokens the morphology could not analyse (each its own lemma), with the reason; never cached.
        self.unanalysed: dict[str, str] = {}
        self.memos: _Memos = _Memos(self)
        self._key_functions: dict[tuple[str, ...], tuple[KeyFunction, ...]] = {}

    def knows_tokens(self) -> bool:
        """Whether any stage's keys are known for any token (from the token cache, read now if it was not, or
        computed)."""
        return any(self._known().values()) or any(self.memos.values())

    def read_known(self) -> None:
        """Read the token cache into every memo now, and into those made later as they are made: where nothing
        stands for it (the compiled engine's token table holds the reference data's words, so a warm run
        that has it never reads the token cache)."""
        self._known()
        for memo in self.memos.values():
            memo.read_known()

    def _known(self) -> dict[str, dict[str, frozenset[str]]]:
        """The token cache's keys by stage, read the first time they are needed."""
        if self._loaded is None:
            self._loaded = token_cache.load(self._cache_file) if self._cache_file else {}
        return self._loaded

    @property
    def lemmas(self) -> _Memo:
        memo: _Memo = self.memos["lemma"]
        return memo

    @property
    def synsets(self) -> _Memo:
        memo: _Memo = self.memos["synonym"]
        return memo

    @property
    def cache_file(self) -> Path | None:
        """The token cache file this matcher reads and adds to; None when it keeps nothing across runs."""
        return self._cache_file

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

    def keys(self, stage: str, token: str) -> frozenset[str]:
        function = self.key_function(stage)
        return frozenset((token,)) if function is None else function(token)

    def prefetch(self, tokens: Collection[str], stages: tuple[str, ...]) -> None:
        """Look up, in one query a stage, the kept keys of the distinct ``tokens`` the memos of ``stages`` do
        not know yet: the words of a piece of answers the engine may still ask for, before the piece is
        scored (``scoring.turns``), so that the word store is not asked once a word."""
        if self._store is None:
            return
        lacking: Collection[str] | None = None
        for stage in stages:
            if stage_plan((stage,))[0].keys is None:
                continue
            memo = self.memos[stage]
            if memo.stored is not None:
                # the words the first such stage lacks are the ones a later one may lack too (the caches keep
                # a word's keys at every stage; one a later stage still lacks is looked up when it is met)
                lacking = [token for token in (tokens if lacking is None else lacking) if token not in memo]
                memo.update(self._store.get_many(stage, lacking))

    def take_new(self) -> tuple[dict[str, dict[str, frozenset[str]]], dict[str, str]]:
        """The keys computed since the last call, by stage, and the tokens found unanalysable (to hand from a
        worker to its parent)."""
        new = {name: memo.added for name, memo in self.memos.items() if memo.added}
        for memo in self.memos.values():
            memo.added = {}
        return new, dict(self.unanalysed)

    def absorb(self, new: dict[str, dict[str, frozenset[str]]], unanalysed: dict[str, str]) -> None:
        """Take keys computed elsewhere (by a worker) as if computed here."""
        self.unanalysed.update(unanalysed)
        for name, found in new.items():
            memo = self.memos[name]
            for token, keys in found.items():
                if token not in memo:
                    memo[token] = memo.added[token] = keys

    def save(self, keep: Container[str] | None = None) -> None:
        """Keep the keys computed in this run for later runs (best effort). Tokens that could not be analysed
        are left out, so every run that meets them says so. With ``keep`` (the reference data's vocabulary),
        only its tokens go to the token cache, which a run loads whole; every other token (an upload's own
        words) goes to the word store, read a word or a piece of answers at a time, so no upload makes a
        later run load more (contract section 3). Without ``keep``, every token goes to the token cache."""
        if self._cache_file is not None:
            new, unanalysed = self.take_new()
            others: dict[str, dict[str, frozenset[str]]] = {}
            for stage, found in new.items():
                for token in unanalysed:
                    found.pop(token, None)
                if keep is not None:
                    new[stage] = {t: k for t, k in found.items() if t in keep}
                    others[stage] = {t: k for t, k in found.items() if t not in keep}
            if any(new.values()):
                token_cache.save(self._cache_file, new)
            if self._store is not None and any(others.values()):
                self._store.add(others)


class _Memos(dict[str, Any]):
    """The memo of each stage's keys by stage name, made on first use from the stage's key function and
    what the token cache holds for it."""

    def __init__(self, run: Matcher):
        super().__init__()
        self.run = run

    def __missing__(self, name: str) -> _Memo:
        stage = stage_plan((name,))[0]
        if stage.keys is None:
            raise KeyError(f"the {name} stage keeps no memo: its key is the token itself")
        keys = stage.keys
        run = self.run
        usable = run.thesaurus is not None or not stage.needs_thesaurus
        store = run._store if usable and run._cached else None
        stored = (lambda token: store.get(name, token)) if store is not None else None
        known = (lambda: run._known().get(name)) if store is not None else None
        memo = self[name] = _Memo(lambda token: keys(run, token), known, stored)
        if run._loaded is not None:  # read already: taken in now
            memo.read_known()
        return memo
