"""``codalab``, the platforms' scoring step (contract section 6): ``INPUT/ref`` is the reference data,
``INPUT/res`` the upload; a code competition's upload is run by its scoring step (contract section 10,
:mod:`scorer.code_step`), which only this command imports."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from scorer import api, code_step
from scorer.errors import EXIT_INVALID, EXIT_OK, SubmissionInvalid, UsageError
from scorer.inputs.contract import DETAILED_RESULTS
from scorer.outputs.report import summary_table
from scorer.progress import ProgressDisplay
from scorer.runner.options import check_timeouts
from scorer.scoring.audience import Audience

from .commands import Platform, ScoringFlags, score_upload
from .exits import Handler, RunState
from .terminal import emit, print_invalid, print_warnings


@dataclass(frozen=True)
class CodeLimits:
    """``codalab``'s limits of a code upload's run: setup, each call, the whole ``get_ppl`` phase."""

    setup: float
    turn: float
    step: float | None


def _codalab(args: argparse.Namespace, state: RunState) -> int:
    """The scoring-program convention: INPUT/ref is the reference data, INPUT/res the submission."""
    problem = check_timeouts(args.setup_timeout, args.turn_timeout)
    if problem:
        raise UsageError(problem)
    root = Path(args.input)
    step = _CodeStep(root / "res", CodeLimits(args.setup_timeout, args.turn_timeout, args.step_timeout))
    flags = ScoringFlags.of(args)
    return score_upload(
        state, flags, str(root / "ref"), str(root / "res"), None, report=True, platform=Platform(root, step)
    )


@dataclass(frozen=True)
class _CodeStep:
    """The scoring step of a code competition for the upload in ``res``, within ``limits``."""

    res: Path
    limits: CodeLimits

    def __call__(
        self,
        data: str,
        options: api.RunOptions,
        audience: Audience,
        display: ProgressDisplay,
        output: Path,
        quiet: bool,
    ) -> int:
        """The step writes its own outputs; a surprise once the code could act is exit 1 with nothing
        written here, and prints exactly what a fault of the code prints (its verdict, by the same path), so
        that stdout and stderr never tell one from the other."""
        limits = self.limits
        settings = code_step.StepSettings(
            data, output, options, audience, DETAILED_RESULTS, limits.setup, limits.turn, limits.step, quiet
        )
        try:
            outcome = code_step.score_step(self.res, settings)
        except code_step.StepSurprise as exc:
            outcome = exc.verdict()  # the step emptied OUTPUT and wrote nothing; which surprise is never said
        display.close()
        if isinstance(outcome, SubmissionInvalid):
            print_invalid(outcome, every=True)
            return EXIT_INVALID
        print_warnings(outcome.warnings)
        if not quiet:
            emit(summary_table(outcome))
        return EXIT_OK


HANDLERS: dict[str, Handler] = {"codalab": _codalab}
