#!/usr/bin/env bash
# Sets up .venv if needed, then runs the test suite. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "$0")/scripts/ensure_env.sh"
cd "$ROOT"
exec "$SCORER_PY" -m pytest "$@"
