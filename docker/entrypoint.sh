#!/bin/sh
# The image's entry point.
#   no arguments:        score /input/res (the upload) against /input/ref into /output;
#   a program and its arguments, e.g. the platforms' `python3 -m scorer codalab /app/input /app/output`:
#                        run as given (Codabench and CodaLab put the scoring program's command after
#                        the entry point);
#   anything else:       a scorer subcommand, e.g. `validate --data /input/ref --submission /input/res`.
set -eu
PYTHON="${SCORER_PYTHON:-python}"
if [ "$#" -eq 0 ]; then
    exec "$PYTHON" -m scorer score \
        --data "${SCORER_INPUT:-/input}/ref" \
        --submission "${SCORER_INPUT:-/input}/res" \
        --output "${SCORER_OUTPUT:-/output}"
fi
case "$1" in
    -*) ;;  # an option of the scorer's, such as --version
    *)
        if command -v "$1" >/dev/null 2>&1; then
            exec "$@"
        fi
        ;;
esac
exec "$PYTHON" -m scorer "$@"
