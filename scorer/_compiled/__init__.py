"""The pure engine's modules compiled unchanged (filled at build time; see setup.py and scorer.accelerator)."""
