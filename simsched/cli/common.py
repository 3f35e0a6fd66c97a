"""What every command shares: the one-line error format, the exit code of user errors, a console,
the run comparison table (:func:`print_report`), warning lines and a progress bar (:class:`Progress`).

Kept apart from :mod:`simsched.cli.main` so that command modules can import it at load time without
an import cycle (``python -m simsched.cli.main`` runs ``main`` as ``__main__``).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer
import typer.core

from simsched.errors import DataRepairWarning, SimschedError
from simsched.limits import GC_FIRST_GENERATION, fewer_collections  # noqa: F401  (the commands import them here)
from simsched.outputs import release_outputs

if TYPE_CHECKING:
    from rich.console import Console

    from simsched.run.runner import RunReport

F = TypeVar("F", bound=Callable[..., Any])





def print_error(message: str) -> None:
    """Print one ``error: ...`` line on stderr (plain text: no markup, no wrapping)."""
    from simsched.outputs import printable

    sys.stderr.write("error: " + printable(" ".join(str(message).split())) + "\n")
    sys.stderr.flush()


def user_errors(func: F) -> F:
    """Turn a :class:`SimschedError` raised by a command into ``error: <message>`` and its exit code
    (2); Ctrl-C into ``error: interrupted`` and 130.  Never a traceback for either."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            warnings.simplefilter("always", DataRepairWarning)
            try:
                result = func(*args, **kwargs)
            except SimschedError as exc:  # numeric noise from the bad input must not precede the error line
                print_error(str(exc))
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt:
                print_error("interrupted")
                raise typer.Exit(130) from None
            except BaseException:
                _replay(caught)
                raise
            finally:
                release_outputs()  # the output locks check_output took for this command
        _replay(caught)
        return result

    return wrapper  # type: ignore[return-value]


def _replay(caught: list[warnings.WarningMessage]) -> None:
    """Show warnings held back while a command ran (once each, as Python would have)."""
    seen: set[tuple[str, type, str]] = set()
    for w in caught:
        key = (str(w.message), w.category, w.filename)
        if key not in seen:
            seen.add(key)
            if issubclass(w.category, DataRepairWarning):  # what an importer repaired: one plain line
                sys.stderr.write("warning: " + " ".join(str(w.message).split()) + "\n")
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def console(stderr: bool = False) -> Console:
    """A rich console; on pipes and in tests wide enough (200 columns) that table rows never wrap
    or truncate names."""
    from rich.console import Console

    out = Console(stderr=stderr)
    if not out.is_terminal:
        out = Console(stderr=stderr, width=200)
    return out


def _fmt(value: float, digits: int = 5) -> str:
    if value != value:  # nan
        return "-"
    return f"{value:.{digits}g}"


def _column(summary: list[dict], key: str, reps: int, scale: float = 1.0, unit: str = "", digits: int = 4) -> list[str]:
    """One table column: ``mean`` or ``mean ± std`` over the repetitions, one precision for the column."""
    from simsched.report.numbers import format_column

    means = [s[key][0] * scale for s in summary]
    stds = [s[key][1] * scale for s in summary] if reps > 1 else None
    return format_column(means, stds, digits=digits, unit=unit)


def _time_column(summary: list[dict], reps: int) -> list[str]:
    """Wall times, each in its own unit (ms or s) with 3 significant digits: they span decades."""
    from simsched.report.numbers import format_duration

    return [format_duration(s["scheduler_time_s"][0], s["scheduler_time_s"][1] if reps > 1 else float("nan"))
            for s in summary]


def warning_line(message: str) -> None:
    """One ``warning: ...`` line on stderr."""
    import sys

    sys.stderr.write("warning: " + " ".join(message.split()) + "\n")


def print_report(report: RunReport, console: Console) -> None:
    """The comparison table: one row per scheduler, mean ± std over the repetitions; with two or more
    repetitions, the makespan's paired ratio to the best scheduler on the same seeds (95% interval),
    and green only for a significantly best makespan (:func:`simsched.study.stats.paired_comparison`)."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.run.runner import summarize

    problem, scenario, reps = report.problem, report.scenario, report.repetitions
    kinds: dict[str, int] = {}
    for p in problem.platform.processors:
        kinds[p.type] = kinds.get(p.type, 0) + 1
    platform = ", ".join(f"{k} {t}" for t, k in kinds.items())
    noise = scenario.noise
    noise_text = "no noise" if noise.deterministic else f"{noise.model} noise (sigma {noise.sigma:g})"
    table = Table(
        title=escape(f"{scenario.name}: {problem.n_tasks} tasks, {problem.graph.n_edges} edges on "
                     f"{problem.n_processors} processors ({platform})"),
        caption=escape(f"seed {report.seed}, {reps} repetition{'s' if reps > 1 else ''}"
                       f"{' (mean ± std)' if reps > 1 else ''}, {noise_text}; "
                       f"makespan lower bound {_fmt(report.lower_bound)}"),
    )
    table.add_column("scheduler", style="bold")
    for name in ("makespan", "avg turnaround", "avg waiting", "utilisation", "vs bound", "scheduler time"):
        table.add_column(name, justify="right")
    from simsched.run.streams import table_columns

    stream_cols = table_columns(report)  # job-stream columns of a dynamic scenario
    for _key, header, _scale, _unit in stream_cols:
        table.add_column(header, justify="right")
    summary = summarize(report)
    stream_summary = summarize(report, [key for key, *_ in stream_cols])
    extra = list(zip(*[_column(stream_summary, key, reps, scale, unit, 4 if scale == 1 else 3)
                       for key, _h, scale, unit in stream_cols])) or [()] * len(summary)
    paired = None
    if reps > 1 and len(summary) > 1:  # the same seeds for every scheduler: compare them pair by pair
        from simsched.study.stats import format_ratio, paired_comparison

        key, what = ("jct_mean", "mean JCT") if stream_cols else ("makespan", "makespan")  # a stream: jobs count
        paired = paired_comparison(report.rows, key)
        table.add_column(f"{what} vs best (paired)", justify="right")
        table.caption = escape(f"{table.caption}; green: significantly best {what} (paired 95% interval "
                               "against every other excludes no difference)")
    best = min((s["makespan"][0] for s in summary), default=float("nan"))
    bound = report.lower_bound
    columns = zip(_column(summary, "makespan", reps), _column(summary, "avg_turnaround", reps),
                  _column(summary, "avg_waiting", reps), _column(summary, "utilization", reps, 100.0, "%", 3),
                  _time_column(summary, reps))
    for s, (makespan, turnaround, waiting, utilisation, wall), more in zip(summary, columns, extra):
        gap = s["makespan"][0] / bound - 1 if bound > 0 else float("nan")
        green = s["makespan"][0] <= best * (1 + 1e-12) if paired is None else (paired["best"] == s["scheduler"]
                                                                             and not stream_cols)
        cells = [escape(s["scheduler"]), f"[green]{makespan}[/green]" if green else makespan,
                 turnaround, waiting, utilisation, "-" if gap != gap else f"+{100 * gap:.1f}%", wall, *more]
        if stream_cols and paired is not None and paired["best"] == s["scheduler"]:
            cells[7] = f"[green]{cells[7]}[/green]"  # the mean JCT column, which a stream is compared on
        if paired is not None:
            ratio = format_ratio(paired["ratios"].get(s["scheduler"], {}))
            cells.append(escape(ratio + (" ref" if paired["reference"] == s["scheduler"] else "")))
        table.add_row(*cells)
    for label in report.declined:
        cells = [escape(label), "declined", "-", "-", "-", "-", "-", *["-"] * len(stream_cols)]
        table.add_row(*cells, *(["-"] if paired is not None else []))
    console.print(table)
    for label, reason in report.declined.items():
        console.print(escape(f"{label} declined: {reason}"))


class Progress:
    """A transient rich progress bar on stderr, shown only on a terminal and only once a run has
    taken longer than ``delay_s``."""

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
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
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


class OneLineUsageErrors(typer.core.TyperGroup):
    """The top-level command group, with the promised error format for usage mistakes too: an unknown
    option, a missing argument or a bad value ends as ONE line ``error: simsched run: No such option:
    --bogus (see simsched run --help)`` on stderr and exit code 2, not typer's boxed panel.  Built on click's
    public extension points (a group class given to ``typer.Typer(cls=...)`` that overrides
    ``make_context`` and ``invoke``), so no third-party attribute is replaced.  A group called without
    arguments still prints its help (click's ``NoArgsIsHelpError`` passes through).  O(1)."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        with _one_line_usage_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def _one_line_usage_errors() -> Any:
    try:
        yield
    except Exception as e:
        if not _is_usage_error(e):
            raise
        ctx = getattr(e, "ctx", None)
        path = getattr(ctx, "command_path", None) or "simsched"
        print_error(f"{path}: {e.format_message()} (see {path} --help)")  # type: ignore[attr-defined]
        raise typer.Exit(2) from None


def _is_usage_error(e: BaseException) -> bool:
    """Whether ``e`` is click's ``UsageError`` (exit code 2, ``format_message``), other than the "no
    arguments: show the help" one.  Matched by what it carries, not by class: typer from 0.2x ships its own
    copy of click, whose exception classes are not the ``click`` package's."""
    return (getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))
            and type(e).__name__ != "NoArgsIsHelpError")
