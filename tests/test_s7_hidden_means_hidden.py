"""Contract section 7, "hidden means hidden": a private ``[hidden_metric]`` (a salt in the organizer's
configuration) shows as ``hm:private-<12 hex digits>`` in every signature, never its settings or its salt;
participants see no per-turn hidden metric, the organizer keeps it."""

import csv
import io
import math

from helpers import (
    EXAMPLES,
    SALT,
    SALTED,
    codalab_input,
    private_digest,
    run_cli,
    score_cli,
    scores_of,
)


def test_codalab_takes_the_private_config_from_ref(tmp_path):
    root = codalab_input(tmp_path)
    (root / "ref" / "config.toml").write_text(
        '[hidden_metric]\nmethod = "log"\np_max = 100.0\n' + SALTED, encoding="utf-8"
    )
    assert run_cli("codalab", root, tmp_path / "output", "--quiet") == 0
    s = scores_of(tmp_path / "output")
    assert f"|hm:{private_digest('log', 100.0)}|" in s["signature"]
    assert s["integral"] != 0.3769621616774081


def test_codalab_keeps_private_hidden_metric_settings_hidden(tmp_path, capsys):
    root = codalab_input(tmp_path)
    (root / "ref" / "config.toml").write_text(
        '[hidden_metric]\nmethod = "log"\np_max = 137.5\n' + SALTED + "[participants]\nturn_details = true\n",
        encoding="utf-8",
    )
    assert run_cli("codalab", root, tmp_path / "a") == 0
    shown = capsys.readouterr()
    assert run_cli("codalab", root, tmp_path / "b", "--quiet") == 0
    texts = [shown.out, shown.err] + [
        (tmp_path / "a" / f).read_text(encoding="utf-8")
        for f in ("scores.json", "scores.txt", "detailed_results.html", "details.csv")
    ]
    for text in texts:
        assert "137.5" not in text and "p_max" not in text and "hm:log" not in text and SALT not in text
    digest = private_digest("log", 137.5)
    # the rule worked by hand once: HMAC-SHA-256 keyed with the salt of '{"method":"log","p_max":137.5}'
    assert digest == "private-bb46214f2188"
    assert scores_of(tmp_path / "a")["signature"] == scores_of(tmp_path / "b")["signature"]
    assert f"|hm:{digest}|" in scores_of(tmp_path / "a")["signature"] and f"hm:{digest}" in shown.out
    # details.csv keeps its header; its hidden_metric column is empty; the page has no per-turn histogram of
    # it
    rows = list(csv.DictReader(io.StringIO(texts[5])))
    assert len(rows) == 66 and {r["hidden_metric"] for r in rows} == {""} and rows[0]["ppl"] == "6.09"
    assert "Hidden metric per turn" not in texts[4] and "hidden metric 0." in texts[4]
    # per-type and overall means stay
    assert 0 < scores_of(tmp_path / "a")["by_type"]["Text2Text"]["hidden_metric"] < 1
    # other settings give another digest; the built-in default keeps its readable field, salt or not
    (root / "ref" / "config.toml").write_text(
        '[hidden_metric]\nmethod = "log"\np_max = 138.0\n' + SALTED, encoding="utf-8"
    )
    assert run_cli("codalab", root, tmp_path / "c", "--quiet") == 0
    assert f"|hm:{private_digest('log', 138.0)}|" in scores_of(tmp_path / "c")["signature"]
    assert f"|hm:{digest}|" not in scores_of(tmp_path / "c")["signature"]
    (root / "ref" / "config.toml").write_text(
        '[hidden_metric]\nmethod = "inverse"\n' + SALTED + "[participants]\nturn_details = true\n",
        encoding="utf-8",
    )
    assert run_cli("codalab", root, tmp_path / "d", "--quiet") == 0
    assert "|hm:inverse|" in scores_of(tmp_path / "d")["signature"]
    assert (tmp_path / "d" / "details.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[4] != ""


def test_score_for_the_organizer_keeps_per_turn_values_with_private_settings(tmp_path):
    (tmp_path / "c.toml").write_text(
        '[hidden_metric]\nmethod = "log"\np_max = 137.5\n' + SALTED, encoding="utf-8"
    )
    score_cli(EXAMPLES / "realistic", tmp_path / "a", "--config", tmp_path / "c.toml")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "a" / "details.csv").read_text(encoding="utf-8"))))
    assert float(rows[0]["hidden_metric"]) == 1 - math.log(6.09) / math.log(137.5)
    assert f"|hm:{private_digest('log', 137.5)}|" in scores_of(tmp_path / "a")["signature"]


def test_the_salt_is_never_shown(tmp_path, capsys):
    """contract section 7: the salt keys the signature and appears in no output of a run, nor does a config
    error about a salt too short quote it."""
    (tmp_path / "c.toml").write_text(
        '[hidden_metric]\nmethod = "log"\np_max = 137.5\n' + SALTED, encoding="utf-8"
    )
    assert score_cli(EXAMPLES / "realistic", tmp_path / "a", "--config", tmp_path / "c.toml", "--report") == 0
    shown = capsys.readouterr()
    assert f"|hm:{private_digest('log', 137.5)}|" in scores_of(tmp_path / "a")["signature"]
    texts = [shown.out, shown.err] + [p.read_text(encoding="utf-8") for p in (tmp_path / "a").iterdir()]
    assert len(texts) >= 6 and all(SALT not in text for text in texts)
    short = SALT[:15]
    (tmp_path / "c.toml").write_text(f'[hidden_metric]\nmethod = "log"\nsalt = "{short}"\n', encoding="utf-8")
    assert score_cli(EXAMPLES / "realistic", tmp_path / "b", "--config", tmp_path / "c.toml") == 2
    err = capsys.readouterr().err
    assert "hidden_metric.salt" in err and "at least 16 characters" in err and short not in err
