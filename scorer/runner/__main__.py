"""``python -m scorer.runner``, and the runner's one file (``scorer/bundle/runner_file.py``): the runner's
command line (:func:`scorer.runner.main.main`). SIGINT and SIGTERM are held from this module's first line,
while the runner's modules are imported (compiled from the one file's zip archive, a while), and handed to
``main``, which ends the run on the first as its own handler would have."""

from __future__ import annotations

import signal
import sys

HELD: list[int] = []
for _signal in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signal, lambda signum, frame: HELD.append(signum))

from .main import main  # noqa: E402  (after the signals are held)
from .names import HELD_SIGNALS  # noqa: E402

# under ``python -m scorer.runner`` the scorer's package was imported first and held the signals received
# meanwhile in HELD_SIGNALS (in the one file, nothing did): they came first
HELD[:0] = HELD_SIGNALS
sys.exit(main(held=HELD))
