"""The runner of a team's code (contract section 10): the standard library only, Python 3.8 or newer, shipped
to teams and to a code competition's ingestion program as one file (``scorer/bundle/runner_file.py`` builds
it). Its modules, from the bottom up, each importing only from those before it: ``names`` (what the rest of
the scorer imports), ``faults``, ``data``, ``upload``, ``network``, ``limits``, ``protocol``, ``process``,
``outputs``, ``state``, ``configuration``, ``options``, ``phases`` and ``main``; ``python -m scorer.runner``
runs ``__main__``.
"""
