"""Russian METEOR (SPEC section 4): stages exact -> lemma -> synonym.

With ``m`` matches, ``t`` candidate and ``r`` reference tokens::

    P = m / t,  R = m / r,  Fmean = P R / (alpha P + (1 - alpha) R)
    penalty = gamma (chunks / m) ** beta,  score = Fmean (1 - penalty)

``m = 0`` or an empty side gives 0. A turn's METEOR is the maximum over its
reference variants; variants without tokens are skipped.

With gamma = 0 the score needs only ``m``, which :mod:`scorer.counting`
usually finds from token counts; the full alignment is built when the
penalty needs its chunks, when counting cannot decide, or when asked for.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from . import morphology
from .alignment import NODE_BUDGET, Pair, best_stage_matching
from .counting import Bag, KeyFunction, count_matches
from .text import tokenise
from .thesaurus import Thesaurus

STAGES = ("exact", "lemma", "synonym")


@dataclass(frozen=True)
class MeteorParams:
    """Every setting of the metric that changes a number."""

    alpha: float = 0.9
    beta: float = 3.0
    gamma: float = 0.0
    stages: tuple[str, ...] = STAGES


@dataclass(frozen=True)
class Match:
    cand: int
    ref: int
    stage: str


@dataclass(frozen=True)
class MeteorScore:
    """METEOR of one candidate against one reference, with its alignment."""

    score: float
    precision: float
    recall: float
    fmean: float
    penalty: float
    matches: int
    chunks: int | None  # None when the score was found by counting (no alignment built)
    cand_len: int
    ref_len: int
    alignment: tuple[Match, ...] = field(default=(), repr=False)
    exact_search: bool = True


class _Memo(dict):
    """``memo[token]`` computes ``fn(token)`` once."""

    def __init__(self, fn: Callable[[str], frozenset[str]]):
        super().__init__()
        self.fn = fn

    def __missing__(self, token: str) -> frozenset[str]:
        value = self[token] = self.fn(token)
        return value


class Matcher:
    """Stage keys of tokens: two tokens match at a stage when their keys intersect."""

    def __init__(self, thesaurus: Thesaurus | None):
        self.thesaurus = thesaurus
        self._lemmas = _Memo(morphology.lemmas)
        self._synsets = _Memo(self._synsets_of)
        self._stage_keys: dict[tuple[str, ...], list[KeyFunction]] = {}
        self._any_keys: dict[tuple[str, ...], _Memo] = {}

    def _synsets_of(self, token: str) -> frozenset[str]:
        if self.thesaurus is None:
            raise ValueError("the synonym stage needs a thesaurus")
        return frozenset().union(*map(self.thesaurus.synsets, self._lemmas[token]))

    def key_function(self, stage: str) -> KeyFunction:
        """Keys of a token at ``stage``; None for the exact stage (the token itself)."""
        if stage == "exact":
            return None
        if stage == "lemma":
            return self._lemmas.__getitem__
        if stage == "synonym":
            return self._synsets.__getitem__
        raise ValueError(f"unknown METEOR stage {stage!r}")

    def stage_keys(self, stages: tuple[str, ...]) -> list[KeyFunction]:
        """:meth:`key_function` of each stage, in order."""
        found = self._stage_keys.get(stages)
        if found is None:
            found = self._stage_keys[stages] = [self.key_function(stage) for stage in stages]
        return found

    def any_keys(self, stages: tuple[str, ...]) -> KeyFunction:
        """A token's keys at all the non-exact ``stages`` together (for filtering)."""
        memo = self._any_keys.get(stages)
        if memo is None:
            functions = [f for f in self.stage_keys(stages) if f is not None]
            memo = self._any_keys[stages] = _Memo(lambda t: frozenset().union(*(f(t) for f in functions)))
        return memo.__getitem__

    def keys(self, stage: str, token: str) -> frozenset[str]:
        keys = self.key_function(stage)
        return frozenset((token,)) if keys is None else keys(token)


def align(cand: Sequence[str], ref: Sequence[str], matcher: Matcher,
          stages: Sequence[str] = STAGES, node_budget: int = NODE_BUDGET) -> tuple[list[Match], bool]:
    """Stage-by-stage alignment of token lists; returns matches and whether the search was exact."""
    matches: list[Match] = []
    fixed: list[Pair] = []
    exact = True
    for stage in stages:
        free_ref = sorted(set(range(len(ref))) - {j for _, j in fixed})
        free_cand = sorted(set(range(len(cand))) - {i for i, _ in fixed})
        if not free_ref or not free_cand:
            break
        by_key: dict[str, list[int]] = {}
        for j in free_ref:
            for key in matcher.keys(stage, ref[j]):
                by_key.setdefault(key, []).append(j)
        options_of_token: dict[str, tuple[int, ...]] = {}
        options: dict[int, tuple[int, ...]] = {}
        for i in free_cand:
            token = cand[i]
            opts = options_of_token.get(token)
            if opts is None:
                found = set()
                for key in matcher.keys(stage, token):
                    found.update(by_key.get(key, ()))
                opts = options_of_token[token] = tuple(sorted(found))
            if opts:
                options[i] = opts
        if not options:
            continue
        result = best_stage_matching(options, fixed, node_budget)
        exact = exact and result.exact
        fixed.extend(result.pairs)
        matches.extend(Match(i, j, stage) for i, j in result.pairs)
    matches.sort(key=lambda m: m.cand)
    return matches, exact


def chunk_runs(matches: Sequence[Match]) -> list[list[Match]]:
    """Maximal runs of matches adjacent in both the candidate and the reference."""
    runs: list[list[Match]] = []
    for k, m in enumerate(ordered := sorted(matches, key=lambda m: m.cand)):
        if k == 0 or m.cand != ordered[k - 1].cand + 1 or m.ref != ordered[k - 1].ref + 1:
            runs.append([])
        runs[-1].append(m)
    return runs


def count_chunks(matches: Sequence[Match]) -> int:
    return len(chunk_runs(matches))


def meteor_tokens(cand: Sequence[str], ref: Sequence[str], matcher: Matcher,
                  params: MeteorParams = MeteorParams(), *, with_alignment: bool = False,
                  _cand_bag: Bag | None = None) -> MeteorScore:
    """METEOR of tokenised ``cand`` against tokenised ``ref``.

    The alignment (and chunk count) is built when gamma > 0 or ``with_alignment``;
    otherwise the score comes from counting when counting can decide it.
    """
    t, r = len(cand), len(ref)
    if params.gamma == 0 and not with_alignment and t and r:
        m = count_matches(_cand_bag or Bag.of(cand), Bag.of(ref), matcher.stage_keys(params.stages),
                          matcher.any_keys(params.stages))
        if m is not None:
            return _score(m, None, t, r, params, (), True)
    alignment, exact = align(cand, ref, matcher, params.stages)
    return _score(len(alignment), count_chunks(alignment), t, r, params, tuple(alignment), exact)


def _score(m: int, chunks: int | None, t: int, r: int, params: MeteorParams,
           alignment: tuple[Match, ...], exact: bool) -> MeteorScore:
    if m == 0:
        return MeteorScore(0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, t, r, alignment, exact)
    precision, recall = m / t, m / r
    fmean = precision * recall / (params.alpha * precision + (1 - params.alpha) * recall)
    penalty = params.gamma * (chunks / m) ** params.beta if params.gamma else 0.0
    return MeteorScore(fmean * (1 - penalty), precision, recall, fmean, penalty, m, chunks, t, r,
                       alignment, exact)


def best_variant(cand: Sequence[str], variants: Sequence[Sequence[str]], matcher: Matcher,
                 params: MeteorParams = MeteorParams()) -> tuple[int, MeteorScore]:
    """Index and score of the best variant (first one on ties); variants without tokens are skipped.

    Raises ``ValueError`` when no variant has a token.
    """
    best: tuple[int, MeteorScore] | None = None
    cand_bag = Bag.of(cand)
    for index, ref in enumerate(variants):
        if not ref:
            continue
        scored = meteor_tokens(cand, ref, matcher, params, _cand_bag=cand_bag)
        if best is None or scored.score > best[1].score:
            best = (index, scored)
    if best is None:
        raise ValueError("every reference variant is empty of tokens")
    return best


def meteor_ru(candidate: str, references: str | Sequence[str], *,
              thesaurus: Thesaurus | None = None, synonyms: bool = True,
              params: MeteorParams = MeteorParams()) -> float:
    """METEOR of ``candidate`` against the best of ``references`` (a string or a list).

    ``thesaurus`` defaults to RuWordNet found as SPEC section 4 says
    (``RUWORDNET_PATH`` or the ruwordnet package's download location);
    ``synonyms=False`` drops the synonym stage instead.
    """
    if isinstance(references, str):
        references = [references]
    if not synonyms:
        params = MeteorParams(params.alpha, params.beta, params.gamma,
                              tuple(s for s in params.stages if s != "synonym"))
    elif thesaurus is None and "synonym" in params.stages:
        from .thesaurus import load_thesaurus

        thesaurus = load_thesaurus()
    return best_variant(tokenise(candidate), [tokenise(r) for r in references],
                        Matcher(thesaurus), params)[1].score
