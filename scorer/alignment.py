"""The matching of one METEOR stage (SPEC section 4), found exactly.

A stage sees the candidate and reference positions left free by earlier
stages and an ``options`` map: candidate position -> sorted reference
positions it may match. It returns, among all maximum matchings, the one
with

1. the fewest crossings with all matches so far (earlier stages' ``fixed``
   pairs and the stage's own pairs among themselves),
2. then the smallest sum of ``|candidate position - reference position|``,
3. then the lexicographically smallest list of ``(candidate, reference)``
   pairs sorted by candidate position (a deterministic final tie-break).

Two pairs ``(a, b)`` and ``(c, d)`` cross when ``(a - c) * (b - d) < 0``.

The search is a depth-first branch and bound over candidate positions in
increasing order, trying reference positions in increasing order and "leave
unmatched" last, so the first optimum found is also the lexicographically
smallest one, and any branch whose cost so far is no better than the best
found is cut. Two exact reductions keep it small:

* the maximum size ``k`` is known in advance for every connected component
  of the stage graph (max-flow on classes of interchangeable positions), so a
  branch that leaves too many positions of a component unmatched is cut;
* positions with identical options ("twins") are never matched crosswise:
  swapping a crossing pair of twin matches removes that crossing, never adds
  a crossing with any third pair and never increases the displacement sum, so
  no optimum has one.

Beyond ``node_budget`` search nodes the best matching found so far (or, if
none yet, a maximum matching read off the flow) is returned and flagged
inexact: a documented, deterministic fallback that is always a maximum
matching, so the stage's match count stays exact.
"""
from __future__ import annotations

from bisect import bisect_right, insort
from collections import deque
from dataclasses import dataclass

Pair = tuple[int, int]
Options = dict[int, tuple[int, ...]]

#: Search nodes per stage before the deterministic fallback applies.
NODE_BUDGET = 200_000


@dataclass(frozen=True)
class StageResult:
    pairs: list[Pair]
    exact: bool


def crossings(pairs: list[Pair]) -> int:
    """Number of crossing couples among ``pairs`` (quadratic; for small inputs and tests)."""
    return sum(
        1
        for x in range(len(pairs))
        for y in range(x + 1, len(pairs))
        if (pairs[x][0] - pairs[y][0]) * (pairs[x][1] - pairs[y][1]) < 0
    )


@dataclass
class _ClassGraph:
    """Positions grouped into classes of twins, with component maxima."""

    cand_class: dict[int, int]
    ref_class: dict[int, int]
    component: dict[int, int]  # cand class -> component id
    k_by_component: dict[int, int]
    class_flow: dict[tuple[int, int], int]  # (cand class, ref class) -> matched pairs

    def any_maximum_matching(self) -> list[Pair]:
        """A maximum matching read off the class flow: deterministic, not optimised."""
        cands: dict[int, list[int]] = {}
        refs: dict[int, list[int]] = {}
        for i in sorted(self.cand_class):
            cands.setdefault(self.cand_class[i], []).append(i)
        for j in sorted(self.ref_class):
            refs.setdefault(self.ref_class[j], []).append(j)
        free_cands = {c: iter(members) for c, members in cands.items()}
        free_refs = {d: iter(members) for d, members in refs.items()}
        pairs = []
        for (c, d), flow in sorted(self.class_flow.items()):
            for _ in range(flow):
                pairs.append((next(free_cands[c]), next(free_refs[d])))
        return sorted(pairs)

    @property
    def size(self) -> int:
        return sum(self.k_by_component.values())


def _class_graph(options: Options) -> _ClassGraph:
    cand_class: dict[int, int] = {}
    class_of_options: dict[tuple[int, ...], int] = {}
    cand_sizes: list[int] = []
    for i in sorted(options):
        opts = options[i]
        if not opts:
            continue
        c = class_of_options.setdefault(opts, len(class_of_options))
        if c == len(cand_sizes):
            cand_sizes.append(0)
        cand_sizes[c] += 1
        cand_class[i] = c
    signature: dict[int, list[int]] = {}
    for opts, c in class_of_options.items():
        for j in opts:
            signature.setdefault(j, []).append(c)
    ref_class: dict[int, int] = {}
    class_of_signature: dict[tuple[int, ...], int] = {}
    ref_sizes: list[int] = []
    ref_links: list[tuple[int, ...]] = []
    for j in sorted(signature):
        sig = tuple(signature[j])
        d = class_of_signature.setdefault(sig, len(class_of_signature))
        if d == len(ref_sizes):
            ref_sizes.append(0)
            ref_links.append(sig)
        ref_sizes[d] += 1
        ref_class[j] = d
    class_flow = _max_flow(cand_sizes, ref_sizes, ref_links)
    component = _components(len(cand_sizes), ref_links)
    k_by_component: dict[int, int] = {}
    for (c, _), flow in class_flow.items():
        k_by_component[component[c]] = k_by_component.get(component[c], 0) + flow
    return _ClassGraph(cand_class, ref_class, component, k_by_component, class_flow)


def _max_flow(cand_sizes: list[int], ref_sizes: list[int],
              ref_links: list[tuple[int, ...]]) -> dict[tuple[int, int], int]:
    """Max flow source -> cand class -> ref class -> sink; returns the flow on each class edge."""
    n_c, n_d = len(cand_sizes), len(ref_sizes)
    source, sink = n_c + n_d, n_c + n_d + 1
    cap: dict[tuple[int, int], int] = {}
    adj: list[list[int]] = [[] for _ in range(n_c + n_d + 2)]

    def edge(u: int, v: int, c: int) -> None:
        if (u, v) not in cap:
            adj[u].append(v)
            adj[v].append(u)
            cap.setdefault((v, u), 0)
        cap[(u, v)] = cap.get((u, v), 0) + c

    big = sum(cand_sizes) + 1
    for c, size in enumerate(cand_sizes):
        edge(source, c, size)
    for d, (size, links) in enumerate(zip(ref_sizes, ref_links)):
        edge(n_c + d, sink, size)
        for c in links:
            edge(c, n_c + d, big)
    while True:
        parent = {source: source}
        queue = deque([source])
        while queue and sink not in parent:
            u = queue.popleft()
            for v in adj[u]:
                if v not in parent and cap[(u, v)] > 0:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            break
        path, v = [], sink
        while v != source:
            path.append((parent[v], v))
            v = parent[v]
        push = min(cap[e] for e in path)
        for u, v in path:
            cap[(u, v)] -= push
            cap[(v, u)] += push
    return {(c, d): big - cap[(c, n_c + d)]
            for d, links in enumerate(ref_links) for c in links if cap[(c, n_c + d)] < big}


def _components(n_c: int, ref_links: list[tuple[int, ...]]) -> dict[int, int]:
    root = list(range(n_c))

    def find(x: int) -> int:
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for links in ref_links:
        for c in links[1:]:
            a, b = find(links[0]), find(c)
            if a != b:
                root[max(a, b)] = min(a, b)
    return {c: find(c) for c in range(n_c)}


def maximum_matching_size(options: Options) -> int:
    """Size of a maximum matching of the stage graph."""
    return _class_graph(options).size


def best_stage_matching(options: Options, fixed: list[Pair] = (), node_budget: int = NODE_BUDGET) -> StageResult:
    """The optimal matching of one stage, as described in the module docstring.

    Isolated edges (a candidate with one option whose reference has no other
    candidate) are components of their own, hence in every maximum matching:
    they are taken as they are and the search runs on the rest, counting
    crossings with them as with earlier stages' pairs.
    """
    ref_degree: dict[int, int] = {}
    for opts in options.values():
        for j in opts:
            ref_degree[j] = ref_degree.get(j, 0) + 1
    forced: list[Pair] = []
    rest: Options = {}
    for i, opts in options.items():
        if len(opts) == 1 and ref_degree[opts[0]] == 1:
            forced.append((i, opts[0]))
        elif opts:
            rest[i] = opts
    if not rest:
        return StageResult(sorted(forced), True)
    graph = _class_graph(rest)
    result = _Search(rest, list(fixed) + forced, graph, node_budget).run()
    return StageResult(sorted(result.pairs + forced), result.exact)


class _Search:
    def __init__(self, options: Options, fixed: list[Pair], graph: _ClassGraph, budget: int):
        self.options = options
        self.graph = graph
        self.budget = budget
        self.order = sorted(graph.cand_class)
        self.comp = [graph.component[graph.cand_class[i]] for i in self.order]
        # left_after[p]: candidates of the same component after index p.
        seen: dict[int, int] = {}
        self.left_after = [0] * len(self.order)
        for p in range(len(self.order) - 1, -1, -1):
            self.left_after[p] = seen.get(self.comp[p], 0)
            seen[self.comp[p]] = self.left_after[p] + 1
        self.fixed_by_cand = sorted(fixed)
        self._fixed_cross: dict[Pair, int] = {}

    def fixed_crossings(self, i: int, j: int) -> int:
        key = (i, j)
        value = self._fixed_cross.get(key)
        if value is None:
            value = sum(1 for a, b in self.fixed_by_cand if (a - i) * (b - j) < 0)
            self._fixed_cross[key] = value
        return value

    def run(self) -> StageResult:
        order, options, graph = self.order, self.options, self.graph
        n = len(order)
        k_total = graph.size
        used: set[int] = set()
        chosen_refs: list[int] = []  # sorted reference positions of current pairs
        pairs: list[Pair] = []
        last_of_cand_class: dict[int, int] = {}
        last_of_ref_class: dict[int, int] = {}
        matched_in: dict[int, int] = {}
        best_cost: tuple[int, int] | None = None
        best_pairs: list[Pair] = []
        cost = [0, 0]
        nodes = 0
        # Frame: [p, cursor into options, applied undo record or None, skip tried]
        stack: list[list] = [[0, None, None, False]]
        while stack:
            frame = stack[-1]
            p, cursor, applied, skip_tried = frame
            i = order[p]
            if applied is not None:
                self._undo(applied, used, chosen_refs, pairs, last_of_cand_class, last_of_ref_class, matched_in, cost)
                frame[2] = None
            if best_cost is not None and (cost[0], cost[1]) >= best_cost:
                stack.pop()  # every choice here only adds cost
                continue
            opts = options[i]
            c_class = graph.cand_class[i]
            if cursor is None:
                floor = last_of_cand_class.get(c_class, -1)
                cursor = bisect_right(opts, floor)
            choice = None
            while cursor < len(opts):
                j = opts[cursor]
                cursor += 1
                if j in used or j <= last_of_ref_class.get(graph.ref_class[j], -1):
                    continue
                choice = j
                break
            frame[1] = cursor
            if choice is None:
                comp = self.comp[p]
                if skip_tried or matched_in.get(comp, 0) + self.left_after[p] < graph.k_by_component[comp]:
                    stack.pop()
                    continue
                frame[3] = True
                frame[1] = len(opts)
            else:
                frame[2] = self._apply(i, choice, used, chosen_refs, pairs, last_of_cand_class,
                                       last_of_ref_class, matched_in, cost, self.comp[p])
            nodes += 1
            if best_cost is not None and (cost[0], cost[1]) >= best_cost:
                continue
            if p + 1 == n:
                if len(pairs) == k_total:
                    best_cost, best_pairs = (cost[0], cost[1]), list(pairs)
                continue
            if nodes > self.budget:
                return StageResult(best_pairs if best_cost is not None else graph.any_maximum_matching(), False)
            stack.append([p + 1, None, None, False])
        return StageResult(best_pairs, True)

    def _apply(self, i, j, used, chosen_refs, pairs, last_c, last_r, matched_in, cost, comp):
        graph = self.graph
        c_class, r_class = graph.cand_class[i], graph.ref_class[j]
        d_cross = len(chosen_refs) - bisect_right(chosen_refs, j) + self.fixed_crossings(i, j)
        d_dist = abs(i - j)
        record = (j, c_class, last_c.get(c_class), r_class, last_r.get(r_class), comp, d_cross, d_dist)
        used.add(j)
        insort(chosen_refs, j)
        pairs.append((i, j))
        last_c[c_class] = j
        last_r[r_class] = j
        matched_in[comp] = matched_in.get(comp, 0) + 1
        cost[0] += d_cross
        cost[1] += d_dist
        return record

    @staticmethod
    def _undo(record, used, chosen_refs, pairs, last_c, last_r, matched_in, cost):
        j, c_class, old_c, r_class, old_r, comp, d_cross, d_dist = record
        used.discard(j)
        chosen_refs.pop(bisect_right(chosen_refs, j) - 1)
        pairs.pop()
        for table, key, old in ((last_c, c_class, old_c), (last_r, r_class, old_r)):
            if old is None:
                del table[key]
            else:
                table[key] = old
        matched_in[comp] -= 1
        cost[0] -= d_cross
        cost[1] -= d_dist
