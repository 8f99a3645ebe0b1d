"""The reference texts of a cached entry, read back one dialogue at a time from ``answers.jsonl``.

A run scores on the tokenised references and needs the texts only for the few turns it explains. So the
reference cache (:mod:`scorer.inputs.reference_cache`) keeps, per dialogue, where its line lies in
``answers.jsonl`` and the SHA-256 of that line: :class:`StoredReferences` reads a line when it is first
asked for, and takes it only when its digest, dialog_id and shape (the stored tokens') match. Any
mismatch (a file changed since, a forged entry) makes it read and validate the whole file instead, as a
run without a cache does.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping

from .jsonio import iter_lines, parse_json

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
        spans[dialog_id] = (stop - len(raw), stop, hashlib.sha256(raw).digest())
    return spans


class StoredReferences(Mapping[str, Variants]):
    """``dialog_id -> variants per turn``, each read from its line of ``path`` when first asked for;
    ``reread()`` reads and validates the whole file, the answer whenever a line does not match."""

    def __init__(
        self,
        path: str | os.PathLike,
        spans: dict[str, Span],
        tokens: Mapping[str, list[list[list[str]]]],
        max_depth: int,
        reread: Callable[[], dict[str, Variants]],
    ):
        self.path, self.spans, self.tokens, self.max_depth, self.reread = (
            path,
            spans,
            tokens,
            max_depth,
            reread,
        )
        self.read: dict[str, Variants] = {}

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
