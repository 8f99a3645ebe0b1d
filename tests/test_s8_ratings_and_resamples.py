"""Contract section 8, the organizer's inputs to the meta-evaluation: a bad human-ratings CSV is an error
located by its line (exit 2), an entry's name wins over a zip without its suffix, means of finite
ratings stay finite, and bootstrap settings out of range are usage errors."""

from pathlib import Path

import pytest
from conftest import EXAMPLES, PUBLIC, run_cli

from scorer.inputs.human_ratings import HumanRatingsError, finite_mean, read_human


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


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--seed", "-1", "seed = -1"),
        ("--resamples", str(10**8), "resamples = 100000000"),
        ("--resamples", "39", "resamples = 39"),
    ],
)
def test_bootstrap_settings_out_of_range_are_usage_errors(tmp_path, option, value, words, capsys):
    code = run_cli(
        "leaderboard",
        "--data",
        PUBLIC,
        "--submissions",
        EXAMPLES,
        "--output",
        tmp_path / "b",
        "--no-synonyms",
        option,
        value,
    )
    assert code == 2 and words in capsys.readouterr().err
