"""Validated reference data kept across runs, found by the SHA-256 of the reference files themselves.

An organizer scores every upload, and a participant every draft, against one set of reference files;
reading, validating and tokenising them is a third of a warm run. After a successful validation the
dialogues (and the references with their tokens, when read) are written to the cache directory
(:mod:`scorer.metric.cache`) in ``marshal`` form, sealed with a key made of the files' digests, the
limits they were validated under, the tokeniser's source and Unicode version, this format and the
interpreter's marshal tag. A file whose bytes change gets another key, so a stale
entry is never found; references that failed validation are never stored.

The entry is data, never trusted: it is read under the cache's rules (a regular file of this user's,
within a size cap, sealed with this key) and then checked for the shape that validation guarantees
(unique dialog_ids of known types, every dialogue's turns with their variants and tokens, some
variant of every turn with a token, all strings); anything else is ignored and the files are validated again.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
import unicodedata
from pathlib import Path
from typing import Any

from scorer.metric.cache import cache_dir, loads_marshal, marshal_tag, read_sealed, seal, write_best_effort
from scorer.metric import text
from .config import Limits
from .contract import DIALOGUE_TYPES
from .validation import Dialogue

FORMAT = 1
References = dict[str, list[list[str]]]
Tokens = dict[str, list[list[list[str]]]]
_STR = {str}
#: What the stored tokens depend on besides the files: the tokeniser's source and Unicode's tables.
_TOKENISER = hashlib.sha256(Path(text.__file__).read_bytes() + unicodedata.unidata_version.encode()).hexdigest()


def entry_key(dialogues: Path, answers: Path | None, limits: Limits) -> str | None:
    """The key of the entry for these files (``answers`` None: the dialogues alone), or None when a file
    cannot be read whole within the limits (validation then reports it)."""
    digest = hashlib.sha256(f"references|{FORMAT}|{marshal_tag()}|{limits!r}|{_TOKENISER}".encode())
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


def load(key: str, limits: Limits) -> tuple[list[Dialogue], References | None, Tokens | None] | None:
    """The dialogues, references and tokenised references stored under ``key``, or None (missing,
    refused or malformed)."""
    content = loads_marshal(read_sealed(_path(key), key, 6 * limits.max_file_bytes))
    if type(content) is not tuple or len(content) != 4 or content[0] != FORMAT:
        return None
    dialogues, references, tokens = content[1], content[2], content[3]
    if not _well_formed(dialogues, references, tokens):
        return None
    return [Dialogue(d, t, n) for d, t, n in dialogues], references, tokens


def save(key: str, dialogues: list[Dialogue], references: References | None, tokens: Tokens | None) -> bool:
    """Store validated data under ``key`` (best effort: False when it could not be written). Tokens are
    stored once each (interned, so ``marshal`` writes the repeats as references)."""
    rows = [(d.dialog_id, d.type, d.n_turns) for d in dialogues]
    if tokens is not None:
        tokens = {d: [[list(map(sys.intern, v)) for v in turn] for turn in turns] for d, turns in tokens.items()}
    return write_best_effort(_path(key), seal(key, marshal.dumps((FORMAT, rows, references, tokens))))


def _well_formed(dialogues: Any, references: Any, tokens: Any) -> bool:
    """The shape validation guarantees: unique ids of known types and positive turn counts; references,
    when present, for exactly those dialogues, one list of strings per turn, and their tokens in the same
    shape, a list of non-empty strings for each variant, some variant of every turn with a token."""
    if type(dialogues) is not list:
        return False
    turns: dict[str, int] = {}
    for row in dialogues:
        if (type(row) is not tuple or len(row) != 3 or type(row[0]) is not str or row[1] not in DIALOGUE_TYPES
                or type(row[2]) is not int or row[2] < 1 or row[0] in turns):
            return False
        turns[row[0]] = row[2]
    if references is None:
        return tokens is None
    if (type(references) is not dict or references.keys() != turns.keys()
            or type(tokens) is not dict or tokens.keys() != turns.keys()):
        return False
    for dialog_id, per_turn in references.items():
        tokens_per_turn = tokens[dialog_id]
        if (type(per_turn) is not list or len(per_turn) != turns[dialog_id]
                or type(tokens_per_turn) is not list or len(tokens_per_turn) != len(per_turn)):
            return False
        for variants, tokenised in zip(per_turn, tokens_per_turn):
            if (type(variants) is not list or set(map(type, variants)) != _STR
                    or type(tokenised) is not list or len(tokenised) != len(variants)):
                return False
            some = False
            for t in tokenised:
                if type(t) is not list or (t and (set(map(type, t)) != _STR or "" in t)):
                    return False
                some = some or bool(t)
            if not some:
                return False
    return True
