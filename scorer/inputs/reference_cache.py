"""The reference cache: validated reference data kept across runs, found by the SHA-256 of the reference
files themselves; and the reference texts, read back from ``answers.jsonl`` one dialogue at a time.

Reading, validating and tokenising the reference files is a third of a warm run, and every upload is
scored against the same files. After a successful validation the dialogues (and, when the references
were read, their tokens and each dialogue's line span and digest in ``answers.jsonl``) are kept in the
store of :mod:`scorer.metric.cache`, under a key made of the files' digests, the limits they were
validated under and the tokeniser's source and Unicode version: a file that changes gets another key. The
entry is never trusted: it must have the shape validation guarantees, or the files are validated again.

A run scores on the tokenised references and needs the texts only for the few turns it explains, so the
entry holds no text: :class:`StoredReferences` reads a dialogue's line when it is first asked for, and
takes it only when its digest, dialog_id and shape (the stored tokens') match. Any mismatch (a file
changed since, a forged entry) makes it read and validate the whole file instead, as a run without a
cache does.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from operator import eq, le
from pathlib import Path
from typing import Any

from scorer.metric import text
from scorer.metric.cache import Store

from .config import Limits
from .contract import DIALOGUE_TYPES
from .jsonio import iter_lines, parse_json
from .sources import from_regular_file
from .validation import Dialogue

Variants = list[list[str]]  # a dialogue's reference variants, per turn
Span = tuple[int, int, bytes]  # (start, stop, SHA-256 of the bytes between)
References = dict[str, Variants]
Tokens = dict[str, list[list[list[str]]]]
Spans = dict[str, Span]
#: What the stored tokens depend on besides the files: the tokeniser's source and Unicode's tables.
_TOKENISER = hashlib.sha256(
    Path(text.__file__).read_bytes() + unicodedata.unidata_version.encode()
).hexdigest()


def keyed_digests(
    dialogues: Path, answers: Path | None, limits: Limits
) -> tuple[str, tuple[bytes, ...]] | None:
    """The key of the entry for these files (``answers`` None: the dialogues alone) and the SHA-256 of each
    file it digested (the signature's ``ref`` field takes them, so that a run reads each file once to digest
    it), or None when a file cannot be read whole within the limits (validation then reports it)."""
    digest = hashlib.sha256(f"references|{limits!r}|{_TOKENISER}|{answers is None}".encode())
    files = []
    for path in (dialogues, answers) if answers is not None else (dialogues,):
        found = from_regular_file(
            path, limits.max_file_bytes, lambda fh: hashlib.file_digest(fh, "sha256").digest()
        )
        if found is None:
            return None
        digest.update(found)
        files.append(found)
    return digest.hexdigest(), tuple(files)


def entry_path(key: str) -> Path:
    """The cache file of the entry ``key``."""
    return STORE.path(key)


def load(
    key: str, limits: Limits
) -> tuple[list[Dialogue], Spans | None, Tokens | None, frozenset[str] | None] | None:
    """The dialogues, each dialogue's line span in ``answers.jsonl``, the tokenised references stored under
    ``key`` and their words (None with the dialogues alone), or None (missing, refused or malformed)."""
    content = STORE.load(entry_path(key), 6 * limits.max_file_bytes)
    if content is None:
        return None
    dialogues, spans, tokens = content
    words = None if tokens is None else _words(tokens)
    if tokens is not None and words is None:
        return None
    return [Dialogue(d, t, n) for d, t, n in dialogues], spans, tokens, words


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
    if not spans.keys() == tokens.keys() == turns.keys() or not all(
        map(eq, map(len, tokens.values()), map(turns.__getitem__, tokens))
    ):
        return False
    found = list(spans.values())  # (start, stop, digest) each, checked a column at a time
    if not set(map(type, found)) <= {tuple} or not set(map(len, found)) <= {3}:
        return False
    starts, stops, digests = zip(*found) if found else ((), (), ())
    if not set(map(type, starts)) | set(map(type, stops)) <= {int} or not set(map(type, digests)) <= {bytes}:
        return False
    if min(starts, default=0) < 0 or not all(map(le, starts, stops)) or not set(map(len, digests)) <= {32}:
        return False
    per_turn = list(chain.from_iterable(tokens.values()))
    variants = list(chain.from_iterable(per_turn))
    return set(map(type, chain(tokens.values(), per_turn, variants))) <= {list} and all(map(any, per_turn))


def _words(tokens: Tokens) -> frozenset[str] | None:
    """Every word of the stored tokens (the reference data's vocabulary), or None unless each is a string
    that is not empty (what :func:`load` checks last)."""
    try:
        words = text.words_of(chain.from_iterable(chain.from_iterable(tokens.values())))
    except TypeError:  # an unhashable word
        return None
    return frozenset(words) if set(map(type, words)) <= {str} and "" not in words else None


STORE = Store("references", 3, 1 << 30, _well_formed)


def line_spans(data: bytes, dialog_ids: Iterable[str]) -> Spans:
    """Each dialogue's line in ``data`` (the bytes of ``answers.jsonl``, validated: its k-th non-blank
    line holds the k-th of ``dialog_ids``), without the line's end."""
    spans: Spans = {}
    for (_, raw, after), dialog_id in zip(iter_lines(data), dialog_ids):
        stop = after - 1  # the line's newline, or the end of the data
        if data[stop - 1 : stop] == b"\r":  # a final CR is not part of the line (iter_lines drops it)
            stop -= 1
        spans[dialog_id] = (stop - len(raw), stop, hashlib.sha256(raw).digest())
    return spans


@dataclass(eq=False)
class StoredReferences(Mapping[str, Variants]):
    """``dialog_id -> variants per turn``, each read from its line of ``path`` when first asked for;
    ``reread()`` reads and validates the whole file, the answer whenever a line does not match."""

    path: str | os.PathLike[str]
    spans: Spans
    tokens: Mapping[str, list[list[list[str]]]]
    max_depth: int
    reread: Callable[[], dict[str, Variants]]
    read: dict[str, Variants] = field(default_factory=dict)

    def __getitem__(self, dialog_id: str) -> Variants:
        if dialog_id not in self.read:
            found = self._line(dialog_id, *self.spans[dialog_id])  # KeyError for an unknown id, as a dict
            if found is None:
                self.read = self.reread()
            else:
                self.read[dialog_id] = found
        return self.read[dialog_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def _line(self, dialog_id: str, start: int, stop: int, digest: bytes) -> Variants | None:
        """The variants on the line at ``start:stop``, or None when it is not the line the entry describes."""
        try:
            with open(self.path, "rb") as fh:
                if stop > os.fstat(fh.fileno()).st_size:  # never allocate for a span the file cannot hold
                    return None
                fh.seek(start)
                raw = fh.read(stop - start)
            if hashlib.sha256(raw).digest() != digest:
                return None
            value = parse_json(raw.decode("utf-8"), self.max_depth)
        except (OSError, ValueError, OverflowError):  # a bad span; a decoding or JSON error (ValueErrors)
            return None
        ours = type(value) is dict and value.get("dialog_id") == dialog_id
        variants = value.get("references") if ours else None
        if type(variants) is not list:
            return None
        shape = [len(turn) for turn in self.tokens.get(dialog_id, ())]
        found = [len(t) if type(t) is list and set(map(type, t)) <= {str} else -1 for t in variants]
        return variants if shape and found == shape else None
