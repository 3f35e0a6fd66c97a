"""What every command shares: the one-line error format, the exit code of user errors, a console,
the run comparison table (:func:`print_report`), warning lines and a progress bar (:class:`Progress`).

Kept apart from :mod:`simsched.cli.main` so that command modules can import it at load time without
an import cycle (``python -m simsched.cli.main`` runs ``main`` as ``__main__``).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import sys
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from simsched.errors import DataRepairWarning, SimschedError
from simsched.outputs import release_outputs

if TYPE_CHECKING:
    from rich.console import Console

    from simsched.run.runner import RunReport

F = TypeVar("F", bound=Callable[..., Any])


GC_FIRST_GENERATION = 50_000
"""Allocations between first-generation collections while a big run works (CPython's default: 700)."""


@contextlib.contextmanager
def fewer_collections() -> Any:
    """Run the block with the cyclic garbage collector's first threshold at
    :data:`GC_FIRST_GENERATION`, restoring the thresholds after.  A run builds millions of small
    objects without cycles (SimPy events, result records, edge lists); at the default threshold the
    collector re-walks the ones alive hundreds of times, ~15% of ``simsched run``'s CPU at 100k tasks.
    Garbage in cycles is still collected, only less often.  O(1)."""
    before = gc.get_threshold()
    gc.set_threshold(GC_FIRST_GENERATION, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


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
                _check_numbers(func, args, kwargs)
                result = func(*args, **kwargs)
            except SimschedError as exc:  # numeric noise from the bad input must not precede the error line
                print_error(str(exc))
                raise typer.Exit(exc.exit_code) from None
            except KeyboardInterrupt:
                print_error("interrupted")
                raise typer.Exit(130) from None
            except OSError as exc:  # a file the user named that the system refuses (name too long, a loop, ...)
                if exc.filename is None:
                    raise
                name = str(exc.filename)
                name = name if len(name) <= 80 else f"{name[:80]}... ({len(name):,} characters)"
                print_error(f"{name}: {exc.strerror or exc}")
                raise typer.Exit(2) from None
            except BaseException:
                _replay(caught)
                raise
            finally:
                release_outputs()  # the output locks check_output took for this command
        _replay(caught)
        return result

    return wrapper  # type: ignore[return-value]


def _option_name(func: Callable[..., Any], name: str) -> str:
    """The command-line spelling of ``func``'s parameter ``name`` (``max_capacity`` -> ``--max``)."""
    try:
        default = inspect.signature(func).parameters[name].default
    except (KeyError, TypeError, ValueError):
        default = None
    decls = [d for d in (getattr(default, "param_decls", None) or ()) if isinstance(d, str) and d.startswith("--")]
    return decls[0] if decls else "--" + name.replace("_", "-")


def _check_numbers(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The shared number rule for every command's numeric options, before the command runs: no NaN,
    no infinity (an infinite budget never ends), magnitudes within :data:`simsched.limits.MAX_VALUE`
    (integers within int64).  :class:`SimschedError` naming the option.  O(options)."""
    from simsched import limits

    try:
        given = inspect.signature(func).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        given = dict(kwargs)
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        try:
            limits.not_a_number_check(value, integer=isinstance(value, int))
        except ValueError as exc:
            raise SimschedError(f"{_option_name(func, name)}: {exc}, got {value!r}") from None


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


def _no_type_on_flags() -> None:
    """``--help`` shows a value type (``<int>``, ``<path>``) only for options that take a value: a
    plain flag (``--report``, ``--help``) gets none, rather than typer's ``<bool>``."""
    import typer.core

    show = typer.core.TyperOption.display_type_rich
    if getattr(show, "_simsched_flags", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        return show(self, ctx)

    display_type_rich._simsched_flags = True  # type: ignore[attr-defined]
    typer.core.TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_no_type_on_flags()
