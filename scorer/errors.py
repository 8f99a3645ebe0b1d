"""Error types and their exit codes (SPEC section 6).

Exit codes: 0 scored / valid, 1 submission invalid, 2 usage, configuration,
thesaurus or reference-data error, 3 unexpected internal error.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

#: At most this many errors are listed; the rest are counted.
MAX_LISTED_ERRORS = 100


@dataclass(frozen=True)
class Issue:
    """One problem found in an input file, located as precisely as possible.

    ``line`` is 1-based (JSONL files only); ``turn`` is the 0-based index into
    the dialogue's JSON list of turns.
    """

    file: str
    message: str
    code: str
    line: int | None = None
    dialog_id: str | None = None
    turn: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        where = [self.file]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.dialog_id is not None:
            where.append(f"dialog_id {self.dialog_id!r}")
        if self.turn is not None:
            where.append(f"turn {self.turn}")
        return f"{', '.join(where)}: {self.message}"


class ScorerError(Exception):
    """Base of every error the command line turns into an exit code."""

    exit_code = EXIT_INTERNAL
    kind = "error"


class UsageError(ScorerError):
    """Bad command-line arguments or paths."""

    exit_code = EXIT_USAGE
    kind = "usage"


class ConfigError(ScorerError):
    """A configuration file or value breaks SPEC section 7."""

    exit_code = EXIT_USAGE
    kind = "config"


class ThesaurusError(ScorerError):
    """RuWordNet is missing or unreadable."""

    exit_code = EXIT_USAGE
    kind = "thesaurus"


class IssuesError(ScorerError):
    """Carries every issue found in a group of input files."""

    def __init__(self, issues: list[Issue], headline: str):
        self.issues = issues
        super().__init__(headline)

    def listed(self) -> list[Issue]:
        return self.issues[:MAX_LISTED_ERRORS]

    @property
    def not_listed(self) -> int:
        return max(0, len(self.issues) - MAX_LISTED_ERRORS)


class ReferenceDataError(IssuesError):
    """The organizer's reference directory breaks SPEC section 2."""

    exit_code = EXIT_USAGE
    kind = "reference_data"

    def __init__(self, issues: list[Issue]):
        super().__init__(issues, f"reference data is invalid ({len(issues)} error(s))")


class SubmissionInvalid(IssuesError):
    """The participant's submission breaks SPEC sections 2-3."""

    exit_code = EXIT_INVALID
    kind = "invalid"

    def __init__(self, issues: list[Issue], warnings: list[Issue] | None = None):
        self.warnings = warnings or []
        super().__init__(issues, f"submission is invalid ({len(issues)} error(s))")
