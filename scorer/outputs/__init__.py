"""Writing what scoring gave: the output directory and its atomic publishing (``output_dir``), the files
and terminal tables (``report``) and the HTML pages (``html_report``). Reads result values only.
"""
