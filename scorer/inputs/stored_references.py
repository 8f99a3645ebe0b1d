"""The reference texts of a cached entry, read back one dialogue at a time from ``answers.jsonl``.

A run scores on the tokenised references; it needs the texts themselves only for the few turns it
explains. So the reference cache (:mod:`scorer.inputs.reference_cache`) keeps, per dialogue, where its
line lies in ``answers.jsonl`` and the SHA-256 of that line, not the texts: :class:`StoredReferences`
reads a dialogue's line when it is first asked for, checks its digest, its dialog_id and its shape
against the stored tokens, and parses it. Any mismatch (a file changed since, a forged entry) makes
it read and validate the whole file instead, as a run without a cache does.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping

from .jsonio import JsonError, iter_lines, parse_json

Variants = list[list[str]]  # a dialogue's reference variants, per turn
Span = tuple[int, int, bytes]  # (start, stop, SHA-256 of the bytes between)


def line_spans(data: bytes, dialog_ids: Iterable[str]) -> dict[str, Span]:
    """Each dialogue's line in ``data`` (the bytes of ``answers.jsonl``, validated: its k-th non-blank
    line holds the k-th of ``dialog_ids``), without the line's end."""
    spans: dict[str, Span] = {}
    for (_, raw, after), dialog_id in zip(iter_lines(data), dialog_ids):
        stop = after - 1  # the line's newline, or the end of the data
        if data[stop - 1 : stop] == b"\r":  # a final CR is not part of the line (iter_lines drops it)
            stop -= 1
        start = stop - len(raw)
        spans[dialog_id] = (start, stop, hashlib.sha256(raw).digest())
    return spans


class StoredReferences(Mapping[str, Variants]):
    """``dialog_id -> variants per turn``, each read from its line of ``path`` when first asked for.

    ``tokens[dialog_id]``: the stored tokens, one list per variant of each turn (the shape a line must
    have); ``reread()`` reads and validates the whole file, the answer whenever a line does not match.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        spans: dict[str, Span],
        tokens: Mapping[str, list[list[list[str]]]],
        max_depth: int,
        reread: Callable[[], dict[str, Variants]],
    ):
        self.path, self.spans, self.tokens, self.max_depth = path, spans, tokens, max_depth
        self._reread = reread
        self._read: dict[str, Variants] = {}
        self._whole: dict[str, Variants] | None = None

    def __getitem__(self, dialog_id: str) -> Variants:
        if self._whole is not None:
            return self._whole[dialog_id]
        found = self._read.get(dialog_id)
        if found is None:
            span = self.spans[dialog_id]  # KeyError for an unknown id, as a dict
            found = self._line(dialog_id, span)
            if found is None:
                self._whole = self._reread()
                return self._whole[dialog_id]
            self._read[dialog_id] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def _line(self, dialog_id: str, span: Span) -> Variants | None:
        """The variants on the line at ``span``, or None when it is not the line the entry describes."""
        start, stop, digest = span
        try:
            with open(self.path, "rb") as fh:
                if stop > os.fstat(fh.fileno()).st_size:  # never allocate for a span the file cannot hold
                    return None
                fh.seek(start)
                raw = fh.read(stop - start)
        except (OSError, ValueError, OverflowError):
            return None
        if hashlib.sha256(raw).digest() != digest:
            return None
        try:
            value = parse_json(raw.decode("utf-8"), self.max_depth)
        except (UnicodeDecodeError, JsonError):
            return None
        if type(value) is not dict or value.get("dialog_id") != dialog_id:
            return None
        variants = value.get("references")
        shape = self.tokens.get(dialog_id)
        if (
            type(variants) is not list
            or shape is None
            or len(variants) != len(shape)
            or any(
                type(turn) is not list or len(turn) != len(tokenised) or any(type(v) is not str for v in turn)
                for turn, tokenised in zip(variants, shape)
            )
        ):
            return None
        return variants
