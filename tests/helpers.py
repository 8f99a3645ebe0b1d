"""Helpers the engine's tests share (a module of its own: tests never import other test modules)."""

import itertools

from scorer.metric.engine import accelerator, id_counts
from scorer.metric.engine.counting import stage_counts
from scorer.metric.engine.links import counts_of, type_graph

# Words sharing lemmas (лечу: лететь+лечить, стали: сталь+стать, пила: пить+пила, дома: дом+дома,
# коты: кот+коты) and synsets of the tests' thesaurus (мчаться/лететь, зеленый/недозрелый, пить/выпивать).
WORDS = [
    "лечу",
    "мчаться",
    "лететь",
    "лечить",
    "стали",
    "сталь",
    "стать",
    "сталью",
    "стал",
    "пила",
    "пить",
    "выпивать",
    "зеленый",
    "недозрелый",
    "дом",
    "дома",
    "кот",
    "коты",
]

# Every stage order the configuration allows: each non-empty ordered selection of the three stages.
STAGE_ORDERS = [
    order for k in (3, 2, 1) for order in itertools.permutations(("exact", "lemma", "synonym"), k)
]


def counted(cand, ref, matcher, stages):
    keys = matcher.key_functions(stages)
    return stage_counts(type_graph(counts_of(cand), counts_of(ref), keys), len(keys))


#: The module as Python and, when built, compiled: every test runs on both.
ID_COUNTS_MODULES = [id_counts] + ([accelerator._built()[0]["id_counts"]] if accelerator.compiled() else [])


def pair_counts(table, cand, ref):
    """A key table's rule-1 counts of one candidate against one reference (``counts_each`` of one)."""
    return table.counts_each(cand, [ref])[0]


def table_for(keys, module=id_counts):
    key_ids: dict[str, int] = {}

    def intern(token: str) -> int:
        return table.add(
            token, [sorted({key_ids.setdefault(k, len(key_ids)) for k in keys[token][s]}) for s in range(2)]
        )

    table = module.KeyTable(2, intern)
    return table
