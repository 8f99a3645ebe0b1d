"""Scoring a validated submission and what follows from it: a run opened once, its configuration, reference
data and thesaurus (``run``), a submission scored on it (``scored``) and a board of them (``board``); the
competition's rules and the run's signature (``competition``), who an output is for (``audience``), every
turn's METEOR (``turns``), per-type and integral aggregates (``aggregate``), the perplexity audit
(``audit``), explanations of low turns (``explain``), the result values (``result``,
``leaderboard_result``, ``correlation_result``), the bootstrap (``significance``), ranking
(``leaderboard``) and meta-evaluation against human ratings (``correlation``).
Values in, values out: no files written.
"""
