"""``bundle`` (contract section 11): the organizer's competition made from the reference data and written
to the output folder; the bundle's package (:mod:`scorer.bundle`) is imported by this command alone."""

from __future__ import annotations

import argparse

from scorer.bundle.make import FINAL, make_bundle, write_bundle
from scorer.errors import EXIT_OK
from scorer.outputs.output_dir import locked, prepare

from .commands import said_config
from .exits import Handler, RunState
from .terminal import emit, say, waiting


def _bundle(args: argparse.Namespace, state: RunState) -> int:
    quiet = args.quiet
    # which configuration it uses is said (contract section 7)
    said_config(args.data, args.config, quiet=quiet, unsalted=False)
    made = make_bundle(args.data, args.image, config=args.config, title=args.title, code=args.code)
    files = made.files  # every value checked, nothing written yet (contract section 11)
    output = state.output = prepare(args.output)
    with locked(output, waiting(output)):
        write_bundle(output, files)
    if made.salted:
        say(
            "bundle: the hidden metric's private settings had no salt: one derived from answers.jsonl and "
            "the configuration was written into the bundle's reference data (config.toml); it is as secret "
            "as answers.jsonl (copy it into your own config, so that your runs carry the platform's "
            "signature)"
        )
    for line in made.warnings:  # what the audit cannot judge on the held-out set (contract section 11)
        say(line)
    if not quiet:
        public = [name for name in files if not name.startswith(f"{FINAL}/")]
        emit(
            f"bundle: {output / 'competition.yaml'} and {output / 'bundle.zip'} ({len(public) - 1} files); "
            "upload bundle.zip on Codabench (Benchmarks > Management > Upload)"
        )
        if len(public) < len(files):
            emit(
                f"bundle: the organizers' final in {output / FINAL} (the held-out input and reference data, "
                "and bundle.zip, a competition for the organizers alone: never publish it; "
                "docs/organizers.md says how to run and rank the final)"
            )
    return EXIT_OK


HANDLERS: dict[str, Handler] = {"bundle": _bundle}
