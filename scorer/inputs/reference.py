"""The reference data of a directory (contract section 2): ``dialogues.jsonl`` and ``answers.jsonl`` read,
validated and their variants tokenised; from the reference cache (:mod:`scorer.inputs.reference_cache`) when
the files were validated before, byte for byte; and the last set read kept in the process (:data:`KEPT`), so
that scoring several submissions one call at a time against one directory reads and checks it once. With
the media files its dialogues name (:mod:`scorer.inputs.media`), every error of the files and the media in
one run (:func:`check_reference_and_media`, :func:`load_reference_and_media`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from scorer.errors import Issue, IssueLog, ReferenceDataError, UsageError
from scorer.metric.text import tokenise, words_of
from scorer.progress import READING, Progress

from . import reference_cache
from .config import Limits
from .contract import ANSWERS, DIALOGUES
from .media import MediaCheck, check_media, dialogue_lines, media_names
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
    #: The files read (``dialogues.jsonl``, and ``answers.jsonl`` when the references were), which the
    #: signature's ``ref`` field digests; None for data built in memory.
    files: tuple[Path, ...] | None = field(default=None, compare=False)
    #: The SHA-256 of each of ``files`` as this run read them, where it digested them to find its cache
    #: entry (:func:`reference_digests` takes them); None: digested when asked.
    sha256: tuple[bytes, ...] | None = field(default=None, compare=False)
    #: Every word of the variants, when the reference cache gave them; None: gathered when first asked.
    words: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every word of the reference variants (what the persistent caches may keep), gathered once;
        ValueError when only the dialogues were read."""
        if self.words is not None:
            return self.words
        tokens = self.variant_tokens()
        return frozenset(
            words_of(
                variant
                for d in self.dialogues
                for turn in tokens[d.dialog_id][: d.n_turns]
                for variant in turn
            )
        )

    def variants(self) -> Mapping[str, list[list[str]]]:
        """Each dialogue's reference variants per turn; ValueError when only the dialogues were read."""
        if self.references is None:
            raise ValueError("the references were not read")
        return self.references

    def variant_tokens(self) -> dict[str, list[list[list[str]]]]:
        """Each dialogue's reference variants per turn, tokenised; ValueError when only the dialogues
        were read."""
        return self.tokens if self.tokens is not None else tokenise_references(self.variants())


def tokenise_references(
    references: Mapping[str, list[list[str]]], known: Tokenised | None = None
) -> dict[str, list[list[list[str]]]]:
    """Every variant of every turn tokenised, in the shape of ``references`` (``known``: the texts tokenised
    while they were checked)."""
    tokens = (known if known is not None else Tokenised()).__getitem__
    return {d: [[tokens(v) for v in variants] for variants in turns] for d, turns in references.items()}


class Tokenised(dict[str, list[str]]):
    """Each text's tokens, with one string object a word (``sys.intern``) and one list a distinct text: a text
    several turns share is tokenised once, the reference cache writes each word and each shared list once,
    and a run compares and hashes one object a word. The lists are shared: nothing may change them."""

    def __missing__(self, text: str) -> list[str]:
        found = self[text] = list(map(sys.intern, tokenise(text)))
        return found


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


def _answers_file(data_dir: Path, log: IssueLog) -> Path | None:
    """``answers.jsonl``'s path as :func:`_reference_file` checks it; when it is missing and the dialogues
    already have errors, None with the missing file added to them (every error in one run)."""
    try:
        return _reference_file(data_dir, ANSWERS)
    except ReferenceDataError as exc:
        if not log:
            raise
        for issue in exc.listed():
            log.add(issue)
        return None


def load_reference(
    data_dir: str | os.PathLike[str],
    limits: Limits = Limits(),
    with_answers: bool = True,
    progress: Progress | None = None,
    parts: dict[str, list[list[dict[str, str]]]] | None = None,
) -> ReferenceData:
    """Read ``dialogues.jsonl`` (and ``answers.jsonl`` when ``with_answers``) from ``data_dir``;
    ``progress(step, done, total)`` hears the bytes read (:mod:`scorer.progress`). The set read last in
    this process (:data:`KEPT`) is returned again when its files and limits are unchanged; files validated
    before, byte for byte, come from the reference cache (:mod:`scorer.inputs.reference_cache`); files
    read now are stored there. Given ``parts``, the files are read now (neither kept nor cached copies
    hold them) and ``parts`` gets each dialogue's turns as a team's code is given them (contract section
    10).

    Raises :class:`~scorer.errors.UsageError` (the directory or a file cannot be read) or
    :class:`~scorer.errors.ReferenceDataError` (a file breaks contract section 2)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise UsageError(f"reference directory {data_dir}: not a directory")
    if not os.access(data_dir, os.R_OK | os.X_OK):
        raise UsageError(f"reference directory {data_dir}: cannot be read (no permission)")
    dialogues_file = _reference_file(data_dir, DIALOGUES)
    keyed = reference_cache.keyed_digests(
        dialogues_file, data_dir / ANSWERS if with_answers else None, limits
    )
    key, sha256 = keyed if keyed is not None else (None, None)
    entry = reference_cache.entry_path(key) if key else None
    kept = KEPT.get(entry) if entry and parts is None else None
    cached = reference_cache.load(key, limits) if key and kept is None and parts is None else None
    if progress and (kept or cached):
        for name in (DIALOGUES, ANSWERS) if with_answers else (DIALOGUES,):
            size = (data_dir / name).stat().st_size
            progress(f"{READING} {name}", size, size)
    files = (data_dir / DIALOGUES, data_dir / ANSWERS) if with_answers else (data_dir / DIALOGUES,)
    if kept is not None:
        return (
            kept
            if kept.files == files and kept.sha256 == sha256
            else replace(kept, files=files, sha256=sha256)
        )
    if entry and cached is not None:
        dialogues, spans, tokens, words = cached
        if spans is None or tokens is None:
            return ReferenceData(dialogues, None, None, files, sha256)
        reread = lambda: read_references(_reference_file(data_dir, ANSWERS), dialogues, limits)  # noqa: E731
        return KEPT.keep(
            entry,
            ReferenceData(
                dialogues,
                StoredReferences(data_dir / ANSWERS, spans, tokens, limits.max_json_depth, reread),
                tokens,
                files,
                sha256,
                words,
            ),
        )
    # every error of both files in one run (contract section 3's cap): the answers are checked too when the
    # dialogues have errors, against the dialogues that are valid
    log, mentioned = IssueLog(), set[str]()
    dialogues = read_reference_dialogues(
        dialogues_file, limits, progress, log=log, mentioned=mentioned, parts=parts
    )
    references = tokens = None
    answers_file = _answers_file(data_dir, log) if with_answers else None
    if answers_file is not None:
        rejected = mentioned - {d.dialog_id for d in dialogues}
        known = Tokenised()  # each text tokenised once, to check it has a word and to keep its words
        references = read_references(
            answers_file, dialogues, limits, progress, log=log, rejected=rejected, tokenised=known.__getitem__
        )
        tokens = tokenise_references(references, known)
    if log:
        raise ReferenceDataError(log)
    if key and entry:
        reference_cache.save(key, dialogues, references, tokens, answers_file, limits)
        return KEPT.keep(entry, ReferenceData(dialogues, references, tokens, files, sha256))
    return ReferenceData(dialogues, references, tokens, files, sha256)


@dataclass(frozen=True)
class CheckedReference:
    """What :func:`check_reference_and_media` found: the reference data (None when its files have errors),
    the dialogues that are valid (all of them when the data is), and the media check."""

    reference: ReferenceData | None
    dialogues: list[Dialogue]
    media: MediaCheck


def check_reference_and_media(
    data_dir: str | os.PathLike[str], limits: Limits, log: IssueLog, *, keep_media: bool = False
) -> CheckedReference:
    """Every error of the reference directory ``data_dir`` in one run, added to ``log``: those of
    ``dialogues.jsonl`` and ``answers.jsonl`` (:func:`load_reference`), then those of the image and audio
    files that ``dialogues.jsonl`` names (:func:`scorer.inputs.media.check_media`: each with its line,
    dialog_id and turn), checked even when the files have errors (every well-formed media part of every
    JSON line). With ``keep_media`` the media files' bytes are read and kept (the bundle publishes them);
    without, each is opened and its kind and size checked. Raises ``UsageError`` when the directory or a
    file cannot be read."""
    data_dir = Path(data_dir)
    reference: ReferenceData | None
    try:
        reference = load_reference(data_dir, limits)
    except ReferenceDataError as exc:
        for issue in exc.issues:
            log.add(issue)
        log.more += exc.more
        log.unchecked += exc.unchecked
        reference = None
    data = _dialogues_bytes(data_dir / DIALOGUES, limits)
    valid: list[Dialogue] = []

    def lines() -> Iterator[tuple[int, Any, bool]]:
        for number, value, good in dialogue_lines(data or b"", limits):
            if good:
                valid.append(Dialogue(value["dialog_id"], value["type"], len(value["turns"])))
            yield number, value, good

    media = check_media(data_dir, media_names(lines()), log, keep=keep_media)
    return CheckedReference(reference, reference.dialogues if reference is not None else valid, media)


def load_reference_and_media(
    data_dir: str | os.PathLike[str], limits: Limits = Limits(), *, keep_media: bool = True
) -> tuple[ReferenceData, dict[str, bytes]]:
    """The reference data of ``data_dir`` (dialogues and answers) and the bytes of every media file its
    dialogues name (path in the data folder -> bytes, sorted; empty without ``keep_media``), every error of
    the files and of the media raised at once (:func:`check_reference_and_media`): a
    :class:`~scorer.errors.ReferenceDataError` (exit 2) whose headline says how many media files cannot be
    published when those are its only errors. ``UsageError`` when the directory or a file cannot be read."""
    log = IssueLog()
    checked = check_reference_and_media(data_dir, limits, log, keep_media=keep_media)
    if log:
        only_media = log.total == checked.media.problems
        raise ReferenceDataError(log, checked.media.headline(data_dir) if only_media else None)
    assert checked.reference is not None
    return checked.reference, checked.media.found


def _dialogues_bytes(path: Path, limits: Limits) -> bytes | None:
    """``dialogues.jsonl``'s bytes for the media check, or None when it is not a regular file within the
    size limit or cannot be read (the reference data's own errors say so)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > limits.max_file_bytes:
                return None
            return fh.read(limits.max_file_bytes + 1)
    except OSError:
        return None


#: How many hex digits of each digest the signature's ``ref`` field keeps.
REF_DIGITS = 12


def reference_digests(reference: ReferenceData, salt: str | None) -> tuple[str, str]:
    """The two digests of the signature's ``ref`` field (contract section 6), each 12 hex digits: the SHA-256
    of ``dialogues.jsonl``'s bytes, and of ``answers.jsonl``'s bytes the HMAC-SHA-256 keyed with ``salt``
    (its UTF-8 bytes) when there is one, else the SHA-256. Data built in memory (no files) is digested as
    the canonical JSON Lines of the fields it holds (:func:`canonical_lines`). Raises ``UsageError`` when a
    file can no longer be read."""
    if reference.files is not None and len(reference.files) == 2:
        # each file's SHA-256 as the run read it, where it digested the file (the HMAC is computed here)
        read = reference.sha256 if reference.sha256 is not None and len(reference.sha256) == 2 else None
        dialogues = read[0].hex() if read else _file_digest(reference.files[0], None)
        answers = read[1].hex() if read and salt is None else _file_digest(reference.files[1], salt)
    else:
        public, private = canonical_lines(reference)
        dialogues = hashlib.sha256(public).hexdigest()
        answers = _keyed(salt, private)
    return dialogues[:REF_DIGITS], answers[:REF_DIGITS]


def canonical_lines(reference: ReferenceData) -> tuple[bytes, bytes]:
    """The reference data in memory as JSON Lines of the contract's fields it holds, one dialogue a line in
    its order, each a JSON object with sorted keys, no spaces and UTF-8 text (``ensure_ascii=False``):
    ``{"dialog_id", "turns", "type"}`` (``turns`` the number of turns: the dialogues in memory keep no part)
    and ``{"dialog_id", "references"}``."""
    references = reference.variants()

    def lines(objects: Iterable[dict[str, object]]) -> bytes:
        return "".join(
            json.dumps(o, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n" for o in objects
        ).encode("utf-8", "surrogatepass")

    public = lines(
        {"dialog_id": d.dialog_id, "turns": d.n_turns, "type": d.type} for d in reference.dialogues
    )
    private = lines(
        {"dialog_id": d.dialog_id, "references": [list(v) for v in references[d.dialog_id]]}
        for d in reference.dialogues
    )
    return public, private


def _keyed(salt: str | None, data: bytes) -> str:
    if salt is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(salt.encode("utf-8"), data, hashlib.sha256).hexdigest()


def _file_digest(path: Path, salt: str | None) -> str:
    """The SHA-256 (or, with ``salt``, the HMAC-SHA-256) of a reference file's bytes, read in blocks."""
    digest = hashlib.sha256() if salt is None else hmac.new(salt.encode("utf-8"), digestmod=hashlib.sha256)
    try:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
    except OSError as exc:
        raise UsageError(f"cannot read reference file {path}: {exc.strerror}") from None
    return digest.hexdigest()
