"""Validated reference data kept across runs, found by the SHA-256 of the reference files themselves.

An organizer scores every upload, and a participant every draft, against one set of reference files;
reading, validating and tokenising them is a third of a warm run. After a successful validation the
dialogues (and, when the references were read, their tokens and where each dialogue's line lies in
``answers.jsonl``, with its digest: :mod:`scorer.inputs.stored_references` reads a text back when a
report needs it) are written to the cache directory
(:mod:`scorer.metric.cache`) in ``marshal`` form, sealed with a key made of the files' digests, the
limits they were validated under, the tokeniser's source and Unicode version, this format and the
interpreter's marshal tag. A file whose bytes change gets another key, so a stale
entry is never found; references that failed validation are never stored.

The entry is data, never trusted: it is read under the cache's rules (a regular file of this user's,
within a size cap, sealed with this key) and then checked for the shape that validation guarantees
(unique dialog_ids of known types, every dialogue's turns with their variants' tokens, some variant of
every turn with a token, all strings, a line span and digest per dialogue); anything else is ignored
and the files are validated again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
import unicodedata
from collections.abc import Callable
from io import BufferedReader
from itertools import chain
from pathlib import Path
from typing import Any

from scorer.metric import text
from scorer.metric.cache import cache_dir, loads_marshal, marshal_tag, read_sealed, seal, write_best_effort

from .config import Limits
from .contract import DIALOGUE_TYPES
from .stored_references import Span, line_spans
from .validation import Dialogue

FORMAT = 2
References = dict[str, list[list[str]]]
Tokens = dict[str, list[list[list[str]]]]
Spans = dict[str, Span]
_STR = {str}
_LIST = {list}
#: What the stored tokens depend on besides the files: the tokeniser's source and Unicode's tables.
_TOKENISER = hashlib.sha256(
    Path(text.__file__).read_bytes() + unicodedata.unidata_version.encode()
).hexdigest()


def entry_key(dialogues: Path, answers: Path | None, limits: Limits) -> str | None:
    """The key of the entry for these files (``answers`` None: the dialogues alone), or None when a file
    cannot be read whole within the limits (validation then reports it)."""
    digest = hashlib.sha256(f"references|{FORMAT}|{marshal_tag()}|{limits!r}|{_TOKENISER}".encode())
    for path in (dialogues, answers):
        if path is None:
            digest.update(b"|none")
            continue
        found = _from_regular_file(path, limits, lambda fh: hashlib.file_digest(fh, "sha256").digest())
        if found is None:
            return None
        digest.update(b"|" + found)
    return digest.hexdigest()


def entry_path(key: str) -> Path:
    """The cache file of the entry ``key``."""
    return cache_dir() / f"references-{key[:32]}.marshal"


def load(key: str, limits: Limits) -> tuple[list[Dialogue], Spans | None, Tokens | None] | None:
    """The dialogues, each dialogue's line span in ``answers.jsonl`` and the tokenised references stored
    under ``key``, or None (missing, refused or malformed)."""
    content = loads_marshal(read_sealed(entry_path(key), key, 6 * limits.max_file_bytes))
    if type(content) is not tuple or len(content) != 4 or content[0] != FORMAT:
        return None
    dialogues, spans, tokens = content[1], content[2], content[3]
    if not _well_formed(dialogues, spans, tokens):
        return None
    return [Dialogue(d, t, n) for d, t, n in dialogues], spans, tokens


def save(
    key: str,
    dialogues: list[Dialogue],
    references: References | None,
    tokens: Tokens | None,
    answers: Path | None,
    limits: Limits,
) -> bool:
    """Store validated data under ``key`` (best effort: False when it could not be written); with the
    references, the line of each in ``answers`` (read again for that). Tokens are stored once each
    (interned, so ``marshal`` writes the repeats as references)."""
    rows = [(d.dialog_id, d.type, d.n_turns) for d in dialogues]
    spans = None
    if references is not None and tokens is not None:
        data = _bytes_of(answers, limits) if answers is not None else None
        if data is None:
            return False
        spans = line_spans(data, references)
        tokens = {
            d: [[list(map(sys.intern, v)) for v in turn] for turn in turns] for d, turns in tokens.items()
        }
    return write_best_effort(entry_path(key), seal(key, marshal.dumps((FORMAT, rows, spans, tokens))))


def _bytes_of(path: Path, limits: Limits) -> bytes | None:
    """The bytes of a regular file within the size limit, or None."""
    return _from_regular_file(path, limits, lambda fh: fh.read(limits.max_file_bytes + 1))


def _from_regular_file(path: Path, limits: Limits, use: Callable[[BufferedReader], bytes]) -> bytes | None:
    """``use(the open file)`` for a regular file within the size limit, or None (another kind of file, too
    large, or unreadable). Opened without blocking: a FIFO is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limits.max_file_bytes:
            return None
        try:
            return use(fh)
        except OSError:
            return None


def _well_formed(dialogues: Any, spans: Any, tokens: Any) -> bool:
    """The shape validation guarantees: unique ids of known types and positive turn counts; when the
    references were read, for exactly those dialogues a line span (start, stop, 32-byte digest) and
    tokens per turn, one list of non-empty strings per variant, some variant of every turn with a token."""
    if type(dialogues) is not list:
        return False
    turns: dict[str, int] = {}
    for row in dialogues:
        if (
            type(row) is not tuple
            or len(row) != 3
            or type(row[0]) is not str
            or row[1] not in DIALOGUE_TYPES
            or type(row[2]) is not int
            or row[2] < 1
            or row[0] in turns
        ):
            return False
        turns[row[0]] = row[2]
    if spans is None:
        return tokens is None
    if (
        type(spans) is not dict
        or spans.keys() != turns.keys()
        or type(tokens) is not dict
        or tokens.keys() != turns.keys()
    ):
        return False
    for span in spans.values():
        if (
            type(span) is not tuple
            or len(span) != 3
            or type(span[0]) is not int
            or type(span[1]) is not int
            or not 0 <= span[0] <= span[1]
            or type(span[2]) is not bytes
            or len(span[2]) != 32
        ):
            return False
    variants: list[Any] = []
    for dialog_id, per_turn in tokens.items():
        if type(per_turn) is not list or len(per_turn) != turns[dialog_id]:
            return False
        for tokenised in per_turn:
            if type(tokenised) is not list or not any(tokenised):  # some variant of the turn with a token
                return False
            variants.extend(tokenised)
    if not set(map(type, variants)) <= _LIST:
        return False
    try:  # the distinct words, at C speed (marshal makes only built-in values: hashing one runs no code)
        words = set(chain.from_iterable(variants))
    except TypeError:  # an unhashable value among the words
        return False
    return set(map(type, words)) <= _STR and "" not in words
