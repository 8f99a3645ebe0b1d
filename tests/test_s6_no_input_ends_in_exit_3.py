"""Contract section 6, "No input ends a run with exit 3": one crafted word, cache file or organizer value
never ends a run with exit 3.

One test per class of docs/security.md's "Fault isolation" section.
"""

import json
import marshal
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, PUBLIC, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer import cli
from scorer.inputs.human_ratings import HumanRatingsError, finite_mean, read_human
from scorer.metric import morphology
from scorer.metric.matcher import Matcher
from scorer.metric.token_cache import cache_path, table_path
from scorer.scoring.aggregate import TurnScore, aggregate

VALID_SUB = (EXAMPLES / "realistic" / "submission.jsonl").read_text(encoding="utf-8")
VALID_PPL = (EXAMPLES / "realistic" / "ppl_output.json").read_bytes()
ROWS = [json.loads(line) for line in VALID_SUB.splitlines()]


def upload(root: Path, first_answer: str | None = None, rows=None) -> Path:
    """The realistic example with the first answer replaced."""
    rows = json.loads(json.dumps(rows or ROWS))
    if first_answer is not None:
        rows[0]["answers"][0] = first_answer
    root.mkdir(parents=True, exist_ok=True)
    (root / "submission.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    (root / "ppl_output.json").write_bytes(VALID_PPL)
    return root


def score(tmp_path: Path, submission: Path, *extra: str, out: str = "out") -> tuple[int, dict | None]:
    output = tmp_path / out
    code = cli.main(
        [
            "score",
            "--data",
            str(PUBLIC),
            "--submission",
            str(submission),
            "--output",
            str(output),
            "--quiet",
            "--jobs",
            "1",
            "--no-synonyms",
            *extra,
        ]
    )
    scores = output / "scores.json"
    return code, json.loads(scores.read_text(encoding="utf-8")) if scores.exists() else None


def process(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scorer", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


# --- a turn's text can never raise ------------------------------------------------------------------


@pytest.mark.parametrize(
    "word, why",
    [("не" * 600 + "кот", "longer than 100 characters"), ("\U00017000", "pymorphy3 failed: ValueError")],
)
def test_a_word_the_morphology_cannot_analyse_is_its_own_lemma_with_a_warning(tmp_path, word, why):
    assert morphology.analyse(word) == (frozenset([word]), morphology.analyse(word)[1])
    assert why in morphology.analyse(word)[1]
    code, scores = score(tmp_path, upload(tmp_path / "s", f"Кот {word} спит."))
    assert code == 0 and scores["status"] == "ok"
    warning = next(w for w in scores["warnings"] if w["code"] == "unanalysed_word")
    assert warning["dialog_id"] == "d-0001" and warning["turn"] == 0 and warning["file"] == "submission.jsonl"
    assert why in warning["message"] and len(warning["message"]) < 250
    # a warm run (the token cache written by the first) still says so: such words are never cached
    code, again = score(tmp_path, upload(tmp_path / "s", f"Кот {word} спит."), out="out2")
    assert again["warnings"] == scores["warnings"] and again["integral"] == scores["integral"]


def test_deep_recursion_in_the_analyser_is_contained(monkeypatch):
    def recurse(token):
        return recurse(token)

    morphology.analyse.cache_clear()
    monkeypatch.setattr(morphology.analyzer(), "parse", recurse)
    try:
        assert morphology.analyse("кошки") == (frozenset(["кошки"]), "pymorphy3 recursed too deep")
        assert sys.getrecursionlimit() < morphology.ANALYSIS_RECURSION_LIMIT  # restored
    finally:
        morphology.analyse.cache_clear()


def test_a_long_prefix_run_scores_in_linear_time():
    """pymorphy3's time on a prefix run grows with its square; the cap keeps a token's cost bounded."""
    start = time.process_time()
    for k in range(20):
        morphology.analyse("не" * 10_000 + f"кот{k}")
    assert time.process_time() - start < 1.0  # each is refused by its length, not analysed (2 s each)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.one_of(
            st.text(min_size=1, max_size=40),
            st.builds(lambda k, w: "не" * k + w, st.integers(1, 400), st.sampled_from(["кот", "ь", ""])),
            st.builds(
                lambda k, m: "а" + m * k,
                st.integers(1, 60),
                st.sampled_from(["\u0301", "\u0316\u0301", "\u0344", "\U0001d165"]),
            ),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_score_never_exits_3_on_random_unicode_answers(tmp_path_factory, words):
    root = tmp_path_factory.mktemp("u")
    code, scores = score(root, upload(root / "s", " ".join(words)))
    assert code in (0, 1), code
    assert scores["status"] == ("ok" if code == 0 else "invalid")
    if code == 1:
        assert all(e["code"] == "combining_run" for e in scores["errors"])


# --- normalisation is bounded ----------------------------------------------------------------------


def test_a_long_run_of_combining_marks_is_an_invalid_answer_with_its_place(tmp_path):
    marks = "\u0301\u0316" * 10_000
    code, scores = score(tmp_path, upload(tmp_path / "s", "а" + marks[:19_999]))
    assert code == 1 and scores["status"] == "invalid"
    [error] = scores["errors"]
    assert (error["code"], error["line"], error["dialog_id"], error["turn"]) == (
        "combining_run",
        1,
        "d-0001",
        0,
    )
    assert "19,999 combining marks in a row from character 2; at most 30" in error["message"]
    # 30 in a row is within the bound, and is scored
    assert score(tmp_path, upload(tmp_path / "t", "а" + marks[:30]), out="o2")[0] == 0


def test_many_answers_of_combining_marks_are_rejected_in_bounded_cpu(tmp_path):
    rows = json.loads(json.dumps(ROWS))
    for row in rows:
        row["answers"] = ["а" + ("\u0301\u0316" * 10_000)[:19_999] for _ in row["answers"]]
    start = time.process_time()
    code, scores = score(tmp_path, upload(tmp_path / "s", rows=rows))
    assert code == 1 and scores["errors"][0]["code"] == "combining_run"
    assert time.process_time() - start < 5.0  # NFKC over them would take about 0.6 s each, 35 s in all


# --- the cache is untrusted data ------------------------------------------------------------------


def _warm(tmp_path: Path) -> tuple[Path, dict]:
    submission = upload(tmp_path / "s")
    code, scores = score(tmp_path, submission, out="first")
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
    assert score(tmp_path, submission, out="tampered")[1]["integral"] == first["integral"]
    data = _token_cache().read_bytes()
    _token_cache().write_bytes(data[:-40] + marshal.dumps(wrong)[:40])  # edited in place: the seal breaks
    assert score(tmp_path, submission, out="edited")[1]["integral"] == first["integral"]


def test_hostile_cache_files_cost_a_rebuild_never_a_crash(tmp_path):
    submission, first = _warm(tmp_path)
    path = _token_cache()
    path.unlink()
    os.mkfifo(path)  # a FIFO: reading it would block for ever
    assert score(tmp_path, submission, out="fifo")[1]["integral"] == first["integral"]
    path.unlink()
    path.write_bytes(b"\xdb" + (2**31).to_bytes(4, "little") + b"\0" * 65)  # a list declaring 2**31 items
    assert score(tmp_path, submission, out="declared")[1]["integral"] == first["integral"]
    path.unlink()
    target = tmp_path / "elsewhere"
    target.write_bytes(b"not a cache")
    os.symlink(target, path)
    # so that the run computes keys and saves them anew (the compiled engine's table is there only where
    # the compiled engine ran: the pure one keeps none)
    table_path(path, ("exact", "lemma")).unlink(missing_ok=True)
    assert score(tmp_path, submission, out="link")[1]["integral"] == first["integral"]
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


@pytest.mark.slow
def test_a_cache_path_too_long_for_the_system_only_costs_speed(tmp_path):
    env = {**os.environ, "SCORER_CACHE_DIR": str(tmp_path / ("c" * 5000))}
    done = process(
        "score",
        "--data",
        PUBLIC,
        "--submission",
        EXAMPLES / "realistic",
        "--output",
        tmp_path / "o",
        "--no-synonyms",
        "--quiet",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "o" / "scores.json").read_text())["status"] == "ok"


# --- organizer input: exit 2 naming the place, never exit 3 ----------------------------------------


def _human(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "human.csv"
    path.write_bytes(content)
    return path


BOARD = {"team": {"d-0001": 2}, "team.zip": {"d-0001": 2}, "other.zip": {"d-0001": 2}}


@pytest.mark.parametrize(
    "content, line, words",
    [
        ("submission,dialog_id,turn,score\nteam,d-0001,²,1\n".encode(), 2, "turn '²' is not a turn"),
        (b"submission,dialog_id,turn,score\nteam,d-0001," + b"1" * 5000 + b",1\n", 2, "is not a turn"),
        (b'submission,score\nteam,1\n"other,' + b"x" * 200_000 + b"\n", 3, "stray double quote"),
        (b"submission,score\nteam,1\n\xcf\xf0\xe8,2\n", 3, "not valid UTF-8"),
    ],
)
def test_bad_human_ratings_are_located_errors(tmp_path, content, line, words):
    with pytest.raises(HumanRatingsError) as info:
        read_human(_human(tmp_path, content), BOARD)
    [issue] = info.value.issues
    assert issue.line == line and words in issue.message and len(issue.message) < 300


def test_an_entry_name_wins_over_a_zip_without_its_suffix(tmp_path):
    ratings = read_human(_human(tmp_path, b"submission,score\nteam,1\nteam.zip,2\nother,3\n"), BOARD)
    assert ratings.scores == {("team",): 1.0, ("team.zip",): 2.0, ("other.zip",): 3.0}


def test_means_of_finite_ratings_stay_finite(tmp_path):
    ratings = read_human(_human(tmp_path, b"submission,score\nteam,1e308\nteam,1e308\n"), BOARD)
    assert ratings.scores == {("team",): 1e308}
    assert finite_mean([0.1, 0.2, 0.3]) == (0.1 + 0.2 + 0.3) / 3  # the same bits as before where finite


@pytest.mark.parametrize("method", ['["log"]', '{ name = "log" }', '"x"'])
def test_a_hidden_metric_method_of_the_wrong_type_is_a_config_error(tmp_path, method, capsys):
    config = tmp_path / "c.toml"
    config.write_text(f"[hidden_metric]\nmethod = {method}\n")
    code, _ = score(tmp_path, EXAMPLES / "realistic", "--config", str(config))
    assert code == 2 and "hidden_metric.method: unknown method" in capsys.readouterr().err


def test_a_huge_unknown_config_key_is_shortened(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text(f"[meteor]\n{'k' * 100_000} = 1\n")
    code, scores = score(tmp_path, EXAMPLES / "realistic", "--config", str(config))
    err = capsys.readouterr().err
    assert code == 2 and "(100,000 characters)" in err and len(err) < 1000


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--seed", "-1", "seed = -1"),
        ("--resamples", str(10**8), "resamples = 100000000"),
        ("--resamples", "39", "resamples = 39"),
    ],
)
def test_bootstrap_settings_out_of_range_are_usage_errors(tmp_path, option, value, words, capsys):
    code = cli.main(
        [
            "leaderboard",
            "--data",
            str(PUBLIC),
            "--submissions",
            str(EXAMPLES),
            "--output",
            str(tmp_path / "b"),
            "--no-synonyms",
            option,
            value,
        ]
    )
    assert code == 2 and words in capsys.readouterr().err


@pytest.mark.slow
def test_validate_json_into_a_closed_pipe_keeps_its_exit_code(tmp_path):
    command = (
        f"{sys.executable} -m scorer validate --data {PUBLIC} --submission {EXAMPLES / 'realistic'} "
        "--json | head -c0; echo ${PIPESTATUS[0]}"
    )
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "0" and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


@pytest.mark.slow
def test_validate_json_prints_one_document_on_exit_2(tmp_path):
    done = process(
        "validate", "--data", tmp_path / "missing", "--submission", EXAMPLES / "realistic", "--json"
    )
    assert done.returncode == 2
    payload = json.loads(done.stdout)
    assert payload["status"] == "error" and "missing" in payload["errors"][0]["message"]


# --- silent wrong results ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["directory", "dangling link", "unreadable"])
def test_a_present_but_unreadable_private_config_is_exit_2(tmp_path, kind, capsys, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("dialogues.jsonl", "answers.jsonl"):
        (data / name).write_bytes((PUBLIC / name).read_bytes())
    config = data / "config.toml"
    if kind == "directory":
        config.mkdir()
    elif kind == "dangling link":
        os.symlink(tmp_path / "nowhere.toml", config)
    else:  # no permission (simulated: the tests may run as root, who reads every file)
        config.write_text("[hidden_metric]\nmethod = 'log'\n")
        real_open = open

        def refuse(path, *args, **kwargs):
            if Path(path) == config:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr("builtins.open", refuse)
    code = cli.main(
        [
            "score",
            "--data",
            str(data),
            "--submission",
            str(EXAMPLES / "realistic"),
            "--output",
            str(tmp_path / "o"),
            "--no-synonyms",
            "--quiet",
        ]
    )
    assert code == 2 and "config" in capsys.readouterr().err
    assert json.loads((tmp_path / "o" / "scores.json").read_text())["status"] == "error"


def test_tiny_equal_weights_give_the_equal_weight_result():
    turns = [
        TurnScore(f"d{k}", t, 0, 1.0 if k % 2 else 0.5, 0, 0.25, 4.0)
        for k, t in enumerate(["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"] * 2)
    ]
    tiny = aggregate(
        turns, dict.fromkeys(["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"], 5e-324)
    )
    equal = aggregate(
        turns, dict.fromkeys(["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"], 1.0)
    )
    assert tiny.integral == equal.integral == (0.75 + 0.25) / 2 and tiny.meteor == equal.meteor == 0.75
    default = aggregate(
        turns, {"Text2Text": 0.1, "Image2Text": 0.2, "Audio2Text": 0.3, "Image-Audio2Text": 0.4}
    )
    weights = [0.1, 0.2, 0.3, 0.4]
    plain = math.fsum(w * s for w, s in zip(weights, [0.375, 0.625, 0.375, 0.625])) / math.fsum(weights)
    assert default.integral == plain == 0.525  # the power-of-two scaling changes no bit


# --- one entry never stops a leaderboard -------------------------------------------------------------


def test_a_failing_entry_is_listed_as_error_and_the_others_are_ranked(tmp_path, monkeypatch, capsys):
    from scorer import api

    folder = tmp_path / "subs"
    for name in ("alpha", "beta", "gamma"):
        upload(folder / name)
    real = api.score_validated

    def fails_for_beta(reference, valid, config, rwn, jobs, progress, matcher, name):
        if name == "beta":
            raise RecursionError("maximum recursion depth exceeded")
        return real(reference, valid, config, rwn, jobs, progress, matcher, name)

    monkeypatch.setattr(api, "score_validated", fails_for_beta)
    code = cli.main(
        [
            "leaderboard",
            "--data",
            str(PUBLIC),
            "--submissions",
            str(folder),
            "--output",
            str(tmp_path / "b"),
            "--no-synonyms",
            "--no-report",
            "--resamples",
            "40",
        ]
    )
    assert code == 0
    rows = json.loads((tmp_path / "b" / "leaderboard.json").read_text())["submissions"]
    assert [(r["submission"], r["status"], r["rank"]) for r in rows] == [
        ("alpha", "ok", 1),
        ("gamma", "ok", 1),
        ("beta", "error", None),
    ]
    assert (
        rows[2]["errors"][0]["message"] == "scoring failed: RecursionError: maximum recursion depth exceeded"
    )
    assert "beta" in capsys.readouterr().out


# --- outputs survive SIGKILL --------------------------------------------------------------------------


def _consistent(output: Path) -> str:
    """'none' (no scores.json), or the status of a scores.json that agrees with every file beside it."""
    scores = output / "scores.json"
    if not scores.exists():
        return "none"
    payload = json.loads(scores.read_text(encoding="utf-8"))
    present = {p.name for p in output.iterdir() if not p.name.startswith(".")}
    if payload["status"] == "ok":
        details = (output / "details.csv").read_text(encoding="utf-8").splitlines()
        assert len(details) == 1 + payload["counts"]["turns"], "details.csv from another run"
        integral = float((output / "scores.txt").read_text().splitlines()[0].split(": ")[1])
        assert integral == payload["integral"], "scores.txt from another run"
    else:
        assert present == {"scores.json"}, f"stale outputs beside an {payload['status']} verdict: {present}"
    return payload["status"]


@pytest.mark.slow
def test_killed_at_any_moment_the_commit_marker_agrees_with_its_files(tmp_path):
    output = tmp_path / "o"
    good, bad = EXAMPLES / "realistic", upload(tmp_path / "bad", "а" + "\u0301" * 40)
    seen = set()
    for k in range(12):  # killed from 0.3 s to 1.95 s after the start, across the run and its writes
        submission = good if k % 2 else bad
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scorer",
                "score",
                "--data",
                str(PUBLIC),
                "--submission",
                str(submission),
                "--output",
                str(output),
                "--no-synonyms",
                "--quiet",
                "--report",
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.3 + 0.15 * k)
        child.send_signal(signal.SIGKILL)
        child.wait()
        seen.add(_consistent(output))
    done = process(
        "score", "--data", PUBLIC, "--submission", good, "--output", output, "--no-synonyms", "--quiet"
    )
    assert done.returncode == 0 and _consistent(output) == "ok"
    assert not [p.name for p in output.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".write")]
    assert len(seen) >= 2  # the kills fell at different moments


# --- rejection time bounded by the error cap ----------------------------------------------------------


def test_four_million_lines_that_are_not_json_are_rejected_fast(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "submission.jsonl").write_bytes(b"x\n" * 4_000_000)
    (folder / "ppl_output.json").write_bytes(VALID_PPL)
    start = time.process_time()
    code, scores = score(tmp_path, folder)
    assert code == 1 and len(scores["errors"]) == 100
    assert scores["unchecked"] == [
        {"file": "submission.jsonl", "from_line": 101, "lines": 3_999_900},
        {"file": "ppl_output.json", "from_line": 1, "lines": len(VALID_PPL.splitlines())},
    ]
    assert time.process_time() - start < 5.0  # CPU time: 25 s when every line was parsed


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
    done = process(
        "score",
        "--data",
        PUBLIC,
        "--submission",
        EXAMPLES / "realistic",
        "--output",
        tmp_path / "o",
        "--no-synonyms",
        "--quiet",
        "--report",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert list(home.rglob("*")) == []
    assert (tmp_path / "o" / "report.html").stat().st_size > 10_000
