"""The properties of the task-graph contract, one function each (``valid``, ``bound``, ``determinism``,
``replay``, ``no-mutation``, ``infeasible``, ``no-future``: :data:`~simsched.testing.contract.PROPERTIES`
says what each checks), called with the scheduler under test, a drawn problem and a seed; each raises a
:func:`~simsched.testing.contract_search.violation` on a defect.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.bounds import finish_bound
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, validate_schedule
from simsched.testing.contract_search import violation, where
from simsched.testing.contract_subject import Subject
from simsched.testing.fingerprint import changes, fingerprint

TOL = 1e-9
"""Relative tolerance of the time comparisons."""

_VALIDATION_CATEGORIES = (
    ("overlap", "overlap"), ("before the data of", "precedence"), ("may not run it", "eligibility"),
    ("before it arrived", "arrival"), ("but takes", "duration"), ("before it started", "duration"),
)


# --------------------------------------------------------------------------- helpers
def _infeasible_variant(problem: Problem, task: int) -> Problem:
    """A copy of ``problem`` where ``task`` may run on no processor (bypassing the check in
    :class:`Problem`'s constructor, which normally rejects such a problem).  O(n m)."""
    bad = object.__new__(Problem)
    for name in Problem.__slots__:
        object.__setattr__(bad, name, getattr(problem, name, None))
    w = np.array(problem.W)
    w[task] = np.inf
    eligible = np.isfinite(w)
    w.setflags(write=False)
    eligible.setflags(write=False)
    bad._W, bad._eligible, bad.structured = w, eligible, False  # dense from here on
    bad._mean_cost = bad._mean_transfer = bad._min_cost = None
    return bad


def _first_difference(a: np.ndarray | None, b: np.ndarray | None, names: tuple[str, ...], what: str) -> str | None:
    if a is None or b is None:
        return None if a is None and b is None else f"{what} given in one run only"
    diff = np.flatnonzero(~((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else (a == b)))
    if diff.size:
        i = int(diff[0])
        return f"task {names[i]!r}: {what} {a[i]:g} vs {b[i]:g}"
    return None


def _check_validity(s: Schedule, problem: Problem, who: str, plan: Plan | None = None) -> None:
    """Both validators: :func:`validate_schedule` and the independent one written from the model's
    definitions (:func:`~simsched.testing.campaign.independent_violations`, which also checks that
    each processor runs its tasks in the plan's order)."""
    errors = validate_schedule(s, problem)
    if not errors:
        from simsched.testing.campaign import independent_violations

        found = independent_violations(problem, s, plan)
        if found:
            raise violation("independent-validator", f"{who}: {found[0]}")
    if errors:
        category = "completeness"
        for needle, cat in _VALIDATION_CATEGORIES:
            if needle in errors[0]:
                category = cat
                break
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise violation(category, f"{who}: {errors[0]}{more}")


def _check_bound(s: Schedule, problem: Problem, who: str) -> None:
    """The schedule's end against :func:`~simsched.simulator.bounds.finish_bound`, both on the clock
    (origin 0), so a schedule that ends before its first arrival reads as a time, never as a negative
    makespan.  O(n m + e)."""
    lb = finish_bound(problem)
    end = float(s.finish.max())
    if end < lb * (1 - TOL) - TOL:
        raise violation("below-lower-bound", f"{who} ends at time {end:g}, before {lb:g}, the earliest possible "
                                              f"end (first arrival + critical path or total work; a task's "
                                              f"arrival + its fastest chain)")


# --------------------------------------------------------------------------- the properties
def prop_valid(subject: Subject, problem: Problem, seed: int) -> None:
    if subject.kind == "static":
        plan = subject.plan(problem, seed)
        planned = plan.planned_schedule()
        if planned is not None:
            _check_validity(planned, problem, "the planned times", plan)
        _check_validity(subject.execute(problem, plan), problem, "the simulated schedule", plan)
    else:
        _check_validity(subject.run_online(problem, seed), problem, "the simulated schedule")


def prop_bound(subject: Subject, problem: Problem, seed: int) -> None:
    schedule, plan = subject.schedule(problem, seed)
    _check_bound(schedule, problem, "the simulated schedule")
    planned = None if plan is None else plan.planned_schedule()
    if planned is not None:
        _check_bound(planned, problem, "the planned schedule")


def prop_determinism(subject: Subject, problem: Problem, seed: int) -> None:
    names = problem.graph.names
    runs = [subject.schedule(problem, seed) for _ in range(3)]
    first_s, first_p = runs[0]
    for s, p in runs[1:]:
        for what, a, b in (("processor", first_s.processor, s.processor), ("start", first_s.start, s.start),
                           ("finish", first_s.finish, s.finish)):
            diff = _first_difference(a, b, names, what)
            if diff:
                raise violation("nondeterministic", f"three runs with the same seed ({seed}) differ: {diff}")
        if p is not None and first_p is not None:
            for what, a, b in (("planned processor", first_p.processor, p.processor),
                               ("planned order", first_p.order, p.order),
                               ("planned start", first_p.start, p.start)):
                diff = _first_difference(a, b, names, what)
                if diff:
                    raise violation("nondeterministic", f"three plans with the same seed ({seed}) differ: {diff}")


def prop_replay(subject: Subject, problem: Problem, seed: int) -> None:
    from simsched.simulator.evaluate import evaluate_plan

    plan = subject.plan(problem, seed)
    simulated = subject.execute(problem, plan)
    evaluated = evaluate_plan(problem, plan)
    names = problem.graph.names
    scale = TOL * max(1.0, float(np.abs(simulated.finish).max()))
    for what, planned in (("start", plan.start), ("finish", plan.finish)):
        sim = getattr(simulated, what)
        bad = np.flatnonzero(np.abs(getattr(evaluated, what) - sim) > scale)
        if bad.size:
            i = int(bad[0])
            raise violation("engine-vs-evaluator", f"task {names[i]!r}: the SimPy engine gives {what} {sim[i]:g}, "
                                                   f"the fast evaluator {getattr(evaluated, what)[i]:g}")
        if planned is not None:
            bad = np.flatnonzero(~(np.abs(planned - sim) <= scale))
            if bad.size:
                i = int(bad[0])
                raise violation("planned-vs-simulated", f"task {names[i]!r}: planned {what} {planned[i]:g} but "
                                                        f"executing the plan gives {sim[i]:g}")


def prop_no_mutation(subject: Subject, problem: Problem, seed: int) -> None:
    before = fingerprint(problem)
    subject.schedule(problem, seed)
    changed = changes(before, fingerprint(problem))
    if changed:
        raise violation("mutation", "the scheduler modified its input: " + "; ".join(changed[:3]))


def prop_infeasible(subject: Subject, problem: Problem, seed: int, task: int) -> None:
    t = task % problem.n_tasks
    bad = _infeasible_variant(problem, t)
    name = problem.graph.names[t]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if subject.kind == "static":
                plan = subject.fresh().plan(bad, np.random.default_rng(seed))
                from simsched.simulator.engine import execute_plan

                execute_plan(bad, plan)
            else:
                subject.run_online(bad, seed, guard=False)
    except SimschedError:
        return
    except Exception as exc:
        raise violation("crash-on-infeasible", f"with task {name!r} allowed on no processor, the run raised "
                                               f"{type(exc).__name__}: {exc}{where(exc)} instead of a "
                                               f"SimschedError", bad) from None
    raise violation("infeasible-accepted", f"with task {name!r} allowed on no processor, the run completed "
                                           f"without a SimschedError", bad)


class _Recorder:
    """Wraps an online policy; records every assignment as ``(time, task name, processor)`` (a tuple
    of processors for a gang), the name read from the view's own (arrived-only) problem."""

    def __init__(self, policy: Any) -> None:
        self.policy, self.log = policy, []
        self.name = getattr(policy, "name", None) or type(policy).__name__

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.policy.reset(problem, rng)

    def decide(self, view: Any) -> Any:
        out = list(self.policy.decide(view) or ())
        names = view.problem.graph.names
        self.log.extend((float(view.now), names[int(t)], tuple(int(q) for q in p) if isinstance(p, tuple) else int(p))
                        for t, p in out)
        return out


def future_replaced(problem: Problem, t: float, rng: np.random.Generator) -> Problem:
    """``problem`` with everything arriving at ``t`` or later replaced: those tasks' work, explicit
    costs (finite ones) and priorities redrawn, the data of every edge into them redrawn, and two
    isolated tasks arriving at ``t`` and ``t + 1`` added.  Tasks arriving before ``t`` and the edges
    among them are unchanged.  O(n m + e)."""
    from simsched.workloads.taskgraph import TaskGraph

    g = problem.graph
    late = g.arrival >= t
    k = int(late.sum())
    work = g.work.copy()
    work[late] = rng.uniform(0.0, 20.0, k)
    prio = g.priority.copy()
    prio[late] = rng.integers(-3, 4, k)
    data = g.edge_data.copy()
    into = late[g.edge_dst]
    data[into] = rng.uniform(0.0, 20.0, int(into.sum()))
    cost = None
    if g.cost is not None:
        cost = g.cost.copy()
        rows = cost[late]
        cost[late] = np.where(np.isfinite(rows), rng.uniform(0.0, 20.0, rows.shape), np.inf)
        cost = np.vstack([cost, np.ones((2, cost.shape[1]))])
    names = list(g.names) + ["~late0", "~late1"]
    return Problem(TaskGraph(names, np.stack([g.edge_src, g.edge_dst], axis=1), data,
                     work=np.concatenate([work, [5.0, 7.0]]),
                     kind=[g.kind_of(i) for i in range(g.n_tasks)] + [g.kind_of(0)] * 2,
                     arrival=np.concatenate([g.arrival, [t, t + 1.0]]), priority=np.concatenate([prio, [2.0, -1.0]]),
                     memory=np.concatenate([g.memory, [0.0, 0.0]]), cores=np.concatenate([g.cores, [1, 1]]),
                     cost=cost, procs=np.concatenate([np.stack([g.procs_min, g.procs_max], axis=1), [[1, 1], [1, 1]]]),
                     serial=np.concatenate([g.serial, [0.0, 0.0]]), downey=np.concatenate([g.downey, np.zeros((2, 2))]),
                     same_host=np.concatenate([g.same_host, [False, False]])), problem.platform, problem.affinity)


def prop_no_future(subject: Subject, problem: Problem, seed: int) -> None:
    from simsched.simulator.engine import run_online

    times = np.unique(problem.graph.arrival[problem.graph.arrival > 0])
    if not times.size:
        return
    t = float(times[seed % times.size])
    other = future_replaced(problem, t, np.random.default_rng(seed))
    logs = []
    for prob in (problem, other):
        rec = _Recorder(subject.fresh())
        try:
            run_online(prob, rec, None, np.random.default_rng(seed))
        except SimschedError:
            pass  # a stall or rejection is the ``valid`` property's to report; compare what was decided
        logs.append([d for d in rec.log if d[0] < t])
    if logs[0] != logs[1]:
        i = next((i for i, (a, b) in enumerate(zip(*logs)) if a != b), min(len(logs[0]), len(logs[1])))
        a = logs[0][i] if i < len(logs[0]) else None
        b = logs[1][i] if i < len(logs[1]) else None
        raise violation("sees-the-future", f"decision {i} before t={t:g} changed when everything arriving from "
                                           f"t on was replaced: {a} became {b}")
