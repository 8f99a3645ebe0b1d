"""Russian METEOR (SPEC section 4): stages exact -> lemma -> synonym.

With ``m`` matches, ``t`` candidate and ``r`` reference tokens::

    P = m / t,  R = m / r,  Fmean = P R / (alpha P + (1 - alpha) R)
    penalty = gamma (chunks / m) ** beta,  score = Fmean (1 - penalty)

``m = 0`` or an empty side gives 0. A turn's METEOR is the maximum over its
reference variants; variants without tokens are skipped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from . import morphology
from .alignment import NODE_BUDGET, Pair, best_stage_matching
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
    chunks: int
    cand_len: int
    ref_len: int
    alignment: tuple[Match, ...] = field(default=(), repr=False)
    exact_search: bool = True


class Matcher:
    """Stage keys of tokens: two tokens match at a stage when their keys intersect."""

    def __init__(self, thesaurus: Thesaurus | None):
        self.thesaurus = thesaurus
        self._synsets: dict[str, frozenset[str]] = {}

    def keys(self, stage: str, token: str) -> frozenset[str]:
        if stage == "exact":
            return frozenset((token,))
        if stage == "lemma":
            return morphology.lemmas(token)
        if stage == "synonym":
            found = self._synsets.get(token)
            if found is None:
                if self.thesaurus is None:
                    raise ValueError("the synonym stage needs a thesaurus")
                found = frozenset().union(*(self.thesaurus.synsets(l) for l in morphology.lemmas(token)))
                self._synsets[token] = found
            return found
        raise ValueError(f"unknown METEOR stage {stage!r}")


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
                  params: MeteorParams = MeteorParams()) -> MeteorScore:
    """METEOR of tokenised ``cand`` against tokenised ``ref``."""
    alignment, exact = align(cand, ref, matcher, params.stages)
    m, t, r = len(alignment), len(cand), len(ref)
    if m == 0:
        return MeteorScore(0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, t, r, (), exact)
    precision, recall = m / t, m / r
    fmean = precision * recall / (params.alpha * precision + (1 - params.alpha) * recall)
    chunks = count_chunks(alignment)
    penalty = params.gamma * (chunks / m) ** params.beta
    return MeteorScore(fmean * (1 - penalty), precision, recall, fmean, penalty, m, chunks, t, r,
                       tuple(alignment), exact)


def best_variant(cand: Sequence[str], variants: Sequence[Sequence[str]], matcher: Matcher,
                 params: MeteorParams = MeteorParams()) -> tuple[int, MeteorScore]:
    """Index and score of the best variant (first one on ties); variants without tokens are skipped.

    Raises ``ValueError`` when no variant has a token.
    """
    best: tuple[int, MeteorScore] | None = None
    for index, ref in enumerate(variants):
        if not ref:
            continue
        scored = meteor_tokens(cand, ref, matcher, params)
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
