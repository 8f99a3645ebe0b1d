"""A persistent cache of what the stages know of each token: its keys at every stage that has a memo
(the lemma set, the synset set, and those of any stage registered), by stage name, one file per
(pymorphy3 + dictionary version, thesaurus identity) in the store of :mod:`scorer.metric.cache`. It
spares a warm run pymorphy3 and the thesaurus altogether. Saving merges with what is on disk at that
moment (another run may have added tokens); past :data:`MAX_TOKENS`, new tokens are not added.
"""

from __future__ import annotations

from pathlib import Path

from .cache import Store, sets_of_strings

MAX_TOKENS = 1_000_000

KeySets = dict[str, frozenset[str]]


def _well_formed(tables: object) -> bool:
    """At most :data:`MAX_TOKENS` tokens with their keys, by stage name."""
    return type(tables) is dict and all(
        type(name) is str and sets_of_strings(table) and len(table) <= MAX_TOKENS
        for name, table in tables.items()
    )


STORE = Store("tokens", 4, 256 << 20, _well_formed)


def cache_key(morphology_id: str, thesaurus_id: str | None) -> str:
    """What the keys of a token depend on: the morphology's and the thesaurus' identities."""
    return f"{morphology_id}|{thesaurus_id or 'none'}"


def cache_path(morphology_id: str, thesaurus_id: str | None) -> Path:
    return STORE.path(cache_key(morphology_id, thesaurus_id))


def load(path: Path) -> dict[str, KeySets]:
    """Each stage's keys by token, by stage name; empty when the file is missing or bad."""
    return STORE.load(path) or {}


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
    return STORE.save(path, merged)
