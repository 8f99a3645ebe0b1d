"""A persistent cache of what the stages know of each token: its lemma set and its synset set.

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

FORMAT = 2
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


def load(path: Path) -> tuple[KeySets, KeySets]:
    """(lemma sets, synset sets) by token; two empty tables when the file is missing or bad."""
    content = loads_marshal(read_sealed(path, _seal_key(path), MAX_BYTES))
    if (
        type(content) is not tuple
        or len(content) != 3
        or content[0] != FORMAT
        or not _well_formed(content[1])
        or not _well_formed(content[2])
    ):
        return {}, {}
    return content[1], content[2]


def save(path: Path, lemmas: KeySets, synsets: KeySets) -> bool:
    """Merge the new entries into the file at ``path``; False when it could not be written."""
    if not lemmas and not synsets:
        return True
    old_lemmas, old_synsets = load(path)
    merged = []
    for old, new in ((old_lemmas, lemmas), (old_synsets, synsets)):
        room = MAX_TOKENS - len(old)
        if room > 0:
            for token in sorted(new.keys() - old.keys())[:room]:
                old[token] = new[token]
        merged.append(old)
    return write_best_effort(path, seal(_seal_key(path), marshal.dumps((FORMAT, merged[0], merged[1]))))
