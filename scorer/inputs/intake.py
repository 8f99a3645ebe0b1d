"""Finding and reading the submission's two files (contract sections 2-3).

A submission is ``submission.jsonl`` plus ``ppl_output.json`` given as two
files, as a directory holding them, or as a ``.zip`` holding them at its root
or in one top-level folder. Nothing outside the submission is read:

* every path is examined with ``lstat`` before anything is opened: only
  regular files are read; a FIFO, device or socket is refused (it could block
  or never end), and so is a symbolic link, wherever it is in a submission
  directory (file or folder) and as either file given directly;
* sizes are checked before a file is read, the zip file's own included;
* a zip's entry count is read from its end record before the central
  directory is parsed; entries with absolute or ``..`` paths, links, nested
  archives, repeated names, a suspicious compression ratio, or too many
  entries are refused; nothing is extracted to disk.

Asked for (``probes``, the organizer's ``score`` and ``leaderboard``), the probe perplexities
``ppl_probes.json`` that ``run`` writes beside ``ppl_output.json`` (contract section 10) are found and
checked the same way; their absence is no fault. A folder holding a code upload that was not run (its
``team_code/`` and neither file) is told how to run it.
"""

from __future__ import annotations

import os
import shlex
import stat
import struct
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from scorer.errors import Issue, PerplexitiesNotFound, SubmissionInvalid, UsageError
from scorer.runner.names import TEAM_CODE

from .config import Limits
from .contract import PLATFORM_METADATA, PPL, PROBES, SUBMISSION
from .jsonio import shorten
from .sources import Content

if TYPE_CHECKING:
    import zipfile

MAX_ZIP_ENTRIES = 1000
MAX_ZIP_RATIO = 200  # uncompressed / compressed, per entry
_ARCHIVE_SUFFIXES = (".zip", ".jar", ".7z", ".rar", ".tar", ".gz", ".tgz", ".bz2", ".xz")
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFDIR: "a folder",
}


@dataclass(frozen=True)
class SubmissionFiles:
    """The two files' contents (bytes, or the path of a checked regular file) and the names messages use;
    ``probes``, when asked for and present, ``ppl_probes.json``'s (contract section 10)."""

    submission: Content
    ppl: Content
    names: tuple[str, str] = (SUBMISSION, PPL)
    probes: Content | None = None


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _regular(path: Path, name: str, limits: Limits) -> Path:
    """``path`` when it is a regular file within the size limit (not following links); else invalid."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise SubmissionInvalid([Issue(name, f"the submission has no {name}", "missing_file")]) from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionInvalid(
            [Issue(name, f"{path.name} is {_kind(info.st_mode)}; only regular files are read", "not_a_file")]
        )
    if info.st_size > limits.max_file_bytes:
        raise SubmissionInvalid([_too_big(name, info.st_size, limits)])
    if not os.access(path, os.R_OK):
        raise SubmissionInvalid([Issue(name, f"{path.name} cannot be read (no permission)", "unreadable")])
    return path


def _too_big(file: str, size: int, limits: Limits) -> Issue:
    return Issue(
        file, f"the file is {size:,} bytes; the limit is {limits.max_file_mib} MiB", "file_too_large"
    )


def read_submission(
    path: str | os.PathLike[str],
    ppl: str | os.PathLike[str] | None,
    limits: Limits,
    *,
    probes: bool = False,
    data: str | os.PathLike[str] | None = None,
) -> SubmissionFiles:
    """Locate and check both files of the submission at ``path`` (file, directory or zip); with ``probes``,
    ``ppl_probes.json`` too where it lies beside the perplexities. ``data``, the reference directory, is
    named in the command a folder holding a code upload that was not run is told to run."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise UsageError(f"submission {path}: no such file or directory") from None
    except OSError as exc:
        raise UsageError(f"submission {path}: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        if ppl is not None:
            raise UsageError("a perplexities file goes with a submission.jsonl file, not with a directory")
        return _with_probes(_from_directory(path, limits, data), probes, limits)
    if not stat.S_ISREG(info.st_mode):
        raise SubmissionInvalid(
            [
                Issue(
                    path.name,
                    f"the submission is {_kind(info.st_mode)}; give a regular file, a directory or a .zip",
                    "not_a_file",
                )
            ]
        )
    if path.suffix.lower() == ".zip" or _has_zip_magic(path):
        if ppl is not None:
            raise UsageError("a perplexities file goes with a submission.jsonl file, not with a .zip")
        return _from_zip(path, limits, probes)
    ppl_path = Path(ppl) if ppl is not None else path.parent / PPL
    if ppl is None and not os.path.lexists(ppl_path):
        raise PerplexitiesNotFound(
            f"perplexities not found at {ppl_path}: the submission is a bare file, and "
            f"no {PPL} lies beside it; give the perplexities file too"
        )
    names = (path.name, ppl_path.name)
    found = SubmissionFiles(_regular(path, names[0], limits), _regular(ppl_path, names[1], limits), names)
    return _with_probes(found, probes, limits)


def _with_probes(files: SubmissionFiles, probes: bool, limits: Limits) -> SubmissionFiles:
    """``files`` (their perplexities a checked file) with ``ppl_probes.json`` when asked for and present
    beside the perplexities: a regular file within the size limit, or the submission is invalid."""
    if not probes or not isinstance(files.ppl, Path):
        return files
    path = files.ppl.parent / PROBES
    if not os.path.lexists(path):
        return files
    return replace(files, probes=_regular(path, PROBES, limits))


def platform_upload(res: str | os.PathLike[str]) -> Path:
    """The upload a leaderboard platform unpacked into the folder ``res``: the one ``.zip`` it holds when
    that is all it holds (a participant who zipped their zip), else the folder itself (the two files, or one
    folder holding them). The platform's own ``metadata`` file, hidden files and ``__MACOSX`` are not part of
    the upload."""
    res = Path(res)
    entries = {
        name: mode
        for name, mode in _listing(res).items()
        if name != PLATFORM_METADATA and not name.startswith((".", "__MACOSX"))
    }
    if len(entries) == 1:
        ((name, mode),) = entries.items()
        if stat.S_ISREG(mode) and name.lower().endswith(".zip"):
            return res / name
    return res


def submission_name(submission: str | os.PathLike[str]) -> str:
    """A submission's name: its folder's, its zip file's without ``.zip``, or the folder holding its file."""
    path = Path(os.path.abspath(submission))
    if path.is_dir():
        return path.name
    if path.suffix.lower() == ".zip":
        return path.stem
    return path.parent.name or path.name


def _has_zip_magic(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) == b"PK\x03\x04"


def _from_directory(
    root: Path, limits: Limits, data: str | os.PathLike[str] | None = None
) -> SubmissionFiles:
    entries = _refuse_links(root)
    folder = root
    if SUBMISSION not in entries and PPL not in entries:
        _refuse_code_not_run(root, entries, data)
        subdirs = [
            name
            for name, mode in entries.items()
            if stat.S_ISDIR(mode) and not name.startswith((".", "__MACOSX"))
        ]
        if len(subdirs) == 1:
            folder = root / subdirs[0]
            entries = _listing(folder)
        else:
            nested = sorted(str(p.relative_to(root)) for p in root.glob("*/*/" + SUBMISSION))[:1]
            zips = sorted(
                name for name, mode in entries.items() if stat.S_ISREG(mode) and name.lower().endswith(".zip")
            )
            hint = (
                f"; found {nested[0]}: put the two files at the top or in one folder"
                if nested
                else f"; it holds {zips[0][:60]}: upload the two files themselves (or one zip of them), "
                "not a zip inside the upload"
                if zips
                else _holds(entries)
            )
            raise SubmissionInvalid(
                [
                    Issue(
                        root.name,
                        f"the submission directory has no {SUBMISSION} and no {PPL}{hint}",
                        "missing_file",
                    )
                ]
            )
    issues = []
    for name in (SUBMISSION, PPL):
        if name not in entries:
            issues.append(
                Issue(name, f"the submission directory has no {name}{_holds(entries)}", "missing_file")
            )
    if issues:
        raise SubmissionInvalid(issues)
    return SubmissionFiles(
        _regular(folder / SUBMISSION, SUBMISSION, limits), _regular(folder / PPL, PPL, limits)
    )


def _refuse_code_not_run(root: Path, entries: dict[str, int], data: str | os.PathLike[str] | None) -> None:
    """A folder holding neither file but a code upload's ``team_code/`` (the runner's ``TEAM_CODE``, at its
    top or in its one folder) is a code upload that was not run: invalid, with the command that runs it into a
    folder of its own."""
    folders = [n for n, mode in entries.items() if stat.S_ISDIR(mode) and not n.startswith((".", "__MACOSX"))]
    holds_code = TEAM_CODE in folders or (
        len(folders) == 1 and stat.S_ISDIR(_listing(root / folders[0]).get(TEAM_CODE, 0))
    )
    if not holds_code:
        return
    here = shlex.quote(str(root))
    there = shlex.quote(str(data)) if data is not None else "DATA"
    runs = shlex.quote(f"runs/{root.name}")
    generate = f"python -m scorer run --data PUBLIC --code {here} --output {runs} --phase generate"
    ppl = f"python -m scorer run --data {there} --code {here} --output {runs} --phase ppl"
    raise SubmissionInvalid(
        [
            Issue(
                root.name,
                f"the folder holds {TEAM_CODE}/, a code upload that was not run, and no {SUBMISSION} or "
                f"{PPL}: run it first, its answers on data without the references (PUBLIC: a folder holding "
                f"only dialogues.jsonl and its media) with `{shorten(generate, 400)}`, then its perplexities "
                f"with `{shorten(ppl, 400)}` (a folder of the run's own), then score that folder (for a "
                "leaderboard: --submissions runs)",
                "code_not_run",
            )
        ]
    )


#: At most this many entries of a submission directory are looked at for links; a directory holding more is
#: refused (a submission needs two files).
MAX_DIRECTORY_ENTRIES = 10_000


def _refuse_links(root: Path) -> dict[str, int]:
    """Refuse a submission directory that holds a symbolic link anywhere, file or folder (contract section 3),
    or more than :data:`MAX_DIRECTORY_ENTRIES` entries; links are not followed while looking. Returns the
    names and modes of ``root``'s own entries (:func:`_listing`)."""
    top = _listing(root)
    seen = 0
    pending = [root]
    while pending:
        folder = pending.pop()
        for name, mode in sorted((top if folder == root else _listing(folder)).items()):
            seen += 1
            path = folder / name
            if stat.S_ISLNK(mode):
                shown = shorten(str(path.relative_to(root)), 60)
                raise SubmissionInvalid(
                    [
                        Issue(
                            root.name,
                            f"{shown} is a symbolic link; a submission folder holds "
                            "real files and folders only",
                            "symlink",
                        )
                    ]
                )
            if seen > MAX_DIRECTORY_ENTRIES:
                raise SubmissionInvalid(
                    [
                        Issue(
                            root.name,
                            f"the submission folder holds more than "
                            f"{MAX_DIRECTORY_ENTRIES:,} entries; upload only "
                            f"{SUBMISSION} and {PPL}",
                            "too_many_files",
                        )
                    ]
                )
            if stat.S_ISDIR(mode):
                pending.append(path)
    return top


#: How many names of a folder a message lists.
LISTED_NAMES = 8


def _holds(entries: dict[str, int]) -> str:
    """ "; it holds a, b (the files must be named submission.jsonl and ppl_output.json)" for a message."""
    names = sorted(name for name in entries if not name.startswith("."))
    if not names:
        return "; the folder is empty"
    listed = ", ".join(shorten(name, 60) for name in names[:LISTED_NAMES])
    more = f" and {len(names) - LISTED_NAMES} more" if len(names) > LISTED_NAMES else ""
    return f"; it holds {listed}{more} (the files must be named {SUBMISSION} and {PPL})"


def _listing(folder: Path) -> dict[str, int]:
    """Names and ``lstat`` modes of a folder's entries."""
    try:
        with os.scandir(folder) as scan:
            return {entry.name: entry.stat(follow_symlinks=False).st_mode for entry in scan}
    except OSError as exc:
        raise UsageError(f"cannot list {folder}: {exc.strerror}") from None


def _zip_entry_count(path: Path) -> int | None:
    """How many entries the zip's central directory holds, counted up to ``MAX_ZIP_ENTRIES + 1``, before
    ``zipfile`` parses it (its end record's count can lie; zipfile reads every record the directory's size
    covers): the records are walked from where the end record puts the directory. None when no end record
    is found (zipfile then says what is wrong)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        fh.seek(max(0, size - 65_557))
        tail_start = fh.tell()
        tail = fh.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + 22 > len(tail):
            return None
        count: int
        directory_size: int
        count, directory_size = struct.unpack("<HI", tail[at + 10 : at + 16])
        if count == 0xFFFF or directory_size == 0xFFFFFFFF:  # zip64: large enough to refuse outright
            if tail.rfind(b"PK\x06\x07", 0, at) >= 0:
                return 1 << 32
        end = tail_start + at
        # zipfile's own reckoning: the directory lies just before the end record
        offset = end - directory_size
        if offset < 0:
            return count
        fh.seek(offset)
        records = 0
        while records <= MAX_ZIP_ENTRIES and offset + 46 <= end:
            header = fh.read(46)
            if len(header) < 46 or header[:4] != b"PK\x01\x02":
                break
            names, extra, comment = struct.unpack("<HHH", header[28:34])
            offset += 46 + names + extra + comment
            fh.seek(offset)
            records += 1
    return max(count, records)


def _from_zip(path: Path, limits: Limits, probes: bool = False) -> SubmissionFiles:
    name = path.name
    size = os.path.getsize(path)
    if size > limits.max_file_bytes:
        raise SubmissionInvalid([_too_big(name, size, limits)])
    count = _zip_entry_count(path)
    if count is not None and count > MAX_ZIP_ENTRIES:
        raise SubmissionInvalid(
            [
                Issue(
                    name,
                    f"the zip holds more than {MAX_ZIP_ENTRIES:,} entries; at most "
                    f"{MAX_ZIP_ENTRIES:,} are accepted (it needs only submission.jsonl "
                    "and ppl_output.json)",
                    "zip_entries",
                )
            ]
        )
    import zipfile  # here: most submissions are folders

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise SubmissionInvalid([Issue(name, f"not a readable .zip archive ({exc})", "bad_zip")]) from None
    with archive:
        entries = archive.infolist()
        issues = _zip_entry_issues(name, entries, limits)
        if issues:
            raise SubmissionInvalid(issues)
        chosen = _pick_zip_members(name, [e for e in entries if not e.is_dir()], probes)
        files = {}
        for member, info in chosen.items():
            try:
                with archive.open(info) as fh:
                    data = fh.read(limits.max_file_bytes + 1)
            except (
                zipfile.BadZipFile,
                OSError,
                ValueError,
                EOFError,
                NotImplementedError,
                RuntimeError,
            ) as exc:
                raise SubmissionInvalid(
                    [Issue(member, f"cannot be read from the zip ({exc})", "bad_zip")]
                ) from None
            except MemoryError:
                raise SubmissionInvalid(
                    [
                        Issue(
                            member,
                            f"reading it from the zip ran out of memory; files are "
                            f"limited to {limits.max_file_mib} MiB",
                            "out_of_memory",
                        )
                    ]
                ) from None
            if len(data) > limits.max_file_bytes:
                raise SubmissionInvalid([_too_big(member, len(data), limits)])
            files[member] = data
    return SubmissionFiles(files[SUBMISSION], files[PPL], probes=files.get(PROBES))


def _zip_entry_issues(zip_name: str, entries: list[zipfile.ZipInfo], limits: Limits) -> list[Issue]:
    if len(entries) > MAX_ZIP_ENTRIES:
        return [
            Issue(
                zip_name,
                f"the zip holds {len(entries):,} entries; at most {MAX_ZIP_ENTRIES} "
                "are accepted (it needs only submission.jsonl and ppl_output.json)",
                "zip_entries",
            )
        ]
    issues = []
    total = 0
    seen: set[str] = set()
    for info in entries:
        name = info.filename
        parts = PurePosixPath(name.replace("\\", "/")).parts
        mode = info.external_attr >> 16
        shown = name[:60]
        if name in seen:
            issues.append(
                Issue(zip_name, f"entry {shown!r} appears twice in the zip; keep one", "zip_duplicate")
            )
        elif name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
            issues.append(
                Issue(
                    zip_name,
                    f"entry {shown!r} has an absolute or '..' path; zip the files themselves",
                    "zip_path",
                )
            )
        elif stat.S_ISLNK(mode):
            issues.append(
                Issue(zip_name, f"entry {shown!r} is a symbolic link; zip real files", "zip_symlink")
            )
        elif not info.is_dir() and name.lower().endswith(_ARCHIVE_SUFFIXES):
            issues.append(
                Issue(
                    zip_name,
                    f"entry {shown!r} is an archive inside the archive; zip the two files "
                    "themselves, not a zip of a zip",
                    "zip_nested",
                )
            )
        elif info.file_size > limits.max_file_bytes:
            issues.append(_too_big(shown, info.file_size, limits))
        elif (
            info.compress_size
            and info.file_size > 1 << 20
            and info.file_size / info.compress_size > MAX_ZIP_RATIO
        ):
            issues.append(
                Issue(
                    zip_name,
                    f"entry {shown!r} expands {info.file_size / info.compress_size:.0f}-fold; "
                    f"at most {MAX_ZIP_RATIO}-fold is accepted",
                    "zip_ratio",
                )
            )
        seen.add(name)
        total += info.file_size
    if total > 2 * limits.max_file_bytes and not issues:
        issues.append(
            Issue(
                zip_name,
                f"the zip expands to {total:,} bytes; at most {2 * limits.max_file_mib} MiB are accepted",
                "zip_total",
            )
        )
    return issues


def _pick_zip_members(
    zip_name: str, files: list[zipfile.ZipInfo], probes: bool = False
) -> dict[str, zipfile.ZipInfo]:
    """The two files at the root, or else in one top-level folder; with ``probes``, ``ppl_probes.json`` too
    when it lies beside ``ppl_output.json``."""
    by_path = {
        PurePosixPath(f.filename): f
        for f in files
        if not f.filename.startswith("__MACOSX/") and not PurePosixPath(f.filename).name.startswith("._")
    }
    chosen, issues = {}, []
    for name in (SUBMISSION, PPL):
        at_root = by_path.get(PurePosixPath(name))
        nested = [info for p, info in by_path.items() if len(p.parts) == 2 and p.name == name]
        if at_root is not None:
            chosen[name] = at_root
        elif len(nested) == 1:
            chosen[name] = nested[0]
        elif nested:
            issues.append(Issue(zip_name, f"{name} is found in several folders; keep one", "zip_ambiguous"))
        else:
            deeper = sorted(str(p) for p in by_path if p.name == name)[:1]
            hint = (
                f"; it is at {deeper[0][:80]}: put it at the root or in one top-level folder"
                if deeper
                else _holds({str(p): 0 for p in by_path})
            )
            issues.append(
                Issue(
                    name,
                    f"the zip has no {name} at its root or in one top-level folder{hint}",
                    "missing_file",
                )
            )
    folders = {PurePosixPath(info.filename).parent for info in chosen.values()}
    if not issues and len(folders) > 1:
        issues.append(
            Issue(
                zip_name, "submission.jsonl and ppl_output.json must sit in the same folder", "zip_ambiguous"
            )
        )
    if issues:
        raise SubmissionInvalid(issues)
    beside = by_path.get(PurePosixPath(chosen[PPL].filename).parent / PROBES) if probes else None
    if beside is not None:
        chosen[PROBES] = beside
    return chosen
