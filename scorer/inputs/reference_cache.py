"""Validated reference data kept across runs, found by the SHA-256 of the reference files themselves.

Reading, validating and tokenising the reference files is a third of a warm run, and every upload is
scored against the same files. After a successful validation the dialogues (and, when the references
were read, their tokens and each dialogue's line span and digest in ``answers.jsonl``, from which
:mod:`scorer.inputs.stored_references` reads a text back when a report needs it) are kept in the store
of :mod:`scorer.metric.cache`, under a key made of the files' digests, the limits they were validated
under and the tokeniser's source and Unicode version: a file that changes gets another key. The entry is
never trusted: it must have the shape validation guarantees, or the files are validated again.
"""

from __future__ import annotations

import hashlib
import unicodedata
from itertools import chain
from pathlib import Path
from typing import Any

from scorer.metric import text
from scorer.metric.cache import Store

from .config import Limits
from .contract import DIALOGUE_TYPES
from .sources import from_regular_file
from .stored_references import Span, line_spans
from .validation import Dialogue

References = dict[str, list[list[str]]]
Tokens = dict[str, list[list[list[str]]]]
Spans = dict[str, Span]
#: What the stored tokens depend on besides the files: the tokeniser's source and Unicode's tables.
_TOKENISER = hashlib.sha256(
    Path(text.__file__).read_bytes() + unicodedata.unidata_version.encode()
).hexdigest()


def entry_key(dialogues: Path, answers: Path | None, limits: Limits) -> str | None:
    """The key of the entry for these files (``answers`` None: the dialogues alone), or None when a file
    cannot be read whole within the limits (validation then reports it)."""
    digest = hashlib.sha256(f"references|{limits!r}|{_TOKENISER}|{answers is None}".encode())
    for path in (dialogues, answers) if answers is not None else (dialogues,):
        found = from_regular_file(
            path, limits.max_file_bytes, lambda fh: hashlib.file_digest(fh, "sha256").digest()
        )
        if found is None:
            return None
        digest.update(found)
    return digest.hexdigest()


def entry_path(key: str) -> Path:
    """The cache file of the entry ``key``."""
    return STORE.path(key)


def load(key: str, limits: Limits) -> tuple[list[Dialogue], Spans | None, Tokens | None] | None:
    """The dialogues, each dialogue's line span in ``answers.jsonl`` and the tokenised references stored
    under ``key``, or None (missing, refused or malformed)."""
    content = STORE.load(entry_path(key), 6 * limits.max_file_bytes)
    if content is None:
        return None
    dialogues, spans, tokens = content
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
    references, the line of each in ``answers`` (read again for that). Tokens interned are stored once
    each (``marshal`` writes the repeats as references)."""
    rows = [(d.dialog_id, d.type, d.n_turns) for d in dialogues]
    spans = None
    if references is not None and tokens is not None:
        read = lambda fh: fh.read(limits.max_file_bytes + 1)  # noqa: E731
        data = from_regular_file(answers, limits.max_file_bytes, read) if answers is not None else None
        if data is None:
            return False
        spans = line_spans(data, references)
    return STORE.save(entry_path(key), (rows, spans, tokens))


def _well_formed(content: Any) -> bool:
    """The shape validation guarantees (a fault on the way counts as not: ``Store.load``): unique ids of
    known types with some turns; when the references were read, for exactly those dialogues a line span
    (start, stop, 32-byte digest) and every turn's tokens, a list of strings per variant, one not empty."""
    rows, spans, tokens = content
    if type(rows) is not list or not set(map(type, rows)) <= {tuple} or not {len(r) for r in rows} <= {3}:
        return False
    turns = {r[0]: r[2] for r in rows if type(r[0]) is str and r[1] in DIALOGUE_TYPES and type(r[2]) is int}
    if len(turns) != len(rows) or min(turns.values(), default=1) < 1:
        return False
    if spans is None or type(spans) is not dict or type(tokens) is not dict:
        return spans is None and tokens is None
    if not spans.keys() == tokens.keys() == turns.keys() or any(
        len(t) != turns[d] for d, t in tokens.items()
    ):
        return False
    for span in spans.values():
        if type(span) is not tuple or tuple(map(type, span)) != (int, int, bytes):
            return False
        if not 0 <= span[0] <= span[1] or len(span[2]) != 32:
            return False
    per_turn = list(chain.from_iterable(tokens.values()))
    variants = list(chain.from_iterable(per_turn))
    if not set(map(type, chain(tokens.values(), per_turn, variants))) <= {list} or not all(
        map(any, per_turn)
    ):
        return False
    words = set(chain.from_iterable(variants))
    return set(map(type, words)) <= {str} and "" not in words


STORE = Store("references", 3, 1 << 30, _well_formed)
