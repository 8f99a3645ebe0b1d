"""The link graph of two texts on token types (contract section 4).

Two tokens of one type are interchangeable to every stage, so the graph is
built on types with their counts. A *link* joins a candidate type and a
reference type; its stage is the first stage whose relation holds.

When the first stage is ``exact`` its links are settled by counting: rule 1
makes it link ``min(count in candidate, count in reference)`` tokens of every
shared type, and nothing else, so the tokens left over (``cand``/``ref`` of
:class:`TypeGraph`) are known without positions. Links of the later stages
are listed between those leftover types only, through an index of their keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

#: A token's keys at one stage; None stands for the exact stage (the token itself).
KeyFunction = Callable[[str], frozenset[str]] | None
Counts = dict[str, int]
Link = tuple[str, str]


class TypeGraph(NamedTuple):
    exact: int  # links made by a leading exact stage
    shared: frozenset[str]  # the types it linked
    cand: Counts  # free candidate types and how many of each are left
    ref: Counts  # free reference types and how many of each are left
    links: dict[Link, int]  # (candidate type, reference type) -> stage index, free types only


def counts_of(tokens: Sequence[str]) -> Counts:
    """How many times each token occurs (what ``Counter`` gives, without its Python-level set-up per call)."""
    counts: Counts = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return counts


def _stage_links(
    cs: list[str], rs: list[str], key_functions: Sequence[KeyFunction], offset: int
) -> dict[Link, int]:
    """Links between ``cs`` and ``rs``, each with the first stage whose keys meet (through a key index)."""
    links: dict[Link, int] = {}
    for s, keys in enumerate(key_functions, start=offset):
        if keys is None:
            for x in set(cs).intersection(rs):
                links.setdefault((x, x), s)
            continue
        index: dict[str, list[str]] = {}
        for b in rs:
            for key in keys(b):
                index.setdefault(key, []).append(b)
        for a in cs:
            for key in keys(a):
                for b in index.get(key, ()):
                    links.setdefault((a, b), s)
    return links


def type_graph(cand: Counts, ref: Counts, key_functions: Sequence[KeyFunction]) -> TypeGraph:
    """The links between the types of two texts (see the module docstring)."""
    if key_functions and key_functions[0] is None:
        shared: list[str] = []
        exact = 0
        free_c = {}
        for x, n in cand.items():
            k = ref.get(x, 0)
            if k:
                shared.append(x)
                exact += min(n, k)
            if n > k:
                free_c[x] = n - k
        free_r = {x: k - cand.get(x, 0) for x, k in ref.items() if k > cand.get(x, 0)}
        later, offset = key_functions[1:], 1
    else:
        shared, exact, free_c, free_r, later, offset = [], 0, dict(cand), dict(ref), key_functions, 0
    links: dict[Link, int] = {}
    if free_c and free_r and later:
        links = _stage_links(list(free_c), list(free_r), later, offset)
    return TypeGraph(exact, frozenset(shared), free_c, free_r, links)


def components(links: dict[Link, int]) -> list[list[Link]]:
    """Connected components of the link graph, each a sorted list of links, in a fixed order."""
    if len({a for a, _ in links}) == len(links) == len({b for _, b in links}):
        return [[link] for link in sorted(links)]
    root: dict[tuple[int, str], tuple[int, str]] = {}

    def find(x: tuple[int, str]) -> tuple[int, str]:
        while root.setdefault(x, x) != x:
            x = root[x]
        return x

    for a, b in links:
        ra, rb = find((0, a)), find((1, b))
        if ra != rb:
            root[max(ra, rb)] = min(ra, rb)
    groups: dict[tuple[int, str], list[Link]] = {}
    for a, b in sorted(links):
        groups.setdefault(find((0, a)), []).append((a, b))
    return list(groups.values())
