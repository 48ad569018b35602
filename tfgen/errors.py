"""Located spec errors: `path:line:col: field.path: message`."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class SpecIssue:
    """One problem in a spec, located at a YAML node (line and column are 1-based)."""

    path: str
    line: int
    column: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"{self.path}:{self.line}:{self.column}: {where}{self.message}"


@dataclass
class SpecError(Exception):
    """All problems of one spec, in file order."""

    issues: list[SpecIssue] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.issues = sorted(set(self.issues))
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(issue) for issue in self.issues)


class UsageError(Exception):
    """Bad command-line use (exit code 2)."""
