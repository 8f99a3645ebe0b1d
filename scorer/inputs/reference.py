"""The reference data of a directory (contract section 2): ``dialogues.jsonl`` and ``answers.jsonl`` read,
validated and their variants tokenised; from the reference cache (:mod:`scorer.inputs.reference_cache`) when
the files were validated before, byte for byte; and the last set read kept in the process (:data:`KEPT`), so
that scoring several submissions one call at a time against one directory reads and checks it once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scorer.errors import Issue, ReferenceDataError, UsageError
from scorer.metric.text import tokenise
from scorer.progress import READING, Progress

from . import reference_cache
from .config import Limits
from .contract import ANSWERS, DIALOGUES
from .reference_cache import StoredReferences
from .validation import Dialogue, read_reference_dialogues, read_references


@dataclass(frozen=True)
class ReferenceData:
    """The dialogues of a reference directory and, when ``answers.jsonl`` was read, their references."""

    dialogues: list[Dialogue]
    #: Each dialogue's reference variants per turn; None when only dialogues were read. From the reference
    #: cache, a mapping that reads a dialogue's texts when first asked
    #: (:mod:`scorer.inputs.reference_cache`).
    references: Mapping[str, list[list[str]]] | None
    #: The variants tokenised (``tokenise``), as ``references``; None: tokenised when first asked.
    tokens: dict[str, list[list[list[str]]]] | None = field(default=None, compare=False)

    def variants(self) -> Mapping[str, list[list[str]]]:
        """Each dialogue's reference variants per turn; ValueError when only the dialogues were read."""
        if self.references is None:
            raise ValueError("the references were not read")
        return self.references

    def variant_tokens(self) -> dict[str, list[list[list[str]]]]:
        """Each dialogue's reference variants per turn, tokenised; ValueError when only the dialogues
        were read."""
        return self.tokens if self.tokens is not None else tokenise_references(self.variants())


def tokenise_references(references: Mapping[str, list[list[str]]]) -> dict[str, list[list[list[str]]]]:
    """Every variant of every turn tokenised, in the shape of ``references``, with one string object a word
    (``sys.intern``) and one list a distinct text: a text several turns share is tokenised once, the
    reference cache writes each word and each shared list once, and a run compares and hashes one object
    a word. The lists are shared: nothing may change them."""
    known: dict[str, list[str]] = {}

    def tokens(text: str) -> list[str]:
        found = known.get(text)
        if found is None:
            found = known[text] = list(map(sys.intern, tokenise(text)))
        return found

    return {d: [[tokens(v) for v in variants] for variants in turns] for d, turns in references.items()}


class KeptReference:
    """The reference data a process read last (one set, in place of any other), by the path of its
    reference-cache entry (the cache directory and the key: the files' digests, the limits, the tokeniser):
    read again from the same unchanged files, it is returned as it is, not even the cache file read again
    (and a command-line run does not spend the end of its run freeing it). :meth:`clear` forgets it."""

    def __init__(self) -> None:
        self._entry: Path | None = None
        self._data: ReferenceData | None = None

    def get(self, entry: Path) -> ReferenceData | None:
        """The data kept under ``entry``, else None."""
        return self._data if entry == self._entry else None

    def keep(self, entry: Path, data: ReferenceData) -> ReferenceData:
        """Keep ``data`` under ``entry`` (in place of what was kept) and return it."""
        self._entry, self._data = entry, data
        return data

    def clear(self) -> None:
        """Forget what is kept: the next read comes from the reference cache or the files."""
        self._entry = self._data = None


#: The process's one :class:`KeptReference`, read and replaced by :func:`load_reference`; ``KEPT.clear()``
#: forgets it (the tests do before each test).
KEPT = KeptReference()


def _reference_file(data_dir: Path, name: str) -> Path:
    """The path of a reference file, checked to be a readable regular file (it is streamed)."""
    path = data_dir / name
    try:
        # a FIFO in its place is refused, never waited on
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except FileNotFoundError:
        raise ReferenceDataError([Issue(name, f"{path} does not exist", "missing_file")]) from None
    except OSError as exc:
        raise UsageError(f"cannot read reference file {path}: {exc.strerror}") from None
    if not path.is_file():
        raise UsageError(f"reference file {path} is not a regular file")
    return path


def load_reference(
    data_dir: str | os.PathLike[str],
    limits: Limits = Limits(),
    with_answers: bool = True,
    progress: Progress | None = None,
) -> ReferenceData:
    """Read ``dialogues.jsonl`` (and ``answers.jsonl`` when ``with_answers``) from ``data_dir``;
    ``progress(step, done, total)`` hears the bytes read (:mod:`scorer.progress`). The set read last in
    this process (:data:`KEPT`) is returned again when its files and limits are unchanged; files validated
    before, byte for byte, come from the reference cache (:mod:`scorer.inputs.reference_cache`); files
    read now are stored there.

    Raises :class:`~scorer.errors.UsageError` (the directory or a file cannot be read) or
    :class:`~scorer.errors.ReferenceDataError` (a file breaks contract section 2)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise UsageError(f"reference directory {data_dir}: not a directory")
    if not os.access(data_dir, os.R_OK | os.X_OK):
        raise UsageError(f"reference directory {data_dir}: cannot be read (no permission)")
    dialogues_file = _reference_file(data_dir, DIALOGUES)
    key = reference_cache.entry_key(dialogues_file, data_dir / ANSWERS if with_answers else None, limits)
    entry = reference_cache.entry_path(key) if key else None
    kept = KEPT.get(entry) if entry else None
    cached = reference_cache.load(key, limits) if key and kept is None else None
    if progress and (kept or cached):
        for name in (DIALOGUES, ANSWERS) if with_answers else (DIALOGUES,):
            size = (data_dir / name).stat().st_size
            progress(f"{READING} {name}", size, size)
    if kept is not None:
        return kept
    if entry and cached is not None:
        dialogues, spans, tokens = cached
        if spans is None or tokens is None:
            return ReferenceData(dialogues, None, None)
        reread = lambda: read_references(_reference_file(data_dir, ANSWERS), dialogues, limits)  # noqa: E731
        return KEPT.keep(
            entry,
            ReferenceData(
                dialogues,
                StoredReferences(data_dir / ANSWERS, spans, tokens, limits.max_json_depth, reread),
                tokens,
            ),
        )
    dialogues = read_reference_dialogues(dialogues_file, limits, progress)
    references = tokens = None
    answers_file = _reference_file(data_dir, ANSWERS) if with_answers else None
    if answers_file is not None:
        references = read_references(answers_file, dialogues, limits, progress)
        tokens = tokenise_references(references)
    if key and entry:
        reference_cache.save(key, dialogues, references, tokens, answers_file, limits)
        return KEPT.keep(entry, ReferenceData(dialogues, references, tokens))
    return ReferenceData(dialogues, references, tokens)
