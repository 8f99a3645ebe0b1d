"""The core's size limits (lines as ``wc -l`` counts them, the files formatted by ruff): the metric's engine
with its C type files, and the persistent caches with the store they share."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "scorer"  # the sources, as they are in the repository


def _lines(paths: list[Path]) -> int:
    return sum(path.read_bytes().count(b"\n") for path in paths)


def test_the_engine_with_its_pxd_files_stays_within_1300_lines():
    engine = PACKAGE / "metric" / "engine"
    files = sorted(engine.glob("*.py")) + sorted(engine.glob("*.pxd"))
    assert {"alignment.py", "alignment.pxd", "id_counts.py", "id_counts.pxd"} <= {p.name for p in files}
    assert _lines(files) <= 1300


def test_the_persistent_caches_and_their_store_stay_within_400_lines():
    files = [
        PACKAGE / "metric" / "cache.py",
        PACKAGE / "metric" / "token_cache.py",
        PACKAGE / "metric" / "key_table_cache.py",
        PACKAGE / "inputs" / "reference_cache.py",
    ]
    assert _lines(files) <= 400
