"""Rules 2-5 of contract section 4: which alignment of rule 1 is scored.

Among the alignments with the per-stage link counts of rule 1
(:mod:`scorer.metric.engine.counting`), the one with the fewest crossings, then the fewest
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
   chunk start when the position before it is decided). One greedy dive,
   taking the cheapest choice at every position, gives a first alignment
   and its cost; then the search tries reference positions in increasing
   order and "no link" last, so alignments come in lexicographic order: it
   cuts every branch whose cost (plus the bound below) exceeds the best so
   far and keeps a new alignment only when it costs less, or costs the same
   as the greedy one (which is not in that order). What it keeps last is
   the least-cost alignment that comes first, i.e. the lexicographically
   smallest. When the greedy dive took the lexicographically first choice at
   every position and its cost equals the bound at the root, no alignment
   can cost less or come first, and the search is skipped. Choices that would break rule 1's counts, or
   leave too few positions to reach them, are never made; two tokens of one
   type never take two tokens of one type crosswise. A type the exact stage
   links only in part (``n`` in one text, ``k != n`` in the other) must still
   make ``min(n, k)`` exact links, in order; a table over its remaining
   positions gives the least cost those links can still add (their crossings
   with forced links and their displacement), which is added to the cost so
   far when deciding whether a branch can still win.
3. **Budget.** Past ``budget`` search nodes the best alignment found so far
   is kept, or one read off rule 1's flow when none was found; it satisfies
   rule 1 and is deterministic, and the result is flagged inexact.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence
from typing import Any, NamedTuple

from .counting import stage_counts, type_flows
from .links import KeyFunction, TypeGraph, components, type_graph

#: Search nodes per pair before the deterministic fallback applies.
NODE_BUDGET = 50_000

LinkTriple = tuple[int, int, int]  # (candidate position, reference position, stage index)


class Alignment(NamedTuple):
    links: tuple[LinkTriple, ...]  # sorted by candidate position
    chunks: int
    exact: bool  # False when the search budget ran out


def chunk_count(links: Sequence[LinkTriple]) -> int:
    """Maximal runs of links adjacent in both texts; ``links`` sorted by candidate position."""
    at = {i: j for i, j, _ in links}
    return len([i for i, j, _ in links if at.get(i - 1) != j - 1])


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
    for pair in sorted(pairs):
        total += len(seen) - bisect_right(seen, pair[1])
        insort(seen, pair[1])
    return total


def align(
    cand: Sequence[str],
    ref: Sequence[str],
    key_functions: Sequence[KeyFunction],
    budget: int = NODE_BUDGET,
    graph: TypeGraph | None = None,
    target: Sequence[int] | None = None,
) -> Alignment:
    """The alignment of rules 1-5 between two token lists (``graph``: their type graph, ``target``: rule 1's
    links by stage, when known)."""
    cpos, rpos = _positions(cand), _positions(ref)
    graph = graph or type_graph(_counts(cpos), _counts(rpos), key_functions)
    target = stage_counts(graph, len(key_functions)) if target is None else target
    forced: dict[int, tuple[int, int]] = {}
    options: dict[int, list[tuple[int, int]]] = {}
    for x in sorted(graph.shared):
        if len(cpos[x]) == len(rpos[x]):
            forced.update({i: (j, 0) for i, j in zip(cpos[x], rpos[x])})
        else:
            for i in cpos[x]:
                options.setdefault(i, []).extend([(j, 0) for j in rpos[x]])
    for component in components(graph.links):
        if len(component) == 1:
            ((a, b),) = component
            if a not in graph.shared and b not in graph.shared and len(cpos[a]) == len(rpos[b]):
                s = graph.links[(a, b)]
                forced.update({i: (j, s) for i, j in zip(cpos[a], rpos[b])})
                continue
        for a, b in component:
            s = graph.links[(a, b)]
            for i in cpos[a]:
                options.setdefault(i, []).extend([(j, s) for j in rpos[b]])
    fixed = [(i, j, s) for i, (j, s) in sorted(forced.items())]
    if not options:
        return Alignment(tuple(fixed), chunk_count(fixed), True)
    rest = list(target)
    for _, _, s in fixed:
        rest[s] -= 1
    groups = [(cpos[x], rpos[x]) for x in sorted(graph.shared) if len(cpos[x]) != len(rpos[x])]
    search = _Search(cand, ref, forced, {i: sorted(o) for i, o in options.items()}, rest, groups, budget)
    found = search.run()
    if found is None:
        return _fallback(cand, ref, graph, cpos, rpos)
    links = sorted(fixed + found)
    return Alignment(tuple(links), chunk_count(links), search.exact)


def _fallback(
    cand: Sequence[str],
    ref: Sequence[str],
    graph: TypeGraph,
    cpos: dict[str, list[int]],
    rpos: dict[str, list[int]],
) -> Alignment:
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

    def __init__(
        self,
        cand: Sequence[str],
        ref: Sequence[str],
        forced: dict[int, tuple[int, int]],
        options: dict[int, list[tuple[int, int]]],
        target: list[int],
        groups: list[tuple[list[int], list[int]]],
        budget: int,
    ):
        self.cand, self.ref, self.target, self.budget = cand, ref, target, budget
        self.exact = True
        self.nodes = 0
        self.order = sorted(options)
        n_stages = len(target)
        t, r = len(cand), len(ref)
        self.w1 = t * r + 1  # displacement never reaches this
        self.w2 = (min(t, r) + 1) * self.w1  # nor chunks * w1 + displacement this
        self.forced_at = {i: j for i, (j, _) in forced.items()}
        forced_pairs = sorted(self.forced_at.items())
        all_q = sorted([j for _, j in forced_pairs])
        decided = set(self.order)
        base_chunks = len(
            [i for i, j in forced_pairs if i - 1 not in decided and self.forced_at.get(i - 1) != j - 1]
        )
        self.base = (
            crossings(forced_pairs) * self.w2
            + base_chunks * self.w1
            + sum([abs(i - j) for i, j in forced_pairs])
        )
        # per undecided position: its options with their crossings with forced links, and the number of
        # their (candidate token, reference token) couple (two tokens of one type never take two tokens of
        # one type crosswise: ``last_twin`` holds each couple's last reference position linked)
        self.options: list[list[tuple[int, int, int, int]]] = []
        twins: dict[tuple[str, str], int] = {}
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
                twin = twins.setdefault((cand[i], ref[j]), len(twins))
                opts.append((j, s, (above_before + below_after) * self.w2 + abs(i - j), twin))
            self.options.append(opts)
        self.n_twins = len(twins)
        # how many positions from index d on can still give a link of stage s / any link
        n = len(self.order)
        self.avail = [[0] * (n + 1) for _ in range(n_stages)]
        for d in range(n - 1, -1, -1):
            stages_here = {s for _, s, _, _ in self.options[d]}
            for s in range(n_stages):
                self.avail[s][d] = self.avail[s][d + 1] + (s in stages_here)
        self.any_avail = list(range(n, -1, -1))
        # per position: (stages the later positions cannot fill alone, positions left after it)
        self.avail_after = [tuple([self.avail[x][d + 1] for x in range(n_stages)]) for d in range(n)]
        self._group_tables(groups)

    def _group_tables(self, groups: list[tuple[list[int], list[int]]]) -> None:
        """For each partly exact type: ``table[a][q]``, the least static cost of its exact links still
        to make when its first ``a`` candidate positions are decided and its first ``q`` reference
        positions are behind the last one linked (None: rule 1 can no longer be met)."""
        index_of = {i: d for d, i in enumerate(self.order)}
        # by decision index: (group, a) of a partly exact type's position, else None
        self.group_at: list[tuple[int, int] | None] = [None] * len(self.order)
        self.ref_rank: list[dict[int, int]] = []
        self.tables: list[list[list[int | None]]] = []
        self.start_bound = (
            0  # the sum of every table's [0][0]: the least cost the groups add to any alignment
        )
        for g, (cs, rs) in enumerate(groups):
            c, r = len(cs), len(rs)
            rank = {j: q for q, j in enumerate(rs)}
            cost = [[0] * r for _ in range(c)]
            for a, i in enumerate(cs):
                static = {j: value for j, s, value, _ in self.options[index_of[i]] if s == 0}
                for q, j in enumerate(rs):
                    cost[a][q] = static[j]
            table: list[list[int | None]] = [[None] * (r + 1) for _ in range(c + 1)]
            for a in range(c, -1, -1):
                for q in range(r, -1, -1):
                    if (c >= r and q == r) or (c < r and a == c):
                        table[a][q] = 0
                        continue
                    if (c >= r and c - a < r - q) or (c < r and r - q < c - a):
                        continue
                    skip = table[a + 1][q] if c >= r else table[a][q + 1]
                    link = table[a + 1][q + 1]
                    best = None if link is None else cost[a][q] + link
                    if skip is not None and (best is None or skip < best):
                        best = skip
                    table[a][q] = best
            if table[0][0] is None:
                raise ValueError(
                    "a partly exact type whose exact links cannot all be made"
                )  # rule 1 ensures they can
            self.start_bound += table[0][0]
            self.tables.append(table)
            self.ref_rank.append(rank)
            for a, i in enumerate(cs):
                self.group_at[index_of[i]] = (g, a)

    def run(self) -> list[LinkTriple] | None:
        self.lex_first = True
        greedy = self._dfs(greedy=True, start=None)
        if greedy is None:
            return None
        if self.lex_first and greedy[0] == self.base + self.start_bound:
            return greedy[1]
        found = self._dfs(greedy=False, start=greedy)
        return greedy[1] if found is None else found[1]

    def _dfs(
        self, greedy: bool, start: tuple[int, list[LinkTriple]] | None
    ) -> tuple[int, list[LinkTriple]] | None:
        """``greedy``: the cheapest choice first, stop at the first alignment. Otherwise the
        lexicographic search of the module docstring, starting from the ``start`` alignment."""
        self.greedy, self.best, self.need = greedy, start, list(self.target)
        self.at = [-2] * len(self.cand)  # each candidate position's reference position (-2: not linked)
        for i, j in self.forced_at.items():
            self.at[i] = j
        self.used = [False] * len(self.ref)
        self.chosen_refs: list[int] = []
        self.last_twin = [-1] * self.n_twins
        self.group_q, self.bound_left = [0] * len(self.tables), self.start_bound  # least cost groups add
        order, group_at, ref_rank = self.order, self.group_at, self.ref_rank
        need, used, chosen_refs = self.need, self.used, self.chosen_refs
        last_twin, at, group_q = self.last_twin, self.at, self.group_q
        n = len(order)
        chosen: list[LinkTriple | None] = [None] * n
        best_is_lex = False
        cost = self.base
        stack: list[list[Any]] = [[self._choices(0, cost), 0, None]]  # per depth: choices, next, undo record
        while stack:
            frame = stack[-1]
            d = len(stack) - 1
            if frame[2] is not None:  # undo the choice made at this depth
                inc, j, s, old, delta, old_q, twin = frame[2]
                cost -= inc
                self.bound_left -= delta
                grouped = group_at[d]
                if old_q is not None and grouped is not None:
                    group_q[grouped[0]] = old_q
                if j >= 0:
                    used[j] = False
                    chosen_refs.pop(bisect_left(chosen_refs, j))
                    need[s] += 1
                    last_twin[twin] = old
                    at[order[d]] = -2
                chosen[d] = None
                frame[2] = None
            options_here, k = frame[0], frame[1]
            limit = None if self.best is None else self.best[0]
            while k < len(options_here):
                if limit is None or cost + self.bound_left + options_here[k][0] + options_here[k][3] <= limit:
                    break
                k += 1
            if k == len(options_here):
                stack.pop()
                continue
            frame[1] = k + 1
            inc, j, s, delta, twin = options_here[k]
            if greedy and self.lex_first and ((j < 0 and len(options_here) > 1) or _before(options_here, j)):
                self.lex_first = False
            self.nodes += 1
            if self.nodes > self.budget:
                self.exact = False
                return self.best
            old = -1
            if j >= 0:
                i = order[d]
                used[j] = True
                insort(chosen_refs, j)
                need[s] -= 1
                old = last_twin[twin]
                last_twin[twin] = j
                at[i] = j
                chosen[d] = (i, j, s)
            old_q = None
            grouped = group_at[d]
            if grouped is not None:
                g = grouped[0]
                old_q = group_q[g]
                if s == 0 and j >= 0:
                    group_q[g] = ref_rank[g][j] + 1
            cost += inc
            self.bound_left += delta
            frame[2] = (inc, j, s, old, delta, old_q, twin)
            if d + 1 == n:
                if greedy:
                    return cost, [c for c in chosen if c is not None]
                if self.best is None or cost < self.best[0] or not best_is_lex:
                    self.best = (cost, [c for c in chosen if c is not None])
                    best_is_lex = True
                continue
            stack.append([self._choices(d + 1, cost), 0, None])
        return self.best

    def _choices(self, d: int, cost: int) -> list[tuple[int, int, int, int, int]]:
        """The choices at depth ``d``: (cost increment, reference position or -1, stage, change of the
        groups' bound, the option's couple of tokens or -1)."""
        i = self.order[d]
        need, left, w1 = self.need, self.avail_after[d], self.w1
        after = self.forced_at.get(i + 1)
        skip_inc = w1 if after is not None else 0
        limit = None if self.best is None else self.best[0]
        floor = cost + self.bound_left
        # rule 1: what the positions after this one can still give
        short = [x for x in range(len(need)) if need[x] > left[x]]
        total_need = sum(need)
        if len(short) > 1 or total_need - 1 > self.any_avail[d + 1]:
            return []
        only_stage = short[0] if short else -1
        n_chosen = len(self.chosen_refs)
        grouped = self.group_at[d]
        now, unlinked, g, a, q = 0, None, 0, 0, 0
        if grouped is not None:
            g, a = grouped
            table, q = self.tables[g], self.group_q[g]
            at_state, unlinked = table[a][q], table[a + 1][q]
            if at_state is None:  # never: the search enters only the states a table allows
                return []
            now = at_state
        found = []
        for j, s, static, twin in self.options[d]:
            if (
                self.used[j]
                or need[s] == 0
                or (only_stage >= 0 and s != only_stage)
                or j <= self.last_twin[twin]
            ):
                continue
            delta = 0
            if grouped is not None:
                later = self.tables[g][a + 1][self.ref_rank[g][j] + 1] if s == 0 else unlinked
                if later is None:
                    continue
                delta = later - now
            inc = static + (n_chosen - bisect_right(self.chosen_refs, j)) * self.w2
            if i == 0 or self.at[i - 1] != j - 1:
                inc += w1
            if after is not None and after != j + 1:
                inc += w1
            if limit is not None and floor + inc + delta > limit:
                continue
            if only_stage >= 0 and need[s] - 1 > left[s]:
                continue
            found.append((inc, j, s, delta, twin))
        if self.greedy:
            found.sort(key=_greedy_order)
        delta = 0
        if grouped is not None:
            if unlinked is None:
                return found
            delta = unlinked - now
        if (
            not short
            and total_need <= self.any_avail[d + 1]
            and (limit is None or floor + skip_inc + delta <= limit)
        ):
            found.append((skip_inc, -1, -1, delta, -1))
        return found


def _before(options: list[tuple[int, int, int, int, int]], j: int) -> bool:
    """Whether one of ``options`` links a reference position before ``j``."""
    return any([0 <= o[1] < j for o in options])


def _greedy_order(option: tuple[int, int, int, int, int]) -> tuple[int, int]:
    """The greedy dive's order of choices: the least cost (with the groups' bound), then the reference
    position."""
    return option[0] + option[3], option[1]


def _counts(positions: dict[str, list[int]]) -> dict[str, int]:
    """How many times each type occurs, from its positions (what ``counts_of`` gives)."""
    return {token: len(at) for token, at in positions.items()}


def _positions(tokens: Sequence[str]) -> dict[str, list[int]]:
    """The positions of each type in ``tokens``, in increasing order."""
    positions: dict[str, list[int]] = {}
    for i, token in enumerate(tokens):
        positions.setdefault(token, []).append(i)
    return positions
