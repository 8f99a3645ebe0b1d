"""A brute-force reading of SPEC section 4's alignment, for tests: every matching, stage by stage."""
from __future__ import annotations

from scorer.alignment import crossings


def all_matchings(options: dict[int, tuple[int, ...]]):
    cands = sorted(options)

    def rec(p, used, pairs):
        if p == len(cands):
            yield list(pairs)
            return
        i = cands[p]
        for j in options[i]:
            if j not in used:
                yield from rec(p + 1, used | {j}, pairs + [(i, j)])
        yield from rec(p + 1, used, pairs)

    yield from rec(0, frozenset(), [])


def best_stage(options, fixed):
    """Max size, then fewest crossings with all matches so far, then least displacement, then lexicographic."""
    return min(all_matchings(options),
               key=lambda m: (-len(m), crossings(sorted(m + list(fixed))), sum(abs(i - j) for i, j in m), sorted(m)))


def brute_align(cand, ref, matcher, stages):
    """(cand, ref, stage) triples of the whole alignment."""
    fixed, out = [], []
    for stage in stages:
        used_c = {i for i, _ in fixed}
        used_r = {j for _, j in fixed}
        options = {}
        for i, tok in enumerate(cand):
            if i in used_c:
                continue
            keys = matcher.keys(stage, tok)
            opts = tuple(j for j, rt in enumerate(ref) if j not in used_r and keys & matcher.keys(stage, rt))
            if opts:
                options[i] = opts
        chosen = sorted(best_stage(options, fixed)) if options else []
        fixed += chosen
        out += [(i, j, stage) for i, j in chosen]
    return sorted(out)
