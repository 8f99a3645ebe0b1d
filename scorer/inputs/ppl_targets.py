"""``ppl_targets.json``, which ``run`` writes beside ``ppl_output.json`` when its targets were the reference's
first variants (contract section 10): ``{"digests": {dialog_id: 16 hex digits}}``, each the digest of that
dialogue's targets [t_0, ..., t_n] (:func:`scorer.runner.names.target_digest`,
keyed with the private config's
salt). ``score`` and ``leaderboard`` read it to tell perplexities computed against other targets (an
``answers.jsonl`` corrected since) from current ones; a score never changes for it.

The file is read as untrusted: a regular file (no link followed, never waited on) within the size limit,
UTF-8 JSON of exactly that shape (a dialog_id a string, a digest 16 lowercase hex digits, no repeated key);
a file that breaks it is not used, and a warning says so.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scorer.errors import Issue
from scorer.runner.names import target_digest
from scorer.safe_text import bounded_line, shown_name

#: The file's name, beside ``ppl_output.json``.
TARGETS = "ppl_targets.json"
#: How many stale dialogues the warning names.
LISTED_STALE = 10
_DIGEST = re.compile(r"[0-9a-f]{16}")


class _Refused(ValueError):
    """The file is not of ``ppl_targets.json``'s shape."""


def read_targets(path: Path, max_bytes: int) -> dict[str, str] | Issue | None:
    """The digests of ``ppl_targets.json`` at ``path`` by dialog_id; None when there is no such file; an
    :class:`Issue` (a warning) when it is there but cannot be used."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _unused(f"it cannot be read ({exc.strerror})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _unused("it is not a regular file")
        if info.st_size > max_bytes:
            return _unused(f"it is {info.st_size:,} bytes, above the limit of {max_bytes:,}")
        data = os.read(fd, max_bytes + 1)
    except OSError as exc:
        return _unused(f"it cannot be read ({exc.strerror})")
    finally:
        os.close(fd)
    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=_no_repeats, parse_constant=_refuse)
        return _digests(value)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _unused('it is not {"digests": {dialog_id: 16 hex digits}} in UTF-8 JSON')


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Refused("a repeated key")
    return found


def _refuse(constant: str) -> Any:
    raise _Refused(constant)


def _digests(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or set(value) != {"digests"} or not isinstance(value["digests"], dict):
        raise _Refused("shape")
    digests = value["digests"]
    if not all(isinstance(d, str) and _DIGEST.fullmatch(d) for d in digests.values()):
        raise _Refused("digest")
    return digests


def _unused(why: str) -> Issue:
    return Issue(
        TARGETS,
        f"{TARGETS} beside the perplexities is not used: {why}; whether the perplexities were computed "
        "against the current answers is not checked",
        "ppl_targets_unused",
    )


def stale_dialogues(
    digests: Mapping[str, str], references: Mapping[str, Sequence[Sequence[str]]], salt: str | None
) -> list[str]:
    """The dialogues, in the order of ``references``, whose digest in ``ppl_targets.json`` is not that of
    their current targets (each turn's first reference variant, keyed with ``salt``): their perplexities
    were computed against other targets. A dialogue the file does not name counts as stale."""
    return [
        dialog_id
        for dialog_id, turns in references.items()
        if digests.get(dialog_id) != target_digest([variants[0] for variants in turns], salt)
    ]


def stale_warning(stale: Sequence[str]) -> dict[str, Any]:
    """``scores.json``'s warning about stale perplexities (contract section 10)."""
    return {"kind": "stale_perplexities", "count": len(stale), "dialogs": list(stale[:LISTED_STALE])}


def stale_line(name: str, stale: Sequence[str]) -> str:
    """The stderr line about ``stale`` dialogues of the entry ``name`` (empty for ``score``'s one entry)."""
    listed = ", ".join(shown_name(d) for d in stale[:LISTED_STALE]) + (
        ", ..." if len(stale) > LISTED_STALE else ""
    )
    who = f"{shown_name(name)}: " if name else ""
    return bounded_line(
        f"warning: {who}the perplexities of {len(stale):,} dialogue(s) were computed against other targets "
        f"than the first reference variants of answers.jsonl ({listed}); they are scored as they are: "
        "recompute them with `python -m scorer run --phase ppl` on the same --output"
    )
