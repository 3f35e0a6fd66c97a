"""What the contracts share: a violation per category, the report, and one hypothesis search per property.

The task-graph contract (:mod:`simsched.testing.contract`), the autotuning contract
(:mod:`simsched.testing.autotune_contract`) and the batch contract (:mod:`simsched.testing.batch_contract`)
each raise :func:`violation` in their checks, run each property through :func:`search_property` and
return a :class:`ContractReport`.  Cost of a search: ``examples`` runs of the check, plus shrinking when a
defect is found.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from simsched.simulator.problem import Problem
from simsched.testing.strategies import ProblemSpace, describe_problem


class ContractViolation(AssertionError):
    """A broken property; subclasses per category let hypothesis shrink each defect separately."""

    category = "violation"


_VIOLATION_TYPES: dict[str, type[ContractViolation]] = {}


def violation(category: str, message: str, example: Problem | None = None) -> ContractViolation:
    """A :class:`ContractViolation` of a class unique to ``category`` (raise it); ``example``: the
    problem to show instead of the drawn one (e.g. its infeasible variant)."""
    cls = _VIOLATION_TYPES.get(category)
    if cls is None:
        name = "".join(part.title() for part in category.replace("-", " ").split()) + "Violation"
        cls = type(name, (ContractViolation,), {"category": category})
        _VIOLATION_TYPES[category] = cls
    exc = cls(message)
    exc.example = example  # type: ignore[attr-defined]
    return exc


# --------------------------------------------------------------------------- report
@dataclass
class Defect:
    """One broken property with the smallest failing example found (``example``, ``seed``: the
    scheduler's rng seed)."""

    property: str
    category: str
    message: str
    example: Problem | None = None
    seed: int | None = None
    flaky: bool = False

    @property
    def example_text(self) -> str:
        if self.example is None:
            return "(no example captured)"
        return describe_problem(self.example) if isinstance(self.example, Problem) else str(self.example)

    def format(self) -> str:
        head = f"[{self.property}] {self.category}: {self.message}"
        if self.flaky:
            head += " (did not fail on every re-run: the scheduler is nondeterministic)"
        seed = f" (scheduler seed {self.seed})" if self.seed is not None else ""
        body = "\n".join("    " + line for line in self.example_text.splitlines())
        return f"{head}\n  smallest failing example{seed}:\n{body}"


@dataclass
class PropertyResult:
    """Outcome of one property: how many runs (examples tried, shrinking included) and the defects
    found (empty: passed)."""

    name: str
    description: str
    examples: int
    defects: list[Defect] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.defects


@dataclass
class ContractReport:
    """What a contract check found (:func:`~simsched.testing.contract.check_scheduler`, and the autotuning
    and batch contracts)."""

    scheduler: str
    kind: str
    origin: str
    seed: int
    space: ProblemSpace
    properties: list[PropertyResult] = field(default_factory=list)
    elapsed_s: float = 0.0
    scope: str = ""
    """What the examples span, in words (default: from ``space``)."""

    def __post_init__(self) -> None:
        if not self.scope:
            self.scope = f"up to {self.space.max_tasks} tasks on {self.space.max_processors} processors"

    @property
    def passed(self) -> bool:
        return all(p.passed for p in self.properties)

    @property
    def defects(self) -> list[Defect]:
        return [d for p in self.properties for d in p.defects]

    def format(self) -> str:
        """Plain-text report: one line per property, each defect with its smallest example."""
        lines = [f"contract check of {self.scheduler} ({self.kind}, {self.origin}): "
                 + ("passed" if self.passed else f"{len(self.defects)} defect(s)")]
        for p in self.properties:
            lines.append(f"  {'ok  ' if p.passed else 'FAIL'} {p.name}: {p.description} ({p.examples} runs)")
        for d in self.defects:
            lines.append(d.format())
        return "\n".join(lines)

    def raise_if_failed(self) -> None:
        """``AssertionError`` with :meth:`format` when a defect was found (for use in tests)."""
        if not self.passed:
            raise AssertionError(self.format())


def where(exc: BaseException) -> str:
    """Where ``exc`` was raised, as `` (in FUNCTION, FILE:LINE)``; empty without a traceback."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return ""
    frame = tb[-1]
    return f" (in {frame.name}, {frame.filename}:{frame.lineno})"


# --------------------------------------------------------------------------- search
@contextlib.contextmanager
def hypothesis_home_outside_cwd() -> Iterator[None]:
    """Inside the block, hypothesis keeps its files (the cache of constants it reads from the modules
    under test; :func:`search_property` keeps no example database) in a temporary folder removed
    afterwards, instead of ``.hypothesis/`` in the current folder; a ``HYPOTHESIS_STORAGE_DIRECTORY`` the user set
    is left in charge.  For the command line (``simsched check``); test suites keep their own folder.
    The previous home is restored on exit.  O(1) plus the removal of what hypothesis wrote."""
    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    previous = storage_directory(intent_to_write=False).home_directory
    with tempfile.TemporaryDirectory(prefix="simsched-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            set_hypothesis_home_dir(previous)


def _flatten(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)  # an ExceptionGroup (a backport on Python 3.10)
    if isinstance(inner, (tuple, list)):
        return [e for sub in inner for e in _flatten(sub)]
    return [exc]


def search_property(name: str, check: Callable[..., None], strategy: st.SearchStrategy, examples: int,
                    seed: int, description: str) -> PropertyResult:
    """Run ``check`` on up to ``examples`` draws of ``strategy`` (the search seeded with ``seed``); each
    distinct failure becomes a :class:`Defect` with the shrunk example hypothesis replayed last; the
    property is reported as ``name``, described by ``description``."""
    calls = 0

    def body(args: tuple) -> None:
        nonlocal calls
        calls += 1
        try:
            check(*args)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            exc._simsched_example = args  # type: ignore[attr-defined]
            raise

    run = settings(max_examples=examples, deadline=None, database=None, derandomize=False, print_blob=False,
                   report_multiple_bugs=True, verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
                   phases=[Phase.explicit, Phase.generate, Phase.shrink])(given(strategy)(body))
    run = hypothesis_seed(seed)(run)
    result = PropertyResult(name, description, 0)
    try:
        run()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        flaky = isinstance(exc, Flaky)
        for err in _flatten(exc):
            args = getattr(err, "_simsched_example", None)
            if isinstance(err, ContractViolation):
                category, message = err.category, str(err).split("\n")[0]
            elif isinstance(err, Flaky):
                category, message = "flaky", str(err).split("\n")[0]
            else:
                category, message = "crash", f"{type(err).__name__}: {err}{where(err)}"
            example = getattr(err, "example", None) or (args[0] if args else None)
            defect = Defect(name, category, message, example, args[1] if args else None, flaky)
            if not any(d.category == category and d.message == message for d in result.defects):
                result.defects.append(defect)
    result.examples = calls
    return result
