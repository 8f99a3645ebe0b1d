"""The quick loop (docs/testing.md): a test not marked ``slow`` that starts a process fails, naming itself,
even where the code it runs caught the error; a test marked ``slow`` may start one."""

from __future__ import annotations

import os
import subprocess

import pytest
from helpers import StartsAProcess, no_process_started


class _Item:
    """What the guard reads of a test: its id and its marks."""

    def __init__(self, slow: bool):
        self.nodeid = "tests/test_example.py::test_example"
        self.slow = slow

    def get_closest_marker(self, name: str):
        return pytest.mark.slow.mark if self.slow and name == "slow" else None


def test_a_fork_in_a_quick_test_fails_it_even_when_the_code_caught_the_error():
    said = "tests/test_example.py::test_example starts a process (os.fork): mark it slow (docs/testing.md)"
    raised = []
    with pytest.raises(pytest.fail.Exception) as failed:
        with no_process_started(_Item(slow=False)):
            try:
                os.fork()
            except StartsAProcess as caught:  # as a pool that falls back to one process would
                raised.append(str(caught))
    assert raised == [said] and str(failed.value) == said


@pytest.mark.parametrize(
    "start, what",
    [
        (lambda: subprocess.run(["true"], check=False), "Popen._execute_child"),
        (lambda: os.system("true"), "os.system"),
        (lambda: os.posix_spawn("/bin/true", ["true"], {}), "os.posix_spawn"),
    ],
    ids=["subprocess", "system", "posix_spawn"],
)
def test_running_a_program_in_a_quick_test_fails_it(start, what):
    with pytest.raises(pytest.fail.Exception, match=rf"starts a process \({what}\): mark it slow"):
        with no_process_started(_Item(slow=False)):
            with pytest.raises(StartsAProcess):
                start()


def test_a_slow_test_is_left_alone_and_a_quick_one_gets_its_functions_back():
    before = (os.fork, subprocess.Popen._execute_child)
    with no_process_started(_Item(slow=True)):
        assert (os.fork, subprocess.Popen._execute_child) == before
    with no_process_started(_Item(slow=False)):
        assert os.fork is not before[0]
    assert (os.fork, subprocess.Popen._execute_child) == before
