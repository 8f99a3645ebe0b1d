"""RuWordNet from both distributions, its location rules, and the compiled-index cache."""

import shutil
import sqlite3

import pytest
from helpers import MINI_RWN, mini_sqlite

from scorer.errors import ThesaurusError
from scorer.metric import thesaurus
from scorer.metric.thesaurus import load_thesaurus

XML = """<synsets>
  <synset id="1-A" ruthes_name="ЗЕЛЕНЫЙ" part_of_speech="Adj">
    <sense id="1-A-1">ЗЕЛЕНЫЙ</sense>
    <sense id="1-A-2">НЕДОЗРЕЛЫЙ</sense>
    <sense id="1-A-3">НЕ СОЗРЕВШИЙ</sense>
  </synset>
  <synset id="2-A" ruthes_name="ЕЛОВЫЙ" part_of_speech="Adj">
    <sense id="2-A-1">ЁЛОЧНЫЙ</sense>
    <sense id="2-A-2">ЕЛОВЫЙ</sense>
  </synset>
</synsets>
"""


def xml_dir(tmp_path, text=XML):
    folder = tmp_path / "rwn"
    folder.mkdir(exist_ok=True)
    (folder / "synsets.A.xml").write_text(text, encoding="utf-8")
    return folder


def test_xml_directory(tmp_path):
    t = load_thesaurus(xml_dir(tmp_path))
    assert t.synsets("зеленый") == {"1-A"} and t.synsets("недозрелый") == {"1-A"}
    assert t.synsets("елочный") == {"2-A"}  # Ё normalised to е
    assert (
        t.synsets("не созревший") == frozenset() and t.synsets("созревший") == frozenset()
    )  # multi-word skipped
    assert t.identity.startswith("rwn-xml-A-")


def test_sqlite_file_of_the_ruwordnet_package(tmp_path):
    db = tmp_path / "ruwordnet.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE synset (id TEXT PRIMARY KEY, title TEXT)")
    con.execute("CREATE TABLE sense (id TEXT PRIMARY KEY, name TEXT, lemma TEXT, synset_id TEXT)")
    con.executemany(
        "INSERT INTO sense VALUES (?, ?, ?, ?)",
        [
            ("1", "ЗЕЛЁНЫЙ", "ЗЕЛЕНЫЙ", "1-A"),
            ("2", "НЕДОЗРЕЛЫЙ", "НЕДОЗРЕЛЫЙ", "1-A"),
            ("3", "НЕ СОЗРЕВШИЙ", "НЕ СОЗРЕТЬ", "1-A"),
            ("4", "ДОМА", None, "9-N"),
        ],
    )
    con.commit()
    con.close()
    t = load_thesaurus(db)
    assert t.synsets("зеленый") == {"1-A"} and t.synsets("дома") == {"9-N"}
    assert t.synsets("созреть") == frozenset()
    assert t.identity.startswith("rwn-sqlite-")


def test_shared_copy_links_real_synonyms(real_rwn_path):
    real = load_thesaurus(real_rwn_path)
    assert real.synsets("зеленый") & real.synsets("недозрелый") and real.synsets("лететь") & real.synsets(
        "мчаться"
    )
    assert real.identity.startswith(("rwn-xml-", "rwn-sqlite-"))


def test_the_made_up_thesaurus_reads_alike_as_xml_and_sqlite(rwn, tmp_path):
    db = load_thesaurus(mini_sqlite(tmp_path / "mini.db"))
    assert db.identity.startswith("rwn-sqlite-") and rwn.identity.startswith("rwn-xml-NVA-")
    assert db.index == rwn.index
    assert rwn.synsets("мчаться") == {"900001-V", "900002-V"} and rwn.synsets("елка") == {"900207-N"}
    assert rwn.synsets("дом") == {"900202-N", "900203-N"} and rwn.synsets("идти") == {"900010-V"}


def test_location_order(tmp_path, monkeypatch):
    first = xml_dir(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(first, other)
    (other / "synsets.A.xml").write_text(XML.replace("2-A", "3-A"), encoding="utf-8")
    monkeypatch.setenv("RUWORDNET_PATH", str(other))
    assert load_thesaurus().synsets("еловый") == {"3-A"}  # environment
    assert load_thesaurus(first).synsets("еловый") == {"2-A"}  # explicit path wins


def test_missing_thesaurus_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv("RUWORDNET_PATH", raising=False)
    monkeypatch.setattr("scorer.metric.thesaurus.default_location", lambda: tmp_path / "nowhere.db")
    for where in (None, tmp_path / "nope"):
        with pytest.raises(ThesaurusError) as info:
            load_thesaurus(where)
        assert "ruwordnet download" in str(info.value) and "without the synonym stage" in str(info.value)
        assert "--" not in str(info.value)  # library messages name no command-line flag
        assert info.value.exit_code == 2


@pytest.mark.parametrize("content", [b"not a database", b""])
def test_unreadable_file(tmp_path, content):
    bad = tmp_path / "x.db"
    bad.write_bytes(content)
    with pytest.raises(ThesaurusError):
        load_thesaurus(bad)


def test_directory_without_thesaurus_files_or_broken_xml(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ThesaurusError, match="neither"):
        load_thesaurus(tmp_path / "empty")
    with pytest.raises(ThesaurusError, match="cannot read"):
        load_thesaurus(xml_dir(tmp_path, "<synsets><synset"))


def test_cache_follows_the_source_content(tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    folder = xml_dir(tmp_path)
    first = load_thesaurus(folder)
    cache_files = list((tmp_path / "cache").glob("*.marshal"))
    assert [f.name for f in cache_files] == [thesaurus.INDEX_STORE.path(first.identity).name]
    assert load_thesaurus(folder) == first  # served from the cache
    cache_files[0].write_bytes(b"{broken")
    assert load_thesaurus(folder) == first  # a broken cache is rebuilt, not trusted
    (folder / "synsets.A.xml").write_text(XML.replace("ЕЛОВЫЙ", "СОСНОВЫЙ"), encoding="utf-8")
    second = load_thesaurus(folder)
    assert second.identity != first.identity
    assert second.synsets("сосновый") == {"2-A"} and second.synsets("еловый") == frozenset()


def test_warm_start_hashes_the_source_but_parses_nothing(tmp_path, monkeypatch):
    """The identity follows the bytes (contract section 4): a warm start hashes the files, and takes the index
    from the cache without parsing them."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    folder = xml_dir(tmp_path)
    first = load_thesaurus(folder)

    def no_parsing(*args):
        raise AssertionError("the source was parsed again")

    monkeypatch.setattr("scorer.metric.thesaurus._read_xml", no_parsing)
    assert load_thesaurus(folder) == first


def test_the_xml_is_streamed_with_the_pairs_a_full_parse_gives(tmp_path):
    import xml.etree.ElementTree as ET

    from scorer.metric.thesaurus import _read_xml

    files = sorted(MINI_RWN.glob("synsets.*.xml"))
    parsed = [
        (sense.text, synset.get("id"))
        for path in files
        for synset in ET.parse(path).getroot().iter("synset")
        for sense in synset.iter("sense")
        if synset.get("id") and sense.text
    ]
    assert list(_read_xml(files)) == parsed and len(parsed) > 50
    odd = tmp_path / "synsets.N.xml"
    odd.write_text(
        '<synsets><sense>ВНЕ</sense><synset id="1-N"><sense>КОТ</sense><sense/></synset>'
        '<synset><sense>БЕЗ</sense></synset><synset id="2-N"><sense>ПЕС</sense></synset></synsets>',
        encoding="utf-8",
    )
    assert list(_read_xml([odd])) == [("КОТ", "1-N"), ("ПЕС", "2-N")]


def test_a_fifo_in_place_of_the_thesaurus_is_refused_not_waited_on(tmp_path):
    import os

    fifo = tmp_path / "ruwordnet.db"
    os.mkfifo(fifo)  # reading it would block for ever
    with pytest.raises(ThesaurusError, match="is not a regular file"):
        load_thesaurus(fifo)
