"""RuWordNet synsets by lemma (the ``synset`` stage of contract section 4).

Two sources are read:

* the SQLite file the ``ruwordnet`` package downloads (``ruwordnet download``):
  table ``sense`` with columns ``lemma`` and ``synset_id``;
* a directory of the official XML distribution: any of ``synsets.N.xml``,
  ``synsets.V.xml``, ``synsets.A.xml``; a ``<sense>``'s text is its lemma.

Only single-word senses are kept: the normalised sense text must be one
whitespace-free word. The compiled index (lemma -> synset ids) is cached on
disk (``marshal``, the fastest format the standard library reads) under a key
made of the source's content hash, so a changed source is recompiled
automatically. The hash is taken anew every run, over every byte of the
source's files (about 0.5 ms a MiB; :func:`_identity`), so a file changed
with its size and modification time kept still gives another identity; the
compiled index is read only when a token's synsets are first asked for (a warm
token cache, :mod:`scorer.metric.token_cache`, never asks).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from scorer.errors import ThesaurusError

from .cache import Store, sets_of_strings
from .text import normalise

XML_FILES = ("synsets.N.xml", "synsets.V.xml", "synsets.A.xml")
ENV_PATH = "RUWORDNET_PATH"

HOW_TO_GET = (
    "Get RuWordNet with `ruwordnet download` (the ruwordnet package's SQLite file), "
    "or give the location of that file or of a directory of the XML distribution "
    "(synsets.N.xml, synsets.V.xml, synsets.A.xml), or set RUWORDNET_PATH to it; "
    "or score without the synonym stage (synonyms=False in the Python API)."
)


Index = dict[str, frozenset[str]]


class Thesaurus:
    """Lemma -> synset ids, with an identity string for the signature.

    Give the ``index`` itself, or a ``loader`` that returns it on first use.
    """

    def __init__(self, identity: str, index: Index | None = None, loader: Callable[[], Index] | None = None):
        if loader is None:
            if index is None:
                raise ValueError("give a Thesaurus its index or a loader for it")
            given: Index = index
            loader = lambda: given  # noqa: E731
        self.identity = identity
        self._index = index
        self._loader: Callable[[], Index] = loader

    def __repr__(self) -> str:
        return f"Thesaurus({self.identity!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thesaurus) and (self.identity, self.index) == (other.identity, other.index)

    __hash__ = None  # type: ignore[assignment]  # mutable (loaded on first use), like a dict

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self._loader()
        return self._index

    def synsets(self, lemma: str) -> frozenset[str]:
        return self.index.get(lemma, frozenset())


def default_location() -> Path | None:
    """Where ``ruwordnet download`` puts its SQLite file, if the package is installed."""
    spec = find_spec("ruwordnet")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "static" / "ruwordnet.db"


def resolve_location(explicit: str | os.PathLike[str] | None) -> Path:
    """``--thesaurus``, else ``$RUWORDNET_PATH``, else the package's download location."""
    if explicit:
        where, origin = Path(explicit), "the given location"
    elif os.environ.get(ENV_PATH):
        where, origin = Path(os.environ[ENV_PATH]), ENV_PATH
    else:
        origin = "the ruwordnet package's download location"
        found = default_location()
        if found is None or not os.path.exists(found):
            raise ThesaurusError(f"RuWordNet was not found ({origin}: {found}). {HOW_TO_GET}")
        where = found
    if not os.path.exists(where):
        raise ThesaurusError(f"RuWordNet was not found at {where} (from {origin}). {HOW_TO_GET}")
    return where


@dataclass(frozen=True)
class Source:
    """A thesaurus found and identified: where it is, its kind (``xml`` or ``sqlite``), its files and its
    identity (the SHA-256 of their bytes), so that one run hashes its files once."""

    path: Path
    kind: str
    files: tuple[Path, ...]
    identity: str

    @property
    def index_cached(self) -> bool:
        """Whether its index is in the cache."""
        return _exists(INDEX_STORE.path(self.identity))


def identify(location: str | os.PathLike[str] | None = None) -> Source:
    """The thesaurus at ``location`` (resolved as :func:`resolve_location`), found and identified; raises
    :class:`~scorer.errors.ThesaurusError` when it cannot be found or read."""
    path = resolve_location(location)
    try:
        kind, files = _source_files(path)
        return Source(path, kind, tuple(files), _identity(kind, files))
    except OSError as exc:
        raise ThesaurusError(
            f"cannot read RuWordNet at {path}: {exc.strerror or exc}. {HOW_TO_GET}"
        ) from None


def load_thesaurus(location: str | os.PathLike[str] | Source | None = None) -> Thesaurus:
    """Load RuWordNet from ``location``: a :class:`Source`, or a location resolved as
    :func:`resolve_location`."""
    source = location if isinstance(location, Source) else identify(location)
    identity = source.identity

    def build() -> Index:
        files = list(source.files)
        pairs = _read_sqlite(files[0]) if source.kind == "sqlite" else _read_xml(files)
        index = _build_index(pairs)
        if not index:
            raise ThesaurusError(f"RuWordNet at {source.path} holds no single-word senses. {HOW_TO_GET}")
        INDEX_STORE.save(INDEX_STORE.path(identity), index)
        return index

    if source.index_cached:
        return Thesaurus(identity, loader=lambda: INDEX_STORE.load(INDEX_STORE.path(identity)) or build())
    return Thesaurus(identity, build())


def build_index(source: Source) -> None:
    """Build the index of ``source`` into the cache (run on a worker while the inputs are read; the load
    then finds it there)."""
    load_thesaurus(source)


def _exists(path: Path) -> bool:
    """Whether a cache file is there (any fault, a name too long included, counts as not there)."""
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return False
    return True


def _source_files(source: Path) -> tuple[str, list[Path]]:
    if source.is_dir():
        files = [source / name for name in XML_FILES if (source / name).is_file()]
        if files:
            return "xml", files
        db = source / "ruwordnet.db"
        if db.is_file():
            return "sqlite", [db]
        raise ThesaurusError(f"{source} holds neither synsets.[NVA].xml nor ruwordnet.db. {HOW_TO_GET}")
    if not source.is_file():  # a FIFO or a device would block the read below, or never end
        raise ThesaurusError(f"{source} is not a regular file. {HOW_TO_GET}")
    with open(source, "rb") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            raise ThesaurusError(f"{source} is not an SQLite database. {HOW_TO_GET}")
    return "sqlite", [source]


def _identity(kind: str, files: list[Path]) -> str:
    """The thesaurus's identity: its kind and the SHA-256 of its files' names and bytes, hashed every time
    (about 0.5 ms a MiB), so any change to a file, one with the same size and modification time included,
    gives another identity, and with it another signature and other cache entries."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    if kind == "xml":
        parts = "".join(p.name.split(".")[1] for p in files)
        return f"rwn-xml-{parts}-{digest.hexdigest()[:12]}"
    return f"rwn-sqlite-{digest.hexdigest()[:12]}"


def _read_xml(files: list[Path]) -> Iterator[tuple[str, str]]:
    """(sense text, synset id) of every ``<sense>`` inside a ``<synset>``, streamed: each synset is read
    when it ends and then emptied, so a full-size file is never held as a tree."""
    import xml.etree.ElementTree as ET  # here: a run with the index cached never parses XML

    for path in files:
        try:
            for _, element in ET.iterparse(path, events=("end",)):
                if element.tag != "synset":
                    continue
                synset_id = element.get("id")
                if synset_id:
                    for sense in element.iter("sense"):
                        if sense.text:
                            yield sense.text, synset_id
                element.clear()
        except (ET.ParseError, OSError) as exc:
            raise ThesaurusError(f"cannot read RuWordNet file {path}: {exc}") from None


def _read_sqlite(path: Path) -> list[tuple[str, str]]:
    import sqlite3  # here: a run with the index cached never opens the database

    try:
        # the path percent-encoded into the URI: it names its file whatever it holds (%, ?, #) (contract 3)
        con = sqlite3.connect(Path(os.path.abspath(path)).as_uri() + "?mode=ro", uri=True)
        try:
            rows = con.execute(
                "SELECT COALESCE(lemma, name), synset_id FROM sense WHERE synset_id IS NOT NULL"
            ).fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise ThesaurusError(f"cannot read RuWordNet database {path}: {exc}") from None
    return [(text, sid) for text, sid in rows if text]


def _build_index(pairs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    sets: dict[str, set[str]] = {}
    for text, synset_id in pairs:
        words = normalise(text).split()
        if len(words) == 1:
            sets.setdefault(words[0], set()).add(synset_id)
    return {lemma: frozenset(ids) for lemma, ids in sets.items()}


INDEX_STORE = Store("thesaurus", 4, 512 << 20, lambda index: bool(index) and sets_of_strings(index))
