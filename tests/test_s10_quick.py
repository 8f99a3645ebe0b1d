"""Contract section 10, the runner's and the scoring step's checks of what they did not make, called here as
plain functions (no process started): the code's replies (``checked_reply``), the upload's zip (``unzip``),
what an upload without the package is said to hold (``find_code``), the code's digest (``code_digest``), the
turns kept for ``--resume`` (``State``), the probe calls (``choose_probes``), the limits
(``check_timeouts``), the files of ``--output`` (``Outputs``) and the prediction step's ``run_fault.json`` as
the scoring step repeats it (``code_step._fault_text``)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import struct
import zipfile

import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_into, make_zip, toy_team, validate_cli

from scorer import code_step
from scorer.runner.faults import CodeFault, UsageFault
from scorer.runner.names import OUTPUT_NAMES, STATE_DIR, TEAM_CODE
from scorer.runner.options import check_timeouts
from scorer.runner.outputs import Outputs
from scorer.runner.phases import choose_probes
from scorer.runner.protocol import checked_reply, is_answer, is_perplexity
from scorer.runner.state import State
from scorer.runner.upload import code_digest, find_code, unzip

# --- the code's replies ------------------------------------------------------------------------------------


def test_a_reply_in_the_protocols_shape_gives_its_value():
    assert checked_reply(b'{"ready": true}', "ready") == {"ready": True}
    assert checked_reply(b'{"ok": null}', "setup") == {"ok": None}
    assert checked_reply('{"ok": "Кот спит."}'.encode(), "generate") == {"ok": "Кот спит."}
    # a perplexity comes back a float, whether the code's value was an int or a float
    reply = checked_reply(b'{"ok": 7}', "ppl")
    assert reply == {"ok": 7.0} and type(reply["ok"]) is float
    assert checked_reply(b'{"ok": 2.5}', "ppl") == {"ok": 2.5}


@pytest.mark.parametrize(
    "line, call, message",
    [
        (b"\xff\xfe", "generate", "a reply that is not the protocol's JSON"),
        (b'{"ok": "a"', "generate", "a reply that is not the protocol's JSON"),
        (b"[1, 2]", "generate", "a reply that is not the protocol's JSON object"),
        (b'{"ok": 1}', "generate", "a reply that is not the protocol's answer to a generate call"),
        (b'{"ok": true}', "ppl", "a reply that is not the protocol's answer to a ppl call"),
        (b'{"ok": "3.0"}', "ppl", "a reply that is not the protocol's answer to a ppl call"),
        (b'{"ok": 1.0, "extra": 1}', "ppl", "a reply that is not the protocol's answer to a ppl call"),
        (b'{"ok": 1}', "setup", "a reply that is not the protocol's answer to a setup call"),
        (b'{"ready": false}', "ready", "a reply that is not the protocol's answer to a ready call"),
        (b'{"ready": 1}', "ready", "a reply that is not the protocol's answer to a ready call"),
        (b'{"fault": "exception", "trace": 5}', "generate", "a fault report that is not the protocol's"),
        (b'{"fault": "timeout"}', "generate", "a fault report that is not the protocol's"),
    ],
)
def test_any_other_reply_is_a_protocol_fault_with_no_place(line, call, message):
    with pytest.raises(CodeFault) as caught:
        checked_reply(line, call)
    fault = caught.value
    assert (fault.kind, fault.message) == ("protocol", message)
    # the place is the caller's, from its own record of the call: the reply names none
    assert (fault.phase, fault.function, fault.dialog_id, fault.turn, fault.where()) == (
        "",
        "",
        None,
        None,
        "",
    )


def test_a_wrong_value_of_the_code_is_named_as_such():
    with pytest.raises(CodeFault) as caught:
        checked_reply(b'{"ok": "\\ud800"}', "generate")  # a lone surrogate: not text
    assert caught.value.kind == "wrong_value"
    assert caught.value.message == (
        "it returned str holding a lone surrogate (half of a UTF-16 pair, not text) '\\ud800'"
    )
    with pytest.raises(CodeFault) as caught:
        checked_reply(b'{"ok": 1' + b"0" * 400 + b"}", "ppl")
    assert (caught.value.kind, caught.value.message) == (
        "wrong_value",
        "it returned an int too large for a float",
    )
    with pytest.raises(CodeFault) as caught:
        checked_reply(b'{"fault": "wrong_value", "value": "float nan"}', "ppl")
    assert (caught.value.kind, caught.value.message) == ("wrong_value", "it returned float nan")


def test_a_reported_exception_keeps_the_last_20_lines_of_its_traceback_escaped():
    trace = "\n".join(f"line {k}" for k in range(30)) + "\n\x1b[2Jcleared\u202eright-to-left"
    line = json.dumps({"fault": "exception", "trace": trace}).encode()
    with pytest.raises(CodeFault) as caught:
        checked_reply(line, "generate")
    fault = caught.value
    assert (fault.kind, fault.message) == ("exception", "it raised an exception (its traceback follows)")
    shown = fault.detail.split("\n")
    assert shown == [f"line {k}" for k in range(11, 30)] + ["\\x1b[2Jcleared\\u202eright-to-left"]


def test_a_missing_function_is_named_with_what_the_module_defines():
    line = json.dumps({"fault": "missing", "missing": ["get_ppl"], "held": ["helper", "\x1b"]}).encode()
    with pytest.raises(CodeFault) as caught:
        checked_reply(line, "ready")
    assert (caught.value.kind, caught.value.message) == (
        "missing",
        "team_code/generate.py defines no get_ppl; it defines: helper, \\x1b",
    )
    # a function that is not one of the three is no report the runner accepts
    forged = json.dumps({"fault": "missing", "missing": ["os.system"], "held": []}).encode()
    with pytest.raises(CodeFault) as caught:
        checked_reply(forged, "ready")
    assert (caught.value.kind, caught.value.message) == (
        "protocol",
        "a fault report that is not the protocol's",
    )


#: A "missing" report names each of the three functions at most once (three names), and the module's public
#: names up to 10,000 (the message shows the first 50).
HELD = [f"n{k:05d}" for k in range(10_001)]
EVERY_FUNCTION = ["setup_model_and_tokenizer", "generate_text", "get_ppl"]


@pytest.mark.parametrize(
    "missing, held, said",
    [
        (
            EVERY_FUNCTION,
            [],
            "team_code/generate.py defines no setup_model_and_tokenizer, generate_text, get_ppl; it defines: "
            "nothing public",
        ),
        (EVERY_FUNCTION + ["get_ppl"], [], None),  # a fourth name: one of them twice
        (
            ["get_ppl"],
            HELD[:10_000],
            "team_code/generate.py defines no get_ppl; it defines: " + ", ".join(HELD[:50]),
        ),
        (["get_ppl"], HELD, None),
    ],
    ids=["three functions", "four", "10,000 held", "10,001 held"],
)
def test_a_missing_report_one_name_over_its_cap_is_a_protocol_fault(missing, held, said):
    line = json.dumps({"fault": "missing", "missing": missing, "held": held}).encode()
    with pytest.raises(CodeFault) as caught:
        checked_reply(line, "ready")
    if said is None:
        assert (caught.value.kind, caught.value.message) == (
            "protocol",
            "a fault report that is not the protocol's",
        )
    else:
        assert (caught.value.kind, caught.value.message) == ("missing", said)


# --- what the upload holds, and its digest ------------------------------------------------------------------


def test_an_uploads_listing_is_in_name_order_whatever_order_the_file_system_gives(tmp_path, monkeypatch):
    upload = tmp_path / "upload"
    for name in (
        "notes.txt",
        "code.txt",
        "code/model.py",
        "code/a.py",
        "b/c/d.txt",
        "Zeta.md",
        "team_code/__init__.py",
    ):
        (upload / name).parent.mkdir(parents=True, exist_ok=True)
        (upload / name).write_text("", encoding="utf-8")
    # the file system gives every folder's entries in reverse name order
    scandir, listdir = os.scandir, os.listdir

    class Reversed:
        """``os.scandir``'s iterator, its entries in reverse name order."""

        def __init__(self, path="."):
            with scandir(path) as listing:
                self.entries = iter(sorted(listing, key=lambda entry: entry.name, reverse=True))

        def __iter__(self):
            return self

        def __next__(self):
            return next(self.entries)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def close(self):
            return None

    monkeypatch.setattr(os, "scandir", Reversed)
    monkeypatch.setattr(os, "listdir", lambda path=".": sorted(listdir(path), reverse=True))
    with pytest.raises(CodeFault) as caught:
        find_code(str(upload), str(tmp_path / "scratch"))
    # each folder's files and folders by name, a folder's files where its name comes (code/ before code.txt)
    assert (caught.value.kind, caught.value.message) == (
        "missing",
        "the upload holds no package team_code/ with __init__.py and generate.py (at its root or in one "
        "top-level folder); it holds: Zeta.md, b/c/d.txt, code/a.py, code/model.py, code.txt, notes.txt, "
        "team_code/__init__.py",
    )


def test_the_code_digest_changes_with_the_last_byte_of_a_large_file_and_with_a_name_alone(tmp_path):
    code = toy_team(tmp_path / "code")
    package = code / "team_code"
    (package / "helper.py").write_text("WORDS = 3\n", encoding="utf-8")
    weights = package / "weights.bin"
    size = (16 << 20) + 4096  # over 16 MiB: its size, its first and its last MiB are read
    with open(weights, "wb") as fh:
        fh.truncate(size)
    first = code_digest(str(code))
    with open(weights, "r+b") as fh:
        fh.seek(size - 1)
        fh.write(b"\x01")
    last_byte = code_digest(str(code))
    weights.rename(package / "weights.pt")
    large_renamed = code_digest(str(code))
    (package / "weights.pt").rename(weights)
    (package / "helper.py").rename(package / "helpers.py")
    small_renamed = code_digest(str(code))
    (package / "helpers.py").rename(package / "helper.py")
    assert len({first, last_byte, large_renamed, small_renamed}) == 4
    assert code_digest(str(code)) == last_byte  # the same names and bytes: the same digest


# --- the upload's zip --------------------------------------------------------------------------------------


def _patched(path, offset_in_central: int, fmt: str, value: int):
    """The zip at ``path`` with a field of its first central directory entry rewritten."""
    data = bytearray(path.read_bytes())
    central = data.index(b"PK\x01\x02")
    struct.pack_into(fmt, data, central + offset_in_central, value)
    path.write_bytes(bytes(data))
    return path


GOOD = {"team_code/__init__.py": "", "team_code/generate.py": "def generate_text():\n    return 'да'\n"}


def test_a_sound_zip_is_unpacked_as_it_was_made(tmp_path):
    unzip(str(make_zip(tmp_path / "up.zip", GOOD, zipfile.ZIP_DEFLATED)), str(tmp_path / "root"))
    found = {
        str(p.relative_to(tmp_path / "root")): p.read_text("utf-8")
        for p in (tmp_path / "root").rglob("*")
        if p.is_file()
    }
    assert found == GOOD


@pytest.mark.parametrize(
    "entries, message",
    [
        ({"../evil.py": "x"}, "the zip holds an unsafe name '../evil.py'"),
        ({"/etc/evil": "x"}, "the zip holds an unsafe name '/etc/evil'"),
        ({"c:/evil": "x"}, "the zip holds an unsafe name 'c:/evil'"),
        (
            {"team_code": "x", "team_code/generate.py": "y"},
            "the zip holds 'team_code' both as a file and as a folder",
        ),
    ],
)
def test_a_zip_with_an_unsafe_or_clashing_name_writes_nothing(tmp_path, entries, message):
    with pytest.raises(CodeFault) as caught:
        unzip(str(make_zip(tmp_path / "up.zip", {**GOOD, **entries})), str(tmp_path / "root"))
    assert (caught.value.kind, caught.value.message) == ("upload", message)
    assert not (tmp_path / "root").exists()  # every entry is checked before one is written


def test_an_encrypted_entry_or_an_unknown_method_is_refused_before_anything_is_written(tmp_path):
    encrypted = _patched(make_zip(tmp_path / "e.zip", GOOD), 8, "<H", 0x1)  # general purpose flags: encrypted
    with pytest.raises(CodeFault) as caught:
        unzip(str(encrypted), str(tmp_path / "e"))
    assert caught.value.message == "the zip's entry 'team_code/__init__.py' is encrypted"
    unknown = _patched(make_zip(tmp_path / "u.zip", GOOD), 10, "<H", 99)  # compression method 99 (AES)
    with pytest.raises(CodeFault) as caught:
        unzip(str(unknown), str(tmp_path / "u"))
    assert caught.value.message == (
        "the zip's entry 'team_code/__init__.py' uses compression method 99, which is not unpacked here "
        "(use deflate)"
    )
    assert not (tmp_path / "e").exists() and not (tmp_path / "u").exists()


def test_a_damaged_entry_is_the_uploads_fault_naming_it(tmp_path):
    path = make_zip(tmp_path / "up.zip", GOOD)
    data = path.read_bytes()
    path.write_bytes(data.replace("return 'да'".encode(), b"return 'XXXX'"))  # as long, another CRC
    with pytest.raises(CodeFault) as caught:
        unzip(str(path), str(tmp_path / "root"))
    assert caught.value.kind == "upload"
    assert caught.value.message == (
        "the zip's entry 'team_code/generate.py' is damaged (\"Bad CRC-32 for file 'team_code/generate.py'\")"
    )
    with pytest.raises(CodeFault) as caught:
        unzip(str(tmp_path / "up.zip") + ".missing", str(tmp_path / "root"))
    assert caught.value.message == "the zip cannot be unpacked (No such file or directory)"


# --- the turns kept for --resume ---------------------------------------------------------------------------

DIGESTS = {"code": "c1", "data": "d1"}
TURNS = {"d-1": 2, "d-2": 1}


def _kept(folder, lines: list[object]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(
        (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines
    )
    (folder / "generate.jsonl").write_text(text, "utf-8")


def test_kept_turns_are_read_back_as_untrusted(tmp_path):
    folder = tmp_path / ".run-state"
    _kept(
        folder,
        [
            {"digests": DIGESTS},
            {"dialog_id": "d-1", "turn": 0, "value": "Первый ответ"},
            {"dialog_id": "d-2", "turn": 0, "value": "Зонд", "probe": True},
            '{"dialog_id": "d-1", "turn": 1, "val',  # torn by a kill
            {"dialog_id": "d-9", "turn": 0, "value": "no such dialogue"},
            {"dialog_id": "d-1", "turn": 2, "value": "past the last turn"},
            {"dialog_id": "d-1", "turn": True, "value": "a bool is no turn"},
            {"dialog_id": "d-1", "turn": 1, "value": 5},  # not an answer
            '{"dialog_id": "d-1", "turn": 1, "value": "\\ud800"}',  # a lone surrogate: not an answer
            {"dialog_id": "d-1", "turn": 1, "value": "forged", "extra": 1},
            {"dialog_id": "d-1", "turn": 1, "value": "forged", "probe": "yes"},
        ],
    )
    state = State(str(folder), "generate", DIGESTS, True, TURNS, is_answer, quiet=True)
    try:
        assert state.done == {("d-1", 0, False): "Первый ответ", ("d-2", 0, True): "Зонд"}
    finally:
        state.close()
    # the file is written anew: the digests, then the turns kept
    rows = [json.loads(line) for line in (folder / "generate.jsonl").read_text("utf-8").splitlines()]
    assert rows == [
        {"digests": DIGESTS},
        {"dialog_id": "d-1", "turn": 0, "value": "Первый ответ"},
        {"dialog_id": "d-2", "turn": 0, "value": "Зонд", "probe": True},
    ]


def test_kept_turns_of_other_code_or_data_refuse_resume_and_are_discarded_without_it(tmp_path, capsys):
    folder = tmp_path / ".run-state"
    _kept(folder, [{"digests": {"code": "c0", "data": "d1"}}, {"dialog_id": "d-1", "turn": 0, "value": "a"}])
    with pytest.raises(UsageFault) as caught:
        State(str(folder), "generate", DIGESTS, True, TURNS, is_answer, quiet=True)
    assert "were computed with other team_code/ (the code);" in str(caught.value)
    assert "Run again without --resume to start over" in str(caught.value)
    _kept(folder, ["not json", {"dialog_id": "d-1", "turn": 0, "value": "a"}])
    with pytest.raises(UsageFault) as caught:
        State(str(folder), "generate", DIGESTS, True, TURNS, is_answer, quiet=True)
    assert "other team_code/ (the code) and the data (dialogues, targets or --only);" in str(caught.value)
    # without --resume the kept turns are counted, said to be discarded, and none is reused
    state = State(str(folder), "generate", DIGESTS, False, TURNS, is_answer, quiet=False)
    state.close(finished=True)
    assert state.done == {}
    assert "run: generate: discarding 1 kept turn(s) in " in capsys.readouterr().err
    assert not folder.exists()  # a finished phase leaves nothing behind


# --- the probe calls and the limits ------------------------------------------------------------------------


def test_probes_are_drawn_from_turns_with_enough_different_words_reproducibly():
    dialogues = [{"dialog_id": "d-1"}, {"dialog_id": "d-2"}]
    targets = {
        "d-1": ["кот спит на тёплом окне", "коротко"],
        "d-2": ["да да да да да", "мы идём домой по тихой улице"],
    }
    probes = choose_probes(dialogues, targets, count=100, min_words=5, seed=7)
    # "да да да да да" has five words but one word only: no other order of it exists
    assert sorted(probes) == [("d-1", 0), ("d-2", 1)]
    for (dialog_id, turn), (shuffled, _) in probes.items():
        words = targets[dialog_id][turn].split()
        assert sorted(shuffled.split()) == sorted(words) and shuffled.split() != words
    assert choose_probes(dialogues, targets, count=100, min_words=5, seed=7) == probes
    one = choose_probes(dialogues, targets, count=1, min_words=5, seed=7)
    assert len(one) == 1 and set(one) <= set(probes)
    assert choose_probes(dialogues, targets, count=100, min_words=7, seed=7) == {}


@pytest.mark.parametrize(
    "setup, turn, said",
    [
        (120.0, 30.0, None),
        (0.0, 30.0, "--setup-timeout 0: give a positive number of seconds"),
        (120.0, -1.0, "--turn-timeout -1: give a positive number of seconds"),
        (float("nan"), 30.0, "--setup-timeout nan: give a positive number of seconds"),
    ],
)
def test_each_time_limit_must_be_a_positive_number_of_seconds(setup, turn, said):
    assert check_timeouts(setup, turn) == said


def test_a_perplexity_the_ppl_phase_accepts_is_a_finite_float_of_at_least_1():
    accepted = [1.0, 2.5, 1e300]
    refused = [0.999, 0.0, -3.0, float("inf"), float("nan"), 2, True, "3.0", None]
    assert [is_perplexity(v) for v in accepted + refused] == [True] * 3 + [False] * 9


def test_the_runner_writes_no_file_of_a_name_outside_output_names(tmp_path):
    """``OUTPUT_NAMES`` is every name the runner writes into ``--output``: its files (``Outputs.put``, the one
    writer), the kept turns' folder and the code's copy; any other name is the runner's own bug."""
    outputs = Outputs(str(tmp_path), ())
    files = [name for name in OUTPUT_NAMES if name not in (STATE_DIR, TEAM_CODE)]
    assert len(files) == 6
    for name in files:
        outputs.put(name, b"{}\n")
    with pytest.raises(ValueError, match="not one of the runner's outputs"):
        outputs.put("notes.txt", b"")
    assert outputs.finish(keep_state=False) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)


# --- the scoring step repeats the prediction step's fault ------------------------------------------------


@pytest.mark.parametrize(
    "record, said",
    [
        (
            {
                "kind": "exception",
                "phase": "generate",
                "function": "generate_text",
                "dialog_id": "d-1",
                "turn": 1,
            },
            "exception; phase generate, function generate_text, dialog_id 'd-1', turn 1",
        ),
        (
            {
                "kind": "missing",
                "phase": "generate",
                "function": "import team_code.generate",
                "dialog_id": None,
                "turn": None,
            },
            "missing; phase generate, function import team_code.generate",
        ),  # fmt: skip
        ({"kind": "upload", "phase": None, "function": None, "dialog_id": None, "turn": None}, "upload"),
        # not a record the runner writes: each is ignored
        ({"kind": "hacked", "phase": None, "function": None, "dialog_id": None, "turn": None}, None),
        ({"kind": "died", "phase": "train", "function": None, "dialog_id": None, "turn": None}, None),
        ({"kind": "died", "phase": "ppl", "function": "os.system", "dialog_id": None, "turn": None}, None),
        ({"kind": "died", "phase": "ppl", "function": "get_ppl", "dialog_id": "d-9", "turn": 0}, None),
        ({"kind": "died", "phase": "ppl", "function": "get_ppl", "dialog_id": "d-1", "turn": 2}, None),
        ({"kind": "died", "phase": "ppl", "function": "get_ppl", "dialog_id": "d-1", "turn": True}, None),
        ({"kind": "died", "phase": "ppl", "function": "get_ppl", "dialog_id": None, "turn": 0}, None),
        (
            {"kind": "died", "phase": "ppl", "function": None, "dialog_id": None, "turn": None, "note": "x"},
            None,
        ),
        (["died"], None),
    ],
)
def test_the_scoring_step_repeats_only_a_fault_record_the_runner_writes(record, said):
    assert code_step._fault_text(record, TURNS) == said


def test_an_entry_holding_only_team_code_is_told_to_run_it_first(tmp_path, capsys):
    """A code upload that was not run (contract section 10) has neither file: its entry is invalid, and the
    error gives the command that runs it into the entry itself."""
    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "realistic", subs / "realistic")
    code = subs / "team-code" / "team_code"
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("", encoding="utf-8")
    (code / "generate.py").write_text("def get_ppl(*args):\n    return 2.0\n", encoding="utf-8")
    nested = subs / "team-nested" / "upload" / "team_code"  # in one top-level folder, as a zip unpacks
    shutil.copytree(code, nested)
    out = tmp_path / "out"
    assert leaderboard_into(PUBLIC, subs, out) == 0
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))}
    assert rows["realistic"]["status"] == "ok"
    for name in ("team-code", "team-nested"):
        entry = subs / name
        generate = f"python -m scorer run --data PUBLIC --code {entry} --output runs/{name} --phase generate"
        ppl = f"python -m scorer run --data {PUBLIC} --code {entry} --output runs/{name} --phase ppl"
        assert rows[name]["status"] == "invalid" and rows[name]["rank"] == ""
        assert rows[name]["errors"] == (
            f"{name}: the folder holds team_code/, a code upload that was not run, and no "
            "submission.jsonl or ppl_output.json: run it first, its answers on data without the references "
            f"(PUBLIC: a folder holding only dialogues.jsonl and its media) with `{generate}`, then its "
            f"perplexities with `{ppl}` (a folder of the run's own), then score that folder (for a "
            "leaderboard: --submissions runs)"
        )
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert [e["errors"][0]["code"] for e in board["submissions"] if e["submission"] == "team-code"] == [
        "code_not_run"
    ]
    # validate and score say the same of the folder
    capsys.readouterr()
    assert validate_cli(subs / "team-code") == 1
    said = capsys.readouterr().err
    assert f"then its perplexities with `python -m scorer run --data {PUBLIC} --code" in said


def test_the_output_folder_is_emptied_however_deep_the_code_nested_it(tmp_path):
    """Contract section 10: nothing the code wrote in OUTPUT survives a surprise, a page included. Folders
    nested 200 deep, a page and scores.json at several depths and a link out: all removed, the link's
    target kept, and no more than MAX_EMPTY_DEPTH folders held open at a time."""
    from scorer.code_step import MAX_EMPTY_DEPTH, _empty

    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept", encoding="utf-8")
    folder = out
    for depth in range(200):
        folder = folder / f"d{depth}"
        folder.mkdir(parents=True)
        if depth % 50 == 0:
            (folder / "scores.json").write_text("{}", encoding="utf-8")
            (folder / "detailed_results.html").write_text("<p>x</p>", encoding="utf-8")
    (folder / "link").symlink_to(outside)
    (out / "scores.json").write_text("{}", encoding="utf-8")
    assert 200 > 3 * MAX_EMPTY_DEPTH
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert _empty(fd) == []
    finally:
        os.close(fd)
    assert list(out.iterdir()) == []
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "kept"
