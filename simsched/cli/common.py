"""What every command shares: the one-line error format, the exit code of user errors, the number rule
for numeric options, SIGTERM's unwinding, warning lines and how a long run that saves as it goes ends
early.  The console the commands print to is :func:`simsched.report.terminal.console` (named here too).

Kept apart from :mod:`simsched.cli.main` so that command modules can import it at load time without
an import cycle (``python -m simsched.cli.main`` runs ``main`` as ``__main__``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import typer
import typer.core

from simsched.errors import DataRepairWarning, SimschedError
from simsched.fileio import interrupt, reading
from simsched.outputs import release_outputs
from simsched.report.terminal import console  # noqa: F401  (the commands import it here)

F = TypeVar("F", bound=Callable[..., Any])


def print_error(message: str) -> None:
    """Print one ``error: ...`` line on stderr (plain text: no markup, no wrapping)."""
    from simsched.outputs import printable

    sys.stderr.write("error: " + printable(" ".join(str(message).split())) + "\n")
    sys.stderr.flush()


class Terminated(BaseException):
    """SIGTERM arrived while a command ran: raised in the main thread so that the command unwinds —
    output locks released, temporary files removed, a sweep's finished rows saved — instead of the
    process vanishing and leaving them behind."""


TERM_GRACE_S = 20.0
"""Seconds a SIGTERM'd command may take to unwind in a process started as the ``simsched`` program
(:func:`standalone`): then a watchdog thread removes its output locks, prints ``error: terminated``
and ends the process with exit code 143 whatever the main thread is waiting for (a worker pool's
running task, a thread that never ends, a lock an interrupted library left taken)."""

_TERM = {"standalone": False, "terminating": False}


def standalone() -> None:
    """Mark this process as the ``simsched`` program (its entry point calls this): a SIGTERM then also
    arms the watchdog of :data:`TERM_GRACE_S`.  A command run inside another program (a test's
    ``CliRunner``) never has its process ended by it."""
    _TERM["standalone"] = True


def _force_exit() -> None:  # pragma: no cover - runs in the watchdog thread of a process it then ends
    with contextlib.suppress(BaseException):
        release_outputs()
    with contextlib.suppress(BaseException):
        print_error("terminated")
    import os

    os._exit(143)


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM: raise :class:`Terminated` in the main thread (at once, or when the current
    :func:`~simsched.fileio.signals_deferred` block ends, so that no lock or temporary file is made and
    then forgotten); a standalone process also arms the watchdog.  A second SIGTERM while the first
    unwinds changes nothing (raising again would cut the unwinding's own cleanup short)."""
    if _TERM["terminating"]:
        return
    _TERM["terminating"] = True
    if _TERM["standalone"]:
        import threading

        watchdog = threading.Timer(TERM_GRACE_S, _force_exit)
        watchdog.daemon = True
        watchdog.name = "simsched-sigterm-watchdog"
        watchdog.start()
    interrupt(Terminated())


@contextlib.contextmanager
def _sigterm_unwinds() -> Any:
    """SIGTERM raises :class:`Terminated` for the block (main thread only, and only where nobody
    else handles SIGTERM)."""
    import signal
    import threading

    previous = None
    _TERM["terminating"] = False
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def recorded_reads(func: F) -> F:
    """Run the command with its own read set (:func:`simsched.fileio.reading`): every file it reads
    is recorded, and no output of it may be, or link to, one of them.  SIGTERM unwinds the command
    (:class:`Terminated`): ``error: terminated`` and exit code 143, nothing left behind."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _sigterm_unwinds(), reading():
                return func(*args, **kwargs)
        except Terminated:
            release_outputs()
            print_error("terminated")
            raise typer.Exit(143) from None

    return wrapper  # type: ignore[return-value]


def user_errors(func: F) -> F:
    """Turn a :class:`SimschedError` raised by a command into ``error: <message>`` and its exit code
    (2); Ctrl-C into ``error: interrupted`` and 130.  Never a traceback for either.  The command runs
    with its own read set (:func:`recorded_reads`)."""

    @functools.wraps(func)
    @recorded_reads
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
            if issubclass(w.category, DataRepairWarning):  # what an importer repaired: one plain paragraph
                warning_line(str(w.message))
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def warning_line(message: str) -> None:
    """One ``warning: ...`` paragraph on stderr: the message's first line, then each further line (a
    warning's particulars, such as a checkpoint's training range) indented below it; every line
    wrapped to the terminal's width with indented continuations (:func:`simsched.report.terminal.say`)."""
    from simsched.report.terminal import say

    lines = [" ".join(part.split()) for part in message.splitlines()]
    lines = [line for line in lines if line] or [""]
    say("warning: " + lines[0], stderr=True, details=lines[1:])


class OneLineUsageErrors(typer.core.TyperGroup):
    """The top-level command group, with the promised error format for usage mistakes too: an unknown
    option, a missing argument or a bad value ends as ONE line ``error: run: No such option:
    --bogus (see `simsched run --help`)`` on stderr and exit code 2, not typer's boxed panel.  Built on click's
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
        print_error(usage_line(e))
        raise typer.Exit(2) from None


def usage_line(exc: Any) -> str:
    """The one line a click exception (a usage mistake, a bad value) becomes: ``COMMAND: message (see
    `simsched COMMAND --help`)``, the command path without the program name.  O(1)."""
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or "simsched"
    where = f"{path.removeprefix('simsched').strip()}: " if path != "simsched" else ""
    hint = f" (see `{path} --help`)" if ctx is not None else ""
    return f"{where}{exc.format_message()}{hint}"


def _is_usage_error(e: BaseException) -> bool:
    """Whether ``e`` is click's ``UsageError`` (exit code 2, ``format_message``), other than the "no
    arguments: show the help" one.  Matched by what it carries, not by class: typer from 0.2x ships its own
    copy of click, whose exception classes are not the ``click`` package's."""
    return (getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))
            and type(e).__name__ != "NoArgsIsHelpError")


@contextlib.contextmanager
def keeps_finished_work(close: Callable[[], None], keep: str) -> Iterator[None]:
    """How a long run that saves as it goes ends early (sweeps, capacity searches): a lost worker as a
    one-line error (exit 2), Ctrl-C as ``interrupted`` (exit 130), each followed by ``keep`` (where the
    finished work is and how to continue); ``close`` (the progress display) runs in every case."""
    from simsched.run.executors import WorkerLost

    try:
        yield
    except WorkerLost as exc:
        raise SimschedError(f"{exc.message}{keep}") from None
    except KeyboardInterrupt:
        close()
        print_error(f"interrupted{keep}")
        raise typer.Exit(130) from None
    finally:
        close()
