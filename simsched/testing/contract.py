"""``check_scheduler``: the contract every simsched scheduler meets, checked by property-based search.

In the spirit of gymnasium's ``check_env``: hand it a scheduler (a registered name, an import path
``my_pkg.sched:MyScheduler``, a class or an instance) and it searches random problems
(:mod:`simsched.testing.strategies`) for a violation of each property below, using hypothesis.  Each
defect is reported with the *smallest* failing example hypothesis could shrink it to.

Properties (``static``: planners; ``online``: policies):

A scheduler that declares ``multiprocessor_tasks = True`` also meets problems whose tasks need
several processors at once (``ProblemSpace(gang=True)``: rigid and moldable tasks, Amdahl's law or Downey's model),
and a policy's gang assignments are checked like single ones (distinct, eligible, k in range).

* ``valid`` — the schedule is valid (:func:`~simsched.simulator.schedule.validate_schedule` finds
  nothing): every task runs once, on an eligible processor, after its inputs arrived, without
  overlap, for the time the cost model gives.  For a planner: its own planned times (when it gives
  them) and the SimPy execution of its plan (which must not deadlock).  For a policy: it only
  assigns ready, unassigned tasks to eligible processors, and never stalls.
* ``bound`` — the schedule ends no earlier than :func:`~simsched.simulator.bounds.finish_bound`
  (the makespan lower bound of :func:`~simsched.simulator.bounds.lower_bound` put on the clock with
  the tasks' arrivals: both measured from time 0).
* ``determinism`` — the same seed gives the same plan / schedule (three fresh instances).
* ``replay`` (static) — executing the plan in the SimPy engine gives the fast evaluator's times and
  the planner's own planned times when it gives them.
* ``no-mutation`` — the input problem is unchanged afterwards (array contents and flags, attributes).
* ``infeasible`` — on a problem with a task no processor may run, the run ends in a
  :class:`~simsched.errors.SimschedError`, not another exception.
* ``no-future`` (online) — a policy's decisions before time ``t`` do not depend on anything that
  arrives at ``t`` or later: the run is repeated with every such task's costs, priority and input
  data replaced and two more tasks arriving after ``t``, and the decisions made before ``t`` must
  be identical.  The engine's arrived-only view (:mod:`simsched.simulator.arrived`) is what makes
  this hold for every policy; the check is the evidence.

Each property is one hypothesis search of ``examples`` examples (fewer for slow schedulers, see
the ``check`` hints of the scheduler's :class:`~simsched.schedulers.registry.SchedulerSpec`);
cost ≈ properties x examples x one scheduler run on a problem of at most ``max_tasks`` tasks, plus
shrinking when a defect is found.

The rooms: the scheduler under test (:mod:`simsched.testing.contract_subject`), the properties
(:mod:`simsched.testing.contract_properties`), and what the three contracts share, violations, the
report (:class:`ContractReport`, what :func:`check_scheduler` returns) and the search
(:mod:`simsched.testing.contract_search`); this module assembles them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.testing.contract_properties import (
    prop_bound,
    prop_determinism,
    prop_infeasible,
    prop_no_future,
    prop_no_mutation,
    prop_replay,
    prop_valid,
)
from simsched.testing.contract_search import ContractReport, ContractViolation, search_property
from simsched.testing.contract_subject import Subject
from simsched.testing.strategies import DEGENERATE, ProblemSpace, problems

__all__ = ["ONLINE_ONLY", "PROPERTIES", "STATIC_ONLY", "VALIDITY_CATEGORIES", "ContractReport", "check_scheduler"]

PROPERTIES: dict[str, str] = {
    "valid": "valid schedules; a policy assigns ready tasks only",
    "bound": "makespan >= lower bound",
    "determinism": "same seed => same plan / schedule",
    "replay": "SimPy replay = fast evaluator = the planner's own times",
    "no-mutation": "the input problem is not modified",
    "infeasible": "an infeasible problem: a SimschedError, not a crash",
    "no-future": "decisions before t ignore all that arrives from t on",
}
STATIC_ONLY = {"replay"}
ONLINE_ONLY = {"no-future"}

VALIDITY_CATEGORIES = {"not-executable", "interface", "stall", "engine-rejected", "assignment", "eligibility"}
"""Violations the ``valid`` property reports; other properties skip such examples rather than
report the same defect again."""


def _leaving_to_valid(check: Callable[..., None]) -> Callable[..., None]:
    """``check``, passing over the violations the ``valid`` property reports (:data:`VALIDITY_CATEGORIES`)."""
    def wrapped(*args: Any) -> None:
        try:
            check(*args)
        except ContractViolation as exc:
            if exc.category not in VALIDITY_CATEGORIES:
                raise

    return wrapped


def check_scheduler(
    scheduler: Any,
    examples: int = 50,
    seed: int = 0,
    *,
    params: dict[str, Any] | None = None,
    space: ProblemSpace | None = None,
    properties: list[str] | None = None,
) -> ContractReport:
    """Check ``scheduler`` against the contract; returns a :class:`ContractReport` (``.passed``,
    ``.defects``, ``.format()``, ``.raise_if_failed()``).

    ``scheduler`` is a registered name, an import path ``module:Class``, a class (constructed with
    ``params``) or an instance (deep-copied for every run).  ``examples`` per property; ``seed``
    makes the search reproducible; ``space`` (default: :class:`ProblemSpace` with eligibility
    constraints, arrivals, several hosts, zero-cost tasks, edges without data, indices out of
    topological order, mixed half and half with :data:`~simsched.testing.strategies.DEGENERATE`)
    is clipped by the scheduler's size hints
    (:func:`simsched.schedulers.registry.check_hints`).  ``properties`` restricts the check to some
    of :data:`PROPERTIES`.  A scheduler that cannot be loaded or implements no interface raises
    :class:`SimschedError`.  Cost: see the module docstring.
    """
    t0 = time.perf_counter()
    if examples < 1:
        raise SimschedError(f"examples must be >= 1, got {examples}")
    subject = Subject(scheduler, dict(params or {}))
    given_space = space
    space = space or ProblemSpace(max_tasks=8, max_processors=4, eligibility=0.3, arrivals=10.0, zero_costs=True,
                                  zero_data=True, shuffled=True)
    hints = subject.hints

    def clip(sp: ProblemSpace) -> ProblemSpace:
        return sp.replace(
            max_tasks=max(sp.min_tasks, min(sp.max_tasks, hints.get("max_tasks", sp.max_tasks))),
            max_processors=max(sp.min_processors, min(sp.max_processors,
                                                      hints.get("max_processors", sp.max_processors))))

    space = clip(space)
    # without a given space, half the draws are tiny degenerate problems (zero costs, ties, one
    # processor, indices out of topological order): where 15 planners once deadlocked
    drawn = problems(space) if given_space is not None else problems(space) | problems(clip(DEGENERATE))
    if getattr(subject.prototype, "multiprocessor_tasks", False) and not space.gang:
        # a gang-aware scheduler meets rigid and moldable multi-processor tasks too
        drawn = drawn | problems(space.replace(gang=True))
    examples = max(1, min(examples, hints.get("examples", examples)))
    wanted = [p for p in PROPERTIES if (properties is None or p in properties)
              and not (p in STATIC_ONLY and subject.kind != "static")
              and not (p in ONLINE_ONLY and subject.kind != "online")]
    unknown = set(properties or ()) - set(PROPERTIES)
    if unknown:
        raise SimschedError(f"unknown contract properties {sorted(unknown)}; choose from {list(PROPERTIES)}",
                             field="--property")
    report = ContractReport(subject.label, subject.kind, subject.origin, seed, space)
    seeds = st.integers(0, 2**32 - 1)
    checks: dict[str, Callable[..., None]] = {
        "valid": prop_valid, "bound": prop_bound, "determinism": prop_determinism,
        "replay": prop_replay, "no-mutation": prop_no_mutation, "no-future": prop_no_future,
    }
    for name in wanted:
        if name in checks and name != "valid" and "valid" in wanted:
            checks[name] = _leaving_to_valid(checks[name])
        if name == "infeasible":
            strategy = st.tuples(drawn, seeds, st.integers(0, 1000))
            check: Callable[..., None] = lambda p, s, t: prop_infeasible(subject, p, s, t)  # noqa: E731
        else:
            strategy = st.tuples(drawn, seeds)
            check = (lambda f: lambda p, s: f(subject, p, s))(checks[name])
        report.properties.append(search_property(name, check, strategy, examples, seed, PROPERTIES[name]))
    report.elapsed_s = time.perf_counter() - t0
    return report
