"""What every command shares: the one-line error format, the exit code of user errors, a console.

Kept apart from :mod:`simsched.cli.main` so that command modules can import it at load time without
an import cycle (``python -m simsched.cli.main`` runs ``main`` as ``__main__``).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from simsched.errors import DataRepairWarning, SimschedError

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


def print_error(message: str) -> None:
    """Print one ``error: ...`` line on stderr (plain text: no markup, no wrapping)."""
    sys.stderr.write("error: " + " ".join(str(message).split()) + "\n")
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
