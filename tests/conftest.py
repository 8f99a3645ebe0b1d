"""The suite's fixtures and hooks, and nothing else: what tests share otherwise is in ``helpers.py``.

Every test runs with ``RUWORDNET_PATH`` pointing at ``tests/data/rwn-mini``, a thesaurus in the RuWordNet XML
layout written for the tests (set here, before the first test: ``pytest_configure``). Tests about the real
RuWordNet ask for ``real_rwn_path``: the location given by ``RUWORDNET_PATH`` when the session started, else
the ``ruwordnet`` package's download; they are skipped with a reason when neither is there, and fail instead
when ``SCORER_REQUIRE_REAL_THESAURUS=1`` (CI sets it).

A test that starts a process (a subprocess, a fork of the worker pool) is marked ``slow`` in its own
module; in any other test, starting one raises and fails the test (the hooks around each phase of a test,
with ``helpers.no_process_started``), so the quick loop (``-m "not slow"``) runs in pytest's process alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import (
    GIVEN_RWN,
    ID_COUNTS_MODULES,
    MINI_RWN,
    REQUIRE_REAL,
    indexed,
    no_process_started,
    real_thesaurus,
    shared_setup,
)

from scorer.inputs.reference import KEPT
from scorer.metric.engine import id_counts
from scorer.metric.matcher import Matcher
from scorer.metric.thesaurus import Thesaurus, load_thesaurus
from scorer.outputs import html_report


def pytest_configure(config):
    """Before the first test: ``RUWORDNET_PATH`` points at the tests' own thesaurus (for the session's
    fixtures and the processes tests start too), the location it had kept in ``GIVEN_RWN`` first. The workers
    of ``-n`` start with this process's environment, and find the same."""
    os.environ.setdefault(GIVEN_RWN, os.environ.get("RUWORDNET_PATH", ""))
    os.environ["RUWORDNET_PATH"] = str(MINI_RWN)


@pytest.fixture(scope="session", autouse=True)
def _started_before_the_first_test(tmp_path_factory):
    """What would otherwise start a process in whichever quick test came first: the tests' thesaurus
    indexed in the session's cache (a run allowed two processes, as the command line's ``--jobs`` is the
    cores, builds a missing index on a forked worker), and matplotlib loaded (it lists the system's fonts
    by running ``fc-list`` when it first loads)."""
    with shared_setup():
        indexed(MINI_RWN, tmp_path_factory.getbasetemp() / "cache")
        html_report.load_charts()


@pytest.fixture(autouse=True)
def _private_cache_and_mini_thesaurus(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setenv("RUWORDNET_PATH", str(MINI_RWN))
    KEPT.clear()  # each test starts with no reference data kept in the process


@pytest.fixture(scope="session")
def real_rwn_path(tmp_path_factory) -> Path:
    """The real RuWordNet, for the tests about it (indexed in the session's cache, as the tests' own
    thesaurus is)."""
    real = real_thesaurus()
    if real is None:
        reason = "real RuWordNet not found (set RUWORDNET_PATH, or run `ruwordnet download`)"
        if os.environ.get(REQUIRE_REAL) == "1":
            pytest.fail(reason + f"; {REQUIRE_REAL}=1 requires it")
        pytest.skip(reason)
    assert real != MINI_RWN.resolve(), "the tests' own thesaurus taken for the real one"
    return indexed(real, tmp_path_factory.getbasetemp() / "cache")


@pytest.fixture(params=ID_COUNTS_MODULES, ids=lambda m: "compiled" if m is not id_counts else "python")
def module(request):
    """``id_counts`` as plain Python and, when built, compiled: a test that takes it runs on both."""
    return request.param


@pytest.fixture(scope="session")
def rwn() -> Thesaurus:
    """The made-up thesaurus of tests/data/rwn-mini."""
    return load_thesaurus(MINI_RWN)


@pytest.fixture(scope="session")
def matcher(rwn) -> Matcher:
    return Matcher(rwn)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with no_process_started(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with no_process_started(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    with no_process_started(item):
        return (yield)
