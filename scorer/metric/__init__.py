"""The metric of one answer (normalise, then score): tokenising and normalising Russian text (``text``, with
the bound on combining marks of ``nonstarters`` and its generated table ``unicode_table``), morphology
(``morphology``), the thesaurus (``thesaurus``), the matching stages (``stages``), the memo of each stage's
keys (``matcher``), METEOR over the best reference variant (:class:`~scorer.metric.meteor.MeteorRu`,
``meteor``), and the hidden metric mapped from perplexity (``hidden_metric``); the caches that keep work
across runs (``cache``, ``token_cache``). The alignment engine is below, in :mod:`scorer.metric.engine`.
Nothing here reads submissions or writes files other than its caches.
"""
