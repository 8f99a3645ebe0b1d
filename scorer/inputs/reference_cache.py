"""Validated reference data kept across runs, found by the SHA-256 of the reference files themselves.

An organizer scores every upload, and a participant every draft, against one set of reference files;
reading and validating them is a fifth of a warm run. After a successful validation the dialogues
(and the references, when read) are written to the cache directory (:mod:`scorer.metric.cache`) in
``marshal`` form, sealed with a key made of the files' digests, the limits they were validated under,
this format and the interpreter's marshal tag. A file whose bytes change gets another key, so a stale
entry is never found; references that failed validation are never stored.

The entry is data, never trusted: it is read under the cache's rules (a regular file of this user's,
within a size cap, sealed with this key) and then checked for the shape that validation guarantees
(unique dialog_ids of known types, every dialogue's turns with a reference variant holding a word
token, all strings); anything else is ignored and the files are validated again.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import stat
from pathlib import Path
from typing import Any

from scorer.metric.cache import cache_dir, loads_marshal, marshal_tag, read_sealed, seal, write_best_effort
from scorer.metric.text import has_token
from .config import Limits
from .contract import DIALOGUE_TYPES
from .validation import Dialogue

FORMAT = 1
References = dict[str, list[list[str]]]


def entry_key(dialogues: Path, answers: Path | None, limits: Limits) -> str | None:
    """The key of the entry for these files (``answers`` None: the dialogues alone), or None when a file
    cannot be read whole within the limits (validation then reports it)."""
    digest = hashlib.sha256(f"references|{FORMAT}|{marshal_tag()}|{limits!r}".encode())
    for path in (dialogues, answers):
        if path is None:
            digest.update(b"|none")
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))  # a FIFO never blocks
        except (OSError, ValueError):
            return None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limits.max_file_bytes:
                return None
            try:
                digest.update(b"|" + hashlib.file_digest(fh, "sha256").digest())
            except OSError:
                return None
    return digest.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"references-{key[:32]}.marshal"


def load(key: str, limits: Limits) -> tuple[list[Dialogue], References | None] | None:
    """The dialogues and references stored under ``key``, or None (missing, refused or malformed)."""
    content = loads_marshal(read_sealed(_path(key), key, 3 * limits.max_file_bytes))
    if type(content) is not tuple or len(content) != 3 or content[0] != FORMAT:
        return None
    dialogues, references = content[1], content[2]
    if not _well_formed(dialogues, references):
        return None
    return [Dialogue(d, t, n) for d, t, n in dialogues], references


def save(key: str, dialogues: list[Dialogue], references: References | None) -> bool:
    """Store validated data under ``key`` (best effort: False when it could not be written)."""
    rows = [(d.dialog_id, d.type, d.n_turns) for d in dialogues]
    return write_best_effort(_path(key), seal(key, marshal.dumps((FORMAT, rows, references))))


def _well_formed(dialogues: Any, references: Any) -> bool:
    """The shape validation guarantees: unique ids of known types and positive turn counts; references,
    when present, for exactly those dialogues, one list of strings per turn, one of them with a word token."""
    if type(dialogues) is not list:
        return False
    turns: dict[str, int] = {}
    for row in dialogues:
        if (type(row) is not tuple or len(row) != 3 or type(row[0]) is not str or row[1] not in DIALOGUE_TYPES
                or type(row[2]) is not int or row[2] < 1 or row[0] in turns):
            return False
        turns[row[0]] = row[2]
    if references is None:
        return True
    if type(references) is not dict or references.keys() != turns.keys():
        return False
    for dialog_id, per_turn in references.items():
        if type(per_turn) is not list or len(per_turn) != turns[dialog_id]:
            return False
        for variants in per_turn:
            if (type(variants) is not list or any(type(v) is not str for v in variants)
                    or not any(map(has_token, variants))):
                return False
    return True
