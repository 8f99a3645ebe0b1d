"""``python -m scorer.runner``: the runner's command line (:func:`scorer.runner.main.main`)."""

import sys

from .main import main

sys.exit(main())
