"""Reading and validating (the pipeline's first step): the contract's names and limits, the configuration,
bounded JSON reading, the intake of an upload (folder or zip) and the checks of every file, line, dialogue
and turn. Nothing here scores; everything here may be handed hostile input.
"""
