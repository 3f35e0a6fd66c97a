"""User-facing errors.

Every problem a user can fix (a bad file, a bad field, an impossible problem) is raised as a
:class:`SimschedError`.  The command line turns it into one line on stderr and exit code 2; it never
shows a traceback for these.  Programming errors stay ordinary exceptions.
"""

from __future__ import annotations

from pathlib import Path


class SimschedError(Exception):
    """An error the user can act on; the CLI prints it as one line and exits with ``exit_code``."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field

    def located(self, *, file: str | Path | None = None, line: int | None = None,
                field: str | None = None) -> SimschedError:
        """Fill in location parts that are still unknown and return ``self`` (for re-raising)."""
        if self.file is None and file is not None:
            self.file = str(file)
        if self.line is None and line is not None:
            self.line = line
        if self.field is None and field is not None:
            self.field = field
        return self

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


class GraphError(SimschedError):
    """A task graph is malformed: a cycle, a dangling edge, a duplicate name, a negative cost."""


class InfeasibleError(SimschedError):
    """A problem has no valid schedule, e.g. a task that no processor may run."""


class PlanError(SimschedError):
    """A static plan cannot be executed, e.g. a processor order that contradicts precedence."""


class SchedulerDeclined(SimschedError):
    """A scheduler declines a problem it was not built for (e.g. the exact scheduler past its task
    cap).  A run reports that scheduler as declined and keeps every other scheduler's results."""
