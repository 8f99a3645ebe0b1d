"""The one list of compiled modules: name -> the source in this folder it is compiled from.

``setup.py`` reads this file by itself (the package cannot be imported at build time), compiles each
source into ``scorer/_compiled/`` and stamps it with the source's SHA-256; ``accelerator`` checks the
stamps against the sources at import.
"""
COMPILED = {"links": "links.py", "counting": "counting.py", "alignment": "alignment.py", "_rule1": "_rule1.pyx"}
