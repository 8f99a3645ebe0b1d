"""The alignment engine of contract section 4: the type graph (``links``), rule 1's counts (``counting``, and
``id_counts`` on interned token ids), rules 2-5 (``alignment``), the formula's figures from links
(``formula``), which build of them runs (``accelerator``) and the one list of compiled modules
(``compiled_modules``). It knows tokens and keys only."""
