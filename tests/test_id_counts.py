"""``id_counts`` (rule 1's counts, the type graph and the forced alignments on interned token ids) against
the definition (``links`` + ``counting``, and ``alignment`` for the forced ones).

The module is run here as plain Python, the code the compiled engine is compiled from. Checked on
every graph of a small domain: two candidate-only types, two reference-only types and one type in
both texts, every stage (none, lemma, synonym) of each of their six possible links, every count from
1 to 2 (the shared type 0 to 2 on each side). Where ``id_counts`` declines to count (None), the graph
must have a component that is neither one link nor a star; its type graph is the definition's always.
"""

import functools
import itertools
import random

import pytest
from helpers import pair_counts, table_for

from scorer.metric.engine import alignment
from scorer.metric.engine.counting import stage_counts
from scorer.metric.engine.links import components, counts_of, type_graph

LEMMA, SYNONYM = 1, 2
#: The links of the domain: (candidate type, reference type). X is in both texts.
PAIRS = [("a1", "b1"), ("a1", "b2"), ("a2", "b1"), ("a2", "b2"), ("x", "b1"), ("a1", "x")]


def keys_for(stages: dict[tuple[str, str], int]) -> dict[str, list[set[str]]]:
    """Token -> its keys at the lemma and the synonym stage, so that each pair links at its stage."""
    keys: dict[str, list[set[str]]] = {t: [set(), set()] for t in ("a1", "a2", "b1", "b2", "x")}
    for (a, b), stage in stages.items():
        if stage:
            for token in (a, b):
                keys[token][stage - 1].add(f"{a}-{b}")
    return keys


def definition(cand, ref, keys):
    functions = (None, lambda t: frozenset(keys[t][0]), lambda t: frozenset(keys[t][1]))
    graph = type_graph(counts_of(cand), counts_of(ref), functions)
    return stage_counts(graph, 3), graph


def general(graph) -> bool:
    """Whether some component is neither one link nor a star."""
    return any(
        len(c) > 1 and len({a for a, _ in c}) > 1 and len({b for _, b in c}) > 1
        for c in components(graph.links)
    )


@functools.cache
def every_small_case() -> list[tuple[tuple[int, ...], dict, list[tuple[list[str], list[str], list, object]]]]:
    """Each staging of the links, its keys and its cases with the definition's counts and graph: worked out
    once, for both modules."""
    cases = []
    for stages in itertools.product((0, LEMMA, SYNONYM), repeat=len(PAIRS)):
        keys = keys_for(dict(zip(PAIRS, stages)))
        counted = []
        for n_a1, n_a2, n_b1, n_b2 in itertools.product((1, 2), repeat=4):
            for n_xc, n_xr in itertools.product((0, 1, 2), repeat=2):
                cand = ["a1"] * n_a1 + ["a2"] * n_a2 + ["x"] * n_xc
                ref = ["b1"] * n_b1 + ["b2"] * n_b2 + ["x"] * n_xr
                counted.append((cand, ref, *definition(cand, ref, keys)))
        cases.append((stages, keys, counted))
    return cases


@pytest.mark.slow
def test_every_small_graph(module):
    compared = declined = 0
    for stages, keys, counted in every_small_case():
        table = table_for(keys, module)
        for cand, ref, want, graph in counted:
            assert table.graph(cand, ref) == tuple(graph), (stages, cand, ref)
            got = pair_counts(table, cand, ref)
            if got is None:
                assert general(graph), (stages, cand, ref)
                declined += 1
            else:
                assert got == want, (stages, cand, ref)
                compared += 1
    assert (compared, declined) == (38160, 66816)  # 729 link stagings x 16 x 9 counts


def test_hand_cases(module):
    # a1 = a2's lemma twin of b1; a star around b1: its two tokens go to the lemma leaf first
    keys = keys_for({("a1", "b1"): LEMMA, ("a2", "b1"): SYNONYM})
    table = table_for(keys, module)
    assert pair_counts(table, ["a1", "a2", "x"], ["b1", "b1", "x"]) == [1, 1, 1]
    assert pair_counts(table, ["a1", "a2"], ["b1"]) == [0, 1, 0]
    assert pair_counts(table, ["x", "x", "x"], ["x"]) == [1, 0, 0]
    # a path a1 - b1 - a2 - b2 is a general component: declined
    keys = keys_for({("a1", "b1"): LEMMA, ("a2", "b1"): LEMMA, ("a2", "b2"): SYNONYM})
    assert pair_counts(table_for(keys, module), ["a1", "a2"], ["b1", "b2"]) is None


def test_tables_grow_past_their_first_size(module):
    keys = {f"t{k}": [{f"k{k}", f"k{k + 1}"}, {f"s{k}"}] for k in range(3000)}
    table = table_for(keys, module)
    tokens = list(keys)
    assert pair_counts(table, tokens[:1500], tokens[1500:1510]) is not None
    assert pair_counts(table, ["t1", "t1"], ["t2"]) == [0, 1, 0]
    assert pair_counts(table, tokens[:400], tokens[400:800]) is None  # 160,000 type pairs: beyond its bound
    assert table.graph(tokens[:400], tokens[400:800]) is None
    assert table.graph(["t1", "t1", "t5"], ["t2", "t5"]) == (
        1,
        frozenset({"t5"}),
        {"t1": 2},
        {"t2": 1},
        {("t1", "t2"): 1},
    )  # t1 and t2 share the key k2 at the first stage after exact
    assert table.n_tokens == 1510


def test_long_texts_against_the_definition(module):
    rnd = random.Random(11)
    words = [f"t{k}" for k in range(300)]
    keys = {
        w: [
            {f"k{rnd.randrange(400)}" for _ in range(rnd.randrange(3))},
            {f"s{rnd.randrange(600)}" for _ in range(rnd.randrange(3))},
        ]
        for w in words
    }
    table = table_for(keys, module)
    compared = 0
    for n in (30, 60, 200):
        for _ in range(20):
            cand = [rnd.choice(words) for _ in range(n)]
            ref = [rnd.choice(words) for _ in range(n + rnd.randrange(-5, 5))]
            got = pair_counts(table, cand, ref)
            want, graph = definition(cand, ref, keys)
            assert table.graph(cand, ref) == tuple(graph)
            if got is not None:
                assert got == want
                compared += 1
            else:
                assert general(graph)
    assert compared >= 10


def test_one_candidate_against_several_references(module):
    """counts_each looks the candidate up and sorts it once: every reference, short or long (the scratch
    grows between them), tuple or list, gets what it gets alone; an empty text gets None."""
    rnd = random.Random(5)
    words = [f"t{k}" for k in range(60)]
    keys = {w: [{f"k{rnd.randrange(50)}"}, {f"s{rnd.randrange(80)}"}] for w in words}
    table = table_for(keys, module)
    cand = [rnd.choice(words) for _ in range(12)]
    refs = [[rnd.choice(words) for _ in range(n)] for n in (3, 0, 40, 1, 300, 7)]
    got = table.counts_each(tuple(cand), [tuple(refs[0])] + refs[1:])
    alone = table_for(keys, module)
    assert got[1] is None
    assert [g for k, g in enumerate(got) if k != 1] == [pair_counts(alone, cand, r) for r in refs if r]
    assert sum(g is not None for g in got) >= 4
    for k, ref in enumerate(refs):
        if ref and got[k] is not None:
            assert got[k] == definition(cand, ref, keys)[0]
    assert table.counts_each([], refs) == [None] * len(refs)


def every_link_forced(cand, ref, graph) -> bool:
    """The alignment's point 1 for every link: each type of both texts as often in each, each later-stage
    component one link between types of one text alone, as often at both ends."""
    cc, rc, shared = counts_of(cand), counts_of(ref), graph.shared
    return all(cc[x] == rc[x] for x in shared) and all(
        len(c) == 1 and c[0][0] not in shared and c[0][1] not in shared and cc[c[0][0]] == rc[c[0][1]]
        for c in components(graph.links)
    )


@pytest.mark.slow
def test_forced_alignments_of_every_small_graph_in_shuffled_orders(module):
    """``forced_or_graph`` answers the alignment's (links, chunks) exactly when every link is forced, and the
    type graph everywhere else."""
    rnd = random.Random(5)
    answered = 0
    for stages, keys, counted in every_small_case():
        table = table_for(keys, module)
        functions = (None, *[lambda t, keys=keys, s=s: frozenset(keys[t][s]) for s in range(2)])
        for cand, ref, _, graph in counted:
            cand, ref = rnd.sample(cand, len(cand)), rnd.sample(ref, len(ref))
            got = table.forced_or_graph(cand, ref)
            if every_link_forced(cand, ref, graph):
                aligned = alignment.align(cand, ref, functions, graph=graph)
                assert got == (len(aligned.links), aligned.chunks) and aligned.exact, (stages, cand, ref)
                answered += 1
            else:  # the type graph, for the search
                assert got == tuple(graph), (stages, cand, ref)
    assert answered == 4944


def forced(table, cand, ref):
    """``forced_or_graph``'s (links, chunks), or None where it gives the type graph for a search."""
    found = table.forced_or_graph(cand, ref)
    return found if len(found) == 2 else None


def test_forced_hand_cases(module):
    # x x in both texts, a1 a lemma twin of b1 (once each): "a1 x x" against "x x b1" is two chunks
    keys = keys_for({("a1", "b1"): LEMMA})
    table = table_for(keys, module)
    assert forced(table, ["a1", "x", "x"], ["x", "x", "b1"]) == (3, 2)
    assert forced(table, ["x", "a1", "x"], ["x", "b1", "x"]) == (3, 1)
    assert forced(table, ["a2", "x"], ["b2", "x"]) == (1, 1)  # a2 and b2 unlinked: one link, one chunk
    assert forced(table, ["x", "x"], ["x"]) is None  # x twice against once: which x is searched
    assert table.forced_or_graph(["x", "x"], ["x"]) == (1, frozenset({"x"}), {"x": 1}, {}, {})
    assert forced(table, ["a1", "a1"], ["b1"]) is None  # a link whose ends differ in count
    keys = keys_for({("a1", "b1"): LEMMA, ("a2", "b1"): SYNONYM})
    assert forced(table_for(keys, module), ["a1", "a2"], ["b1"]) is None  # a star
    assert table.counts_each(["x", "a1"], [["b1", "x"]]) == [[1, 1, 0]]  # the table's scratch left clean


def test_forced_on_long_texts_against_the_alignment(module):
    rnd = random.Random(3)
    words = [f"t{k}" for k in range(400)]
    keys = {w: [{f"k{rnd.randrange(2000)}"}, {f"s{rnd.randrange(3000)}"}] for w in words}
    functions = (None, lambda t: frozenset(keys[t][0]), lambda t: frozenset(keys[t][1]))
    table = table_for(keys, module)
    answered = 0
    for n in (5, 20, 60):
        for _ in range(40):
            cand = rnd.sample(words, n)
            ref = rnd.sample(cand, n // 2) + rnd.sample(words, n // 2)
            rnd.shuffle(ref)
            got = forced(table, cand, ref)
            graph = type_graph(counts_of(cand), counts_of(ref), functions)
            assert (got is not None) == every_link_forced(cand, ref, graph)
            if got is not None:
                aligned = alignment.align(cand, ref, functions)
                assert got == (len(aligned.links), aligned.chunks)
                answered += 1
    assert answered >= 60


def test_unknown_tokens_are_the_distinct_ones_not_interned_in_the_order_first_met(module):
    keys = {f"t{k}": [{f"k{k}"}, {f"s{k}"}] for k in range(10)}
    table = table_for(keys, module)
    assert table.unknown([["t3", "t1", "t3"], [], ["t9", "t1", "t2"]]) == ["t3", "t1", "t9", "t2"]
    assert pair_counts(table, ["t1", "t2"], ["t3"]) is not None  # interns t1, t2 and t3
    assert table.unknown([["t3", "t1", "t3"], [], ["t9", "t1", "t2", "t0"]]) == ["t9", "t0"]
    assert table.unknown(()) == []
