# Sourced by run_scoring.sh and run_tests.sh: makes .venv hold the scorer and its test tools.
# Sets SCORER_PY to the interpreter to use. Reuses a ready .venv; builds one when missing, and
# rebuilds the compiled engine when its sources changed since it was built.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SCORER_VENV:-$ROOT/.venv}"
SCORER_PY="$VENV/bin/python"
if ! "$SCORER_PY" -c "import scorer, pytest, hypothesis" >/dev/null 2>&1; then
    echo "setting up $VENV (first run only) ..." >&2
    "${PYTHON:-python3}" -m venv "$VENV" >&2
    "$SCORER_PY" -m pip install --quiet --upgrade pip >&2
    "$SCORER_PY" -m pip install --quiet -e "$ROOT[test]" >&2
elif ! "$SCORER_PY" -c "import scorer.metric.engine.accelerator as a; raise SystemExit('out of date' in a.description())" >/dev/null 2>&1; then
    echo "rebuilding the compiled engine (its sources changed) ..." >&2
    "$SCORER_PY" -m pip install --quiet -e "$ROOT[test]" >&2
fi
# the package's bytecode, as a wheel install writes it (only what changed since is compiled again)
"$SCORER_PY" -m compileall -q "$ROOT/scorer" >/dev/null
export SCORER_PY
