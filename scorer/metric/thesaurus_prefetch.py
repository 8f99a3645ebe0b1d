"""The thesaurus's index built on another core while the caller reads its inputs.

From an empty cache, building RuWordNet's index (parsing the source and
normalising every sense) takes about a third of a second at the size of
the verbs and adjectives, more with the nouns, and nothing else in a run
needs it before scoring starts. :class:`IndexPrefetch` forks one process
that loads the thesaurus as :func:`scorer.metric.thesaurus.load_thesaurus`
does, which writes the index to the cache; the caller reads and checks its
inputs meanwhile, calls :meth:`IndexPrefetch.wait`, then loads the
thesaurus, now from the cache.

Nothing is handed over except through the cache, so nothing changes when
the prefetch does not happen or fails (no ``fork``, an unwritable cache
directory, a source that cannot be read, the process killed): the load
then builds the index itself, and reports any error, in its usual place.
The process ignores SIGINT (the caller handles it) and is stopped when the
caller leaves the ``with`` block early or exits.
"""
from __future__ import annotations

import os
import signal
from types import TracebackType

from .cache import forked, reap
from .thesaurus import load_thesaurus


class IndexPrefetch:
    """``with IndexPrefetch(location):`` builds the cached index of the thesaurus at ``location`` (resolved as
    :func:`~scorer.metric.thesaurus.resolve_location`) in a forked process; :meth:`wait` waits for it."""

    def __init__(self, location: str | os.PathLike | None):
        self.location = location
        self.pid = 0  # the forked process, while it may run

    def __enter__(self) -> IndexPrefetch:
        # no process to be had: the load builds the index itself; any failure in the process is left for the
        # caller's own load to meet and report
        self.pid = forked(lambda: load_thesaurus(self.location))
        return self

    def wait(self) -> None:
        """Returns once the forked process has ended (at once when none was started)."""
        if self.pid:
            reap(self.pid)
            self.pid = 0

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.pid:  # left before waiting (an error): the build is not needed now
            try:
                os.kill(self.pid, signal.SIGTERM)
            except OSError:
                pass
            self.wait()
