#!/usr/bin/env bash
# With no arguments: set up what is missing, then score the bundled realistic example
# against reference_data/public into ./output and print the per-type table.
# With arguments: run `python -m scorer` with them, e.g.
#   ./run_scoring.sh validate --data reference_data/public --submission my_submission.zip
set -euo pipefail
source "$(dirname "$0")/scripts/ensure_env.sh"
if [ "$#" -gt 0 ]; then
    # paths are the caller's: run from where the user stands
    exec "$SCORER_PY" -m scorer "$@"
fi
cd "$ROOT"
synonyms=()
if [ -z "${RUWORDNET_PATH:-}" ] && ! "$SCORER_PY" -c "import sys; from scorer.metric.thesaurus import default_location as d; p = d(); sys.exit(0 if p and p.exists() else 1)"; then
    echo "RuWordNet not found: trying \`ruwordnet download\` ..." >&2
    if ! why="$("$VENV/bin/ruwordnet" download 2>&1 >/dev/null)"; then
        echo "warning: RuWordNet could not be downloaded ($(printf '%s' "$why" | tail -n 1 | cut -c1-200));" >&2
        echo "         scoring the example WITHOUT synonyms (--no-synonyms)." >&2
        echo "         Set RUWORDNET_PATH to a RuWordNet SQLite file or XML directory to score with them." >&2
        synonyms=(--no-synonyms)
    fi
fi
exec "$SCORER_PY" -m scorer score \
    --data reference_data/public \
    --submission submissions_examples/realistic \
    --output output ${synonyms[@]+"${synonyms[@]}"}
