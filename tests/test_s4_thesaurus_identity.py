"""Contract section 4, the thesaurus identity: it follows the thesaurus's bytes, so a file rewritten with
the same size and modification time, or a folder replaced by another with the same stamps, gives another
identity, and the index cached under the old one is not used."""

import os
import re
import shutil


def test_the_thesaurus_identity_follows_its_bytes(tmp_path):
    """contract section 4: a file rewritten with the same size and modification time gives another identity,
    and the index cached under the old one is not used."""
    from scorer.metric import thesaurus

    rwn = tmp_path / "rwn"
    rwn.mkdir()
    xml = rwn / "synsets.V.xml"
    xml.write_text(
        '<synsets><synset id="1-V"><sense>ЛЕТЕТЬ</sense><sense>МЧАТЬСЯ</sense></synset></synsets>',
        encoding="utf-8",
    )
    first = thesaurus.load_thesaurus(rwn)
    assert first.synsets("лететь") == first.synsets("мчаться") == frozenset({"1-V"})
    stamp = xml.stat()
    xml.write_text(
        '<synsets><synset id="1-V"><sense>ЛЕТЕТЬ</sense><sense>ПЛЫТЬСЯ</sense></synset></synsets>',
        encoding="utf-8",
    )
    os.utime(xml, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (xml.stat().st_size, xml.stat().st_mtime_ns) == (stamp.st_size, stamp.st_mtime_ns)
    second = thesaurus.load_thesaurus(rwn)
    assert second.identity != first.identity
    assert re.fullmatch(r"rwn-(?:xml-[NVA]{1,3}|sqlite)-[0-9a-f]{12}", second.identity)
    assert second.synsets("мчаться") == frozenset()
    assert second.synsets("лететь") == frozenset({"1-V"})
    # a directory replaced by another with the same names, sizes and stamps
    other = tmp_path / "other"
    shutil.copytree(rwn, other)
    (other / "synsets.V.xml").write_text(
        '<synsets><synset id="2-V"><sense>ЛЕТЕТЬ</sense><sense>МЧАТЬСЯ</sense></synset></synsets>',
        encoding="utf-8",
    )
    os.utime(other / "synsets.V.xml", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    shutil.rmtree(rwn)
    other.rename(rwn)
    third = thesaurus.load_thesaurus(rwn)
    assert third.identity not in (first.identity, second.identity)
    assert third.synsets("мчаться") == frozenset({"2-V"})
