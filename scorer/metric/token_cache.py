"""A persistent cache of what the stages know of each token: its keys at every stage that has a memo
(the lemma set, the synset set, and those of any stage registered), by stage name.

One file per (pymorphy3 + dictionary version, thesaurus identity) in the
cache directory (:mod:`scorer.metric.cache`), in ``marshal`` form, sealed with that
key. Loading it spares a warm run pymorphy3 and the thesaurus altogether.
The file is never trusted: one that is not a regular file of this user's,
is larger than :data:`MAX_BYTES`, was sealed for another key, or does not
hold the expected shape and types is ignored and rebuilt. Saving merges with
what is on disk at that moment (another run may have added tokens) and
renames a temporary file into place. It holds at most :data:`MAX_TOKENS`
tokens; past that, new tokens are not added.
"""

from __future__ import annotations

import hashlib
import marshal
from itertools import chain
from pathlib import Path

from .cache import cache_dir, loads_marshal, marshal_tag, read_sealed, seal, write_best_effort

FORMAT = 3
MAX_TOKENS = 1_000_000
MAX_BYTES = 256 << 20

KeySets = dict[str, frozenset[str]]


def cache_path(morphology_id: str, thesaurus_id: str | None) -> Path:
    return (
        cache_dir() / f"tokens-{_key_digest(morphology_id, thesaurus_id)}.v{FORMAT}.{marshal_tag()}.marshal"
    )


def _key_digest(morphology_id: str, thesaurus_id: str | None) -> str:
    return hashlib.sha256(f"{morphology_id}|{thesaurus_id or 'none'}".encode()).hexdigest()[:16]


def _seal_key(path: Path) -> str:
    """What a token cache file is sealed with: its own name (the key digest, format and marshal tag)."""
    return f"tokens|{path.name}"


def _well_formed(table: object) -> bool:
    """A dict of at most :data:`MAX_TOKENS` strings to frozensets of strings (types checked at C speed)."""
    if type(table) is not dict or len(table) > MAX_TOKENS:
        return False
    return (
        set(map(type, table)) <= {str}
        and set(map(type, table.values())) <= {frozenset}
        and set(map(type, chain.from_iterable(table.values()))) <= {str}
    )


def load(path: Path) -> dict[str, KeySets]:
    """Each stage's keys by token, by stage name; empty when the file is missing or bad."""
    content = loads_marshal(read_sealed(path, _seal_key(path), MAX_BYTES))
    if (
        type(content) is not tuple
        or len(content) != 2
        or content[0] != FORMAT
        or type(content[1]) is not dict
    ):
        return {}
    tables = content[1]
    if not all(type(name) is str and _well_formed(table) for name, table in tables.items()):
        return {}
    return tables


def save(path: Path, new: dict[str, KeySets]) -> bool:
    """Merge the new entries (by stage name) into the file at ``path``; False when it could not be written."""
    if not any(new.values()):
        return True
    merged = load(path)
    for name, found in new.items():
        old = merged.setdefault(name, {})
        room = MAX_TOKENS - len(old)
        if room > 0:
            for token in sorted(found.keys() - old.keys())[:room]:
                old[token] = found[token]
    return write_best_effort(path, seal(_seal_key(path), marshal.dumps((FORMAT, merged))))
