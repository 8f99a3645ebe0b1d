"""The media files of the reference data: every image and audio file that ``dialogues.jsonl`` names, read
from the reference directory as hostile input (contract sections 2 and 10), by ``check-data`` and by the
bundle, which publishes them.

A part's ``content`` is a path relative to the data folder, as the runner resolves it
(``DIR/content``). A bundle publishes the named file in ``public_data/``, in ``input_data/`` (a code
competition) and in ``reference_data/``, so each one must be a regular file inside the folder: a path
that is absolute, holds ``..`` or a backslash, or names one of the reference files, a symbolic link
anywhere on the way, a folder or a device, a file over the size limit, and a file that is not there are
each a reference-data error (exit 2), located at the first line, dialog_id and turn that name the path. The
folders on the way are opened one at a time without following a link, so the check and the read see the
same file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorer.errors import Issue, IssueLog

from .config import Limits
from .contract import ANSWERS, CONFIG_IN_REFERENCE, DIALOGUES
from .jsonio import JsonError, iter_lines, parse_json, shorten
from .validation import dialogue_problems

#: The part types whose content is a media file's path.
MEDIA_TYPES = ("image", "audio")
#: The largest media file a bundle publishes (the bundle is built in memory).
MAX_MEDIA_BYTES = 256 << 20
#: The issue code of a named media file that is not there (the others: ``media_path``, ``media_link``,
#: ``media_not_a_file``, ``media_too_large``, ``media_unreadable``).
MEDIA_MISSING = "media_missing"
#: Names a media path may not take at the folder's top: the bundle's own files beside the media.
_RESERVED = {name.casefold() for name in (DIALOGUES, ANSWERS, CONFIG_IN_REFERENCE)}
_DRIVE = re.compile(r"^[A-Za-z]:")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class Unpublishable(Exception):
    """Why one named media file cannot be published: an issue code and a message."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class MediaName:
    """A media path as ``dialogues.jsonl`` names it: the line (None for bytes rewritten from the file), the
    dialog_id and the turn of the part."""

    line: int | None
    dialog_id: str | None
    turn: int
    path: str


def named_media(dialogues_bytes: bytes) -> Iterator[tuple[str, int, str]]:
    """(dialog_id, turn, path) of every image and audio part of a checked ``dialogues.jsonl``, in file
    order."""
    for line in dialogues_bytes.decode("utf-8-sig").split("\n"):
        if line.strip():
            d = json.loads(line)
            for turn, parts in enumerate(d["turns"]):
                for part in parts:
                    if part["type"] in MEDIA_TYPES:
                        yield d["dialog_id"], turn, part["content"]


def dialogue_lines(data: bytes, limits: Limits = Limits()) -> Iterator[tuple[int, Any, bool]]:
    """(line number, value, valid) of each line of ``dialogues.jsonl``'s bytes that is JSON; ``valid``:
    the validator keeps it (a dialogue's shape, the first such line of its dialog_id). A line that is not
    UTF-8 or not JSON is skipped (the validator has its error); nothing here raises on what the file
    holds."""
    seen: set[str] = set()
    for number, raw, _ in iter_lines(data):
        try:
            value = parse_json(raw.decode("utf-8"), limits.max_json_depth)
        except (UnicodeDecodeError, JsonError):
            continue
        valid = not dialogue_problems(value, limits) and value["dialog_id"] not in seen
        if valid:
            seen.add(value["dialog_id"])
        yield number, value, valid


def media_names(lines: Iterable[tuple[int, Any, bool]]) -> Iterator[MediaName]:
    """Every image and audio part of :func:`dialogue_lines`, in file order: of an invalid line too, every
    part that is itself well formed (a JSON object whose ``type`` is ``"image"`` or ``"audio"`` and whose
    ``content`` is a string), so that its file is checked in the same run as the line's own errors."""
    for number, value, _ in lines:
        turns = value.get("turns") if isinstance(value, dict) else None
        if not isinstance(turns, list):
            continue
        dialog_id = value.get("dialog_id")
        shown = dialog_id if isinstance(dialog_id, str) and dialog_id else None
        for turn, parts in enumerate(turns):
            for part in parts if isinstance(parts, list) else ():
                if (
                    isinstance(part, dict)
                    and isinstance(part.get("type"), str)
                    and part["type"] in MEDIA_TYPES
                    and isinstance(part.get("content"), str)
                ):
                    yield MediaName(number, shown, turn, part["content"])


def media_parts(name: str) -> list[str]:
    """The folders and file name of the media path ``name`` inside the data folder (``.`` and empty parts
    dropped, as the runner's ``DIR/name`` resolves them); raises :class:`Unpublishable` when the path could
    leave the folder or names one of the reference files."""
    quoted = repr(shorten(name, 80))
    if not name or "\0" in name:
        raise Unpublishable("media_path", f"the media path {quoted} names no file")
    try:
        os.fsencode(name)
    except UnicodeError:
        raise Unpublishable("media_path", f"{quoted} is not a file name this system can hold") from None
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        raise Unpublishable(
            "media_path", f"{quoted} is an absolute path; a media path is relative to the data folder"
        )
    if "\\" in name:
        raise Unpublishable("media_path", f"{quoted} holds a backslash; separate folders with '/'")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise Unpublishable("media_path", f"{quoted} leads out of the data folder ('..'); name a file in it")
    if len(parts) == 1 and parts[0].casefold() in _RESERVED:
        raise Unpublishable("media_path", f"{quoted} names a reference file, not a media file")
    return parts


def _kind(mode: int) -> str:
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def read_media_file(folder: Path, parts: list[str], max_bytes: int, keep: bool = True) -> bytes:
    """The bytes of ``folder/parts...``, each folder on the way opened without following a link and the
    file itself a regular file of at most ``max_bytes``; raises :class:`Unpublishable` saying why not.
    Without ``keep``, the file is opened and its kind and size checked, not read (b"" is returned)."""
    shown = shorten("/".join(parts), 80)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            try:
                child = os.open(part, _OPEN_FLAGS if last else _FOLDER_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _why_not(fd, part, shorten("/".join(parts[: depth + 1]), 80), shown, exc) from None
            os.close(fd)
            fd = child
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unpublishable("media_not_a_file", f"{shown} is {_kind(info.st_mode)}, not a media file")
        if info.st_size > max_bytes:
            raise Unpublishable(
                "media_too_large", f"{shown} is {info.st_size:,} bytes; the limit is {max_bytes >> 20} MiB"
            )
        if not keep:
            return b""
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise Unpublishable("media_too_large", f"{shown} grew past {max_bytes >> 20} MiB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _why_not(fd: int, part: str, place: str, shown: str, exc: OSError) -> Unpublishable:
    try:
        info = os.lstat(part, dir_fd=fd)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        return Unpublishable(
            "media_link", f"{place} is a symbolic link; the bundle publishes regular files only, never a link"
        )
    if info is None or exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Unpublishable(MEDIA_MISSING, f"{shown} is missing")
    return Unpublishable("media_unreadable", f"{shown} cannot be read ({exc.strerror or exc})")


@dataclass
class MediaCheck:
    """What :func:`check_media` found: the files read (path in the data folder -> bytes, in sorted order;
    empty without ``keep``), and how many named files cannot be published, and of them are missing."""

    found: dict[str, bytes] = field(default_factory=dict)
    problems: int = 0
    missing: int = 0

    def headline(self, folder: str | os.PathLike[str]) -> str:
        """The bundle's headline of these problems alone."""
        what = "are missing from" if self.missing == self.problems else "cannot be published from"
        return f"{self.problems} media file(s) that {DIALOGUES} names {what} {os.fspath(folder)}"


def check_media(
    data_dir: str | os.PathLike[str],
    names: Iterable[MediaName],
    log: IssueLog,
    *,
    max_bytes: int = MAX_MEDIA_BYTES,
    keep: bool = True,
) -> MediaCheck:
    """Check every media file of ``names`` in ``data_dir`` (each path once, at the first place that names
    it), adding an issue of ``dialogues.jsonl`` to ``log`` for each one that cannot be published, with the
    line (when known), dialog_id and turn; with ``keep``, the files' bytes are read and returned."""
    folder = Path(data_dir)
    result = MediaCheck()
    found: dict[str, bytes] = {}
    checked: set[str] = set()
    seen: set[str] = set()
    for name in names:
        if name.path in seen:
            continue
        seen.add(name.path)
        try:
            parts = media_parts(name.path)
            key = "/".join(parts)
            if key not in checked:
                data = read_media_file(folder, parts, max_bytes, keep)
                checked.add(key)
                if keep:
                    found[key] = data
        except Unpublishable as why:
            result.problems += 1
            result.missing += why.code == MEDIA_MISSING
            shown_id = name.dialog_id
            if shown_id is not None and len(shown_id) > 60:
                shown_id = shown_id[:60] + "..."
            log.add(
                Issue(DIALOGUES, why.message, why.code, line=name.line, dialog_id=shown_id, turn=name.turn)
            )
    result.found = dict(sorted(found.items()))
    return result
