"""The organizer's competition (contract sections 10 and 11): ``bundle``'s Codabench competition planned
from the configuration's ``[platform]`` and written with its final (``make``), the competition and its tasks
as planned, the commands and the configuration it carries (``competition``), the pages and the starting
kit's README rendered from templates in the competition's language (``pages``), the starting kit's example
upload and working code (``kit``) and the runner as the one file it ships (``runner_file``). The media
files it publishes are read with the reference data (:mod:`scorer.inputs.media`).
"""
