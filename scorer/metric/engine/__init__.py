"""The alignment engine of contract section 4: the type graph (``links``), rule 1's counts (``counting``),
rules 2-5 (``alignment``), and which build of them runs (``accelerator``). It knows tokens and keys only."""
