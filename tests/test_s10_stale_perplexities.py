"""Contract section 10: ``score`` and ``leaderboard`` read ``ppl_targets.json`` beside ``ppl_output.json``;
where a dialogue's digest is not that of its current targets (each turn's first reference variant), the run
is scored as usual and warns, in ``scores.json`` and in one stderr line naming ``run --phase ppl``."""

import hashlib
import hmac
import json
import shutil

import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_into, score_into

from scorer import api

SALT = "stale-perplexities-salt-0123"


def targets_of(data):
    """Each dialogue's targets: its turns' first reference variants, in the order of answers.jsonl."""
    rows = [json.loads(line) for line in (data / "answers.jsonl").read_text("utf-8").splitlines() if line]
    return {row["dialog_id"]: [variants[0] for variants in row["references"]] for row in rows}


def digest(targets, salt=None):
    """The contract's digest, computed here on its own: the canonical JSON of [t_0, ..., t_n]."""
    canonical = json.dumps(targets, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode()
    if salt is None:
        return hashlib.sha256(canonical).hexdigest()[:16]
    return hmac.new(salt.encode(), canonical, hashlib.sha256).hexdigest()[:16]


def run_folder(tmp_path, digests):
    folder = tmp_path / "run"
    shutil.copytree(EXAMPLES / "realistic", folder)
    (folder / "ppl_targets.json").write_text(json.dumps({"digests": digests}), encoding="utf-8")
    return folder


def test_current_digests_raise_nothing_and_change_no_figure(tmp_path, capsys):
    targets = targets_of(PUBLIC)
    folder = run_folder(tmp_path, {d: digest(t) for d, t in targets.items()})
    code, scores = score_into(tmp_path, folder, "--no-synonyms", out="o")
    assert code == 0 and not any(w.get("kind") == "stale_perplexities" for w in scores["warnings"])
    assert "run --phase ppl" not in capsys.readouterr().err
    plain = api.score_submission(PUBLIC, EXAMPLES / "realistic", synonyms=False)
    assert scores["integral"] == plain.summary.integral


def test_stale_digests_are_scored_as_usual_and_warned_about(tmp_path, capsys):
    targets = targets_of(PUBLIC)
    digests = {d: digest(t) for d, t in targets.items()}
    ids = list(targets)
    for d in ids[:12]:
        digests[d] = digest(["an answer corrected since"])
    code, scores = score_into(tmp_path, run_folder(tmp_path, digests), "--no-synonyms", out="o")
    assert code == 0 and scores["status"] == "ok"
    assert scores["warnings"][-1] == {"kind": "stale_perplexities", "count": 12, "dialogs": ids[:10]}
    err = [line for line in capsys.readouterr().err.splitlines() if "run --phase ppl" in line]
    assert len(err) == 1 and "of 12 dialogue(s)" in err[0] and ids[0] in err[0]


def test_a_salt_keys_the_digests(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "config.toml").write_text(f'[hidden_metric]\nsalt = "{SALT}"\n', encoding="utf-8")
    targets = targets_of(data)
    keyed = run_folder(tmp_path, {d: digest(t, SALT) for d, t in targets.items()})
    assert api.score_submission(data, keyed, synonyms=False).stale_perplexities == ()
    plain = {d: digest(t) for d, t in targets.items()}
    (keyed / "ppl_targets.json").write_text(json.dumps({"digests": plain}), encoding="utf-8")
    assert api.score_submission(data, keyed, synonyms=False).stale_perplexities == tuple(targets)


@pytest.mark.parametrize(
    "text",
    ['{"digests": {"d-0001": "xyz"}}', "[1]", '{"digests": {}, "more": 1}', "\xff", '{"digests": NaN}'],
)
def test_a_file_of_another_shape_is_not_used_and_said_so(tmp_path, text):
    folder = run_folder(tmp_path, {})
    (folder / "ppl_targets.json").write_bytes(text.encode("latin-1"))
    code, scores = score_into(tmp_path, folder, "--no-synonyms", out="o")
    assert code == 0 and [w["code"] for w in scores["warnings"] if "code" in w] == ["ppl_targets_unused"]


def test_the_leaderboard_says_which_entry_is_stale(tmp_path, capsys):
    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "realistic", subs / "fresh")
    run_folder(subs, {d: digest(["old"]) for d in targets_of(PUBLIC)}).rename(subs / "stale")
    assert leaderboard_into(PUBLIC, subs, tmp_path / "lb", "--no-synonyms") == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "run --phase ppl" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: stale: the perplexities of 40 dialogue(s)")
    stale = json.loads((tmp_path / "lb" / "submissions" / "stale" / "scores.json").read_text("utf-8"))
    assert stale["warnings"][-1]["count"] == 40
