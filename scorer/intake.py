"""Finding and reading the submission's two files (SPEC section 2).

A submission is ``submission.jsonl`` plus ``ppl_output.json`` given as two
files, as a directory holding them, or as a ``.zip`` holding them at its root
or in one top-level folder. Sizes are checked before a file is read, and a
zip is read without extracting anything to disk: entries with absolute or
``..`` paths, symlinks, nested archives, too many entries, or a suspicious
compression ratio are refused.
"""
from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .config import Limits
from .errors import Issue, SubmissionInvalid, UsageError
from .contract import PPL, SUBMISSION

MAX_ZIP_ENTRIES = 1000
MAX_ZIP_RATIO = 200  # uncompressed / compressed, per entry
_ARCHIVE_SUFFIXES = (".zip", ".jar", ".7z", ".rar", ".tar", ".gz", ".tgz", ".bz2", ".xz")


@dataclass(frozen=True)
class SubmissionFiles:
    submission: bytes
    ppl: bytes


def read_limited(path: Path, file: str, limits: Limits) -> bytes:
    """Bytes of ``path``; a file above the size limit is a submission error, read no further."""
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise SubmissionInvalid([_too_big(file, size, limits)])
    with open(path, "rb") as fh:
        data = fh.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        raise SubmissionInvalid([_too_big(file, len(data), limits)])
    return data


def _too_big(file: str, size: int, limits: Limits) -> Issue:
    return Issue(file, f"the file is {size:,} bytes; the limit is {limits.max_file_mib} MiB", "file_too_large")


def read_submission(path: str | os.PathLike, ppl: str | os.PathLike | None, limits: Limits) -> SubmissionFiles:
    """Read both files of the submission at ``path`` (file, directory or zip)."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"--submission {path}: no such file or directory")
    if path.is_dir():
        if ppl is not None:
            raise UsageError("--ppl goes with a submission.jsonl file, not with a directory")
        return _from_directory(path, limits)
    if zipfile.is_zipfile(path) or path.suffix.lower() == ".zip":
        if ppl is not None:
            raise UsageError("--ppl goes with a submission.jsonl file, not with a .zip")
        return _from_zip(path, limits)
    ppl_path = Path(ppl) if ppl is not None else path.parent / PPL
    if not ppl_path.is_file():
        raise UsageError(f"perplexities not found at {ppl_path}; name the file with --ppl")
    return SubmissionFiles(read_limited(path, SUBMISSION, limits), read_limited(ppl_path, PPL, limits))


def _from_directory(root: Path, limits: Limits) -> SubmissionFiles:
    folder = root
    if not (root / SUBMISSION).exists() and not (root / PPL).exists():
        subdirs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "__MACOSX"))]
        if len(subdirs) == 1:
            folder = subdirs[0]
    issues, found = [], {}
    for name in (SUBMISSION, PPL):
        candidate = folder / name
        if candidate.is_symlink() or (candidate.exists() and not candidate.is_file()):
            issues.append(Issue(name, "must be a regular file (not a link or a folder)", "not_a_file"))
        elif not candidate.exists():
            issues.append(Issue(name, f"the submission directory has no {name}", "missing_file"))
        else:
            found[name] = candidate
    if issues:
        raise SubmissionInvalid(issues)
    return SubmissionFiles(read_limited(found[SUBMISSION], SUBMISSION, limits),
                           read_limited(found[PPL], PPL, limits))


def _from_zip(path: Path, limits: Limits) -> SubmissionFiles:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise SubmissionInvalid([Issue(path.name, f"not a readable .zip archive ({exc})", "bad_zip")]) from None
    with archive:
        entries = archive.infolist()
        issues = _zip_entry_issues(path.name, entries, limits)
        if issues:
            raise SubmissionInvalid(issues)
        chosen = _pick_zip_members(path.name, [e for e in entries if not e.is_dir()])
        files = {}
        for name, info in chosen.items():
            try:
                with archive.open(info) as fh:
                    data = fh.read(limits.max_file_bytes + 1)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError) as exc:
                raise SubmissionInvalid([Issue(name, f"cannot be read from the zip ({exc})", "bad_zip")]) from None
            if len(data) > limits.max_file_bytes:
                raise SubmissionInvalid([_too_big(name, len(data), limits)])
            files[name] = data
    return SubmissionFiles(files[SUBMISSION], files[PPL])


def _zip_entry_issues(zip_name: str, entries: list[zipfile.ZipInfo], limits: Limits) -> list[Issue]:
    if len(entries) > MAX_ZIP_ENTRIES:
        return [Issue(zip_name, f"the zip holds {len(entries):,} entries; at most {MAX_ZIP_ENTRIES} "
                                "are accepted (it needs only submission.jsonl and ppl_output.json)", "zip_entries")]
    issues = []
    total = 0
    for info in entries:
        name = info.filename
        parts = PurePosixPath(name.replace("\\", "/")).parts
        mode = info.external_attr >> 16
        if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or ".." in parts:
            issues.append(Issue(zip_name, f"entry {name!r} has an absolute or '..' path; zip the files "
                                          "themselves", "zip_path"))
        elif stat.S_ISLNK(mode):
            issues.append(Issue(zip_name, f"entry {name!r} is a symbolic link; zip real files", "zip_symlink"))
        elif not info.is_dir() and name.lower().endswith(_ARCHIVE_SUFFIXES):
            issues.append(Issue(zip_name, f"entry {name!r} is an archive inside the archive; nested archives "
                                          "are not accepted", "zip_nested"))
        elif info.file_size > limits.max_file_bytes:
            issues.append(_too_big(name, info.file_size, limits))
        elif info.compress_size and info.file_size > 1 << 20 and info.file_size / info.compress_size > MAX_ZIP_RATIO:
            issues.append(Issue(zip_name, f"entry {name!r} expands {info.file_size / info.compress_size:.0f}-fold; "
                                          f"at most {MAX_ZIP_RATIO}-fold is accepted", "zip_ratio"))
        total += info.file_size
    if total > 2 * limits.max_file_bytes and not issues:
        issues.append(Issue(zip_name, f"the zip expands to {total:,} bytes; at most "
                                      f"{2 * limits.max_file_mib} MiB are accepted", "zip_total"))
    return issues


def _pick_zip_members(zip_name: str, files: list[zipfile.ZipInfo]) -> dict[str, zipfile.ZipInfo]:
    """The two files at the root, or else in one top-level folder."""
    by_path = {PurePosixPath(f.filename): f for f in files
               if not f.filename.startswith("__MACOSX/") and not PurePosixPath(f.filename).name.startswith("._")}
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
            issues.append(Issue(name, f"the zip has no {name} at its root or in one top-level folder",
                                "missing_file"))
    folders = {PurePosixPath(info.filename).parent for info in chosen.values()}
    if not issues and len(folders) > 1:
        issues.append(Issue(zip_name, "submission.jsonl and ppl_output.json must sit in the same folder",
                            "zip_ambiguous"))
    if issues:
        raise SubmissionInvalid(issues)
    return chosen
