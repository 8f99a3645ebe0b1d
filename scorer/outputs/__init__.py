"""Writing what scoring gave: the output directory, its lock and its atomic publishing (``output_dir``); the
files and terminal tables (``report``); the HTML pages (``html_report``). Reads result values only. The
organizer's competition has a package of its own, :mod:`scorer.bundle`.
"""
