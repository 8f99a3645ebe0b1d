"""The metric of one answer (normalise, then score): tokenising and normalising Russian text, morphology,
the thesaurus, the on-disk token cache, the matching stages, METEOR over the best reference variant
(:class:`MeteorRu`), and the hidden metric mapped from perplexity. The alignment engine is below, in
:mod:`scorer.metric.engine`. Nothing here reads submissions or writes files other than its caches.
"""
