"""Scoring a validated submission and what follows from it: turns (``turns``), per-type and integral
aggregates (``aggregate``), explanations of low turns (``explain``), the run's signature, the result
values (``result``, ``leaderboard_result``, ``correlation_result``), the bootstrap (``significance``),
ranking (``leaderboard``) and meta-evaluation against human ratings (``correlation``). Values in, values
out: no files written.
"""
