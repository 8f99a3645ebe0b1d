"""The number of METEOR matches, found by counting token types when it can be.

Without the fragmentation penalty (gamma = 0) a score depends only on the
number of matches ``m``, and ``m`` does not depend on positions. Work on
token *types* with multiplicities (two tokens of one type are
interchangeable to every stage):

* a stage whose type graph (types of the tokens still free, linked when
  their keys intersect) is a set of disjoint single links ``a - b`` matches
  ``min(n_a, n_b)`` of each and leaves a multiset that does not depend on
  which positions it picked; the exact stage is always of this kind;
* the first stage with a larger component matches its maximum-matching size
  (a max-flow), but which types it leaves may depend on its tie-breaks. A
  maximum matching is maximal, so every link of that stage keeps one end
  used: later stages whose links are all links of it match nothing more.
  Otherwise the count is undecided here and :func:`scorer.meteor.align`
  decides it.

This gives exactly the ``m`` of the staged alignment (property-tested
against it), at a fraction of the cost.
"""
from __future__ import annotations

from collections import _count_elements  # the C counting loop behind Counter
from dataclasses import dataclass
from itertools import compress
from operator import not_
from typing import Callable, Sequence

from .alignment import maximum_matching_size

#: Keys of a token at one stage; None stands for the exact stage (the token itself).
KeyFunction = Callable[[str], frozenset[str]] | None
Link = tuple[str, str]


@dataclass(frozen=True)
class Bag:
    """The token types of a text; ``more`` holds the counts above one."""

    types: frozenset[str]
    more: dict[str, int]

    @classmethod
    def of(cls, tokens: Sequence[str]) -> "Bag":
        types = frozenset(tokens)
        if len(types) == len(tokens):
            return cls(types, {})
        counts: dict[str, int] = {}
        _count_elements(counts, tokens)
        return cls(types, {t: n for t, n in counts.items() if n > 1})


class _Side:
    """Free types of one side with their counts (1 unless in ``more``)."""

    __slots__ = ("types", "more")

    def __init__(self, bag: Bag):
        self.types = set(bag.types)
        self.more = dict(bag.more)

    def count(self, token: str) -> int:
        return self.more.get(token, 1)

    def take(self, token: str, n: int) -> None:
        left = self.more.pop(token, 1) - n
        if left == 0:
            self.types.discard(token)
        elif left > 1:
            self.more[token] = left


def count_matches(cand: Bag, ref: Bag, stage_keys: Sequence[KeyFunction],
                  any_keys: KeyFunction = None) -> int | None:
    """Matches of the staged alignment of two texts, or None when counting cannot tell.

    ``any_keys`` (optional) gives a superset of a token's keys at every stage
    after the first; when the first stage is exact, types sharing none of
    those with the other side are dropped after it, since they can link
    nowhere (one pass over the free types instead of one per stage).
    """
    c, r = _Side(cand), _Side(ref)
    if any_keys is not None and stage_keys and stage_keys[0] is None and None not in stage_keys[1:]:
        total = _exact(c, r)
        if c.types and r.types:
            _keep_linkable(c, r, any_keys)
        return _count_stages(c, r, stage_keys[1:], total)
    return _count_stages(c, r, stage_keys, 0)


def _keep_linkable(c: _Side, r: _Side, keys: KeyFunction) -> None:
    common = set().union(*map(keys, c.types)) & set().union(*map(keys, r.types))
    for side in (c, r):
        side.types = set(compress(side.types, map(not_, map(common.isdisjoint, map(keys, side.types)))))


def _count_stages(c: _Side, r: _Side, stage_keys: Sequence[KeyFunction], total: int) -> int | None:
    # Types of larger components stay free with unknown leftovers: a later link
    # touching one is harmless only when it is one of that component's own links.
    frozen_c: set[str] = set()
    frozen_r: set[str] = set()
    covered: set[Link] = set()
    for keys in stage_keys:
        if not c.types or not r.types:
            break
        if keys is None and not frozen_c:
            total += _exact(c, r)
            continue
        links = _links(c.types, r.types, keys)
        if frozen_c and links:
            touching = {(a, b) for a, b in links if a in frozen_c or b in frozen_r}
            if not touching <= covered:
                return None
            links -= touching
        if not links:
            continue
        cands, refs = {a for a, _ in links}, {b for _, b in links}
        if len(cands) == len(links) == len(refs) and cands.isdisjoint(c.more) and refs.isdisjoint(r.more):
            total += len(links)  # disjoint links between single tokens: each is one match
            c.types -= cands
            r.types -= refs
            continue
        for component in _components(links):
            if len(component) == 1:
                (a, b), = component
                n = min(c.count(a), r.count(b))
                total += n
                c.take(a, n)
                r.take(b, n)
            else:
                total += _maximum_matching(c, r, component)
                covered.update(component)
                frozen_c.update(a for a, _ in component)
                frozen_r.update(b for _, b in component)
    return total


def _exact(c: _Side, r: _Side) -> int:
    """The exact stage: ``min`` of the two counts of every shared type."""
    shared = c.types & r.types
    if not shared:
        return 0
    c.types -= shared
    r.types -= shared
    total = len(shared)
    if not c.more and not r.more:
        return total
    for a in shared & (c.more.keys() | r.more.keys()):
        x, y = c.more.pop(a, 1), r.more.pop(a, 1)
        total += min(x, y) - 1
        if x > y:
            c.types.add(a)
            if x - y > 1:
                c.more[a] = x - y
        elif y > x:
            r.types.add(a)
            if y - x > 1:
                r.more[a] = y - x
    return total


def _links(free_c: set[str], free_r: set[str], keys: KeyFunction) -> set[Link]:
    """Pairs of free types whose keys intersect."""
    if keys is None:
        return {(a, a) for a in free_c & free_r}
    common = set().union(*map(keys, free_c)) & set().union(*map(keys, free_r))
    if not common:
        return set()
    # only the few types holding a shared key can link (filtered without a Python loop)
    cs = list(compress(free_c, map(not_, map(common.isdisjoint, map(keys, free_c)))))
    rs = list(compress(free_r, map(not_, map(common.isdisjoint, map(keys, free_r)))))
    return {(a, b) for a in cs for b in rs if not keys(a).isdisjoint(keys(b))}


def _components(links: set[Link]) -> list[list[Link]]:
    """Connected components of the type graph, each a sorted list of links."""
    if len({a for a, _ in links}) == len(links) == len({b for _, b in links}):
        return [[link] for link in links]
    root: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        while root.setdefault(x, x) != x:
            x = root[x]
        return x

    for a, b in links:
        ra, rb = find(("c", a)), find(("r", b))
        if ra != rb:
            root[max(ra, rb)] = min(ra, rb)
    groups: dict[tuple[str, str], list[Link]] = {}
    for a, b in sorted(links):
        groups.setdefault(find(("c", a)), []).append((a, b))
    return list(groups.values())


def _maximum_matching(c: _Side, r: _Side, links: list[Link]) -> int:
    positions: dict[str, range] = {}
    at = 0
    for b in sorted({b for _, b in links}):
        positions[b] = range(at, at + r.count(b))
        at += r.count(b)
    neighbours: dict[str, list[int]] = {}
    for a, b in sorted(links):
        neighbours.setdefault(a, []).extend(positions[b])
    options: dict[int, tuple[int, ...]] = {}
    for a, refs in neighbours.items():
        for _ in range(c.count(a)):
            options[len(options)] = tuple(refs)
    return maximum_matching_size(options)
