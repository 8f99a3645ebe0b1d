"""Writing what scoring gave: the output directory, its lock and its atomic publishing (``output_dir``); the
files and terminal tables (``report``); the HTML pages (``html_report``); the Codabench competition bundle
(``bundle``), with what a code competition's bundle adds (``code_bundle``), the media files it publishes
(``media``, read by :mod:`scorer.inputs.media`), the runner as the one file it ships (``runner_file``) and
the texts its starting kit's model learns from (``kit_texts``). Reads result values only.
"""
