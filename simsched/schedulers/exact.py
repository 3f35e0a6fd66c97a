"""Optimal schedules of small problems with OR-Tools CP-SAT (optional extra ``exact``).

Model (minimise the makespan):

* per task i a start ``s_i`` and end ``e_i``, and per eligible processor p a literal ``x[i, p]``
  with an optional interval of the task's duration there; exactly one literal per task;
* no two intervals overlap on a processor; ``s_i >= arrival_i``;
* for each edge i -> j: ``s_j >= e_i`` always, and ``s_j >= e_i + c(p, q)`` when i runs on p and j
  on q != p.  When every pair of distinct processors has the same latency and bandwidth (a uniform
  network), this is encoded with one "co-located" literal per edge (O(e m) literals) instead of one
  constraint per pair of processors (O(e m^2));
* makespan ``C >= e_i``; symmetry breaking between interchangeable processors (same costs, uniform
  network): the first task on a processor has a smaller index than the first on the next one;
* on identical processors (one interchangeable class, every task eligible everywhere) a redundant
  cumulative constraint over all tasks with capacity m;
* HEFT's assignment (or a short local search's, ``warm_start_s``) is given as a solution hint, and
  ``C`` is at least the lower bound of
  :mod:`simsched.simulator.bounds` rounded up to the next integer of the scaled model.

**Integer scaling.**  CP-SAT needs integers, so every time is multiplied by ``scale`` and rounded
*up*.  By default the scale is the smallest power of ten (up to 10^6) that makes every execution
time, transfer time and arrival an integer; then the model is exact (``info["exact"]``).  Otherwise
it is the largest power of ten keeping the horizon under 10^8, times are rounded up, the plan is
optimal for the rounded times, and its true makespan (re-evaluated with the true times, which can
only shorten it) is within the rounding of the optimum.

The returned plan keeps the solver's processors and per-processor order and is re-timed with
:func:`~simsched.simulator.evaluate.evaluate_plan`, so its times are consistent and left-justified.
``info["optimal"]`` says whether optimality was proven within the time limit.

**Identical processors without communication** (P|prec|Cmax, integer durations, up to
:data:`BNB_MAX_TASKS` tasks): the branch and bound of :mod:`simsched.schedulers.bnb` runs first
(60% of the limit, all of it past ``max_tasks``); if it does not prove its plan optimal, CP-SAT
gets the rest, with the branch and bound's proven bound as a constraint and its plan as the hint,
and the better plan and larger bound are reported (``info["method"]``: ``bnb`` or ``bnb+cp-sat``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from simsched.errors import InfeasibleError, SchedulerDeclined, SimschedError
from simsched.extras import install_hint
from simsched.schedulers.heft import heft_schedule
from simsched.simulator.bounds import lower_bound
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan

_MAX_HORIZON = 1e8


def _cp_model():
    try:
        from ortools.sat.python import cp_model
    except ImportError:  # pragma: no cover - depends on the environment
        raise SimschedError(f"the 'optimal' scheduler needs OR-Tools: {install_hint('exact')}") from None
    return cp_model


def _pair_delays(problem: Problem) -> np.ndarray:
    """(e, m, m) transfer time of every edge between every pair of processors."""
    g = problem.graph
    return problem.latency[None] + g.edge_data[:, None, None] * problem.inv_bandwidth[None]


def _uniform_network(problem: Problem) -> bool:
    m = problem.n_processors
    off = ~np.eye(m, dtype=bool)
    return m == 1 or (np.ptp(problem.latency[off]) == 0 and np.ptp(problem.inv_bandwidth[off]) == 0)


def choose_scale(values: np.ndarray, horizon: float) -> tuple[float, bool]:
    """``(scale, exact)``: the smallest power of ten up to 10^6 making all ``values`` integers, or
    the largest keeping ``horizon x scale`` under 10^8 (then ``exact`` is False).  O(len(values))."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    for k in range(7):
        s = 10.0 ** k
        if horizon * s > _MAX_HORIZON:
            break
        scaled = v * s
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return s, True
    k = math.floor(math.log10(_MAX_HORIZON / max(horizon, 1e-300)))
    return 10.0 ** min(k, 6), False


def _identical_classes(problem: Problem) -> list[list[int]]:
    """Groups of interchangeable processors (identical cost columns) on a uniform network."""
    if not _uniform_network(problem):
        return []
    groups: dict[bytes, list[int]] = {}
    for p in range(problem.n_processors):
        groups.setdefault(problem.W[:, p].tobytes(), []).append(p)
    return [grp for grp in groups.values() if len(grp) > 1]


def _relabel(processor: np.ndarray, classes: list[list[int]]) -> np.ndarray:
    """Rename interchangeable processors so that, within each class, the first task of a processor
    has a smaller index than the first task of the next one (the symmetry breaking's rule).  O(n m)."""
    out = processor.copy()
    for grp in classes:
        first = {p: int(np.flatnonzero(processor == p)[0]) for p in grp if (processor == p).any()}
        for new, old in zip(grp, sorted(first, key=first.get)):
            out[processor == old] = new
    return out


def _integer_times(problem: Problem, processor: np.ndarray, sequence: np.ndarray, dur: np.ndarray,
                   arrival: np.ndarray, delay: object) -> tuple[np.ndarray, np.ndarray]:
    """Left-justified integer start/end times of a plan (topological ``sequence``) in the scaled
    model, for the solver's hint.  A plain Python pass: n is at most ``max_tasks``.  O(n + e)."""
    g = problem.graph
    n = g.n_tasks
    start = np.zeros(n, dtype=np.int64)
    end = np.zeros(n, dtype=np.int64)
    free: dict[int, int] = {}
    for t in sequence:
        t, q = int(t), int(processor[t])
        ready = int(arrival[t])
        for k in g.pred_edges[g.pred_ptr[t]:g.pred_ptr[t + 1]]:
            i = int(g.edge_src[k])
            p = int(processor[i])
            ready = max(ready, int(end[i]) + (0 if p == q else delay(int(k), p, q)))
        start[t] = max(ready, free.get(q, 0))
        end[t] = start[t] + int(dur[t, q])
        free[q] = int(end[t])
    return start, end


def optimal_schedule(problem: Problem, *, time_limit_s: float = 10.0, max_tasks: int = 64, workers: int = 2,
                     scale: float | None = None, seed: int = 0, warm_start_s: float = 0.0) -> Plan:
    """Minimum-makespan plan by CP-SAT (see the module docstring).

    Raises :class:`SimschedError` when the problem has more than ``max_tasks`` tasks, or OR-Tools is
    missing.  ``info``: ``optimal`` (proven), ``status``, ``objective`` and ``bound`` (in time units,
    of the scaled model), ``scale``, ``exact``, ``solve_time_s``; if the solver finds no solution in
    time, HEFT's plan is returned with ``info["fallback"] = "heft"``.  ``warm_start_s`` > 0: the hint
    comes from :func:`~simsched.schedulers.search.search_schedule` run that long (at most a quarter
    of the time limit) instead of HEFT.  The model has O(n m)
    intervals and O(e m) (uniform network) or O(e m^2) communication constraints.
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    clock = time.perf_counter()  # the time limit covers building the model and the hint, not only the search
    first: Plan | None = None
    floor = 0.0
    if n <= BNB_MAX_TASKS and problem.eligible.any(axis=1).all():
        from simsched.schedulers.identical import identical_case

        inst = identical_case(problem)
        if inst is not None and inst.integral:  # P|prec|Cmax: branch and bound first
            first = _bnb_first(problem, inst, time_limit_s if n > max_tasks else 0.6 * time_limit_s, seed, clock)
            if first.info["optimal"] or n > max_tasks:
                return first
            floor = first.info["bound"]
    if n > max_tasks:
        raise SchedulerDeclined(
            f"the 'optimal' scheduler is limited to {max_tasks} tasks (max_tasks) and this problem has {n}; "
            f"exact search grows exponentially, so use a heuristic (heft, peft, ga) or raise max_tasks")
    stuck = np.flatnonzero(~problem.eligible.any(axis=1))
    if stuck.size:
        raise InfeasibleError(f"no processor may run task {g.names[int(stuck[0])]!r}")
    cp_model = _cp_model()
    W = problem.W
    elig = problem.eligible
    uniform = _uniform_network(problem)
    delays = _pair_delays(problem)
    if uniform and m > 1:
        edge_delay = delays[:, 0, 1] if g.n_edges else np.zeros(0)
        comm_values = edge_delay
    else:
        comm_values = delays.reshape(-1)
    horizon_f = (float(g.arrival.max()) + float(np.where(elig, W, 0).max(axis=1).sum())
                 + float(delays.max(axis=(1, 2)).sum() if g.n_edges else 0.0))
    values = np.concatenate([W[elig], comm_values, g.arrival]) * 1.0
    if scale is None:
        scale, exact = choose_scale(values, horizon_f)
    else:
        scaled = values * scale
        exact = bool(np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))))

    def up(x: float | np.ndarray) -> np.ndarray:
        return np.ceil(np.asarray(x) * scale - 1e-9).astype(np.int64)

    dur = np.where(elig, up(np.where(elig, W, 0.0)), 0)
    arrival = up(g.arrival)
    horizon = int(up(horizon_f)) + 1

    model = cp_model.CpModel()
    s = [model.NewIntVar(int(arrival[i]), horizon, f"s{i}") for i in range(n)]
    e = [model.NewIntVar(0, horizon, f"e{i}") for i in range(n)]
    x: dict[tuple[int, int], object] = {}
    colocated: dict[tuple[int, int], object] = {}
    per_proc: list[list] = [[] for _ in range(m)]
    for i in range(n):
        lits = []
        for p in np.flatnonzero(elig[i]):
            p = int(p)
            lit = model.NewBoolVar(f"x{i}_{p}")
            x[i, p] = lit
            lits.append(lit)
            per_proc[p].append(model.NewOptionalFixedSizeIntervalVar(s[i], int(dur[i, p]), lit, f"iv{i}_{p}"))
            model.Add(e[i] == s[i] + int(dur[i, p])).OnlyEnforceIf(lit)
        model.AddExactlyOne(lits)
    for ivs in per_proc:
        if len(ivs) > 1:
            model.AddNoOverlap(ivs)
    for k in range(g.n_edges):
        i, j = int(g.edge_src[k]), int(g.edge_dst[k])
        model.Add(s[j] >= e[i])
        if m == 1:
            continue
        if uniform:
            c = int(up(edge_delay[k]))
            if c <= 0:
                continue
            both = [p for p in range(m) if elig[i, p] and elig[j, p]]
            if not both:
                model.Add(s[j] >= e[i] + c)
                continue
            same = []
            for p in both:
                z = model.NewBoolVar(f"z{k}_{p}")
                model.AddImplication(z, x[i, p])
                model.AddImplication(z, x[j, p])
                colocated[k, p] = z
                same.append(z)
            model.Add(s[j] + c * sum(same) >= e[i] + c)
        else:
            cq = up(delays[k])
            for p in np.flatnonzero(elig[i]):
                for q in np.flatnonzero(elig[j]):
                    if p != q and cq[p, q] > 0:
                        model.Add(s[j] >= e[i] + int(cq[p, q])).OnlyEnforceIf([x[i, int(p)], x[j, int(q)]])
    classes = _identical_classes(problem)
    for grp in classes:
        # value precedence: processor grp[k+1] may hold task i only if grp[k] holds a task < i
        for a, b in zip(grp[:-1], grp[1:]):
            used = None  # "processor a runs some task with index < i"
            for i in range(n):
                if (i, a) not in x:  # neither processor of the class may run task i
                    continue
                if used is None:
                    model.Add(x[i, b] == 0)
                else:
                    model.AddImplication(x[i, b], used)
                nxt = model.NewBoolVar(f"u{a}_{i}")
                parts = [x[i, a]] + ([used] if used is not None else [])
                model.AddBoolOr(parts).OnlyEnforceIf(nxt)
                for lit in parts:
                    model.AddImplication(lit, nxt)
                used = nxt
    if m > 1 and len(classes) == 1 and len(classes[0]) == m and bool(elig.all()):
        # identical processors: a redundant cumulative (all tasks, capacity m) lets the solver reason
        # about energy over time windows, which the per-processor no-overlaps cannot see together
        whole = [model.NewIntervalVar(s[i], int(dur[i, 0]), e[i], f"all{i}") for i in range(n)]
        model.AddCumulative(whole, [1] * n, m)
    makespan = model.NewIntVar(0, horizon, "makespan")
    for i in g.exit_tasks:
        model.Add(makespan >= e[int(i)])
    origin = int(arrival.min())
    floor = max(floor, lower_bound(problem))
    model.Add(makespan >= origin + int(math.ceil(floor * scale * (1 - 1e-12) - 1e-9)))
    model.Minimize(makespan)

    heft = heft_schedule(problem)
    warm = heft if first is None else first
    if warm_start_s > 0 and first is None:  # a short local search usually gives the solver a much better first solution
        from simsched.schedulers.search import search_schedule

        warm = search_schedule(problem, time_limit_s=min(warm_start_s, 0.25 * time_limit_s), seed=seed)
    hint_proc = _relabel(warm.processor, classes)
    hint_start, hint_end = _integer_times(problem, hint_proc, np.argsort(warm.order, kind="stable"), dur, arrival,
                                          lambda k, p, q: int(up(delays[k, p, q])))
    for i in range(n):
        model.AddHint(s[i], int(hint_start[i]))
        model.AddHint(e[i], int(hint_end[i]))
        for p in np.flatnonzero(elig[i]):
            model.AddHint(x[i, int(p)], int(hint_proc[i] == p))
    for (k, p), z in colocated.items():
        model.AddHint(z, int(hint_proc[g.edge_src[k]] == p == hint_proc[g.edge_dst[k]]))
    model.AddHint(makespan, int(hint_end.max()))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit_s) - (time.perf_counter() - clock))
    solver.parameters.num_workers = max(1, int(workers))
    solver.parameters.random_seed = int(seed)
    if len(x) > 1000:  # presolve probing of many assignment literals can eat the whole time limit
        solver.parameters.cp_model_probing_level = 0
    status = solver.Solve(model)
    info = {"status": solver.StatusName(status), "optimal": status == cp_model.OPTIMAL, "scale": scale,
            "exact": exact, "solve_time_s": time.perf_counter() - clock}
    if first is not None:
        return _better(problem, first, solver, status, cp_model, info, makespan, x, s, e, origin, scale)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        info.update(fallback="heft", optimal=False)
        return Plan(heft.processor, heft.order, heft.start, heft.finish, info)
    info["objective"] = (solver.Value(makespan) - origin) / scale
    info["bound"] = (solver.BestObjectiveBound() - origin) / scale
    return _solver_plan(problem, solver, x, s, e, info)


def _solver_plan(problem: Problem, solver, x: dict, s: list, e: list, info: dict) -> Plan:
    """The solver's processors and per-processor order, re-timed by the evaluator.  O(n m)."""
    g = problem.graph
    n = g.n_tasks
    elig = problem.eligible
    proc = np.array([next(p for p in np.flatnonzero(elig[i]) if solver.Value(x[i, int(p)])) for i in range(n)])
    st = np.array([solver.Value(v) for v in s], dtype=np.float64)
    en = np.array([solver.Value(v) for v in e], dtype=np.float64)
    key = np.lexsort((np.arange(n), g.level, en, st))
    order = np.empty(n)
    order[key] = np.arange(n)
    sched = evaluate_plan(problem, Plan(proc, order))
    return Plan(proc, order, sched.start, sched.finish, info)


BNB_MAX_TASKS = 400
"""P|prec|Cmax problems up to this size go to the branch and bound first (whatever ``max_tasks``)."""


def _bnb_first(problem: Problem, inst, time_limit_s: float, seed: int, clock: float) -> Plan:
    """The branch and bound's plan (:mod:`simsched.schedulers.bnb`) with ``info["method"] = "bnb"``."""
    from simsched.schedulers.bnb import branch_and_bound, plan_from_starts

    start, proc, info = branch_and_bound(inst, time_limit_s=time_limit_s, seed=seed, clock=clock)
    info.update(method="bnb", exact=True, scale=1.0)
    return plan_from_starts(problem, inst, start, proc, info)


def _better(problem: Problem, first: Plan, solver, status, cp_model, info: dict, makespan, x: dict, s: list,
            e: list, origin: int, scale: float) -> Plan:
    """The better of the branch and bound's plan and CP-SAT's, with the larger proven bound.  O(n m)."""
    bound = float(first.info["bound"])
    best = first
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = max(bound, (solver.BestObjectiveBound() - origin) / scale)
        plan = _solver_plan(problem, solver, x, s, e, info)
        if float(plan.finish.max()) < float(first.finish.max()):
            best = plan
    mk = float(best.finish.max()) - float(problem.graph.arrival.min())
    out = dict(first.info)
    out.update(method="bnb+cp-sat", status=info["status"], objective=mk, bound=min(bound, mk),
               optimal=bool(mk <= bound + 1e-9), solve_time_s=info["solve_time_s"])
    return Plan(best.processor, best.order, best.start, best.finish, out)


class Optimal:
    """Minimum makespan by constraint programming (OR-Tools CP-SAT), for small problems.

    Exact with communication delays, heterogeneous costs and eligibility; ``info["optimal"]`` says
    whether optimality was proven within ``time_limit_s``.  Refuses problems above ``max_tasks``.
    Worst case exponential; the model has O(n m) intervals.  Needs the ``exact`` extra (``pip install -e '.[exact]'``).

    Parameters:
        time_limit_s: solver wall-time limit; max_tasks: refuse larger problems;
        workers: CP-SAT search workers; scale: fixed integer scaling of times (default: automatic,
        see the module docstring); warm_start_s: seconds of local search (``search``) for the
        solver's hint instead of HEFT (0: HEFT).  The solver's random seed is drawn from ``rng``; with a proven
        optimum the makespan is reproducible, a time-limited search may differ between runs.
    """

    name = "optimal"

    def __init__(self, *, time_limit_s: float = 10.0, max_tasks: int = 64, workers: int = 2,
                 scale: float | None = None, warm_start_s: float = 0.0) -> None:
        if time_limit_s <= 0 or max_tasks < 1 or workers < 1 or not warm_start_s >= 0:
            raise ValueError("time_limit_s must be > 0, max_tasks and workers >= 1, warm_start_s >= 0")
        self.warm_start_s = warm_start_s
        if scale is not None and not scale > 0:
            raise ValueError("scale must be > 0")
        self.time_limit_s, self.max_tasks, self.workers, self.scale = time_limit_s, max_tasks, workers, scale

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        seed = int(rng.integers(0, 2**31 - 1)) if rng is not None else 0
        return optimal_schedule(problem, time_limit_s=self.time_limit_s, max_tasks=self.max_tasks,
                                workers=self.workers, scale=self.scale, seed=seed, warm_start_s=self.warm_start_s)
