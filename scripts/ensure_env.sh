# Sourced by run_scoring.sh and run_tests.sh: makes .venv hold the scorer and its test tools.
# Sets SCORER_PY to the interpreter to use. Reuses a ready .venv; builds one when missing, and
# rebuilds the compiled engine when its sources changed since it was built.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The install's own chatter goes to .venv/install.log, shown only when the install fails. The editable install
# is a plain path entry ("compat"), which type checkers follow: `mypy my_script.py` finds scorer from anywhere.
_scorer_install() {
    if ! "$SCORER_PY" -m pip install --quiet -e "$ROOT[test]" --config-settings editable_mode=compat \
            >"$VENV/install.log" 2>&1; then
        cat "$VENV/install.log" >&2
        echo "error: installing the scorer into $VENV failed (the log is above, and in $VENV/install.log)" >&2
        exit 1
    fi
}
VENV="${SCORER_VENV:-$ROOT/.venv}"
SCORER_PY="$VENV/bin/python"
if ! "$SCORER_PY" -c "import scorer, pytest, hypothesis, xdist" >/dev/null 2>&1; then
    echo "setting up $VENV (first run only) ..." >&2
    "${PYTHON:-python3}" -m venv "$VENV" >&2
    "$SCORER_PY" -m pip install --quiet --upgrade pip >&2
    _scorer_install
elif ! "$SCORER_PY" -c "import scorer.metric.engine.accelerator as a; raise SystemExit('out of date' in a.description())" >/dev/null 2>&1; then
    echo "rebuilding the compiled engine (its sources changed) ..." >&2
    _scorer_install
fi
# the package's bytecode, as a wheel install writes it (only what changed since is compiled again)
"$SCORER_PY" -m compileall -q "$ROOT/scorer" >/dev/null
export SCORER_PY
