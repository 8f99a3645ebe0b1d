"""The media files a bundle publishes: every image and audio file that ``dialogues.jsonl`` names (contract
section 10), read from the reference directory as hostile input.

A part's ``content`` is a path relative to the data folder, as the runner resolves it
(``DIR/content``). A bundle publishes the named file in ``public_data/``, in ``input_data/`` (a code
competition) and in ``reference_data/``, so each one must be a regular file inside the folder: a path
that is absolute, holds ``..`` or a backslash, or names one of the reference files, a symbolic link
anywhere on the way, a folder or a device, a file over the size limit, and a file that is not there are
each a reference-data error (exit 2) listing the first few and counting them all. The folders on the
way are opened one at a time without following a link, so the check and the read see the same file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from scorer.errors import Issue, IssueLog, ReferenceDataError
from scorer.inputs.contract import ANSWERS, CONFIG_IN_REFERENCE, DIALOGUES
from scorer.inputs.jsonio import shorten

#: The part types whose content is a media file's path.
MEDIA_TYPES = ("image", "audio")
#: How many of the media files that cannot be published an error lists (it counts them all).
LISTED = 5
#: The largest media file a bundle publishes (the bundle is built in memory).
MAX_MEDIA_BYTES = 256 << 20
#: Names a media path may not take at the folder's top: the bundle's own files beside the media.
_RESERVED = {name.casefold() for name in (DIALOGUES, ANSWERS, CONFIG_IN_REFERENCE)}
_DRIVE = re.compile(r"^[A-Za-z]:")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class _Unpublishable(Exception):
    """Why one named media file cannot be published: an issue code and a message."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


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


def media_parts(name: str) -> list[str]:
    """The folders and file name of the media path ``name`` inside the data folder (``.`` and empty parts
    dropped, as the runner's ``DIR/name`` resolves them); raises _Unpublishable when the path could leave
    the folder or names one of the reference files."""
    quoted = repr(shorten(name, 80))
    if not name or "\0" in name:
        raise _Unpublishable("media_path", f"the media path {quoted} names no file")
    try:
        os.fsencode(name)
    except UnicodeError:
        raise _Unpublishable("media_path", f"{quoted} is not a file name this system can hold") from None
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        raise _Unpublishable(
            "media_path", f"{quoted} is an absolute path; a media path is relative to the data folder"
        )
    if "\\" in name:
        raise _Unpublishable("media_path", f"{quoted} holds a backslash; separate folders with '/'")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise _Unpublishable("media_path", f"{quoted} leads out of the data folder ('..'); name a file in it")
    if len(parts) == 1 and parts[0].casefold() in _RESERVED:
        raise _Unpublishable("media_path", f"{quoted} names a reference file, not a media file")
    return parts


def _kind(mode: int) -> str:
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def _read(folder: Path, parts: list[str], max_bytes: int) -> bytes:
    """The bytes of ``folder/parts...``, each folder on the way opened without following a link and the
    file itself a regular file of at most ``max_bytes``; raises _Unpublishable saying why not."""
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
            raise _Unpublishable("media_not_a_file", f"{shown} is {_kind(info.st_mode)}, not a media file")
        if info.st_size > max_bytes:
            raise _Unpublishable(
                "media_too_large", f"{shown} is {info.st_size:,} bytes; the limit is {max_bytes >> 20} MiB"
            )
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise _Unpublishable("media_too_large", f"{shown} grew past {max_bytes >> 20} MiB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _why_not(fd: int, part: str, place: str, shown: str, exc: OSError) -> _Unpublishable:
    try:
        info = os.lstat(part, dir_fd=fd)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        return _Unpublishable(
            "media_link", f"{place} is a symbolic link; the bundle publishes regular files only, never a link"
        )
    if info is None or exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return _Unpublishable("media_missing", f"{shown} is missing")
    return _Unpublishable("media_unreadable", f"{shown} cannot be read ({exc.strerror or exc})")


def media_files(
    data_dir: str | os.PathLike[str], dialogues_bytes: bytes, *, max_bytes: int = MAX_MEDIA_BYTES
) -> dict[str, bytes]:
    """Every image and audio file that ``dialogues_bytes`` (a checked ``dialogues.jsonl``) names, read from
    ``data_dir``: its path in the folder (``images/0001.jpg``) -> its bytes, in sorted order.

    Raises :class:`~scorer.errors.ReferenceDataError` (exit 2) when any named file cannot be published (a
    path that leaves the folder, a link, a file that is missing, not regular or too large): the first
    :data:`LISTED` with the dialog_id and turn that first name each, and how many in all."""
    folder = Path(data_dir)
    found: dict[str, bytes] = {}
    problems = IssueLog(cap=LISTED)
    seen: set[str] = set()
    missing = 0
    for dialog_id, turn, name in named_media(dialogues_bytes):
        if name in seen:
            continue
        seen.add(name)
        try:
            parts = media_parts(name)
            key = "/".join(parts)
            if key not in found:
                found[key] = _read(folder, parts, max_bytes)
        except _Unpublishable as why:
            missing += why.code == "media_missing"
            shown_id = dialog_id if len(dialog_id) <= 60 else dialog_id[:60] + "..."
            problems.add(Issue(DIALOGUES, why.message, why.code, dialog_id=shown_id, turn=turn))
    if problems:
        what = "are missing from" if missing == problems.total else "cannot be published from"
        headline = f"{problems.total} media file(s) that {DIALOGUES} names {what} {folder}"
        raise ReferenceDataError(problems, headline)
    return dict(sorted(found.items()))
