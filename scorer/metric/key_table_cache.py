"""A persistent cache of the compiled engine's token table (:mod:`scorer.metric.engine.id_counts`): every
token's key ids, so a warm run interns none of the tokens it has met before. One file per token cache
file and stages in the store of :mod:`scorer.metric.cache`, checked before use (the shapes here, the ids
and runs by ``KeyTable.restore``). Tokens the morphology could not analyse are never kept, so every run
that meets them says so. Past :data:`MAX_TOKENS` tokens, the table is not written.
"""

from __future__ import annotations

from array import array
from collections.abc import Container
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import Store
from .engine.accelerator import StoredTable

if TYPE_CHECKING:
    from .meteor import MeteorRu

MAX_TOKENS = 1_000_000


def _well_formed(table: object) -> bool:
    return (
        type(table) is tuple
        and len(table) == 5
        and type(table[0]) is list
        and type(table[1]) is list
        and len(table[0]) <= MAX_TOKENS
        and all(type(x) is bytes for x in table[2:])
        and set(map(type, table[1])) <= {str}
        and len(set(table[1])) == len(table[1])
    )


STORE = Store("keys", 2, 256 << 20, _well_formed)


def table_file(metric: MeteorRu) -> Path | None:
    """Where ``metric``'s token table is kept, beside its matcher's token cache; None when the matcher keeps
    nothing across runs."""
    cache = metric.matcher.cache_file
    return table_path(cache, metric.params.stages) if cache is not None else None


def table_path(token_cache: Path, stages: tuple[str, ...]) -> Path:
    """The table file for the token cache file ``token_cache`` and these stages."""
    return STORE.path(f"{token_cache.name}|{','.join(stages)}")


def load_table(path: Path) -> StoredTable | None:
    """The table stored at ``path``, or None when it is missing, foreign or ill-shaped."""
    found = STORE.load(path)
    return None if found is None else StoredTable(*found)


def save_table(path: Path, table: StoredTable) -> bool:
    """Write ``table`` to ``path`` (best effort: False when it could not be written or is too large), without
    the key strings that only tokens left out of it had (its key ids renumbered, their order kept), so the
    file holds nothing of a token it does not keep."""
    ids = array("i", table.data)
    used = sorted(set(ids))
    if len(used) < len(table.keys):
        new = {old: k for k, old in enumerate(used)}
        table = table._replace(
            keys=[table.keys[old] for old in used], data=array("i", [new[k] for k in ids]).tobytes()
        )
    return len(table.tokens) <= MAX_TOKENS and STORE.save(path, tuple(table))


def restore(metric: MeteorRu) -> None:
    """Give ``metric``'s engine the token table kept by earlier runs with its stages, when its matcher keeps
    its keys across runs (a speed-up, never a change of number)."""
    path = table_file(metric)
    stored = load_table(path) if path is not None else None
    if stored is not None:
        metric.engine.restore_table(metric.matcher.key_functions(metric.params.stages), stored)


def keep(metric: MeteorRu, vocabulary: Container[str] | None = None) -> None:
    """Keep ``metric``'s engine's token table for later runs when it grew, with the tokens whose keys were
    computed on workers and without those the morphology could not analyse; with ``vocabulary`` (the
    reference data's words), without any token not in it (:meth:`~scorer.metric.matcher.Matcher.save`)."""
    path = table_file(metric)
    if path is None:
        return
    unanalysed = dict(metric.matcher.unanalysed)
    skip: Container[str] = unanalysed if vocabulary is None else _Outside(vocabulary, unanalysed)
    keys = metric.matcher.key_functions(metric.params.stages)
    more = sorted(
        t
        for t in set().union(*(memo.added for memo in metric.matcher.memos.values()))
        if vocabulary is None or t in vocabulary
    )
    if not more and not metric.engine.table_grew(keys, vocabulary):
        return  # nothing new to keep
    table = metric.engine.table_to_store(keys, skip, more)
    if table is not None:
        save_table(path, table)


class _Outside:
    """The tokens a table leaves out: those not in ``keep``, and those in ``skip``."""

    def __init__(self, keep: Container[str], skip: Container[str]):
        self.keep, self.skip = keep, skip

    def __contains__(self, token: object) -> bool:
        return token not in self.keep or token in self.skip
