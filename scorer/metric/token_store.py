"""The keys of the words that are not the reference data's, looked up one by one (contract section 3).

The token cache (:mod:`scorer.metric.token_cache`) is read whole at the start of a run, so it keeps the
reference data's words only: an upload's own words would make every later run load more. Those words'
keys are kept here instead, in an SQLite table a run reads a row at a time, for the words it meets: a run's
cost grows with the words it looks up, not with what earlier runs added. A warm run finds its answers'
words here without loading pymorphy3 or the thesaurus.

The file is data, never trusted more than the other caches: it is opened only in a usable cache directory
(:func:`~scorer.metric.cache_dir.cache_dir_problem`), in a folder of its own that no one else may write
(:func:`~scorer.metric.cache_dir.private_folder`: in a shared 1777 cache directory no other user can place
a journal beside it), only when it is a regular file of this user's (or root's, read-only) that no one else
may write, with ``trusted_schema`` off; a row of another shape counts as missing, and any SQLite error
means "not cached". SQLite's side files are read only when they are this user's own
(:func:`~scorer.metric.cache_dir.side_files_own`): otherwise, as for a store of root's read by another
user, the file is opened read-only and ``immutable``, so SQLite neither rolls a journal back into it nor
reads a write-ahead log, and nothing is added to it. It stops growing at :data:`MAX_BYTES`.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import suppress
from hashlib import sha256
from pathlib import Path

from .cache_dir import cache_dir, cache_dir_problem, private_folder, side_files_own, trusted

MAX_BYTES = 256 << 20
_SEPARATOR = "\x00"
_EMPTY: frozenset[str] = frozenset()
#: Tokens a query: SQLite allows 32,766 parameters from 3.32 on, 999 before.
_CHUNK = 30_000 if sqlite3.sqlite_version_info >= (3, 32) else 900


def store_path(key: str) -> Path:
    """The store of the token cache keyed ``key`` (the morphology's and the thesaurus' identities), in a
    folder of its own in the cache directory."""
    digest = sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir() / f"words-{digest}.v2" / "words.sqlite"


class TokenStore:
    """Keys by (stage, token), read a row at a time; one connection per process (workers fork)."""

    def __init__(self, path: Path):
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._pid = -1
        self._writable = False

    def _open(self) -> sqlite3.Connection | None:
        if self._pid == os.getpid():
            return self._connection
        self._pid, self._connection, self._writable = os.getpid(), None, False
        folder = self.path.parent
        if cache_dir_problem(folder.parent) is not None or not private_folder(folder):
            return None
        info = self._lstat()
        if info is None and side_files_own(self.path):  # a new store, mode 0600 (SQLite's journals take it)
            with suppress(OSError, ValueError):
                flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
                os.close(os.open(self.path, flags, 0o600))
            info = self._lstat()
        if info is None or not trusted(info):
            return None
        # Written to only when it is this user's and so is every side file; otherwise read alone, immutable.
        self._writable = info.st_uid == os.geteuid() and side_files_own(self.path)
        uri = self.path.resolve().as_uri() + ("?mode=rw" if self._writable else "?mode=ro&immutable=1")
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
            connection.execute("PRAGMA trusted_schema = OFF")
            if self._writable:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS words (stage TEXT, token TEXT, keys TEXT, "
                    "PRIMARY KEY (stage, token)) WITHOUT ROWID"
                )
        except sqlite3.Error:
            return None
        self._connection = connection
        return connection

    def _lstat(self) -> os.stat_result | None:
        try:
            return os.lstat(self.path)
        except (OSError, ValueError):
            return None

    def get(self, stage: str, token: str) -> frozenset[str] | None:
        """The keys kept for ``token`` at ``stage``, or None when there are none (or the store fails)."""
        connection = self._open()
        if connection is None:
            return None
        try:
            row = connection.execute(
                "SELECT keys FROM words WHERE stage = ? AND token = ?", (stage, token)
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None or type(row[0]) is not str:
            return None
        return frozenset(row[0].split(_SEPARATOR)) if row[0] else frozenset()

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
            if all(_SEPARATOR not in key for key in keys)
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
