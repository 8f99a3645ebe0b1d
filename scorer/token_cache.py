"""A persistent cache of what the stages know of each token: its lemma set and its synset set.

One file per (pymorphy3 + dictionary version, thesaurus identity) in the
cache directory (:mod:`scorer.cache`), in ``marshal`` form. Loading it spares
a warm run pymorphy3 and the thesaurus altogether. The file is never
trusted: unreadable or of the wrong shape, it is ignored and rebuilt. Saving
merges with what is on disk at that moment (another run may have added
tokens) and renames a temporary file into place. It holds at most
:data:`MAX_TOKENS` tokens; past that, new tokens are not added.
"""
from __future__ import annotations

import hashlib
import marshal
from pathlib import Path

from .cache import cache_dir, marshal_tag, write_best_effort

FORMAT = 1
MAX_TOKENS = 1_000_000

KeySets = dict[str, frozenset[str]]


def cache_path(morphology_id: str, thesaurus_id: str | None) -> Path:
    key = hashlib.sha256(f"{morphology_id}|{thesaurus_id or 'none'}".encode()).hexdigest()[:16]
    return cache_dir() / f"tokens-{key}.v{FORMAT}.{marshal_tag()}.marshal"


def _well_formed(table: object) -> bool:
    if not isinstance(table, dict):
        return False
    return all(type(k) is str and type(v) is frozenset for k, v in table.items())


def load(path: Path) -> tuple[KeySets, KeySets]:
    """(lemma sets, synset sets) by token; two empty tables when the file is missing or bad."""
    try:
        with open(path, "rb") as fh:
            content = marshal.load(fh)
    except (OSError, ValueError, EOFError, TypeError):
        return {}, {}
    if (not isinstance(content, tuple) or len(content) != 3 or content[0] != FORMAT
            or not _well_formed(content[1]) or not _well_formed(content[2])):
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
    return write_best_effort(path, marshal.dumps((FORMAT, merged[0], merged[1])))
