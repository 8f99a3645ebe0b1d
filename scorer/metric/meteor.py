"""Russian METEOR (contract section 4).

With ``m`` links, ``t`` candidate and ``r`` reference tokens::

    P = m / t,  R = m / r,  Fmean = P R / (alpha P + (1 - alpha) R)
    penalty = gamma (chunks / m) ** beta,  score = Fmean (1 - penalty)

``m = 0`` or an empty side gives 0. A turn's METEOR is the maximum over its
reference variants (the first on ties); variants without tokens are skipped.

``m`` comes from rule 1 by counting (:mod:`scorer.metric.engine.counting`); the alignment
of rules 1-5 (:mod:`scorer.metric.engine.alignment`) is built only when the penalty needs
its chunks or when asked for (``explain``, reports).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import NamedTuple

from scorer.defaults import default
from scorer.errors import ConfigError
from scorer.metric.engine.accelerator import Engine, active, shared_engine
from scorer.metric.engine.accelerator import engine as choose_engine
from scorer.metric.engine.alignment import NODE_BUDGET
from scorer.metric.engine.formula import figures, links_fmean
from scorer.metric.engine.links import KeyFunction

from . import token_cache
from .matcher import Matcher
from .morphology import morphology_id
from .stages import needs_morphology, needs_thesaurus, stage_plan, without_thesaurus
from .text import TOKENISER_ID, tokenise
from .thesaurus import Thesaurus, load_thesaurus, resolve_location


@dataclass(frozen=True)
class MeteorParams:
    """Every setting of the metric that changes a number."""

    alpha: float = default("meteor", "alpha")
    beta: float = default("meteor", "beta")
    gamma: float = default("meteor", "gamma")
    stages: tuple[str, ...] = default("meteor", "stages")
    budget: int = NODE_BUDGET  # search nodes per pair for rules 2-5 (used only with gamma > 0)

    @property
    def needs_alignment(self) -> bool:
        """Whether a score needs the alignment of rules 2-5 (its chunks): only with the penalty on."""
        return self.gamma > 0


@dataclass(frozen=True)
class Link:
    """One link of an alignment: candidate position, reference position, stage name."""

    cand: int
    ref: int
    stage: str


class MeteorScore(NamedTuple):
    """METEOR of one candidate against one reference: an immutable record, made once per scored turn (a named
    tuple: made and handed between processes several times faster than a frozen dataclass)."""

    score: float
    precision: float
    recall: float
    fmean: float
    penalty: float
    matches: int
    chunks: int | None  # None when no alignment was built (gamma = 0)
    cand_len: int
    ref_len: int
    alignment: tuple[Link, ...] = ()
    exact_search: bool = True


def score_from_counts(
    m: int,
    chunks: int | None,
    t: int,
    r: int,
    params: MeteorParams,
    alignment: tuple[Link, ...] = (),
    exact: bool = True,
) -> MeteorScore:
    """The formula of the module docstring (:func:`~scorer.metric.engine.formula.figures`)."""
    found = figures(m, chunks, t, r, params.alpha, params.gamma, params.beta, params.needs_alignment)
    return MeteorScore(*found, alignment, exact)


#: A score's record from its fields, as :func:`~scorer.metric.engine.formula.best_scores` makes it.
_RECORD = partial(tuple.__new__, MeteorScore)


def meteor_tokens(
    cand: Sequence[str],
    ref: Sequence[str],
    matcher: Matcher,
    params: MeteorParams = MeteorParams(),
    *,
    with_alignment: bool = False,
    engine: Engine | None = None,
) -> MeteorScore:
    """METEOR of tokenised ``cand`` against tokenised ``ref``.

    The alignment is built when ``params.gamma > 0`` or ``with_alignment``
    (otherwise ``chunks`` is None); it is returned only with ``with_alignment``.
    Without them only rule 1's counts are computed. ``engine``: the one chosen
    by the metric object; by default the shared one of
    :mod:`scorer.metric.engine.accelerator`.
    """
    return _score_pair(
        cand,
        ref,
        matcher.key_functions(params.stages),
        params,
        engine or shared_engine(active()),
        with_alignment,
    )


def _score_pair(
    cand: Sequence[str],
    ref: Sequence[str],
    keys: tuple[KeyFunction, ...],
    params: MeteorParams,
    engine: Engine,
    with_alignment: bool,
    counts: Sequence[int] | None = None,
) -> MeteorScore:
    """:func:`meteor_tokens` with the stages' key functions looked up (once per candidate, not per pair);
    ``counts``: rule 1's links by stage, when known."""
    t, r = len(cand), len(ref)
    if not t or not r:
        return score_from_counts(0, 0 if (with_alignment or params.needs_alignment) else None, t, r, params)
    if not params.needs_alignment and not with_alignment:
        if counts is None:
            counts = engine.variant_counts(cand, [ref], keys)[0]
        return score_from_counts(sum(counts or ()), None, t, r, params)
    if not with_alignment:
        m, chunks, exact = engine.links_and_chunks(cand, ref, keys, params.budget, counts)
        return score_from_counts(m, chunks, t, r, params, (), exact)
    found = engine.align(cand, ref, keys, params.budget)
    links = tuple(Link(i, j, params.stages[s]) for i, j, s in found.links)
    return score_from_counts(len(found.links), found.chunks, t, r, params, links, found.exact)


def best_variant(
    cand: Sequence[str],
    variants: Sequence[Sequence[str]],
    matcher: Matcher,
    params: MeteorParams = MeteorParams(),
    *,
    with_alignment: bool = False,
    engine: Engine | None = None,
) -> tuple[int, MeteorScore]:
    """Index and score of the best variant (the first on ties); variants without tokens are skipped.

    Raises ``ValueError`` when no variant has a token.
    """
    engine = engine or shared_engine(active())
    keys = matcher.key_functions(params.stages)
    if not params.needs_alignment and not with_alignment and cand:  # the F-mean itself, read off rule 1
        counted = [engine.variant_counts(cand, variants, keys)]
        best: tuple[int, MeteorScore] = engine.formula.best_scores(
            [cand], [variants], counted, params.alpha, _RECORD
        )[0]
        return best
    counts = engine.variant_counts(cand, variants, keys) if cand and not with_alignment else None
    return _best_aligned(cand, variants, counts, keys, params, engine, with_alignment)


def _best_aligned(
    cand: Sequence[str],
    variants: Sequence[Sequence[str]],
    counts: list[list[int] | None] | None,
    keys: tuple[KeyFunction, ...],
    params: MeteorParams,
    engine: Engine,
    with_alignment: bool = False,
) -> tuple[int, MeteorScore]:
    """:func:`best_variant` through the alignment, given each variant's rule-1 ``counts`` (None: the bound
    below is not used, every variant is aligned)."""
    # With the penalty, a variant's score is its F-mean times (1 - penalty), penalty >= 0: the F-mean,
    # read off rule 1's counts (cheap), bounds it. Variants are aligned from the highest bound down, and
    # one whose bound is below the best score found cannot win and is not aligned; among equal scores the
    # first variant wins.
    order: Sequence[int] = range(len(variants))
    bounds: list[float] = []
    if counts is not None:
        bounds = [
            links_fmean(sum(c), len(cand), len(ref), params.alpha) if c else 0.0
            for c, ref in zip(counts, variants)
        ]
        order = sorted(range(len(variants)), key=lambda k: (-bounds[k], k))
    best: tuple[int, MeteorScore] | None = None
    for index in order:
        ref = variants[index]
        if not ref or (best is not None and bounds and bounds[index] < best[1].score):
            continue
        known = counts[index] if counts is not None else None
        scored = _score_pair(cand, ref, keys, params, engine, with_alignment, known)
        if (
            best is None
            or scored.score > best[1].score
            or (scored.score == best[1].score and index < best[0])
        ):
            best = (index, scored)
    if best is None:
        raise ValueError("every reference variant is empty of tokens")
    return best


def best_variants(
    cands: Sequence[Sequence[str]],
    variants: Sequence[Sequence[Sequence[str]]],
    matcher: Matcher,
    params: MeteorParams = MeteorParams(),
    *,
    engine: Engine | None = None,
) -> list[tuple[int, MeteorScore]]:
    """:func:`best_variant` of each ``cands[k]`` against ``variants[k]``: the engine counts rule 1 for every
    turn in one call; with the penalty the variants that can still win are then aligned, turn by turn."""
    engine = engine or shared_engine(active())
    keys = matcher.key_functions(params.stages)
    turns = [k for k, c in enumerate(cands) if c]
    counted = engine.variant_counts_each([cands[k] for k in turns], [variants[k] for k in turns], keys)
    if params.needs_alignment:
        counts_at: dict[int, list[list[int] | None]] = dict(zip(turns, counted))
        return [
            _best_aligned(c, v, counts_at.get(k), keys, params, engine)
            for k, (c, v) in enumerate(zip(cands, variants))
        ]
    best = engine.formula.best_scores(
        [cands[k] for k in turns], [variants[k] for k in turns], counted, params.alpha, _RECORD
    )
    if len(turns) == len(cands):
        return best  # type: ignore[no-any-return]
    found = [
        best_variant(c, v, matcher, params, engine=engine) if not c else None for c, v in zip(cands, variants)
    ]
    for k, scored in zip(turns, best):
        found[k] = scored
    return found  # type: ignore[return-value]  # every turn is set above


def params_without_synonyms(params: MeteorParams) -> MeteorParams:
    """``params`` without the stages that need the thesaurus; a :class:`~scorer.errors.ConfigError` when no
    stage would be left (contract section 7: every METEOR would silently be 0)."""
    stages = without_thesaurus(params.stages)
    if not stages:
        raise ConfigError(
            f"config key meteor.stages: no stage is left in force once the synonym stage is dropped "
            f"(stages = {list(params.stages)}, scored without synonyms): every METEOR would be 0; "
            'add "exact" or "lemma", or score with the synonym stage'
        )
    return replace(params, stages=stages)


class MeteorRu:
    """The metric object: it owns its parameters, its matcher and its engine (whose token table it keeps
    across runs), and states its signature.

    >>> metric = MeteorRu(MeteorParams(stages=("exact", "lemma")))
    >>> round(metric.sentence_score("кот спит", ["кошка спит", "коты спят"]), 6)
    1.0
    """

    def __init__(
        self,
        params: MeteorParams = MeteorParams(),
        thesaurus: Thesaurus | None = None,
        matcher: Matcher | None = None,
        engine: Engine | None = None,
    ):
        # the stages, as objects, in order (ValueError for an unknown one)
        self.plan = stage_plan(params.stages)
        if self.uses_thesaurus and thesaurus is None and (matcher is None or matcher.thesaurus is None):
            raise ValueError(
                "the synonym stage needs a thesaurus: pass thesaurus=, or leave 'synonym' out of the stages"
            )
        self.params = params
        self.matcher = matcher or Matcher(thesaurus)
        self.engine: Engine = engine or choose_engine()  # chosen once (scorer.metric.engine.accelerator)

    @property
    def uses_thesaurus(self) -> bool:
        """Whether a stage of the plan needs the thesaurus."""
        return any(s.needs_thesaurus for s in self.plan)

    @property
    def thesaurus_id(self) -> str | None:
        return self.matcher.thesaurus.identity if self.uses_thesaurus and self.matcher.thesaurus else None

    def score_tokens(
        self, cand: Sequence[str], ref: Sequence[str], *, with_alignment: bool = False
    ) -> MeteorScore:
        return meteor_tokens(
            cand, ref, self.matcher, self.params, with_alignment=with_alignment, engine=self.engine
        )

    def best_variant(
        self, cand: Sequence[str], variants: Sequence[Sequence[str]], *, with_alignment: bool = False
    ) -> tuple[int, MeteorScore]:
        return best_variant(
            cand, variants, self.matcher, self.params, with_alignment=with_alignment, engine=self.engine
        )

    def sentence(
        self, candidate: str, references: Sequence[str], *, with_alignment: bool = False
    ) -> tuple[int, MeteorScore]:
        """Best variant of raw texts: its index and its score."""
        return self.best_variant(
            tokenise(candidate), [tokenise(r) for r in references], with_alignment=with_alignment
        )

    def sentence_score(self, candidate: str, references: str | Sequence[str]) -> float:
        if isinstance(references, str):
            references = [references]
        return self.sentence(candidate, references)[1].score

    def signature_fields(self) -> list[tuple[str, str]]:
        """``key:value`` fields pinning everything of the metric that changes a number."""
        p = self.params
        return [
            ("metric", "meteor_ru"),
            ("tok", TOKENISER_ID),
            ("stages", "+".join(p.stages)),
            ("align", f"rules1-5-bnb{p.budget}" if p.needs_alignment else "rule1-count"),
            ("alpha", repr(float(p.alpha))),
            ("beta", repr(float(p.beta))),
            ("gamma", repr(float(p.gamma))),
            ("refs", "max"),
            ("rwn", self.thesaurus_id or "none"),
            ("morph", morphology_id() if needs_morphology(p.stages) else "none"),
        ]

    def restore_table(self) -> None:
        """Give the engine the token table kept by earlier runs with these stages, when the matcher keeps its
        keys across runs (:mod:`scorer.metric.token_cache`: a speed-up, never a change of number)."""
        path = self._table_path()
        fast = self.engine.fast_counts(self.matcher.key_functions(self.params.stages))
        stored = token_cache.load_table(path) if path is not None and fast is not None else None
        if fast is None or stored is None or not fast.restore(stored):
            self.matcher.read_known()  # no token table to stand for the token cache: it is read now

    def knows_tokens(self) -> bool:
        """Whether keys of any token are known: the engine's token table restored from the cache (which stands
        for the token cache: it is not read), else the matcher's (:meth:`Matcher.knows_tokens`)."""
        fast = self.engine.fast_counts(self.matcher.key_functions(self.params.stages))
        return (fast is not None and fast.restored > 0) or self.matcher.knows_tokens()

    def keep_table(self, vocabulary: Container[str] | None = None) -> None:
        """Keep the engine's token table for later runs when it grew, with the tokens whose keys were
        computed on workers and without those the morphology could not analyse (so every run that meets them
        says so); with ``vocabulary`` (the reference data's words), without any token not in it
        (:meth:`~scorer.metric.matcher.Matcher.save`)."""
        path = self._table_path()
        fast = self.engine.fast_counts(self.matcher.key_functions(self.params.stages))
        if path is None or fast is None:
            return  # no file to keep it in, or no table (the pure engine)
        more = sorted(
            t
            for t in set().union(*(memo.added for memo in self.matcher.memos.values()))
            if vocabulary is None or t in vocabulary
        )
        if not more and not fast.grew(vocabulary):
            return  # nothing new to keep
        # left out: the tokens the morphology could not analyse, and with a vocabulary the table's tokens
        # outside it (those of ``more``, interned next, are all in it)
        skip = set(self.matcher.unanalysed)
        if vocabulary is not None:
            skip.update(t for t in fast.table.tokens if t not in vocabulary)
        table = fast.stored(skip, more)
        if table is not None:
            token_cache.save_table(path, table)

    def _table_path(self) -> Path | None:
        """Where the token table is kept, beside the matcher's token cache; None when it keeps nothing."""
        cache = self.matcher.cache_file
        return token_cache.table_path(cache, self.params.stages) if cache is not None else None


#: What :func:`meteor_ru` keeps for its later calls, as its docstring says: the thesaurus loaded from each
#: location (here) and a matcher for each thesaurus object (:data:`_MATCHERS`). Module-level on purpose: the
#: function is the sentence-level convenience, with no object of the caller's to keep them in; the API's
#: runs keep neither.
_LOADED: dict[str, Thesaurus] = {}


def meteor_ru(
    candidate: str,
    references: str | Sequence[str],
    *,
    thesaurus: Thesaurus | str | None = None,
    synonyms: bool = True,
    params: MeteorParams = MeteorParams(),
) -> float:
    """METEOR of ``candidate`` against the best of ``references`` (a string or a list).

    ``thesaurus`` is a loaded :class:`~scorer.metric.thesaurus.Thesaurus` or a path to
    RuWordNet; by default it is found as contract section 4 says
    (``RUWORDNET_PATH`` or the ruwordnet package's download location). What
    was loaded is kept for later calls. ``synonyms=False`` drops the synonym
    stage instead.
    """
    if not synonyms:
        params = params_without_synonyms(params)
    rwn = None
    if needs_thesaurus(params.stages):
        rwn = thesaurus if isinstance(thesaurus, Thesaurus) else _thesaurus_at(thesaurus)
    # the matcher and the engine are reused across calls
    metric = MeteorRu(params, matcher=_matcher_for(rwn), engine=shared_engine(active()))
    return metric.sentence_score(candidate, references)


def _thesaurus_at(location: str | None) -> Thesaurus:
    key = str(resolve_location(location).resolve())
    if key not in _LOADED:
        _LOADED[key] = load_thesaurus(key)
    return _LOADED[key]


#: A matcher by the ``id`` of its thesaurus (the matcher holds the thesaurus, so the id is not reused).
_MATCHERS: dict[int, Matcher] = {}


def _matcher_for(thesaurus: Thesaurus | None) -> Matcher:
    key = id(thesaurus)
    found = _MATCHERS.get(key)
    if found is None or found.thesaurus is not thesaurus:
        found = _MATCHERS[key] = Matcher(thesaurus, persistent=False)
    return found
