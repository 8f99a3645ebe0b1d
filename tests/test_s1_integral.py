"""The integral score of contract section 1, on splits computed by hand."""

import math
import random

import pytest
from helpers import make_split, make_submission

from scorer import load_config, score_submission
from scorer.errors import ConfigError
from scorer.scoring.aggregate import TurnScore, aggregate


def test_small_split_by_hand(tmp_path, rwn):
    data = make_split(
        tmp_path,
        [
            ("d-1", "Text2Text", [["Кот."], ["Рыжий кот."]]),
            ("d-2", "Text2Text", [["Да."]]),
            ("d-3", "Audio2Text", [["Шум дождя.", "Слышно дождь."]]),
        ],
    )
    sub = make_submission(
        tmp_path,
        {"d-1": ["Кот.", "Кот."], "d-2": [""], "d-3": ["Слышно шум дождя"]},
        {"d-1": [1, 4], "d-2": [2], "d-3": [1]},
    )
    result = score_submission(data, sub, thesaurus=rwn)
    # d-1: turn 0 exact 1.0; turn 1 m=1, P=1, R=1/2 -> 0.5 / (0.9 + 0.05) = 10/19. HM 1 and 1/4.
    s1 = ((1 + 10 / 19) / 2 + (1 + 0.25) / 2) / 2
    # d-2: empty answer -> METEOR 0; HM 1/2.
    s2 = (0 + 0.5) / 2
    # d-3: both variants m=2 (exact слышно + lemma дождя~дождь or exact шум дождя), P=2/3, R=1 -> 20/21.
    s3 = (20 / 21 + 1) / 2
    t2t, a2t = (s1 + s2) / 2, s3
    assert result.summary.integral == pytest.approx((0.1 * t2t + 0.3 * a2t) / 0.4, abs=1e-12)
    assert result.summary.by_type["Text2Text"].score == pytest.approx(t2t, abs=1e-12)
    assert list(result.summary.by_type) == ["Text2Text", "Audio2Text"]
    assert [t.meteor for t in result.turns] == pytest.approx([1.0, 10 / 19, 0.0, 20 / 21], abs=1e-12)
    assert [t.best_reference for t in result.turns] == [0, 0, 0, 0]
    assert result.summary.meteor == pytest.approx(
        (0.1 * ((1 + 10 / 19) / 2 + 0) / 2 + 0.3 * 20 / 21) / 0.4, abs=1e-12
    )


def _turns(rng, n_dialogs):
    types = ["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"]
    out = []
    for d in range(n_dialogs):
        t = types[d % 4]
        for k in range(rng.randint(1, 5)):
            out.append(TurnScore(f"d{d}", t, k, rng.random(), 0, rng.random(), 1.0))
    return out


def test_closed_form_with_all_four_types():
    rng = random.Random(7)
    turns = _turns(rng, 23)
    weights = load_config().weights
    summary = aggregate(turns, weights)
    by_dialog = {}
    for t in turns:
        by_dialog.setdefault(t.dialog_id, []).append(t)
    n = {ty: sum(1 for ts in by_dialog.values() if ts[0].type == ty) for ty in weights}
    closed = sum(
        weights[ts[0].type]
        / n[ts[0].type]
        * (sum(t.meteor for t in ts) / len(ts) + sum(t.hidden_metric for t in ts) / len(ts))
        / 2
        for ts in by_dialog.values()
    )
    assert summary.integral == pytest.approx(closed, abs=1e-12)
    assert 0 <= summary.integral <= 1


def test_order_of_turns_does_not_change_a_bit():
    rng = random.Random(3)
    turns = _turns(rng, 40)
    weights = load_config().weights
    first = aggregate(turns, weights)
    rng.shuffle(turns)
    assert aggregate(turns, weights) == first


def test_weights_renormalise_over_types_present():
    turns = [
        TurnScore("a", "Image2Text", 0, 0.5, 0, 0.1, 10.0),
        TurnScore("b", "Audio2Text", 0, 1.0, 0, 1.0, 1.0),
    ]
    s = aggregate(turns, load_config().weights)
    assert s.integral == pytest.approx((0.2 * 0.3 + 0.3 * 1.0) / 0.5, abs=1e-15)
    assert s.by_type["Image2Text"].weight == 0.2


def test_zero_weight_sum_is_a_configuration_error():
    turns = [TurnScore("a", "Image2Text", 0, 0.5, 0, 0.1, 10.0)]
    with pytest.raises(ConfigError):
        aggregate(turns, {"Text2Text": 1.0, "Image2Text": 0.0, "Audio2Text": 1.0, "Image-Audio2Text": 1.0})
    assert math.isclose(aggregate(turns, {"Image2Text": 5.0}).integral, 0.3)
