"""The team's upload (contract section 10): the folder that holds ``team_code/`` (:func:`find_code`), a zip
unpacked with every entry checked first (:func:`unzip`), entries that are neither files nor folders named
without being opened (:func:`irregular_entries`), and the code's digest (:func:`code_digest`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile

from .faults import CodeFault, UsageFault
from .names import TEAM_CODE, excerpt, printable

#: The compression methods the runner unpacks: stored, deflate, bzip2, LZMA.
_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)


def find_code(path: str, scratch: str) -> str:
    """The folder that holds ``team_code/`` (at the upload's root or in its one top-level folder); a zip is
    unpacked into ``scratch`` first. A CodeFault listing what the upload holds when it has no package."""
    # the child works in a scratch folder: no relative path reaches it; --code itself is the organizer's path
    root = path = os.path.realpath(path)
    if os.path.isfile(path) and zipfile.is_zipfile(path):
        root = os.path.join(scratch, "upload")
        os.makedirs(root)
        unzip(path, root)
    elif not os.path.isdir(path):
        raise UsageFault(f"--code {excerpt(path, 200)}: not a folder or a .zip")
    irregular = irregular_entries(root)  # before anything of the upload is read
    if irregular:
        raise CodeFault(
            "upload",
            "the upload holds entries that are neither regular files nor folders (a link, a FIFO, a socket "
            f"or a device), which the runner never opens: {', '.join(excerpt(n, 200) for n in irregular)}"
            f"{', ...' if len(irregular) >= 5 else ''}; upload plain files and folders (zip team_code/ with "
            "zip -r, without links)",
        )
    for candidate in [root] + sorted(
        os.path.join(root, n) for n in os.listdir(root) if os.path.isdir(os.path.join(root, n))
    ):
        package = os.path.join(candidate, TEAM_CODE)
        if os.path.isfile(os.path.join(package, "generate.py")) and os.path.isfile(
            os.path.join(package, "__init__.py")
        ):
            return candidate
    held = _listing(root)
    raise CodeFault(
        "missing",
        "the upload holds no package team_code/ with __init__.py and generate.py (at its root or in one "
        f"top-level folder); it holds: {held}",
    )


def irregular_entries(root: str, limit: int = 5) -> list[str]:
    """The entries under ``root`` (relative paths, in sorted walking order, at most ``limit``) that are
    neither regular files nor folders: links (whatever they point to), FIFOs, sockets, devices, and folders
    that cannot be listed. Walked with :func:`os.scandir` without following a link and without opening
    anything but folders, so a FIFO or a link to ``/dev/zero`` is named, never read. ``root`` itself must be
    a folder, not a link to one (ValueError otherwise)."""
    if os.path.islink(root) or not os.path.isdir(root):
        raise ValueError(f"{root}: not a folder")
    found: list[str] = []
    top = _sorted_entries(root)
    if top is None:
        return ["."]
    stack = [("", iter(top))]
    while stack and len(found) < limit:
        relative, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name = os.path.join(relative, entry.name) if relative else entry.name
        try:
            folder, regular = entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
        except OSError:
            folder = regular = False
        if folder:
            inside = _sorted_entries(os.path.join(root, name))
            if inside is None:
                found.append(name)
            else:
                stack.append((name, iter(inside)))
        elif not regular:
            found.append(name)
    return found


def _sorted_entries(folder: str) -> list[os.DirEntry[str]] | None:
    """A folder's entries by name, or None when it cannot be listed."""
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return None


#: The kinds of zip entry (a Unix mode's file type) that are neither a regular file nor a folder.
_IRREGULAR = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def unzip(path: str, root: str) -> None:
    """Unpack the upload's zip into ``root``, every entry checked before one is written: an unsafe name, an
    encrypted entry, a compression method not unpacked here, a name that is both a file and a folder, or a
    damaged entry (a bad CRC) is the upload's fault (``upload``, exit 1), naming the entry."""
    try:
        with zipfile.ZipFile(path) as archive:
            files: set[str] = set()
            folders: set[str] = set()
            for info in archive.infolist():
                name = info.filename
                parts = name.replace("\\", "/").split("/")
                if name.startswith("/") or ".." in parts or "\x00" in name or ":" in parts[0]:
                    raise CodeFault("upload", f"the zip holds an unsafe name {excerpt(name)}")
                if info.flag_bits & 0x1:
                    raise CodeFault("upload", f"the zip's entry {excerpt(name)} is encrypted")
                kind = stat.S_IFMT(info.external_attr >> 16)
                if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                    raise CodeFault(
                        "upload",
                        f"the zip's entry {excerpt(name)} is {_IRREGULAR.get(kind, 'not a regular file')}: "
                        "an upload holds regular files and folders only (zip team_code/ with zip -r, without "
                        "links)",
                    )
                if info.compress_type not in _ZIP_METHODS:
                    raise CodeFault(
                        "upload",
                        f"the zip's entry {excerpt(name)} uses compression method {info.compress_type}, "
                        "which is not unpacked here (use deflate)",
                    )
                clean = [part for part in parts if part not in ("", ".")]
                if not clean:
                    continue
                key = "/".join(clean)
                (folders if info.is_dir() else files).add(key)
                folders.update("/".join(clean[:k]) for k in range(1, len(clean)))
            clash = sorted(files & folders)
            if clash:
                raise CodeFault("upload", f"the zip holds {excerpt(clash[0])} both as a file and as a folder")
            for info in archive.infolist():
                try:
                    archive.extract(info, root)
                except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
                    raise CodeFault(
                        "upload",
                        f"the zip's entry {excerpt(info.filename)} is damaged ({excerpt(str(exc))})",
                    ) from None
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise CodeFault("upload", f"the zip cannot be read ({excerpt(str(exc))})") from None
    except OSError as exc:
        raise CodeFault("upload", f"the zip cannot be unpacked ({exc.strerror or exc})") from None


def _listing(root: str, limit: int = 20) -> str:
    """The files under ``root`` (relative paths, at most ``limit``) in name order, whatever order the file
    system lists them in: each folder's files and folders by name, a folder's files where its name comes
    (``code/a.py`` before ``code.txt``), walked without following a link."""
    names: list[str] = []
    stack = [("", iter(_sorted_entries(root) or []))]
    while stack:
        relative, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name = relative + entry.name
        try:
            folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            folder = False
        if folder:
            stack.append((name + "/", iter(_sorted_entries(entry.path) or [])))
            continue
        names.append(printable(name)[:200])
        if len(names) >= limit:
            return ", ".join(names) + ", ..."
    return ", ".join(names) or "nothing"


def code_digest(code_root: str) -> str:
    """A digest of ``team_code/``: every file's path and content (of a file over 16 MiB, its size and its
    first and last MiB), so that kept turns are refused once the code changed."""
    digest = hashlib.sha256()
    package = os.path.join(code_root, TEAM_CODE)
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, package).encode("utf-8", "surrogateescape") + b"\0")
            try:
                with open(path, "rb") as fh:
                    size = os.fstat(fh.fileno()).st_size
                    digest.update(str(size).encode() + b"\0")
                    if size <= 16 << 20:
                        digest.update(fh.read())
                    else:
                        digest.update(fh.read(1 << 20))
                        fh.seek(size - (1 << 20))
                        digest.update(fh.read(1 << 20))
            except OSError:
                digest.update(b"unreadable\0")
    return digest.hexdigest()
