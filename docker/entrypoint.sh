#!/bin/sh
# No arguments: score /input/res (the submission) against /input/ref into /output.
# Arguments: any scorer subcommand, e.g. `validate --data /input/ref --submission /input/res`.
set -eu
PYTHON="${SCORER_PYTHON:-python}"
if [ "$#" -eq 0 ]; then
    exec "$PYTHON" -m scorer score \
        --data "${SCORER_INPUT:-/input}/ref" \
        --submission "${SCORER_INPUT:-/input}/res" \
        --output "${SCORER_OUTPUT:-/output}"
fi
exec "$PYTHON" -m scorer "$@"
