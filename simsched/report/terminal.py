"""The terminal a command prints to: its console, and the progress bars long commands show on stderr.

* :func:`console`: a rich console, 200 columns wide on a pipe so that no row wraps;
* :class:`Progress`: a run's bar, shown only on a terminal and only once the run has taken a while;
* :class:`RunsBar`: a sweep's bar, with runs done, their rate and the time left;
* :func:`search_bar`: a search bounded by iterations, by seconds or by both (``simsched adversary``);
* :func:`training_bar`: a training run's bar with a line of what it reached (``simsched train rl``).

rich is imported inside each function, so a command that never draws a bar never loads it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress

PIPE_WIDTH = 200
"""Columns of a console that is not a terminal (a pipe, a test): wide enough that table rows never wrap
or truncate names."""


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (``stderr``: on stderr); :data:`PIPE_WIDTH` wide when not a terminal."""
    from rich.console import Console

    out = Console(stderr=stderr)
    if not out.is_terminal:
        out = Console(stderr=stderr, width=PIPE_WIDTH)
    return out


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
