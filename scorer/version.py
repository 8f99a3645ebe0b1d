"""The scorer's version; it appears in every signature."""
__version__ = "0.1.0"
