"""A persistent cache of the compiled engine's token table: every token's key ids, kept across runs.

The compiled engine counts rule 1 on interned ids (:mod:`scorer.metric.engine.id_counts`): on first
sight, each token's keys at every stage after the exact one become sorted lists of key ids. This file
keeps that table, so a warm run interns none of the tokens it has met before. One file per token
cache (:mod:`scorer.metric.token_cache`: the same pymorphy3 and dictionary versions and thesaurus) and
stages, in ``marshal`` form, sealed with its own name; what it holds is checked before use (the
shapes here, the ids and runs by ``KeyTable.restore``), and a file that fails is ignored and
rewritten. Tokens the morphology could not analyse are never kept, so every run that meets them says
so. It holds at most :data:`MAX_TOKENS` tokens; past that, the table is not written.
"""

from __future__ import annotations

import hashlib
import marshal
from pathlib import Path

from .cache import loads_marshal, read_sealed, seal, write_best_effort
from .engine.accelerator import StoredTable

FORMAT = 1
MAX_TOKENS = 1_000_000
MAX_BYTES = 256 << 20


def table_path(token_cache: Path, stages: tuple[str, ...]) -> Path:
    """The table file beside the token cache file ``token_cache``, for these stages."""
    digest = hashlib.sha256(f"{token_cache.name}|{','.join(stages)}".encode()).hexdigest()[:16]
    return token_cache.with_name(f"keys-{digest}.v{FORMAT}.marshal")


def _seal_key(path: Path) -> str:
    return f"keys|{path.name}"


def load_table(path: Path) -> StoredTable | None:
    """The table stored at ``path``, or None when it is missing, foreign or ill-shaped."""
    content = loads_marshal(read_sealed(path, _seal_key(path), MAX_BYTES))
    if type(content) is not tuple or len(content) != 6 or content[0] != FORMAT:
        return None
    table = StoredTable(*content[1:])
    if (
        type(table.tokens) is not list
        or type(table.keys) is not list
        or len(table.tokens) > MAX_TOKENS
        or any(type(x) is not bytes for x in table[2:])
        or not all(type(k) is str for k in table.keys)
        or len(set(table.keys)) != len(table.keys)
    ):
        return None
    return table


def save_table(path: Path, table: StoredTable) -> bool:
    """Write ``table`` to ``path`` (best effort: False when it could not be written or is too large)."""
    if len(table.tokens) > MAX_TOKENS:
        return False
    return write_best_effort(path, seal(_seal_key(path), marshal.dumps((FORMAT, *table))))
