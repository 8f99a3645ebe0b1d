"""The alignment engine of contract section 4: the type graph of links (``links``), rule 1's per-stage
counts (``counting``), rules 2-5's alignment (``alignment``), and which build of them runs (``accelerator``:
the same modules compiled, or pure Python). It knows tokens and key functions only.
"""
