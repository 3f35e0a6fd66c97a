"""The terminal a command prints to: its console, and the progress bars long commands show on stderr.

* :func:`console`: a rich console as wide as the terminal, or on a pipe ``$COLUMNS`` (default 100);
* :func:`output_width`, :func:`wrap` and :func:`say`: plain lines of text held to that width;
* :class:`Progress`: a run's bar, shown only on a terminal and only once the run has taken a while;
* :class:`RunsBar`: a sweep's bar, with runs done, their rate and the time left;
* :func:`search_bar`: a search bounded by iterations, by seconds or by both (``simsched adversary``);
* :func:`training_bar`: a training run's bar with a line of what it reached (``simsched train rl``).

rich is imported inside each function, so a command that never draws a bar never loads it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress

PIPE_WIDTH = 100
"""Columns of a console that is not a terminal (a pipe, a file, a test) when ``$COLUMNS`` does not say:
what a person reading the file in a 100-column window, or ``less``, sees whole."""

MIN_WIDTH = 20
"""The narrowest ``$COLUMNS`` taken at its word (a smaller or unreadable value means :data:`PIPE_WIDTH`)."""


def _columns_variable() -> int | None:
    """``$COLUMNS`` when it is a whole number of at least :data:`MIN_WIDTH`, else None."""
    import os

    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) >= MIN_WIDTH else None


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (``stderr``: on stderr): as wide as the terminal (or ``$COLUMNS``, which
    rich reads first); not a terminal, ``$COLUMNS`` or :data:`PIPE_WIDTH`.  O(1)."""
    from rich.console import Console

    columns = _columns_variable()
    out = Console(stderr=stderr, width=columns)
    if not out.is_terminal and columns is None:
        out = Console(stderr=stderr, width=PIPE_WIDTH)
    return out


def output_width(stderr: bool = False) -> int:
    """The columns a plain line printed on stdout (``stderr``: on stderr) may take: the terminal's width
    (``$COLUMNS`` first), or on a pipe ``$COLUMNS`` or :data:`PIPE_WIDTH`.  O(1)."""
    import os
    import sys

    columns = _columns_variable()
    if columns is not None:
        return columns
    stream = sys.stderr if stderr else sys.stdout
    try:
        if stream.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (AttributeError, OSError, ValueError):
        pass
    return PIPE_WIDTH


def wrap(text: str, width: int, indent: str = "  ") -> str:
    """``text`` wrapped at its spaces into lines of at most ``width`` columns, the continuation lines
    indented by ``indent``; a word (a number, a path) is never cut, so only a single word longer than
    the line can exceed it.  Existing line breaks are kept.  O(len(text))."""
    import textwrap

    lines = []
    for line in text.splitlines() or [""]:
        if len(line) <= width:
            lines.append(line)
            continue
        lines.extend(textwrap.wrap(line, width=width, subsequent_indent=indent, break_long_words=False,
                                   break_on_hyphens=False) or [""])
    return "\n".join(lines)


def say(text: str, stderr: bool = False, details: Sequence[str] = ()) -> None:
    """Print plain ``text`` (no markup) wrapped to :func:`output_width` (at most
    :data:`simsched.report.fit.MAX_COLUMNS`): a command's sentences and
    ``key: value`` lines, which would otherwise run past the terminal's edge.  Each of ``details``
    follows on its own line, indented by two spaces (its continuations by four), so a warning keeps a
    short first line and its particulars below.  O(len(text))."""
    import sys

    from simsched.report.fit import MAX_COLUMNS

    width = min(output_width(stderr), MAX_COLUMNS)
    stream = sys.stderr if stderr else sys.stdout
    stream.write("\n".join([wrap(text, width)] + [wrap("  " + d, width, "    ") for d in details]) + "\n")
    stream.flush()


class Progress:
    """A transient rich progress bar on stderr, shown only on a terminal and only once a run has
    taken longer than ``delay_s``: call it with ``(done, total, label)``; :meth:`close` ends it."""

    def __init__(self, delay_s: float = 0.5) -> None:
        self.console = console(stderr=True)
        self.delay_s = delay_s
        self.t0 = time.perf_counter()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.console.is_terminal:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < self.delay_s or done >= total:
                return
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TimeElapsedColumn(), console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(label, total=total)
        self.bar.update(self.task, completed=done, description=label)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class RunsBar:
    """A sweep's rich progress bar on stderr with runs done, rate and ETA (terminal only): call it with
    ``(done, total, failed)``; :meth:`close` ends it."""

    def __init__(self, description: str) -> None:
        self.console = console(stderr=True)
        self.description = description
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int, failed: int) -> None:
        if not self.console.is_terminal or total == 0:
            return
        if self.bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                ProgressColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress
            from rich.text import Text

            class Rate(ProgressColumn):
                def render(self, task: Any) -> Text:
                    return Text("-- runs/s" if task.speed is None else f"{task.speed:.1f} runs/s")

            self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TaskProgressColumn(), Rate(), TimeElapsedColumn(), TextColumn("ETA"),
                                    TimeRemainingColumn(), console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.description, total=total)
        note = f" ({failed} failed)" if failed else ""
        self.bar.update(self.task, completed=done, description=self.description + note)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def search_bar(total: int | None, seconds: float | None) -> tuple[RichProgress, Callable[[int, float, float], None]]:
    """A transient bar on stderr (drawn on a terminal only) for a search bounded by ``total`` iterations,
    ``seconds``, or both (then whichever is nearer its end), and the ``update(iteration, elapsed, best
    ratio)`` callback that moves it.  Use the bar as a context manager around the search."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    bar = RichProgress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[what]}"),
                       TimeElapsedColumn(), console=console(stderr=True), transient=True,
                       disable=not console(stderr=True).is_terminal)
    goal = float(total) if total is not None else float(seconds or 1.0)
    task = bar.add_task("searching", total=goal, what="")

    def update(i: int, elapsed: float, best: float) -> None:
        done = i if total is not None else elapsed
        if total is not None and seconds is not None:
            done = max(i / total, elapsed / seconds) * goal
        bar.update(task, completed=min(done, goal), what=f"iteration {i}, worst ratio {best:.4g}")

    return bar, update


def training_bar(out: Console, label: str) -> RichProgress:
    """A bar that stays on ``out`` when done (a training run's record), with a free ``info`` field for
    what the run reached; add its task with ``info=...``."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    return RichProgress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                        TimeElapsedColumn(), console=out, transient=False)
