"""The contract of a batch policy (``simsched check easy-backfill``): properties every registered
``batch`` policy meets on the SimPy batch engine (:func:`simsched.simulator.batch.simulate_batch`),
searched with hypothesis like the task-graph contract (:mod:`simsched.testing.contract`).

Each example is a small random cluster log: 1-25 rigid jobs of 1-m processors on m = 1-8 processors,
submit ties, zero-length jobs, a job as wide as the machine, requested times equal to, above or
below the run time, with and without killing at the requested time.  Properties:

* ``complete`` — every job starts, never before its submit time, and holds its processors for its
  run time (its requested time when killed earlier);
* ``capacity`` — never more processors in use than the machine has;
* ``determinism`` — the same log gives the same start times twice.

Cost ≈ properties x examples x one replay (jobs x the policy's cost per decision), plus shrinking.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from simsched.schedulers import registry
from simsched.simulator.batch import BatchResult, simulate_batch
from simsched.testing.contract_search import ContractReport, search_property, violation
from simsched.testing.strategies import ProblemSpace
from simsched.workloads.importers.swf import RigidTrace, make_trace

BATCH_PROPERTIES: dict[str, str] = {
    "complete": "each job starts after submit, runs its time (or request)",
    "capacity": "never more processors in use than exist",
    "determinism": "same log => same start times",
}


@dataclass(frozen=True)
class BatchCase:
    """One example: the log, the machine's processors, whether jobs are killed at their request."""

    trace: RigidTrace
    m: int
    kill: bool

    def __str__(self) -> str:
        t = self.trace
        jobs = "; ".join(f"j{i}: submit {s:g}, run {r:g}, requested {q:g}, {p} procs" for i, (s, r, q, p) in
                         enumerate(zip(t.submit.tolist(), t.run.tolist(), t.requested.tolist(), t.procs.tolist())))
        return f"{self.m} processors{', killed at the requested time' if self.kill else ''}\n{jobs}"


@st.composite
def batch_cases(draw: Any) -> BatchCase:
    """Small random logs (see the module docstring)."""
    m = draw(st.integers(1, 8))
    n = draw(st.integers(1, 25))
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 10]), min_size=n, max_size=n))).astype(float)
    run = draw(st.lists(st.sampled_from([0, 1, 2, 3, 7, 10, 20]), min_size=n, max_size=n))
    how = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    req = [r if c == 0 else r + 5 if c == 1 else max(r - 2, 0) if c == 2 else -1 for r, c in zip(run, how)]
    procs = draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    if draw(st.booleans()):
        procs[draw(st.integers(0, n - 1))] = m
    return BatchCase(make_trace(submit, run, procs, req), m, draw(st.booleans()))


def _run(name: str, params: dict[str, Any], case: BatchCase) -> BatchResult:
    return simulate_batch(case.trace, case.m, registry.create(name, kinds=("batch",), **params), kill=case.kill)


def _prop_complete(r: BatchResult, case: BatchCase) -> None:
    t = case.trace
    if np.isnan(r.start).any():
        raise violation("unstarted", f"job {int(np.flatnonzero(np.isnan(r.start))[0])} never starts")
    early = np.flatnonzero(r.start < t.submit)
    if early.size:
        j = int(early[0])
        raise violation("before-submit", f"job {j} starts at {r.start[j]:g}, before its submit time {t.submit[j]:g}")
    want = np.minimum(t.run, t.requested) if case.kill else t.run
    wrong = np.flatnonzero(~np.isclose(r.end - r.start, want))
    if wrong.size:
        j = int(wrong[0])
        raise violation("duration", f"job {j} holds its processors {r.end[j] - r.start[j]:g} s, not {want[j]:g} s")


def _prop_capacity(r: BatchResult, case: BatchCase) -> None:
    t = np.concatenate([r.start, r.end])
    d = np.concatenate([case.trace.procs, -case.trace.procs])
    order = np.lexsort((d, t))  # releases before takes at one instant
    used = np.cumsum(d[order])
    if used.size and used.max() > case.m:
        k = int(np.argmax(used))
        raise violation("over-capacity", f"{int(used[k])} processors in use at {t[order][k]:g}, the machine has "
                                         f"{case.m}")


def check_batch_policy(name: str, examples: int = 50, seed: int = 0, *, params: dict[str, Any] | None = None,
                       properties: list[str] | None = None) -> ContractReport:
    """Check the registered batch policy ``name`` against :data:`BATCH_PROPERTIES`; returns a
    :class:`~simsched.testing.contract_search.ContractReport`.  A name that is not a registered ``batch``
    policy, a bad parameter or an unknown property raises :class:`~simsched.errors.SimschedError`."""
    from simsched.errors import SimschedError

    t0 = time.perf_counter()
    if examples < 1:
        raise SimschedError(f"examples must be >= 1, got {examples}")
    params = dict(params or {})
    registry.create(name, kinds=("batch",), **params)
    unknown = set(properties or ()) - set(BATCH_PROPERTIES)
    if unknown:
        raise SimschedError(f"unknown contract properties {sorted(unknown)}; choose from {list(BATCH_PROPERTIES)}",
                             field="--property")
    space = ProblemSpace(min_tasks=1, max_tasks=25, min_processors=1, max_processors=8)
    report = ContractReport(name, "batch", registry.origin(name), seed, space,
                            scope="cluster logs of up to 25 rigid jobs on 8 processors")

    def complete(case: BatchCase, _seed: int) -> None:
        _prop_complete(_run(name, params, case), case)

    def capacity(case: BatchCase, _seed: int) -> None:
        _prop_capacity(_run(name, params, case), case)

    def determinism(case: BatchCase, _seed: int) -> None:
        if _run(name, params, case).start.tolist() != _run(name, params, case).start.tolist():
            raise violation("nondeterministic", "the same log gave different start times on a second run")

    checks = {"complete": complete, "capacity": capacity, "determinism": determinism}
    strategy = st.tuples(batch_cases(), st.integers(0, 2**32 - 1))
    for prop in [p for p in BATCH_PROPERTIES if properties is None or p in properties]:
        report.properties.append(search_property(prop, checks[prop], strategy, examples, seed,
                                                 description=BATCH_PROPERTIES[prop]))
    report.elapsed_s = time.perf_counter() - t0
    return report
