"""The media files a bundle publishes: every image and audio file that ``dialogues.jsonl`` names (contract
section 10), read from the reference directory as hostile input by the checks of
:mod:`scorer.inputs.media`, which ``check-data`` runs too (and
:func:`scorer.inputs.reference.load_reference_and_media`, which reads the reference data and its media with
every error of both in one run).
"""

from __future__ import annotations

import os
from pathlib import Path

from scorer.errors import IssueLog, ReferenceDataError
from scorer.inputs.media import (
    MAX_MEDIA_BYTES,
    MEDIA_TYPES,
    MediaName,
    check_media,
    media_parts,
    named_media,
)

__all__ = ["LISTED", "MAX_MEDIA_BYTES", "MEDIA_TYPES", "media_files", "media_parts", "named_media"]

#: How many of the media files that cannot be published an error lists (it counts them all).
LISTED = 5


def media_files(
    data_dir: str | os.PathLike[str], dialogues_bytes: bytes, *, max_bytes: int = MAX_MEDIA_BYTES
) -> dict[str, bytes]:
    """Every image and audio file that ``dialogues_bytes`` (a checked ``dialogues.jsonl``) names, read from
    ``data_dir``: its path in the folder (``images/0001.jpg``) -> its bytes, in sorted order.

    Raises :class:`~scorer.errors.ReferenceDataError` (exit 2) when any named file cannot be published (a
    path that leaves the folder, a link, a file that is missing, not regular or too large): the first
    :data:`LISTED` with the dialog_id and turn that first name each, and how many in all."""
    problems = IssueLog(cap=LISTED)
    names = (MediaName(None, dialog_id, turn, path) for dialog_id, turn, path in named_media(dialogues_bytes))
    checked = check_media(data_dir, names, problems, max_bytes=max_bytes)
    if problems:
        raise ReferenceDataError(problems, checked.headline(Path(data_dir)))
    return checked.found
