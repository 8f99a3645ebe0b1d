"""What a warm run knows of the tokens earlier runs met, so that it loads neither pymorphy3 nor the thesaurus
and interns no token again (contract section 3). Three caches, in the cache directory
(:mod:`scorer.metric.cache`), for one morphology and thesaurus (their identities are the key):

- **The token cache**: each stage's keys by token (the lemma set, the synset set, and those of any stage
  registered), by stage name, read whole by a matcher the first time it needs a word's keys, or at once
  where no token table stands for it; so it keeps the reference data's words only
  (:meth:`~scorer.metric.matcher.Matcher.save`). Saving merges with what is on disk at that moment
  (another run may have added tokens); past :data:`MAX_TOKENS` a stage, new tokens are not added.
- **The word store** (:class:`TokenStore`): the same keys for the other words (an upload's own), in an
  SQLite table read a row, or a piece of answers' words, at a time: a run's cost grows with the words it
  looks up, not with what earlier runs added. A row of another shape counts as missing; it stops growing
  at :data:`MAX_BYTES`.
- **The token table**: the compiled engine's key ids of every token (:mod:`scorer.metric.engine.id_counts`),
  beside the token cache, keyed by its file and the stages, and checked before use (the shapes here, the
  ids and runs by ``KeyTable.restore``); :meth:`~scorer.metric.meteor.MeteorRu.restore_table` and
  :meth:`~scorer.metric.meteor.MeteorRu.keep_table` use it. Past :data:`MAX_TOKENS` tokens, it is not
  written.
"""

from __future__ import annotations

import os
import sqlite3
from array import array
from pathlib import Path

from .cache import Store, cache_dir, connect, file_name, sets_of_strings, side_files_own
from .engine.accelerator import StoredTable

#: The most tokens a cache read whole holds: a stage's in the token cache, the token table's.
MAX_TOKENS = 1_000_000
#: The word store stops growing at this size.
MAX_BYTES = 256 << 20

KeySets = dict[str, frozenset[str]]


def _well_formed(tables: object) -> bool:
    """At most :data:`MAX_TOKENS` tokens with their keys, by stage name."""
    return type(tables) is dict and all(
        type(name) is str and sets_of_strings(table) and len(table) <= MAX_TOKENS
        for name, table in tables.items()
    )


def _table_well_formed(table: object) -> bool:
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


STORE = Store("tokens", 4, 256 << 20, _well_formed)
TABLES = Store("keys", 2, 256 << 20, _table_well_formed)


def _key(morphology_id: str, thesaurus_id: str | None) -> str:
    """What the keys of a token depend on: the morphology's and the thesaurus' identities."""
    return f"{morphology_id}|{thesaurus_id or 'none'}"


def cache_path(morphology_id: str, thesaurus_id: str | None) -> Path:
    """The token cache file for this morphology and thesaurus."""
    return STORE.path(_key(morphology_id, thesaurus_id))


def store_path(morphology_id: str, thesaurus_id: str | None) -> Path:
    """The word store for this morphology and thesaurus, in a folder of its own in the cache directory."""
    return cache_dir() / file_name("words", 2, _key(morphology_id, thesaurus_id)) / "words.sqlite"


def table_path(token_cache: Path, stages: tuple[str, ...]) -> Path:
    """The token table file for the token cache file ``token_cache`` and these stages."""
    return TABLES.path(f"{token_cache.name}|{','.join(stages)}")


def holds_keys(path: Path) -> bool:
    """Whether a token cache file is at ``path`` (read when first needed: :func:`load` checks it)."""
    try:
        return os.lstat(path).st_size > 0
    except (OSError, ValueError):
        return False


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


def load_table(path: Path) -> StoredTable | None:
    """The token table stored at ``path``, or None when it is missing, foreign or ill-shaped."""
    found = TABLES.load(path)
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
    return len(table.tokens) <= MAX_TOKENS and TABLES.save(path, tuple(table))


_SEPARATOR = "\x00"
_EMPTY: frozenset[str] = frozenset()
#: Tokens a query: SQLite allows 32,766 parameters from 3.32 on, 999 before.
_CHUNK = 30_000 if sqlite3.sqlite_version_info >= (3, 32) else 900
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS words (stage TEXT, token TEXT, keys TEXT, PRIMARY KEY (stage, token)) "
    "WITHOUT ROWID"
)


class TokenStore:
    """The word store: keys by (stage, token), read a row at a time; one connection per process (workers
    fork), opened by :func:`~scorer.metric.cache.connect`."""

    def __init__(self, path: Path):
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._pid = -1
        self._writable = False

    def _open(self) -> sqlite3.Connection | None:
        if self._pid != os.getpid():
            self._pid, self._connection, self._writable = os.getpid(), None, False
            opened = connect(self.path, _SCHEMA)
            if opened is not None:
                self._connection, self._writable = opened
        return self._connection

    def get(self, stage: str, token: str) -> frozenset[str] | None:
        """The keys kept for ``token`` at ``stage``, or None when there are none (or the store fails)."""
        return self.get_many(stage, [token]).get(token)

    def get_many(self, stage: str, tokens: list[str]) -> dict[str, frozenset[str]]:
        """The keys kept for each of ``tokens`` at ``stage`` that has any (a few queries, not one a token)."""
        connection = self._open()
        found: dict[str, frozenset[str]] = {}
        if connection is None:
            return found
        try:
            for start in range(0, len(tokens), _CHUNK):
                chunk = tokens[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT token, keys FROM words WHERE stage = ? AND token IN ({marks})", (stage, *chunk)
                ).fetchall()
                for token, keys in rows:
                    if type(token) is str and type(keys) is str:
                        found[token] = frozenset(keys.split(_SEPARATOR)) if keys else _EMPTY
        except sqlite3.Error:
            return {}
        return found

    def add(self, found: dict[str, dict[str, frozenset[str]]]) -> bool:
        """Keep these keys, by stage and token (best effort: False when nothing could be written)."""
        rows = [
            (stage, token, _SEPARATOR.join(sorted(keys)))
            for stage, table in found.items()
            for token, keys in table.items()
            if _SEPARATOR not in "".join(keys)  # no key holds the separator
        ]
        connection = self._open()
        if not rows or connection is None or not self._writable or not side_files_own(self.path):
            return False
        try:
            pages, size = (
                connection.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size")
            )
            if pages * size >= MAX_BYTES:
                return False
            with connection:
                connection.executemany("INSERT OR IGNORE INTO words VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            return False
        return True
