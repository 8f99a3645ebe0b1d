"""``id_search`` (rules 2-5 on token ids) against the definition (``alignment.align``).

Run as plain Python, the code the compiled engine is compiled from, and compiled when built. Checked
on every graph of the small domain of ``test_id_counts`` (every staging of the six links, every count,
the tokens in a shuffled order), on the search corpus of ``search_corpus`` (real Russian words whose
lemmas and synsets overlap, searches up to thousands of nodes deep) and under small node budgets,
where the search is cut: the links, the chunks and the exactness flag must be the definition's.
Where ``aligned`` declines (None), the definition answers; declining is allowed only for a general
component (left to the definition's flow). Where its search finds no alignment within the budget
(``CUT``), the definition's fallback must be what ``align`` returns.
"""
import itertools
import random

import pytest

from scorer.metric.engine import accelerator, alignment, id_counts, id_search

from search_corpus import pairs
from test_id_counts import LEMMA, PAIRS, SYNONYM, definition, general, keys_for, table_for

COMPILED = accelerator._built()[0] if accelerator.compiled() else {}
MODULES = [(id_counts, id_search)] + ([(COMPILED["id_counts"], COMPILED["id_search"])] if COMPILED else [])


@pytest.fixture(params=MODULES, ids=lambda m: "compiled" if m[0] is not id_counts else "python")
def modules(request):
    return request.param


def as_definition(found: alignment.Alignment) -> tuple[int, int, bool]:
    return len(found.links), found.chunks, found.exact


@pytest.mark.slow
def test_every_small_graph(modules):
    counts_module, search_module = modules
    search = search_module.IdSearch()
    rnd = random.Random(3)
    compared = declined = 0
    for stages in itertools.product((0, LEMMA, SYNONYM), repeat=len(PAIRS)):
        keys = keys_for(dict(zip(PAIRS, stages)))
        functions = (None, lambda t: frozenset(keys[t][0]), lambda t: frozenset(keys[t][1]))
        any_keys = lambda t: frozenset(keys[t][0] | keys[t][1])  # noqa: E731
        table = table_for(keys, counts_module)
        for n_a1, n_a2, n_b1, n_b2 in itertools.product((1, 2), repeat=4):
            for n_xc, n_xr in itertools.product((0, 1, 2), repeat=2):
                cand = rnd.sample(["a1"] * n_a1 + ["x"] * n_xc + ["a2"] * n_a2, n_a1 + n_xc + n_a2)
                ref = rnd.sample(["b2"] * n_b2 + ["x"] * n_xr + ["b1"] * n_b1, n_b2 + n_xr + n_b1)
                got = table.aligned(cand, ref, search, alignment.NODE_BUDGET)
                if got is None:
                    assert general(definition(cand, ref, keys)[1]), (stages, cand, ref)
                    declined += 1
                    continue
                assert got == as_definition(align_of(cand, ref, functions, any_keys)), (stages, cand, ref)
                compared += 1
    assert (compared, declined) == (38160, 66816)


def align_of(cand, ref, functions, any_keys, budget=alignment.NODE_BUDGET):
    return alignment.align(cand, ref, functions, any_keys, budget)


def corpus_table(matcher, stages, module):
    functions = matcher.key_functions(stages)
    key_ids: dict[str, int] = {}

    def intern(token: str) -> int:
        return table.add(token, [sorted({key_ids.setdefault(k, len(key_ids)) for k in f(token)})
                                 for f in functions[1:]])

    table = module.KeyTable(len(functions) - 1, intern)
    return table, functions, matcher.any_keys(stages)


@pytest.mark.parametrize("budget", [alignment.NODE_BUDGET, 40, 7, 1])
def test_the_search_corpus_under_every_budget(matcher, modules, budget):
    """The corpus's pairs led by the exact stage; small budgets cut the search at the same node."""
    counts_module, search_module = modules
    search = search_module.IdSearch()
    tables = {}
    compared = cut = declined = 0
    for cand, ref, stages in pairs([("exact", "lemma", "synonym"), ("exact", "lemma"), ("exact", "synonym"),
                                    ("exact",)], 1500):
        if stages[0] != "exact" or "exact" in stages[1:]:
            continue
        if stages not in tables:
            tables[stages] = corpus_table(matcher, stages, counts_module)
        table, functions, any_keys = tables[stages]
        got = table.aligned(cand, ref, search, budget)
        want = align_of(cand, ref, functions, any_keys, budget)
        if got == search_module.CUT:  # no alignment within the budget: the definition's fallback, as align's
            assert want == alignment.fallback_alignment(cand, ref, functions, any_keys), (cand, ref, stages)
            declined += 1
            continue
        assert got == as_definition(want), (cand, ref, stages)
        compared += 1
        cut += not want.exact
    assert compared + declined == 1503
    assert (compared, declined > 0, cut > 0) == EXPECTED[budget]


#: Per budget: pairs compared, whether some had no alignment within it, whether some were cut after one.
EXPECTED = {alignment.NODE_BUDGET: (1503, False, False), 40: (1468, True, True), 7: (1195, True, True),
            1: (401, True, True)}


def test_long_texts(modules):
    """Texts of 30 to 120 tokens, many repeats, some lemma and synonym links: long searches, the Fenwick
    tree of chosen positions, the twins, the tables of partly exact types."""
    counts_module, search_module = modules
    search = search_module.IdSearch()
    rnd = random.Random(8)
    words = [f"t{k}" for k in range(40)]
    keys = {w: [{f"k{rnd.randrange(60)}"} if rnd.random() < 0.12 else set(),
                {f"s{rnd.randrange(60)}"} if rnd.random() < 0.12 else set()] for w in words}
    functions = (None, lambda t: frozenset(keys[t][0]), lambda t: frozenset(keys[t][1]))
    any_keys = lambda t: frozenset(keys[t][0] | keys[t][1])  # noqa: E731
    table = table_for(keys, counts_module)
    compared = 0
    for n in (30, 60, 120):
        for _ in range(10):
            pool = rnd.sample(words, 12)
            cand = [rnd.choice(pool) for _ in range(n)]
            ref = list(cand)
            for _ in range(n // 4):
                ref[rnd.randrange(n)] = rnd.choice(words)
            rnd.shuffle(ref[: n // 3])
            got = table.aligned(cand, ref, search, 5000)
            want = align_of(cand, ref, functions, any_keys, 5000)
            if got == search_module.CUT:  # the dive was cut: the definition's fallback, as align's
                assert want == alignment.fallback_alignment(cand, ref, functions, any_keys)
                continue
            assert got == as_definition(want)
            compared += 1
    assert compared >= 11


def test_hand_cases(modules):
    counts_module, search_module = modules
    search = search_module.IdSearch()
    keys = keys_for({("a1", "b1"): LEMMA, ("a2", "b2"): SYNONYM})
    table = table_for(keys, counts_module)
    # all forced: x x a1 | b1 x x: x-x twice in order (one chunk), a1 - b1 behind them: two chunks
    assert table.aligned(["x", "x", "a1"], ["b1", "x", "x"], search, 100) == (3, 2, True)
    assert table.aligned(["a1", "x", "a2"], ["b1", "x", "b2"], search, 100) == (3, 1, True)
    # x twice against once: the search links the x that keeps the chunk with a1 - b1
    assert table.aligned(["x", "a1", "x"], ["b1", "x"], search, 100) == (2, 1, True)
    assert table.aligned(["a2"], ["b1"], search, 100) == (0, 0, True)
