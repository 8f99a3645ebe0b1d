"""Error types and their exit codes (contract section 6).

Exit codes: 0 scored / valid, 1 submission invalid, 2 usage, configuration,
thesaurus or reference-data error, 3 unexpected internal error. They are the
runner's (``scorer/runner/names.py``: the runner stands alone on the ground floor and
exits by the same contract: its 1 is a fault of the team's code, the upload's
verdict as an invalid submission's is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scorer.runner.names import EXIT_CODE_FAULT as EXIT_INVALID
from scorer.runner.names import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from scorer.safe_text import shown

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_LISTED_ERRORS",
    "ConfigError",
    "Issue",
    "IssueLog",
    "IssuesError",
    "PerplexitiesNotFound",
    "PplCheckInvalid",
    "ReferenceDataError",
    "ScorerError",
    "SubmissionInvalid",
    "ThesaurusError",
    "UsageError",
]

#: At most this many errors are listed; the rest are counted.
MAX_LISTED_ERRORS = 100


@dataclass(frozen=True)
class Issue:
    """One problem found in an input file, located as precisely as possible.

    ``line`` and ``column`` are 1-based; ``turn`` is the 0-based index into
    the dialogue's JSON list of turns; ``dialog_id`` is the id as shown (cut
    to 60 characters).
    """

    file: str
    message: str
    code: str
    line: int | None = None
    dialog_id: str | None = None
    turn: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = [shown(self.file)]
        if self.line is not None:
            where.append(f"line {self.line}" + (f", column {self.column}" if self.column is not None else ""))
        if self.dialog_id is not None:
            where.append(f"dialog_id {self.dialog_id!r}")
        if self.turn is not None:
            where.append(f"turn {self.turn}")
        return f"{', '.join(where)}: {shown(self.message)}"


class ScorerError(Exception):
    """Base of every error the command line turns into an exit code."""

    exit_code = EXIT_INTERNAL
    kind = "error"


class UsageError(ScorerError):
    """Bad command-line arguments or paths."""

    exit_code = EXIT_USAGE
    kind = "usage"


class PerplexitiesNotFound(UsageError):
    """A submission given as a bare file has no perplexities file beside it, and none was named."""


class ConfigError(ScorerError):
    """A configuration file or value breaks contract section 7."""

    exit_code = EXIT_USAGE
    kind = "config"


class ThesaurusError(ScorerError):
    """RuWordNet is missing or unreadable."""

    exit_code = EXIT_USAGE
    kind = "thesaurus"


class IssueLog:
    """Issues in the order they are found; past ``cap`` they are only counted (no memory)."""

    def __init__(self, cap: int = MAX_LISTED_ERRORS):
        self.cap = cap
        self.kept: list[Issue] = []
        self.more = 0
        #: (file, first line, lines) of what was left unchecked once the list was full.
        self.unchecked: list[tuple[str, int, int]] = []

    def add(self, issue: Issue) -> None:
        if len(self.kept) < self.cap:
            self.kept.append(issue)
        else:
            self.more += 1

    def not_checked(self, file: str, line: int, lines: int) -> None:
        """Record that ``lines`` lines of ``file`` from ``line`` on were not checked (the list being full)."""
        self.unchecked.append((file, line, lines))

    @classmethod
    def of(cls, issues: Sequence[Issue], more: int = 0) -> IssueLog:
        """A log holding ``issues`` and counting ``more`` beyond them."""
        log = cls(max(len(issues), MAX_LISTED_ERRORS))
        log.kept, log.more = list(issues), more
        return log

    @property
    def total(self) -> int:
        return len(self.kept) + self.more

    @property
    def full(self) -> bool:
        """True when a further issue would only be counted (so it need not be described)."""
        return len(self.kept) >= self.cap

    def __bool__(self) -> bool:
        return self.total > 0


class IssuesError(ScorerError):
    """Carries the issues found in a group of input files: the first ones, and how many more."""

    def __init__(self, issues: list[Issue] | IssueLog, headline: str):
        if isinstance(issues, IssueLog):
            self.issues, self.more, self.unchecked = issues.kept, issues.more, list(issues.unchecked)
        else:
            self.issues, self.more, self.unchecked = list(issues), 0, []
        self.headline = headline
        super().__init__(headline)

    @property
    def total(self) -> int:
        return len(self.issues) + self.more

    def listed(self) -> list[Issue]:
        return self.issues[:MAX_LISTED_ERRORS]

    @property
    def not_listed(self) -> int:
        return max(0, len(self.issues) - MAX_LISTED_ERRORS) + self.more

    def __str__(self) -> str:
        shown = self.listed()[:5]
        lines = [self.headline + ":"] + [f"  {issue}" for issue in shown]
        if self.total > len(shown):
            lines.append(f"  ... and {self.total - len(shown)} more")
        lines += [f"  {note}" for note in self.unchecked_notes()]
        return "\n".join(lines)

    def unchecked_notes(self) -> list[str]:
        """One sentence per file part left unchecked once the error list was full."""
        return [
            f"{lines:,} line(s) of {file} from line {line:,} on were not checked: the error list was full "
            f"({MAX_LISTED_ERRORS} errors); fix these first"
            for file, line, lines in self.unchecked
        ]


class ReferenceDataError(IssuesError):
    """The organizer's reference directory breaks contract section 2."""

    exit_code = EXIT_USAGE
    kind = "reference_data"

    def __init__(self, issues: list[Issue] | IssueLog, headline: str | None = None):
        total = issues.total if isinstance(issues, IssueLog) else len(issues)
        super().__init__(issues, headline or f"reference data is invalid ({total} error(s))")


class SubmissionInvalid(IssuesError):
    """The participant's submission breaks contract sections 2-3."""

    exit_code = EXIT_INVALID
    kind = "invalid"

    def __init__(self, issues: list[Issue] | IssueLog, warnings: list[Issue] | None = None):
        self.warnings = warnings or []
        total = issues.total if isinstance(issues, IssueLog) else len(issues)
        super().__init__(issues, f"submission is invalid ({total} error(s))")


class PplCheckInvalid(IssuesError):
    """The organizer's recomputed perplexities (``--ppl-check``) break the shape of ``ppl_output.json``."""

    exit_code = EXIT_USAGE
    kind = "ppl_check"

    def __init__(self, issues: list[Issue] | IssueLog, file: str):
        total = issues.total if isinstance(issues, IssueLog) else len(issues)
        super().__init__(issues, f"the recomputed perplexities in {file} are invalid ({total} error(s))")
