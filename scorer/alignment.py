"""Rules 2-5 of SPEC section 4: which alignment of rule 1 is scored.

Among the alignments with the per-stage link counts of rule 1
(:mod:`scorer.counting`), the one with the fewest crossings, then the fewest
chunks, then the smallest sum of ``|i - j|``, then the lexicographically
smallest list of ``(i, j)`` pairs sorted by ``i``. Why each shortcut below is
exact is shown in ``docs/alignment.md``.

1. **Forced links.** With exact first, a type occurring equally often on
   both sides is linked to itself token by token, in order; a later-stage
   component that is one link ``a - b`` between types untouched by the exact
   stage, with as many ``a`` as ``b``, likewise. Every optimal alignment
   holds these links.
2. **Search** over the other candidate positions, in increasing order: a
   depth-first branch and bound on the cost ``(crossings, chunks,
   displacement)``, whose increments are all non-negative (crossings with
   forced links are charged when a searched link is made; a forced link's
   chunk start when the position before it is decided). Two passes: the
   first, trying the cheapest choice first, finds the least cost; the
   second, trying reference positions in increasing order and "no link"
   last, stops at the first alignment of that cost, which is the
   lexicographically smallest. Choices that would break rule 1's counts, or
   leave too few positions to reach them, are never made; two tokens of one
   type never take two tokens of one type crosswise.
3. **Budget.** Past ``budget`` search nodes the best alignment found so far
   is kept, or one read off rule 1's flow when none was found; it satisfies
   rule 1 and is deterministic, and the result is flagged inexact.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from typing import Callable, Sequence

from .counting import stage_counts, type_flows
from .links import components, counts_of, type_graph
from .matcher import KeyFunction

#: Search nodes per pair before the deterministic fallback applies.
NODE_BUDGET = 50_000

LinkTriple = tuple[int, int, int]  # (candidate position, reference position, stage index)


@dataclass(frozen=True)
class Alignment:
    links: tuple[LinkTriple, ...]   # sorted by candidate position
    chunks: int
    exact: bool                     # False when the search budget ran out

    @property
    def stage_counts(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for _, _, s in self.links:
            counts[s] = counts.get(s, 0) + 1
        return counts


def chunk_count(links: Sequence[LinkTriple]) -> int:
    """Maximal runs of links adjacent in both texts; ``links`` sorted by candidate position."""
    at = {i: j for i, j, _ in links}
    return sum(1 for i, j, _ in links if at.get(i - 1) != j - 1)


def chunk_runs(links: Sequence[LinkTriple]) -> list[list[LinkTriple]]:
    """The chunks themselves, each a run of links sorted by candidate position."""
    runs: list[list[LinkTriple]] = []
    for k, link in enumerate(links):
        if k == 0 or link[0] != links[k - 1][0] + 1 or link[1] != links[k - 1][1] + 1:
            runs.append([])
        runs[-1].append(link)
    return runs


def crossings(pairs: Sequence[tuple[int, ...]]) -> int:
    """Number of crossing couples among ``pairs`` (``(i, j, ...)`` tuples)."""
    seen: list[int] = []
    total = 0
    for i, j, *_ in sorted(pairs):
        total += len(seen) - bisect_right(seen, j)
        insort(seen, j)
    return total


def align(cand: Sequence[str], ref: Sequence[str], key_functions: Sequence[KeyFunction],
          any_keys: Callable[[str], frozenset[str]], budget: int = NODE_BUDGET) -> Alignment:
    """The alignment of rules 1-5 between two token lists."""
    graph = type_graph(counts_of(cand), counts_of(ref), key_functions, any_keys)
    target = stage_counts(graph, len(key_functions))
    cpos: dict[str, list[int]] = {}
    rpos: dict[str, list[int]] = {}
    for i, token in enumerate(cand):
        cpos.setdefault(token, []).append(i)
    for j, token in enumerate(ref):
        rpos.setdefault(token, []).append(j)
    forced: dict[int, tuple[int, int]] = {}
    options: dict[int, list[tuple[int, int]]] = {}
    for x in sorted(graph.shared):
        if len(cpos[x]) == len(rpos[x]):
            forced.update((i, (j, 0)) for i, j in zip(cpos[x], rpos[x]))
        else:
            for i in cpos[x]:
                options.setdefault(i, []).extend((j, 0) for j in rpos[x])
    for component in components(graph.links):
        if len(component) == 1:
            (a, b), = component
            if (a not in graph.shared and b not in graph.shared and len(cpos[a]) == len(rpos[b])):
                s = graph.links[(a, b)]
                forced.update((i, (j, s)) for i, j in zip(cpos[a], rpos[b]))
                continue
        for a, b in component:
            s = graph.links[(a, b)]
            for i in cpos[a]:
                options.setdefault(i, []).extend((j, s) for j in rpos[b])
    fixed = [(i, j, s) for i, (j, s) in sorted(forced.items())]
    if not options:
        return Alignment(tuple(fixed), chunk_count(fixed), True)
    rest = list(target)
    for _, _, s in fixed:
        rest[s] -= 1
    search = _Search(cand, ref, forced, {i: sorted(o) for i, o in options.items()}, rest, budget)
    found = search.run()
    if found is None:
        return _fallback(cand, ref, graph, cpos, rpos)
    links = sorted(fixed + found)
    return Alignment(tuple(links), chunk_count(links), search.exact)


def _fallback(cand, ref, graph, cpos, rpos) -> Alignment:
    """A rule-1 alignment read off the type flow: first free positions first (deterministic)."""
    used_c: set[int] = set()
    used_r: set[int] = set()
    links = []

    def take(a: str, b: str, s: int, n: int) -> None:
        cs = [i for i in cpos[a] if i not in used_c][:n]
        rs = [j for j in rpos[b] if j not in used_r][:n]
        for i, j in zip(cs, rs):
            used_c.add(i)
            used_r.add(j)
            links.append((i, j, s))

    for x in sorted(graph.shared):
        take(x, x, 0, min(len(cpos[x]), len(rpos[x])))
    for a, b, s, n in type_flows(graph):
        take(a, b, s, n)
    links.sort()
    return Alignment(tuple(links), chunk_count(links), False)


class _Search:
    """Branch and bound over the undecided candidate positions (module docstring, point 2)."""

    def __init__(self, cand: Sequence[str], ref: Sequence[str], forced: dict[int, tuple[int, int]],
                 options: dict[int, list[tuple[int, int]]], target: list[int], budget: int):
        self.cand, self.ref, self.target, self.budget = cand, ref, target, budget
        self.exact = True
        self.nodes = 0
        self.order = sorted(options)
        n_stages = len(target)
        t, r = len(cand), len(ref)
        self.w1 = t * r + 1                      # displacement never reaches this
        self.w2 = (min(t, r) + 1) * self.w1      # nor chunks * w1 + displacement this
        self.forced_at = {i: j for i, (j, _) in forced.items()}
        forced_pairs = sorted(self.forced_at.items())
        all_q = sorted(j for _, j in forced_pairs)
        decided = set(self.order)
        base_chunks = sum(1 for i, j in forced_pairs if i - 1 not in decided and self.forced_at.get(i - 1) != j - 1)
        self.base = (crossings(forced_pairs) * self.w2 + base_chunks * self.w1
                     + sum(abs(i - j) for i, j in forced_pairs))
        # per undecided position: its options with their crossings with forced links
        self.options: list[list[tuple[int, int, int]]] = []
        before: list[int] = []
        k = 0
        for i in self.order:
            while k < len(forced_pairs) and forced_pairs[k][0] < i:
                insort(before, forced_pairs[k][1])
                k += 1
            opts = []
            for j, s in options[i]:
                above_before = len(before) - bisect_right(before, j)
                below_after = bisect_left(all_q, j) - bisect_left(before, j)
                opts.append((j, s, (above_before + below_after) * self.w2 + abs(i - j)))
            self.options.append(opts)
        # how many positions from index d on can still give a link of stage s / any link
        n = len(self.order)
        self.avail = [[0] * (n + 1) for _ in range(n_stages)]
        for d in range(n - 1, -1, -1):
            stages_here = {s for _, s, _ in self.options[d]}
            for s in range(n_stages):
                self.avail[s][d] = self.avail[s][d + 1] + (s in stages_here)
        self.any_avail = list(range(n, -1, -1))

    def run(self) -> list[LinkTriple] | None:
        best = self._dfs(lex=False, bound=None)
        if best is None or not self.exact:
            return best[1] if best else None
        first = self._dfs(lex=True, bound=best[0])
        return first[1] if first is not None and self.exact else best[1]

    def _dfs(self, lex: bool, bound: int | None) -> tuple[int, list[LinkTriple]] | None:
        cand, ref, order, options = self.cand, self.ref, self.order, self.options
        forced_at, w1, w2 = self.forced_at, self.w1, self.w2
        n, need, avail, any_avail = len(order), list(self.target), self.avail, self.any_avail
        at = dict(forced_at)
        used: set[int] = set()
        chosen_refs: list[int] = []
        last_twin: dict[tuple[str, str], int] = {}
        chosen: list[LinkTriple | None] = [None] * n
        best: tuple[int, list[LinkTriple]] | None = None

        def choices(d: int, cost: int) -> list[tuple[int, int, int]]:
            i = order[d]
            after = forced_at.get(i + 1)
            skip_inc = w1 if after is not None else 0
            limit = bound if lex else (best[0] if best else None)
            found = []
            for j, s, static in options[d]:
                if j in used or need[s] == 0 or j <= last_twin.get((cand[i], ref[j]), -1):
                    continue
                inc = static + (len(chosen_refs) - bisect_right(chosen_refs, j)) * w2
                if at.get(i - 1) != j - 1:
                    inc += w1
                if after is not None and after != j + 1:
                    inc += w1
                if limit is not None and (cost + inc > limit if lex else cost + inc >= limit):
                    continue
                need[s] -= 1
                ok = all(need[x] <= avail[x][d + 1] for x in range(len(need))) and sum(need) <= any_avail[d + 1]
                need[s] += 1
                if ok:
                    found.append((inc, j, s))
            if not lex:
                found.sort()
            skip_ok = all(need[x] <= avail[x][d + 1] for x in range(len(need))) and sum(need) <= any_avail[d + 1]
            if skip_ok and (limit is None or (cost + skip_inc <= limit if lex else cost + skip_inc < limit)):
                found.append((skip_inc, -1, -1))
            return found

        cost = self.base
        stack = [[choices(0, cost), 0, None]]  # per depth: choices, next index, applied undo record
        while stack:
            frame = stack[-1]
            d = len(stack) - 1
            if frame[2] is not None:  # undo the choice made at this depth
                inc, j, s, old = frame[2]
                cost -= inc
                if j >= 0:
                    used.discard(j)
                    chosen_refs.pop(bisect_left(chosen_refs, j))
                    need[s] += 1
                    key = (cand[order[d]], ref[j])
                    if old is None:
                        del last_twin[key]
                    else:
                        last_twin[key] = old
                    del at[order[d]]
                chosen[d] = None
                frame[2] = None
            options_here, k = frame[0], frame[1]
            limit = bound if lex else (best[0] if best else None)
            while k < len(options_here):
                inc = options_here[k][0]
                if limit is None or (cost + inc <= limit if lex else cost + inc < limit):
                    break
                k += 1
            if k == len(options_here):
                stack.pop()
                continue
            frame[1] = k + 1
            inc, j, s = options_here[k]
            self.nodes += 1
            if self.nodes > self.budget:
                self.exact = False
                return best
            old = None
            if j >= 0:
                i = order[d]
                used.add(j)
                insort(chosen_refs, j)
                need[s] -= 1
                key = (cand[i], ref[j])
                old = last_twin.get(key)
                last_twin[key] = j
                at[i] = j
                chosen[d] = (i, j, s)
            cost += inc
            frame[2] = (inc, j, s, old)
            if d + 1 == n:
                if lex:
                    return cost, [c for c in chosen if c is not None]
                best = (cost, [c for c in chosen if c is not None])
                continue
            stack.append([choices(d + 1, cost), 0, None])
        return best
