"""contract section 4 read literally, for tests: every link set, then rules 1-5 in order."""

from __future__ import annotations


def related(a: str, b: str, key_functions) -> int | None:
    """The index of the first stage whose relation holds for ``a`` and ``b`` (a stage without a key function
    relates equal tokens; one with keys, tokens whose keys intersect), or None (contract section 4)."""
    for s, keys in enumerate(key_functions):
        if keys is None:
            if a == b:
                return s
        elif not keys(a).isdisjoint(keys(b)):
            return s
    return None


def crossings(links) -> int:
    """Pairs of links (i, j), (k, l) with (i - k)(j - l) < 0, counted pair by pair (contract section 4, rule
    2)."""
    return sum(
        1 for a, (i, j, _) in enumerate(links) for (k, q, _) in links[a + 1 :] if (i - k) * (j - q) < 0
    )


def chunk_count(links) -> int:
    """Maximal runs (i, j), (i + 1, j + 1), ... (rule 3): a link starts a chunk unless (i - 1, j - 1) is a
    link."""
    pairs = {(i, j) for i, j, _ in links}
    return sum(1 for i, j in pairs if (i - 1, j - 1) not in pairs)


def all_alignments(cand, ref, key_functions):
    """Every set of links in which each token takes part at most once, as sorted (i, j, stage) lists."""
    options = {
        i: [(j, s) for j, b in enumerate(ref) if (s := related(a, b, key_functions)) is not None]
        for i, a in enumerate(cand)
    }

    def rec(i, used, links):
        if i == len(cand):
            yield list(links)
            return
        for j, s in options[i]:
            if j not in used:
                links.append((i, j, s))
                yield from rec(i + 1, used | {j}, links)
                links.pop()
        yield from rec(i + 1, used, links)

    yield from rec(0, frozenset(), [])


def rule_key(links, n_stages):
    """Smaller is better: rule 1 (negated per-stage counts), then rules 2-5."""
    counts = [0] * n_stages
    for _, _, s in links:
        counts[s] += 1
    return (
        [-c for c in counts],
        crossings(links),
        chunk_count(links),
        sum(abs(i - j) for i, j, _ in links),
        [(i, j) for i, j, _ in links],
    )


def brute_align(cand, ref, matcher, stages):
    """The (i, j, stage index) links of the alignment contract section 4 scores."""
    keys = matcher.key_functions(tuple(stages))
    return min(all_alignments(cand, ref, keys), key=lambda links: rule_key(links, len(stages)))


def exhaustive_align(cand, ref, matcher, stages):
    """The same alignment as :func:`brute_align`, for texts too long to list every link set (9 tokens and
    more).

    Still every link set, but walked position by position with the rules' key summed as it goes: a link
    (i, j) adds its stage's count, a crossing with every earlier link to a reference position after j, a
    chunk unless (i - 1, j - 1) is a link, and |i - j|; the list of links is compared last (rule 5). The
    best completion depends only on (position, reference positions used, the partner of position i - 1),
    so it is computed once per such state.
    """
    keys = matcher.key_functions(tuple(stages))
    n_stages = len(stages)
    options = [[(j, s) for j, b in enumerate(ref) if (s := related(a, b, keys)) is not None] for a in cand]
    best: dict[tuple[int, int, int], tuple] = {}

    def completion(i: int, used: int, previous: int) -> tuple:
        if i == len(cand):
            return ((0,) * n_stages, 0, 0, 0, ())
        state = (i, used, previous)
        if state not in best:
            found = [completion(i + 1, used, -1)]
            for j, s in options[i]:
                if used >> j & 1:
                    continue
                counts, crossed, chunks, moved, links = completion(i + 1, used | 1 << j, j)
                counts = tuple(c - (x == s) for x, c in enumerate(counts))
                crossed += bin(used >> (j + 1)).count("1")
                chunks += 0 if previous >= 0 and previous == j - 1 else 1
                found.append((counts, crossed, chunks, moved + abs(i - j), ((i, j, s),) + links))
            best[state] = min(found)
        return best[state]

    return list(completion(0, 0, -1)[4])
