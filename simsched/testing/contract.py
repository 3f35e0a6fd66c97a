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
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import os
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from simsched.errors import PlanError, SimschedError
from simsched.schedulers import registry
from simsched.simulator.bounds import finish_bound
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule, validate_schedule
from simsched.testing.fingerprint import changes, fingerprint
from simsched.testing.strategies import DEGENERATE, ProblemSpace, describe_problem, problems

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
TOL = 1e-9

_VALIDATION_CATEGORIES = (
    ("overlap", "overlap"), ("before the data of", "precedence"), ("may not run it", "eligibility"),
    ("before it arrived", "arrival"), ("but takes", "duration"), ("before it started", "duration"),
)


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
    """What :func:`check_scheduler` found."""

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


class _Guard:
    """Wraps an online policy; checks every assignment before the engine sees it."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = getattr(policy, "name", None) or type(policy).__name__

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.problem = problem
        self.policy.reset(problem, rng)

    def decide(self, view: Any) -> Any:
        out = self.policy.decide(view)
        if out is None:
            return out
        out = list(out)
        prob = view.problem  # the arrived tasks only: assignments are in its numbering
        names, n, m = prob.graph.names, prob.n_tasks, prob.n_processors
        ready = set(view.ready.tolist())
        seen: set[int] = set()
        for item in out:
            try:
                if len(item) == 3:  # a triple also names a P-state (DVFS; the engine checks it)
                    t, p, pstate = item
                    int(pstate)
                else:
                    t, p = item
                members = tuple(int(q) for q in p) if isinstance(p, (tuple, list, np.ndarray)) else (int(p),)
                t, p = int(t), members[0]
            except (TypeError, ValueError, IndexError):
                raise violation("assignment", f"decide() returned {item!r}; an assignment is a (task, processor) "
                                              f"pair of integers, (task, processors) for a gang, or a (task, "
                                              f"processor, P-state) triple") from None
            label = repr(names[t]) if 0 <= t < n else f"index {t}"
            if t in seen:
                raise violation("assignment", f"at time {view.now:g} decide() assigned task {label} twice")
            if t not in ready:
                raise violation("assignment", f"at time {view.now:g} decide() assigned task {label}, which is not "
                                              f"ready (ready: {', '.join(names[i] for i in sorted(ready))})")
            if not 0 <= p < m:
                raise violation("assignment", f"decide() assigned task {label} to processor index {p}, which "
                                              f"does not exist")
            if not all(0 <= q < m for q in members):
                raise violation("assignment", f"decide() assigned task {label} to processor indices "
                                              f"{list(members)}, some of which do not exist")
            bad = [q for q in members if not prob.eligible[t, q]]
            if bad:
                raise violation("eligibility", f"decide() assigned task {label} to {prob.platform.names[bad[0]]!r}, "
                                               f"which may not run it")
            g = prob.graph
            if not g.procs_min[t] <= len(set(members)) == len(members) <= g.procs_max[t]:
                raise violation("gang", f"decide() assigned task {label} to {len(members)} processors "
                                        f"{list(members)}; it needs {g.procs_min[t]} to {g.procs_max[t]} distinct ones")
            seen.add(t)
        return out


# --------------------------------------------------------------------------- one scheduler
class _Subject:
    """The scheduler under test: fresh instances on demand, and how to run one on a problem."""

    def __init__(self, scheduler: Any, params: dict[str, Any]) -> None:
        self.hints: dict[str, int] = {}
        if isinstance(scheduler, str):
            cls = registry.load_class(scheduler)
            self.label, self.origin = scheduler, registry.origin(scheduler)
            self.prototype = registry.create(scheduler, **params)
            self.hints = registry.check_hints(scheduler, cls)
        elif inspect.isclass(scheduler):
            registry.check_interface(scheduler, f"class {scheduler.__qualname__}")
            self.label, self.origin = scheduler.__qualname__, f"class {scheduler.__module__}.{scheduler.__qualname__}"
            try:
                self.prototype = scheduler(**params)
            except Exception as exc:
                raise SimschedError(f"{self.label}: its constructor raised {type(exc).__name__}: {exc}") from None
            self.hints = registry.check_hints(getattr(self.prototype, "name", None), scheduler)
        else:
            registry.check_interface(type(scheduler), f"object {scheduler!r}")
            if params:
                raise SimschedError("parameters can only be given with a scheduler name or class")
            self.label = getattr(scheduler, "name", None) or type(scheduler).__qualname__
            self.origin, self.prototype = "instance", scheduler
            self.hints = registry.check_hints(self.label, type(scheduler))
        self.kind = registry.kind(type(self.prototype))

    def fresh(self) -> Any:
        return copy.deepcopy(self.prototype)

    def plan(self, problem: Problem, seed: int) -> Plan:
        plan = self.fresh().plan(problem, np.random.default_rng(seed))
        if not isinstance(plan, Plan):
            raise violation("interface", f"plan() returned {type(plan).__name__}, not a simsched Plan")
        return plan

    def execute(self, problem: Problem, plan: Plan) -> Schedule:
        from simsched.simulator.engine import execute_plan

        try:
            return execute_plan(problem, plan)
        except PlanError as exc:
            raise violation("not-executable", f"the plan cannot be executed: {exc}") from None

    def run_online(self, problem: Problem, seed: int, guard: bool = True) -> Schedule:
        from simsched.simulator.engine import run_online

        policy = _Guard(self.fresh()) if guard else self.fresh()
        try:
            schedule, _ = run_online(problem, policy, None, np.random.default_rng(seed))
        except ContractViolation:
            raise
        except SimschedError as exc:
            if not guard:
                raise
            raise violation("stall" if "stalled" in str(exc) else "engine-rejected", str(exc)) from None
        return schedule

    def schedule(self, problem: Problem, seed: int) -> tuple[Schedule, Plan | None]:
        """What happened in the simulator (and the plan, for a planner)."""
        if self.kind == "static":
            plan = self.plan(problem, seed)
            return self.execute(problem, plan), plan
        return self.run_online(problem, seed), None


def _prop_valid(subject: _Subject, problem: Problem, seed: int) -> None:
    if subject.kind == "static":
        plan = subject.plan(problem, seed)
        planned = plan.planned_schedule()
        if planned is not None:
            _check_validity(planned, problem, "the planned times", plan)
        _check_validity(subject.execute(problem, plan), problem, "the simulated schedule", plan)
    else:
        _check_validity(subject.run_online(problem, seed), problem, "the simulated schedule")


def _prop_bound(subject: _Subject, problem: Problem, seed: int) -> None:
    schedule, plan = subject.schedule(problem, seed)
    _check_bound(schedule, problem, "the simulated schedule")
    planned = None if plan is None else plan.planned_schedule()
    if planned is not None:
        _check_bound(planned, problem, "the planned schedule")


def _prop_determinism(subject: _Subject, problem: Problem, seed: int) -> None:
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


def _prop_replay(subject: _Subject, problem: Problem, seed: int) -> None:
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


def _prop_no_mutation(subject: _Subject, problem: Problem, seed: int) -> None:
    before = fingerprint(problem)
    subject.schedule(problem, seed)
    changed = changes(before, fingerprint(problem))
    if changed:
        raise violation("mutation", "the scheduler modified its input: " + "; ".join(changed[:3]))


def _prop_infeasible(subject: _Subject, problem: Problem, seed: int, task: int) -> None:
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
                                               f"{type(exc).__name__}: {exc}{_where(exc)} instead of a "
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


def _prop_no_future(subject: _Subject, problem: Problem, seed: int) -> None:
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


def _where(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return ""
    frame = tb[-1]
    return f" (in {frame.name}, {frame.filename}:{frame.lineno})"


# --------------------------------------------------------------------------- search
@contextlib.contextmanager
def hypothesis_home_outside_cwd() -> Iterator[None]:
    """Inside the block, hypothesis keeps its files (the cache of constants it reads from the modules
    under test; :func:`_search` keeps no example database) in a temporary folder removed afterwards,
    instead of ``.hypothesis/`` in the current folder; a ``HYPOTHESIS_STORAGE_DIRECTORY`` the user set
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


def _search(name: str, check: Callable[..., None], strategy: st.SearchStrategy, examples: int,
            seed: int, description: str | None = None) -> PropertyResult:
    """Run ``check`` on up to ``examples`` draws of ``strategy``; each distinct failure becomes a
    :class:`Defect` with the shrunk example hypothesis replayed last."""
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
    result = PropertyResult(name, description or PROPERTIES[name], 0)
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
                category, message = "crash", f"{type(err).__name__}: {err}{_where(err)}"
            example = getattr(err, "example", None) or (args[0] if args else None)
            defect = Defect(name, category, message, example, args[1] if args else None, flaky)
            if not any(d.category == category and d.message == message for d in result.defects):
                result.defects.append(defect)
    result.examples = calls
    return result


VALIDITY_CATEGORIES = {"not-executable", "interface", "stall", "engine-rejected", "assignment", "eligibility"}
"""Violations the ``valid`` property reports; other properties skip such examples rather than
report the same defect again."""


def _leaving_to_valid(check: Callable[..., None]) -> Callable[..., None]:
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
    subject = _Subject(scheduler, dict(params or {}))
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
        raise SimschedError(f"unknown contract properties {sorted(unknown)}; choose from {list(PROPERTIES)}")
    report = ContractReport(subject.label, subject.kind, subject.origin, seed, space)
    seeds = st.integers(0, 2**32 - 1)
    checks: dict[str, Callable[..., None]] = {
        "valid": _prop_valid, "bound": _prop_bound, "determinism": _prop_determinism,
        "replay": _prop_replay, "no-mutation": _prop_no_mutation, "no-future": _prop_no_future,
    }
    for name in wanted:
        if name in checks and name != "valid" and "valid" in wanted:
            checks[name] = _leaving_to_valid(checks[name])
        if name == "infeasible":
            strategy = st.tuples(drawn, seeds, st.integers(0, 1000))
            check: Callable[..., None] = lambda p, s, t: _prop_infeasible(subject, p, s, t)  # noqa: E731
        else:
            strategy = st.tuples(drawn, seeds)
            check = (lambda f: lambda p, s: f(subject, p, s))(checks[name])
        report.properties.append(_search(name, check, strategy, examples, seed))
    report.elapsed_s = time.perf_counter() - t0
    return report
