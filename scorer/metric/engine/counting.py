"""Rule 1 of contract section 4 by counting: how many links of each stage the alignment has.

Rule 1 asks for the most exact links, then the most lemma links, then the
most synonym links: a lexicographic maximum of the vector of per-stage
counts. It depends only on the token types and their counts, never on
positions, and it splits over the connected components of the type graph
(:mod:`scorer.metric.engine.links`): a vector that is not maximal in one component could be
raised there alone. Per component:

* one link ``a - b`` of stage s: ``min(n_a, n_b)`` links of stage s;
* a star (every link shares one type, the centre): the centre's tokens go to
  the leaves of the earliest stage first (leaves of one stage are
  interchangeable to the objective);
* anything else: a maximum-weight flow with stage weights
  ``B ** (stages - 1 - s)``, ``B`` above any possible count, so that
  comparing weights compares the vectors lexicographically.
"""

from __future__ import annotations

from collections.abc import Sequence

from .links import Counts, Link, TypeGraph, components

Flow = list[tuple[str, str, int, int]]  # (candidate type, reference type, stage index, links)


def stage_counts(graph: TypeGraph, n_stages: int) -> list[int]:
    """The number of links of each stage in every alignment satisfying rule 1."""
    counts = [0] * n_stages
    if graph.exact:
        counts[0] = graph.exact
    links = graph.links
    if not links:
        return counts
    if len(links) == 1:
        (((a, b), s),) = links.items()
        counts[s] += min(graph.cand[a], graph.ref[b])
        return counts
    for component in components(links):
        for _, _, s, n in component_flow(component, graph):
            counts[s] += n
    return counts


def type_flows(graph: TypeGraph) -> Flow:
    """How many links each type pair takes in one alignment satisfying rule 1 (leading exact links
    excluded)."""
    flow: Flow = []
    for component in components(graph.links):
        flow.extend(component_flow(component, graph))
    return flow


def component_flow(component: Sequence[Link], graph: TypeGraph) -> Flow:
    """The links of one component, by type pair: closed forms, else a maximum-weight flow."""
    cand, ref, stage = graph.cand, graph.ref, graph.links
    if len(component) == 1:
        ((a, b),) = component
        return [(a, b, stage[(a, b)], min(cand[a], ref[b]))]
    if len({a for a, _ in component}) == 1:
        return _star(component, stage, cand[component[0][0]], ref, 1)
    if len({b for _, b in component}) == 1:
        return _star(component, stage, ref[component[0][1]], cand, 0)
    return _max_weight_flow(component, stage, cand, ref)


def _star(component: Sequence[Link], stage: dict[Link, int], centre: int, leaves: Counts, side: int) -> Flow:
    flow = []
    for a, b in sorted(component, key=lambda link: (stage[link], link)):
        n = min(centre, leaves[(a, b)[side]])
        centre -= n
        flow.append((a, b, stage[(a, b)], n))
    return flow


def _max_weight_flow(component: Sequence[Link], stage: dict[Link, int], cand: Counts, ref: Counts) -> Flow:
    """Successive shortest paths (Bellman-Ford) on the component, stopping when no path gains weight."""
    cands = sorted({a for a, _ in component})
    refs = sorted({b for _, b in component})
    cand_node = {a: k + 1 for k, a in enumerate(cands)}
    ref_node = {b: len(cands) + k + 1 for k, b in enumerate(refs)}
    source, sink = 0, len(cands) + len(refs) + 1
    n_stages = max(stage[link] for link in component) + 1
    base = sum(cand[a] for a in cands) + 1
    graph: list[list[int]] = [[] for _ in range(sink + 1)]
    to: list[int] = []
    cap: list[int] = []
    cost: list[int] = []

    def edge(u: int, v: int, c: int, w: int) -> int:
        for x, y, cc, ww in ((u, v, c, w), (v, u, 0, -w)):
            graph[x].append(len(to))
            to.append(y)
            cap.append(cc)
            cost.append(ww)
        return len(to) - 2

    for a in cands:
        edge(source, cand_node[a], cand[a], 0)
    for b in refs:
        edge(ref_node[b], sink, ref[b], 0)
    link_edge = {
        link: edge(cand_node[link[0]], ref_node[link[1]], base, -(base ** (n_stages - 1 - stage[link])))
        for link in sorted(component)
    }
    while True:
        dist: list[int | None] = [None] * (sink + 1)
        via = [-1] * (sink + 1)
        dist[source] = 0
        for _ in range(sink + 1):
            changed = False
            for u in range(sink + 1):
                at_u = dist[u]
                if at_u is None:
                    continue
                for e in graph[u]:
                    at_v = dist[to[e]]
                    if cap[e] > 0 and (at_v is None or at_u + cost[e] < at_v):
                        dist[to[e]] = at_u + cost[e]
                        via[to[e]] = e
                        changed = True
            if not changed:
                break
        at_sink = dist[sink]
        if at_sink is None or at_sink >= 0:
            break
        path, v = [], sink
        while v != source:
            path.append(via[v])
            v = to[via[v] ^ 1]
        push = min(cap[e] for e in path)
        for e in path:
            cap[e] -= push
            cap[e ^ 1] += push
    return [
        (a, b, stage[(a, b)], cap[link_edge[(a, b)] ^ 1])
        for a, b in sorted(component)
        if cap[link_edge[(a, b)] ^ 1] > 0
    ]
