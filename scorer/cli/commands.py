"""The handlers of the scoring and checking commands (:data:`HANDLERS`; ``codalab``'s is in
:mod:`scorer.cli.platform_step`, ``bundle``'s in :mod:`scorer.cli.bundle_command`): each reads its flags once,
builds one value (the run's options, :class:`~scorer.api.RunOptions`; what ``explain`` is asked,
:class:`Explanation`), hands it to one entry point of :mod:`scorer.api`, and writes and prints what it returns
through :mod:`scorer.outputs` and :mod:`scorer.cli.terminal`. Here too: the configuration found once and said
(contract section 7), the audience decided once (contract section 6), the scoring of an upload both ``score``
and ``codalab`` run (:func:`score_upload`), and what ``run`` reads of the configuration."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scorer import api
from scorer.errors import EXIT_INVALID, EXIT_OK, ScorerError, SubmissionInvalid, UsageError
from scorer.inputs.config import BUILT_IN_SOURCE, Config, config_for, load_config
from scorer.inputs.contract import DETAILED_RESULTS
from scorer.inputs.intake import platform_upload
from scorer.inputs.ppl_targets import stale_line
from scorer.metric.nonstarters import long_mark_run, mark_run_message
from scorer.outputs.output_dir import locked, prepare, write_file
from scorer.outputs.report import (
    CORRELATION_JSON,
    LEADERBOARD_JSON,
    correlation_table,
    failure_payload,
    leaderboard_table,
    summary_table,
    utf8,
    write_correlation,
    write_failure,
    write_leaderboard,
    write_outputs,
)
from scorer.progress import ProgressDisplay
from scorer.runner.configuration import RunConfig
from scorer.runner.faults import UsageFault
from scorer.scoring.audience import ORGANIZER, Audience
from scorer.scoring.audit import flagged_lines
from scorer.scoring.turns import default_jobs

from .exits import Handler, RunState, try_write_failure, verdict_on_failure
from .terminal import (
    emit,
    emit_json,
    print_invalid,
    print_warnings,
    progress_display,
    say,
    say_config,
    say_lines,
    waiting,
)


def said_config(
    data: str | None, explicit: str | None, *, quiet: bool = False, unsalted: bool = True
) -> Config:
    """The configuration of contract section 7's rule (``--config``, else ``config.toml`` in ``data``, else
    the built-in default), said on stderr; with ``unsalted``, the warning of private settings without a
    salt."""
    config, which = config_for(data, explicit)
    say_config(which, quiet=quiet, unsalted=unsalted and config.hidden_metric.unsalted)
    return config


@dataclass(frozen=True)
class ScoringFlags:
    """The flags the scoring commands share (``score``, ``codalab``, ``leaderboard``, ``correlate``), read
    once: where the outputs go, the configuration's file, the run's options (``--jobs 0``: every core), and
    ``--quiet``."""

    output: str
    config: str | None
    thesaurus: str | None
    synonyms: bool
    jobs: int
    quiet: bool

    @classmethod
    def of(cls, args: argparse.Namespace) -> ScoringFlags:
        return cls(
            args.output,
            args.config,
            args.thesaurus,
            not args.no_synonyms,
            args.jobs or default_jobs(),
            args.quiet,
        )

    def options(self, data: str, config: Config, display: ProgressDisplay) -> api.RunOptions:
        """The run's options as one value, with the configuration's source as the library names it (so that
        its results say the same)."""
        source = api.config_source(data, self.config)
        return api.RunOptions(config, self.thesaurus, self.synonyms, self.jobs, display, source)


#: A code competition's scoring step on the platform (:mod:`scorer.cli.platform_step`), called with the data
#: folder, the run's options, the audience, the progress display, the output folder and ``--quiet``: it writes
#: its own outputs and returns the exit code.
CodeStep = Callable[[str, api.RunOptions, Audience, ProgressDisplay, Path, bool], int]


@dataclass(frozen=True)
class Platform:
    """``codalab``'s folder (``INPUT``, holding ``ref/`` and ``res/``) and its code step."""

    root: Path
    code_step: CodeStep

    def check_folders(self) -> None:
        """Check that the root holds ``ref/`` and ``res/``."""
        for folder in (self.root / "ref", self.root / "res"):
            if not folder.is_dir():
                raise UsageError(
                    f"{folder} is not a folder; INPUT must hold ref/ (the reference data) "
                    "and res/ (the submission)"
                )


def _validate(args: argparse.Namespace, state: RunState) -> int:
    as_json = args.json
    config = said_config(args.data, args.config)
    with progress_display(False) as display:
        try:
            valid = api.validate_submission(
                args.data, args.submission, args.ppl, config=config, progress=display
            )
        except SubmissionInvalid as exc:
            display.close()
            if as_json:
                payload = failure_payload(exc, "invalid")
                payload["warnings"] = [w.to_dict() for w in exc.warnings]
                emit_json(payload)
            print_invalid(exc, scoring=False)
            return EXIT_INVALID
    turns = sum(len(a) for a in valid.answers.values())
    if as_json:
        emit_json(
            {
                "status": "valid",
                "dialogs": len(valid.answers),
                "turns": turns,
                "warnings": [w.to_dict() for w in valid.warnings],
            }
        )
    else:
        emit(f"valid: {len(valid.answers)} dialogues, {turns} turns")
    print_warnings(valid.warnings)
    return EXIT_OK


def _score(args: argparse.Namespace, state: RunState) -> int:
    return score_upload(
        state,
        ScoringFlags.of(args),
        args.data,
        args.submission,
        args.ppl,
        report=args.report,
        ppl_check=args.ppl_check,
    )


def score_upload(
    state: RunState,
    flags: ScoringFlags,
    data: str,
    submission: str,
    ppl: str | None,
    *,
    report: bool,
    ppl_check: str | None = None,
    platform: Platform | None = None,
) -> int:
    """``score``, or with ``platform`` ``codalab`` (its upload found in the platform's ``INPUT/res``; a code
    competition's upload handed to the platform's code step)."""
    output = state.output = prepare(flags.output)
    codalab = platform is not None
    # the platforms show the page: for an upload that was not scored it says why
    state.failure_page = DETAILED_RESULTS if codalab else None
    with locked(output, waiting(output)), progress_display(flags.quiet) as display:
        try:
            if platform is not None:
                platform.check_folders()
            config = said_config(data, flags.config, quiet=flags.quiet)
            # who the outputs are for, decided here once (contract section 6): codalab's are the participant's
            audience = Audience.participant(config) if codalab else ORGANIZER
            if platform is not None and config.competition.submissions == "code":
                options = flags.options(data, config, display)
                return platform.code_step(data, options, audience, display, output, flags.quiet)
            if platform is not None:
                submission = str(platform_upload(platform.root / "res"))
            result = api.score_submission(
                data,
                submission,
                ppl,
                options=flags.options(data, config, display),
                ppl_check=ppl_check,
                audience=audience,
            )
        except SubmissionInvalid as exc:
            display.close()
            write_failure(exc, "invalid", output, page=state.failure_page)
            # the platforms show participants stderr: there, every listed error, one a line
            print_invalid(exc, every=codalab)
            return EXIT_INVALID
        except ScorerError as exc:
            display.close()
            try_write_failure(exc, output, page=state.failure_page)
            raise
        write_outputs(result, output, report=report, progress=display)
    print_warnings(result.warnings)
    if result.stale_perplexities:
        say(stale_line("", result.stale_perplexities))
    if audience.audit and result.audit is not None:
        say_lines(flagged_lines({result.name: result.audit}, not_judged=not flags.quiet))
    if not flags.quiet:
        emit(summary_table(result))
    return EXIT_OK


def _leaderboard(args: argparse.Namespace, state: RunState) -> int:
    flags = ScoringFlags.of(args)
    output = state.output = prepare(flags.output)
    state.marker = LEADERBOARD_JSON
    with locked(output, waiting(output)), progress_display(flags.quiet) as display:
        with verdict_on_failure(state, display):
            config = said_config(args.data, flags.config, quiet=flags.quiet)
            board = api.score_leaderboard(
                args.data,
                args.submissions,
                options=flags.options(args.data, config, display),
                resamples=args.resamples,
                seed=args.seed,
            )
            write_leaderboard(board, output, report=not args.no_report, progress=display)
    if not flags.quiet:
        emit(leaderboard_table(board))
    for entry in board.ranked:
        if entry.scored().stale_perplexities:
            say(stale_line(entry.name, entry.scored().stale_perplexities))
    say_lines(flagged_lines(board.audit, not_judged=not flags.quiet))
    return EXIT_OK


def _correlate(args: argparse.Namespace, state: RunState) -> int:
    flags = ScoringFlags.of(args)
    output = state.output = prepare(flags.output)
    state.marker = CORRELATION_JSON
    baselines = tuple(b.strip() for b in args.baselines.split(",") if b.strip())
    with locked(output, waiting(output)), progress_display(flags.quiet) as display:
        with verdict_on_failure(state, display):
            config = said_config(args.data, flags.config, quiet=flags.quiet)
            meta = api.correlate_submissions(
                args.data,
                args.submissions,
                args.human,
                options=flags.options(args.data, config, display),
                resamples=args.resamples,
                seed=args.seed,
                baselines=baselines,
            )
            write_correlation(meta, output)
    say_lines(f"warning: {note}" for note in meta.warnings)
    if not flags.quiet:
        emit(correlation_table(meta))
    return EXIT_OK


def _audit_sample(args: argparse.Namespace, state: RunState) -> int:
    config = said_config(args.data, args.config)
    try:
        rows = api.audit_sample(
            args.data, args.submission, args.n, seed=args.seed, ppl=args.ppl, config=config
        )
    except SubmissionInvalid as exc:
        print_invalid(exc, scoring=False)
        return EXIT_INVALID
    output = Path(args.output)
    if output.is_dir():
        raise UsageError(f"--output {output} is a folder; give the file to write")
    write_file(output, utf8("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)))
    emit(
        f"audit sample: {len(rows)} turns in {output}; recompute their perplexities with the participant's "
        "model, then score with --ppl-check"
    )
    return EXIT_OK


def _argument_text(value: str) -> str:
    """A command-line argument that is text, not a path: its bytes read as UTF-8. Where the locale's encoding
    is not UTF-8 (the C locale), Python hands arguments over as surrogates, which no word would match."""
    return os.fsencode(value).decode("utf-8", "replace")


@dataclass(frozen=True)
class Explanation:
    """What ``explain`` is asked: the answer and the reference variants as text, each checked, and the run's
    options (the configuration with ``--alpha``, ``--beta`` and ``--gamma`` laid over it)."""

    candidate: str
    references: tuple[str, ...]
    options: api.RunOptions

    @classmethod
    def of(cls, args: argparse.Namespace) -> Explanation:
        candidate = _argument_text(args.candidate)
        references = tuple(_argument_text(r) for r in args.reference)
        for what, text in [("--candidate", candidate)] + [("--reference", r) for r in references]:
            run = long_mark_run(text)
            if run is not None:
                raise UsageError(f"{what}: {mark_run_message(run)}")
        meteor = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
        config = load_config(args.config, {"meteor": meteor})
        return cls(candidate, references, api.RunOptions(config, args.thesaurus, not args.no_synonyms))


def _explain(args: argparse.Namespace, state: RunState) -> int:
    asked = Explanation.of(args)
    emit(api.explain_answer(asked.candidate, asked.references, options=asked.options))
    return EXIT_OK


def _signature(args: argparse.Namespace, state: RunState) -> int:
    config = said_config(args.data, args.config)
    signature = api.competition_signature(
        args.data,
        config=config,
        thesaurus=args.thesaurus,
        synonyms=not args.no_synonyms,
        participant=args.participant,
    )
    emit(signature)
    return EXIT_OK


def _check_data(args: argparse.Namespace, state: RunState) -> int:
    found = api.check_reference_data(args.data, config=args.config)
    kinds = ", ".join(f"{kind} {dialogs}" for kind, (dialogs, _) in found.by_type.items())
    emit(
        f"reference data valid: {found.dialogs} dialogues ({kinds}), {found.turns} turns; "
        f"config: {found.config_source}"
    )
    return EXIT_OK


#: Every subcommand of the parser (but ``run``, the runner's own) and its handler.
HANDLERS: dict[str, Handler] = {
    "validate": _validate,
    "score": _score,
    "leaderboard": _leaderboard,
    "correlate": _correlate,
    "audit-sample": _audit_sample,
    "explain": _explain,
    "signature": _signature,
    "check-data": _check_data,
}


def run_configuration(explicit: str | None, data: str) -> RunConfig:
    """What ``run`` reads of the configuration (contract section 7's rule: ``--config``, else ``config.toml``
    in ``--data``, else the built-in default), every key checked as every command checks it; a configuration
    error is the runner's usage error (exit 2)."""
    try:
        config, which = config_for(data if os.path.isdir(data) else None, explicit)
    except ScorerError as exc:
        raise UsageFault(str(exc)) from None
    audit = config.audit
    read = None if which == BUILT_IN_SOURCE else which  # none read: the run says none (contract section 11)
    return RunConfig(
        audit.probe_turns, audit.probe_min_words, config.competition.network, config.hidden_metric.salt, read
    )
