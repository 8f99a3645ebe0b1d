"""Reading and validating (the pipeline's first step): the contract's names (``contract``), the configuration
(``config``), bounded JSON reading (``jsonio``), a file's content and the words the readers' messages share
(``sources``), the intake of an upload, folder or zip (``intake``), the checks of every file, line, dialogue
and turn (``validation``, with ``ppl_output`` for the perplexities), the organizer's recomputed
perplexities (``ppl_check``), a failed run's record (``run_fault``), the digests of a run's targets
(``ppl_targets``), correlate's human ratings (``human_ratings``), the reference data read (``reference``)
and kept across runs (``reference_cache``), and the media files its dialogues name (``media``). Nothing here
scores; everything here may be handed hostile input.
"""
