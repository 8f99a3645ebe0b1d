"""Contract section 5, the hidden metric per turn from its perplexity: ``inverse`` (the default) is 1 / p,
``log`` maps p to 1 - ln p / ln p_max clamped to [0, 1] (p_max 1000 unless set), and other methods plug in
by name."""

import math

import pytest

from scorer.metric.hidden_metric import METHODS, HiddenMetricMethod, hidden_metric, register


def test_inverse_is_reciprocal():
    assert hidden_metric(1) == 1.0
    assert hidden_metric(4.0) == 0.25


def test_log_maps_and_clamps():
    assert hidden_metric(1.0, "log", p_max=1000.0) == 1.0
    assert hidden_metric(1000.0, "log", p_max=1000.0) == 0.0
    assert hidden_metric(5000.0, "log", p_max=1000.0) == 0.0
    assert hidden_metric(math.sqrt(1000.0), "log", p_max=1000.0) == pytest.approx(0.5, abs=1e-15)
    assert hidden_metric(10.0, "log", p_max=100.0) == pytest.approx(0.5, abs=1e-15)


def test_log_default_p_max_is_1000():
    assert hidden_metric(10.0, "log") == pytest.approx(1 - 1 / 3, abs=1e-15)


def test_methods_plug_in_by_name():
    register(HiddenMetricMethod("half", {}, lambda p: 0.5))
    try:
        assert hidden_metric(7.0, "half") == 0.5
    finally:
        del METHODS["half"]
