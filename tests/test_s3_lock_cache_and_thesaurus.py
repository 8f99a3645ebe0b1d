"""Contract section 3: the output lock, the cache directory and its growth, thesaurus paths; section 7:
empty stages in force. The cases about another local user run the scorer's modules as uid 2001 through
``setpriv`` (they need root, which CI has; elsewhere they are skipped with the reason)."""

from __future__ import annotations

import fcntl
import json
import marshal
import os
import shutil
import sqlite3
import stat
import struct
import subprocess
import time
from pathlib import Path

import pytest
from helpers import EXAMPLES, ROOT, score_cli, score_into, score_process, upload

from scorer.metric import token_cache
from scorer.metric.cache import STALE_SECONDS, cache_dir_problem
from scorer.metric.engine import accelerator
from scorer.metric.matcher import Matcher
from scorer.metric.thesaurus import _read_sqlite
from scorer.metric.token_cache import cache_path, table_path
from scorer.outputs.output_dir import locked

SYSTEM_PYTHON = "/usr/bin/python3"
OTHER_UID = 2001


#: A run with a fresh cache allowed two processes builds the thesaurus index on a forked worker: these tests'
#: own caches start empty, and they stay in this process (docs/testing.md).
ONE_PROCESS = ("--jobs", "1")


@pytest.fixture
def open_tmp():
    """A folder that another user can reach (pytest's own are private to this user)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="scorer-other-user-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _open_to_others(path: Path) -> bool:
    """Whether another user can reach ``path``: every folder from the root down to it lets others pass."""
    return all(folder.stat().st_mode & stat.S_IXOTH for folder in [path, *path.parents])


@pytest.fixture(scope="module")
def package_for_others():
    """A copy of the package another user can read: the repository itself may lie in a folder only its
    owner may enter (a clone in a ``mktemp -d`` folder, or in root's home), where uid 2001 would find no
    module ``scorer``."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="scorer-package-"))
    shutil.copytree(ROOT / "scorer", folder / "scorer", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        os.chmod(path, mode | (0o555 if path.is_dir() or mode & 0o111 else 0o444))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_other_user(code: str, cwd: Path, package: Path) -> subprocess.CompletedProcess:
    """``code`` run by the system's Python as uid 2001, with ``package``'s copy of the scorer importable."""
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("needs root, setpriv and /usr/bin/python3 to act as another user")
    command = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    reached = subprocess.run([*command, SYSTEM_PYTHON, "-c", ""], cwd="/", env=env, capture_output=True)
    if reached.returncode != 0:
        pytest.skip(f"uid {OTHER_UID} cannot run {SYSTEM_PYTHON}")
    for folder in (package, cwd):
        if not _open_to_others(folder):
            pytest.skip(f"uid {OTHER_UID} cannot reach {folder} (a folder on its way is private)")
    prelude = f"import sys; sys.dont_write_bytecode = True; sys.path.insert(0, {str(package)!r})\n"
    return subprocess.run(
        [*command, SYSTEM_PYTHON, "-c", prelude + code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


# --- the lock is a file the run creates -----------------------------------------------------------------


@pytest.mark.slow
def test_a_lock_held_on_the_output_directory_itself_does_not_block_a_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)  # what any user who can read the folder can do
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        done = score_process(EXAMPLES / "realistic", out, "--quiet", "--no-synonyms")
    finally:
        os.close(fd)
    assert done.returncode == 0 and "waiting" not in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["audit.json", "details.csv", "scores.json", "scores.txt"]


def test_the_lock_file_is_the_users_own_and_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    (tmp_path / "runtime").mkdir(mode=0o700)
    out = tmp_path / "out"
    out.mkdir()
    with locked(out):
        (lock,) = (tmp_path / "runtime" / "dialogue-scorer").iterdir()
        info = lock.lstat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()
        assert stat.S_IMODE((tmp_path / "runtime" / "dialogue-scorer").stat().st_mode) == 0o700
    # a lock folder open to others is not used: the lock file goes into the output directory instead
    os.chmod(tmp_path / "runtime" / "dialogue-scorer", 0o777)
    with locked(out):
        assert stat.S_IMODE((out / ".scorer.lock").lstat().st_mode) == 0o600


@pytest.mark.slow
def test_another_user_holding_the_output_directory_does_not_block_a_run(open_tmp):
    out = open_tmp / "out"
    out.mkdir(mode=0o755)
    os.chmod(open_tmp, 0o755)
    holder = subprocess.Popen(
        ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups",
         "flock", "-x", str(out), "sleep", "60"],
    ) if os.geteuid() == 0 and shutil.which("setpriv") and shutil.which("flock") else None  # fmt: skip
    if holder is None:
        pytest.skip("needs root, setpriv and flock to act as another user")
    try:
        time.sleep(0.3)
        assert holder.poll() is None
        done = score_process(EXAMPLES / "realistic", out, "--quiet", "--no-synonyms")
        assert done.returncode == 0 and "waiting" not in done.stderr
    finally:
        holder.kill()
        holder.wait()


# --- thesaurus paths --------------------------------------------------------------------------------------


def _database(path: Path, lemma: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE sense (lemma TEXT, name TEXT, synset_id TEXT)")
    con.execute("INSERT INTO sense VALUES (?, ?, '1-N')", (lemma, lemma))
    con.commit()
    con.close()


@pytest.mark.parametrize("folder", ["a%41", "q?mode=rwc", "x#y", "p%3Fq"])
def test_a_thesaurus_path_names_the_file_it_names(tmp_path, folder):
    _database(tmp_path / folder / "ruwordnet.db", "кот")
    _database(tmp_path / "aA" / "ruwordnet.db", "пёс")  # what a%41 would decode to
    _database(tmp_path / "q" / "ruwordnet.db", "пёс")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert _read_sqlite(tmp_path / folder / "ruwordnet.db") == [("кот", "1-N")]
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing created beside it


# --- the cache directory ----------------------------------------------------------------------------------


def test_a_cache_directory_that_is_a_link_or_open_to_others_is_not_used(tmp_path, monkeypatch, capsys):
    target = tmp_path / "someone-elses"
    target.mkdir()
    link = tmp_path / "cache-link"
    link.symlink_to(target)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(link))
    assert cache_dir_problem() == "it is a symbolic link"
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--quiet", "--no-synonyms") == 0
    assert list(target.iterdir()) == []
    err = capsys.readouterr().err
    assert f"warning: the cache directory {link} is not used (it is a symbolic link)" in err
    assert err.count("cache directory") == 1
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(shared))
    assert cache_dir_problem() == "others may write to it and it has no sticky bit"
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out2", "--quiet", "--no-synonyms") == 0
    assert list(shared.iterdir()) == []
    os.chmod(shared, 0o1777)  # a shared folder with the sticky bit, as /tmp: used
    assert cache_dir_problem() is None
    capsys.readouterr()
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out3", "--quiet", "--no-synonyms") == 0
    assert any(p.name.startswith("tokens-") for p in shared.iterdir())
    assert "cache directory" not in capsys.readouterr().err


@pytest.mark.slow
def test_another_users_cache_directory_is_not_used(open_tmp, package_for_others):
    folder = open_tmp / "third-users"
    folder.mkdir(mode=0o755)
    os.chown(folder, OTHER_UID + 1, OTHER_UID + 1)
    os.chmod(open_tmp, 0o755)
    done = as_other_user(
        "from pathlib import Path; from scorer.metric.cache import cache_dir_problem; "
        f"print(cache_dir_problem(Path({str(folder)!r})))",
        open_tmp,
        package_for_others,
    )
    assert done.stdout.strip() == "it belongs to another user", done.stderr


def test_stale_temporaries_of_killed_runs_are_removed(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    old, fresh = cache / ".tokens-dead.marshal.abc.tmp", cache / ".tokens-live.marshal.def.tmp"
    for path in (old, fresh):
        path.write_bytes(b"x" * 1000)
    hour_ago = time.time() - STALE_SECONDS - 60
    os.utime(old, (hour_ago, hour_ago))
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--quiet", "--no-synonyms") == 0
    assert not old.exists() and fresh.exists()


@pytest.mark.slow
def test_root_owned_cache_files_are_used_by_another_user(open_tmp, package_for_others, monkeypatch):
    """An image's prebuilt caches (root's, readable by all, no one else may write them) are read by the
    platform's user, who cannot replace them."""
    from scorer.metric.token_cache import STORE

    folder = open_tmp / "cache"
    folder.mkdir()
    os.chmod(open_tmp, 0o755)
    os.chmod(folder, 0o1777)
    code = (
        f"import os; os.environ['SCORER_CACHE_DIR'] = {str(folder)!r}\n"
        "from scorer.metric.token_cache import STORE\n"
        "print(STORE.load(STORE.path('prebuilt')), STORE.save(STORE.path('prebuilt'), {}))"
    )
    done = as_other_user(code, open_tmp, package_for_others)
    assert done.stdout.split() == ["None", "True"], done.stderr  # its own file, where none was
    for path in folder.iterdir():
        path.unlink()
    monkeypatch.setenv("SCORER_CACHE_DIR", str(folder))
    assert STORE.save(STORE.path("prebuilt"), {"lemma": {"кот": frozenset({"кот"})}})
    os.chmod(STORE.path("prebuilt"), 0o644)  # as the image's build leaves them
    done = as_other_user(code, open_tmp, package_for_others)
    assert done.stdout.strip() == "{'lemma': {'кот': frozenset({'кот'})}} False", done.stderr


# --- a run's cost does not grow with what earlier runs added -----------------------------------------------


def test_an_uploads_own_words_never_reach_what_a_run_loads_whole(tmp_path, monkeypatch):
    """The token cache and the token table, which a run reads whole, keep the reference data's words only;
    an upload's own words go to the word store, which a run reads a few rows at a time for its own words."""
    from scorer.metric.token_cache import TokenStore

    cache = tmp_path / "cache"
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    assert score_cli(EXAMPLES / "realistic", tmp_path / "first", "--quiet", *ONE_PROCESS) == 0
    whole = {p.name: p.read_bytes() for p in cache.iterdir() if p.name.startswith(("tokens-", "keys-"))}
    # the token cache, and beside it the compiled engine's token table (the pure engine keeps no table)
    kinds = ["keys", "tokens"] if accelerator.active() else ["tokens"]
    assert sorted(name.split("-")[0] for name in whole) == kinds
    (path,) = [cache / n for n in whole if n.startswith("tokens-")]
    kept = token_cache.load(path)
    text = (EXAMPLES / "realistic" / "submission.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in text.split("\n") if line]
    for k, row in enumerate(rows):  # 100 invented words in every answer
        row["answers"] = [a + " " + " ".join(f"зублорк{k}x{n}ый" for n in range(100)) for a in row["answers"]]
    crafted = tmp_path / "crafted"
    crafted.mkdir()
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (crafted / "submission.jsonl").write_text(lines, "utf-8")
    shutil.copy(EXAMPLES / "realistic" / "ppl_output.json", crafted)
    assert score_cli(crafted, tmp_path / "second", "--quiet", *ONE_PROCESS) == 0
    after = token_cache.load(path)
    assert after.keys() == kept.keys() and all(after[s].keys() == kept[s].keys() for s in kept)
    assert not any("зублорк" in t for table in after.values() for t in table)
    assert {p.name: p.read_bytes() for p in cache.iterdir() if p.name in whole} == whole
    # the invented words' keys are in the word store, found a row at a time
    (store,) = [p / "words.sqlite" for p in cache.iterdir() if p.name.startswith("words-")]
    assert TokenStore(store).get("lemma", "зублорк0x7ый") == frozenset({"зублорк0x7ый"})
    assert TokenStore(store).get("lemma", "кот") is None  # a reference word is the token cache's
    # and the next ordinary run gives the same outputs as the first
    assert score_cli(EXAMPLES / "realistic", tmp_path / "third", "--quiet", *ONE_PROCESS) == 0
    assert (tmp_path / "third" / "scores.json").read_bytes() == (
        tmp_path / "first" / "scores.json"
    ).read_bytes()


def _hot_journal(content: bytes) -> bytes:
    """A rollback journal that SQLite, finding it hot beside a database, plays back into it: every page of
    ``content`` (an SQLite file) put in place (the layout of SQLite's file format, section 4.1)."""
    size = int.from_bytes(content[16:18], "big") or 65536
    pages, nonce = len(content) // size, 0x2545F491
    header = bytes.fromhex("d9d505f920a163d7") + struct.pack(">5I", pages, nonce, pages, 512, size)
    journal = bytearray(header.ljust(512, b"\0"))
    for number in range(1, pages + 1):
        page = content[(number - 1) * size : number * size]
        checksum = (nonce + sum(page[size - 200 : 0 : -200])) & 0xFFFFFFFF
        journal += struct.pack(">I", number) + page + struct.pack(">I", checksum)
    return bytes(journal)


def _write_ahead_log(store: Path, keys: str, folder: Path) -> bytes:
    """A write-ahead log, made by SQLite, that gives every word in a copy of ``store`` the lemmas ``keys``."""
    copy = folder / "copy.sqlite"
    shutil.copy(store, copy)
    connection = sqlite3.connect(copy)
    connection.execute("PRAGMA journal_mode = WAL")
    with connection:
        connection.execute("UPDATE words SET keys = ? WHERE stage = 'lemma'", (keys,))
    log = Path(f"{copy}-wal").read_bytes()  # before closing, which would check it back into the copy
    connection.close()
    return log


def test_another_users_side_files_of_the_word_store_are_never_read_or_rolled_back(tmp_path, monkeypatch):
    """In a shared 1777 cache folder, a hot journal or a write-ahead log that another user put beside the
    word store would give every answer-only word the reference data's lemmas: the next run neither rolls it
    back nor reads it, and its numbers are the first run's (contract section 3)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    cache = tmp_path / "shared"
    cache.mkdir()
    os.chmod(cache, 0o1777)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(cache))
    assert score_cli(EXAMPLES / "realistic", tmp_path / "first", "--quiet", *ONE_PROCESS) == 0
    first = (tmp_path / "first" / "scores.json").read_bytes()
    (store,) = cache.glob("words-*/words.sqlite")
    (tokens,) = cache.glob("tokens-*")
    keys = "\0".join(sorted(set().union(*token_cache.load(tokens)["lemma"].values())))
    evil = tmp_path / "evil.sqlite"
    shutil.copy(store, evil)
    with sqlite3.connect(evil) as connection:
        connection.execute("UPDATE words SET keys = ? WHERE stage = 'lemma'", (keys,))
    connection.close()
    planted = {"-journal": _hot_journal(evil.read_bytes()), "-wal": _write_ahead_log(store, keys, tmp_path)}
    kept = store.read_bytes()
    for n, (suffix, data) in enumerate(planted.items()):
        side = Path(f"{store}{suffix}")
        side.write_bytes(data)
        os.chown(side, OTHER_UID, OTHER_UID)
        assert score_cli(EXAMPLES / "realistic", tmp_path / f"run{n}", "--quiet", *ONE_PROCESS) == 0
        assert (tmp_path / f"run{n}" / "scores.json").read_bytes() == first, suffix
        assert store.read_bytes() == kept and side.read_bytes() == data  # neither applied nor removed
        side.unlink()
    # a store folder another user made first is not used either: the run is slower, its numbers the same
    for path in store.parent.iterdir():
        path.unlink()
    os.chown(store.parent, OTHER_UID, OTHER_UID)
    assert score_cli(EXAMPLES / "realistic", tmp_path / "squatted", "--quiet", *ONE_PROCESS) == 0
    assert (tmp_path / "squatted" / "scores.json").read_bytes() == first
    assert list(store.parent.iterdir()) == []


# --- section 7: empty stages in force ---------------------------------------------------------------------


# --- the cache is untrusted data ----------------------------------------------------------------------


def _warm(tmp_path: Path) -> tuple[Path, dict]:
    submission = upload(tmp_path / "s")
    code, scores = score_into(tmp_path, submission, "--no-synonyms", out="first")
    assert code == 0
    return submission, scores


def _token_cache() -> Path:
    """The token cache of runs without the synonym stage (the one these tests make)."""
    from scorer.metric.morphology import morphology_id

    return cache_path(morphology_id(), None)


def test_a_tampered_token_cache_is_rebuilt_never_used(tmp_path):
    submission, first = _warm(tmp_path)
    path = _token_cache()
    # a well-formed table with wrong lemma sets, in the old unsealed layout and in a copy of the sealed one
    wrong = {t: frozenset(["кот"]) for t in ("на", "в", "и", "он", "она", "это", "был", "была")}
    path.write_bytes(marshal.dumps((2, wrong, {})))
    assert (
        score_into(tmp_path, submission, "--no-synonyms", out="tampered")[1]["integral"] == first["integral"]
    )
    data = _token_cache().read_bytes()
    _token_cache().write_bytes(data[:-40] + marshal.dumps(wrong)[:40])  # edited in place: the seal breaks
    assert score_into(tmp_path, submission, "--no-synonyms", out="edited")[1]["integral"] == first["integral"]


def test_hostile_cache_files_cost_a_rebuild_never_a_crash(tmp_path):
    submission, first = _warm(tmp_path)
    path = _token_cache()
    path.unlink()
    os.mkfifo(path)  # a FIFO: reading it would block for ever
    assert score_into(tmp_path, submission, "--no-synonyms", out="fifo")[1]["integral"] == first["integral"]
    path.unlink()
    path.write_bytes(b"\xdb" + (2**31).to_bytes(4, "little") + b"\0" * 65)  # a list declaring 2**31 items
    assert (
        score_into(tmp_path, submission, "--no-synonyms", out="declared")[1]["integral"] == first["integral"]
    )
    path.unlink()
    target = tmp_path / "elsewhere"
    target.write_bytes(b"not a cache")
    os.symlink(target, path)
    # so that the run computes keys and saves them anew (the compiled engine's table is there only where
    # the compiled engine ran: the pure one keeps none)
    table_path(path, ("exact", "lemma")).unlink(missing_ok=True)
    assert score_into(tmp_path, submission, "--no-synonyms", out="link")[1]["integral"] == first["integral"]
    assert target.read_bytes() == b"not a cache" and not os.path.islink(
        path
    )  # replaced, never written through


def test_a_cache_file_others_may_write_is_not_read(tmp_path, monkeypatch):
    submission, first = _warm(tmp_path)
    path = _token_cache()
    os.chmod(path, 0o666)
    loads = []
    monkeypatch.setattr("scorer.metric.cache.marshal.loads", lambda data: loads.append(data) or {})
    Matcher(None)
    assert loads == []  # refused before it was parsed


@pytest.mark.slow
def test_a_cache_path_too_long_for_the_system_only_costs_speed(tmp_path):
    env = {**os.environ, "SCORER_CACHE_DIR": str(tmp_path / ("c" * 5000))}
    done = score_process(EXAMPLES / "realistic", tmp_path / "o", "--no-synonyms", "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "o" / "scores.json").read_text())["status"] == "ok"


# --- nothing written outside --output and the cache ---------------------------------------------------


@pytest.mark.slow
def test_a_report_writes_nothing_into_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MPLCONFIGDIR"} | {
        "HOME": str(home),
        "SCORER_CACHE_DIR": str(tmp_path / "c"),
    }
    env.pop("XDG_CACHE_HOME", None)
    env.pop("XDG_CONFIG_HOME", None)
    done = score_process(
        EXAMPLES / "realistic", tmp_path / "o", "--no-synonyms", "--quiet", "--report", env=env
    )
    assert done.returncode == 0, done.stderr
    assert list(home.rglob("*")) == []
    assert (tmp_path / "o" / "report.html").stat().st_size > 10_000
