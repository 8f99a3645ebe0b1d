"""The installed package is typed for its users: mypy, run from another folder on a script of theirs, finds
``scorer`` (the editable install is a plain path entry) and knows the frames are pandas DataFrames."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # every test here starts processes


def test_mypy_checks_a_users_script_from_another_folder(tmp_path):
    (tmp_path / "my_script.py").write_text(
        "from scorer import api\n\n"
        'result = api.score_submission("data", "submission", synonyms=False)\n'
        'result.to_frame().sort_values(by="meteor", ascending="yes")\n'
        "result.dialogs_frame().head(2)\n"
        "result.audit_frame()\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "my_script.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Cannot find implementation" not in done.stdout, done.stdout
    # one error, on line 4, about sort_values of a DataFrame: mypy found the package and knows the frame's
    # type (the stubs' own wording of the error is theirs to change)
    lines = done.stdout.splitlines()
    assert lines[-1] == "Found 1 error in 1 file (checked 1 source file)", done.stdout
    assert [line.split(": error:")[0] for line in lines[:-1]] == ["my_script.py:4"]
    assert '"sort_values" of "DataFrame"' in lines[0] and "[arg-type]" in lines[0]
