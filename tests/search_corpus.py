"""A fixed corpus of text pairs for the search's node counts (see ``test_search_node_counts_are_pinned``).

The node budget (contract section 4; ``scorer.metric.engine.alignment.NODE_BUDGET``) counts search nodes, so the number
of nodes a pair takes decides which long pairs are cut and flagged inexact. The counts on this corpus are
pinned in ``data/search_nodes.json``; a deliberate change to the search's order or pruning rewrites them
with ``python scripts/pin_search_nodes.py`` (and says in its commit that cut pairs may change).
"""
from __future__ import annotations

import hashlib
import random
from typing import Iterator

import scorer.metric.engine.alignment as alignment_module

# Words sharing lemmas (лечу: лететь+лечить, стали: сталь+стать, пила: пить+пила, дома: дом+дома,
# коты: кот+коты) and synsets of the tests' thesaurus (мчаться/лететь, зеленый/недозрелый, пить/выпивать).
WORDS = ["лечу", "мчаться", "лететь", "лечить", "стали", "сталь", "стать", "сталью", "стал", "пила", "пить",
         "выпивать", "зеленый", "недозрелый", "дом", "дома", "кот", "коты"]
SIZE = 6000
SEED = 2026


#: Pairs found by targeted searches where a change to the search's pruning changes only its node count.
FOUND = [
    ("пила пила лететь лететь лететь пить пить недозрелый пила пить",
     "пила пила лететь пила недозрелый пила пила мчаться мчаться", ("exact", "lemma", "synonym")),
    ("дом дом дома", "кот дома стать коты зеленый дом дома дома коты", ("exact", "lemma")),
    ("стали стать стать мчаться стали мчаться стали стали", "стать стали стать стать стать стали стать",
     ("exact", "lemma")),
]


def pairs(stage_orders: list[tuple[str, ...]], size: int = SIZE) -> Iterator[tuple[list[str], list[str], tuple[str, ...]]]:
    """The pairs of :data:`FOUND`, then three kinds of pair in turn: unrelated texts, a text with words
    replaced, a text edited (insert, delete, replace, swap), each of 2 to 12 tokens from at most four words,
    stage orders in turn."""
    for cand_text, ref_text, stages in FOUND:
        yield cand_text.split(), ref_text.split(), stages
    rng = random.Random(SEED)
    for case in range(size):
        pool = rng.sample(WORDS, rng.randint(1, 4))
        ref = [rng.choice(pool) for _ in range(rng.randint(2, 12))]
        if case % 3 == 0:
            cand = [rng.choice(pool) for _ in range(rng.randint(2, 12))]
        elif case % 3 == 1:
            cand = list(ref)
            for _ in range(rng.randint(1, 3)):
                cand[rng.randrange(len(cand))] = rng.choice(WORDS)
        else:
            cand = list(ref)
            for _ in range(rng.randint(1, 4)):
                op, p = rng.randrange(4), rng.randrange(len(cand) + 1)
                if op == 0:
                    cand.insert(p, rng.choice(pool))
                elif op == 1 and len(cand) > 1:
                    del cand[min(p, len(cand) - 1)]
                elif op == 2:
                    cand[min(p, len(cand) - 1)] = rng.choice(WORDS)
                elif len(cand) > 1:
                    q, p = rng.randrange(len(cand)), min(p, len(cand) - 1)
                    cand[p], cand[q] = cand[q], cand[p]
        yield cand, ref, stage_orders[case % len(stage_orders)]


def node_counts(matcher, stage_orders: list[tuple[str, ...]], size: int = SIZE) -> tuple[list[int], str]:
    """Per pair the nodes its search took (0: no search), and the SHA-256 of every pair's links and flag."""
    seen: list[int] = []

    class Counted(alignment_module._Search):
        def run(self):
            found = super().run()
            seen.append(self.nodes)
            return found

    real, alignment_module._Search = alignment_module._Search, Counted
    counts, digest = [], hashlib.sha256()
    try:
        for cand, ref, stages in pairs(stage_orders, size):
            seen.clear()
            found = alignment_module.align(cand, ref, matcher.key_functions(stages), matcher.any_keys(stages))
            counts.append(sum(seen))
            digest.update(repr((found.links, found.exact)).encode())
    finally:
        alignment_module._Search = real
    return counts, digest.hexdigest()
