"""A randomised correctness campaign: every registered scheduler on many random DAGs of awkward shapes,
each result checked by an independent validator and (for planners) replayed in the SimPy engine.

The hypothesis strategies (:mod:`simsched.testing.strategies`) find and shrink defects; this module
counts them at scale.  :func:`random_problem` draws from the shapes real inputs have and textbook
generators miss: zero-cost tasks (STG's dummy entry/exit tasks, WfCommons auxiliary tasks), zero-size
edges, one processor, tasks only some processors may run, many entry and exit tasks, tiny and
degenerate graphs (one task, a chain, an antichain), equal costs that make ties, task indices that are
*not* a topological order, and late arrivals.

:func:`independent_violations` is written from the definitions of the model (docs/model.md), not
from :meth:`~simsched.simulator.schedule.Schedule.validate`: transfer times are recomputed from the
platform's latency and bandwidth matrices, precedence is checked edge by edge, the processor
sequences are rebuilt from the plan's ``order`` and every task must sit at its place in them.

Run it from the command line (nightly size: ``--dags 100000``)::

    python -m simsched.testing.campaign --dags 10000 --seed 1 --jobs 2

Exit status 0 when no violation was found, 1 otherwise; a summary table per scheduler is printed.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan, Schedule
from simsched.workloads.taskgraph import TaskGraph

REL_TOL = 1e-9
"""Relative tolerance of every time comparison (planned versus simulated, precedence, durations)."""

SLOW_LIMITS: dict[str, tuple[int, int]] = {"optimal": (7, 3), "ga": (30, 8)}
"""Schedulers that only run on problems of at most (tasks, processors): exhaustive search and the
genetic algorithm would otherwise dominate the campaign's time."""

CAMPAIGN_PARAMS: dict[str, dict] = {"ga": {"population": 20, "generations": 20}}
"""Parameters the campaign gives some schedulers: a short GA (the properties checked do not depend
on how long it searches, and its defaults take about 2 s a run)."""


# --------------------------------------------------------------------------- problems
def random_problem(rng: np.random.Generator, max_tasks: int = 30, max_processors: int = 8) -> Problem:
    """One random problem of an awkward shape (see the module docstring).  O(n^2 + n m).

    Shapes (each drawn independently): n tasks, a third of the time 1-4; a quarter of the time one
    processor; graphs random (density 0-0.5), a chain, an antichain, fork-join or many entries/exits;
    task indices a random permutation of a topological order; costs whole numbers from a small set
    (ties) with up to half of them zero; per-processor factors from three levels or all equal; up to
    40% of the (task, processor) pairs barred (each task keeps one); edge data zero with probability
    up to 1; arrivals a fifth of the time; one to m hosts with a latency of 0-3.
    """
    n = int(rng.integers(1, 5)) if rng.random() < 1 / 3 else int(rng.integers(1, max_tasks + 1))
    m = 1 if rng.random() < 0.25 else int(rng.integers(2, max_processors + 1))
    perm = rng.permutation(n)  # position in a topological order -> task index
    shape = ("random", "random", "chain", "antichain", "forkjoin", "wide")[int(rng.integers(6))]
    pairs: list[tuple[int, int]] = []
    if n > 1:
        if shape == "chain":
            pairs = [(i, i + 1) for i in range(n - 1)]
        elif shape == "forkjoin":
            pairs = [(0, i) for i in range(1, n - 1)] + [(i, n - 1) for i in range(1, n - 1)] or [(0, 1)]
        elif shape == "wide":  # many entries and exits: a sparse bipartite layer
            half = max(1, n // 2)
            pairs = [(a, b) for a in range(half) for b in range(half, n) if rng.random() < 1.5 / n]
        elif shape == "random":
            density = rng.random() * 0.5
            a, b = np.triu_indices(n, 1)
            keep = rng.random(a.size) < density
            pairs = list(zip(a[keep].tolist(), b[keep].tolist()))
    edges = [(int(perm[a]), int(perm[b])) for a, b in pairs]
    options = ([0, 1, 2], [5, 10], [1, 2, 3, 4, 5, 10, 20], [0, 7])
    levels = options[int(rng.integers(len(options)))]
    work = rng.choice(levels, size=n).astype(float)
    p_zero = rng.choice([0.0, 0.2, 0.5])
    work[rng.random(n) < p_zero] = 0.0
    p_zero_data = rng.choice([0.0, 0.5, 1.0])
    data = rng.choice([0, 1, 5, 10, 30], size=len(edges)).astype(float)
    data[rng.random(len(edges)) < p_zero_data] = 0.0
    factors = ([1.0], [0.5, 1.0, 2.0], [1.0, 3.0])
    factor = factors[int(rng.integers(len(factors)))]
    cost = work[:, None] * rng.choice(factor, size=(n, m))
    if m > 1 and rng.random() < 0.5:
        barred = rng.random((n, m)) < rng.random() * 0.4
        barred[np.arange(n), rng.integers(0, m, n)] = False
        cost[barred] = np.inf
    arrival = rng.choice([0.0, 3.0, 10.0], size=n) if rng.random() < 0.2 else None
    hosts = int(rng.integers(1, m + 1))
    procs = [Processor(f"p{j}", host=f"h{int(rng.integers(0, hosts))}") for j in range(m)]
    platform = Platform.uniform(procs, bandwidth=float(rng.choice([0.5, 1.0, 4.0])),
                                latency=float(rng.choice([0.0, 1.0, 3.0])))
    graph = TaskGraph([f"t{i}" for i in range(n)], edges, data, work=work, arrival=arrival, cost=cost)
    return Problem(graph, platform)


# --------------------------------------------------------------------------- the validator
def _transfer(problem: Problem, edge: int, p: int, q: int) -> float:
    """Time for the data of ``edge`` to go from processor ``p`` to ``q``, from the platform's
    definition: 0 on one processor, else latency + data / bandwidth."""
    if p == q:
        return 0.0
    plat = problem.platform
    return float(plat.latency[p, q] + problem.graph.edge_data[edge] / plat.bandwidth[p, q])


def downey_reference(k: int, a: float, sigma: float) -> float:
    """Downey's speedup on ``k`` processors (TR UCB/CSD-97-933, 1997), the report's piecewise
    formulas written out here apart from the simulator's vectorised
    :func:`~simsched.simulator.gang.downey`, for the independent validator and the tests.  O(1)."""
    if sigma <= 1:
        if k <= a:
            return a * k / (a + sigma * (k - 1) / 2)
        return a * k / (sigma * (a - 0.5) + k * (1 - sigma / 2)) if k <= 2 * a - 1 else a
    return k * a * (sigma + 1) / (sigma * (k + a - 1) + a) if k <= a + a * sigma - sigma else a

def independent_violations(problem: Problem, schedule: Schedule, plan: Plan | None = None,
                           durations: bool = True, limit: int = 5) -> list[str]:
    """Every broken rule of ``schedule`` (at most ``limit``), checked from the model's definitions
    with plain loops (so it shares no code with :func:`~simsched.simulator.schedule.validate_schedule`).

    Rules: each task has one primary execution on an existing, eligible processor; finite times;
    start >= arrival; finish - start = its cost there (``durations``); for every edge and every
    execution of its consumer, some execution of its producer delivers the data (finish + transfer)
    no later than the consumer starts; on each processor, executions never overlap, and a zero-cost
    execution never starts strictly inside another's busy interval.  With ``plan``: the executions
    of each processor, sorted by the plan's ``order``, start in that sequence (each at or after the
    previous one's finish).  A multi-processor task (``schedule.gang``) is an execution on each of
    its processors (k within ``[procs_min, procs_max]``, one type, one host where ``same_host``, led
    by its processor), for the slowest member's cost scaled by Amdahl's law or Downey's model
    relative to ``k_min``; its data goes from and to its lead.  O(n^2) at worst — for test-sized problems.
    """
    g, W = problem.graph, problem.W
    n, m = g.n_tasks, problem.n_processors
    out: list[str] = []
    if schedule.processor.shape != (n,) or schedule.start.shape != (n,) or schedule.finish.shape != (n,):
        return [f"the schedule does not have exactly one entry per task ({n} tasks)"]
    inst: list[tuple[int, int, float, float]] = [
        (i, int(schedule.processor[i]), float(schedule.start[i]), float(schedule.finish[i])) for i in range(n)]
    data_inst = inst  # executions that send and receive data: a gang task's lead only
    if schedule.copies is not None:
        c = schedule.copies
        inst += [(int(t), int(p), float(s), float(f)) for t, p, s, f in zip(c.task, c.processor, c.start, c.finish)]
    expected = [[float(W[t, p]) for p in range(m)] for t in range(n)]
    gang = schedule.gang
    if gang is not None or g.gang:  # every processor of a multi-processor task, the model's time there
        members = [[int(q) for q in gang.members[gang.ptr[i]:gang.ptr[i + 1]]] if gang is not None
                   else [int(schedule.processor[i])] for i in range(n)]
        inst = [(i, q, s, f) for i, _p, s, f in inst for q in members[i]]
        types, hosts = problem.platform.type_index, problem.platform.host_index
        for i in range(n):
            k, lo, hi, x = len(members[i]), int(g.procs_min[i]), int(g.procs_max[i]), float(g.serial[i])
            if not lo <= k <= hi:
                out.append(f"task {g.names[i]} runs on {k} processors, it needs {lo} to {hi}")
            if members[i][0] != int(schedule.processor[i]) or len({int(types[q]) for q in members[i]}) > 1:
                out.append(f"task {g.names[i]}: its processors are not led by its processor or not of one type")
            if g.same_host[i] and len({int(hosts[q]) for q in members[i]}) > 1:
                out.append(f"task {g.names[i]}: its processors are on several hosts, it needs one")
            slowest = max(float(W[i, q]) for q in members[i])
            a, sigma = float(g.downey[i, 0]), float(g.downey[i, 1])
            if k == lo:
                speed = 1.0
            elif a > 0:  # Downey 1997, relative to k_min
                speed = downey_reference(lo, a, sigma) / downey_reference(k, a, sigma)
            else:  # Amdahl, relative to k_min
                speed = (x + (1 - x) / k) / (x + (1 - x) / lo)
            expected[i] = [slowest * speed] * m
    scale = max(1.0, max((abs(f) for *_, f in inst), default=0.0) if all(np.isfinite(f) for *_, f in inst) else 1.0)
    eps = REL_TOL * scale
    seen: set[tuple[int, int]] = set()
    for t, p, s, f in inst:
        if not 0 <= t < n or not 0 <= p < m:
            return [f"an execution names task {t} on processor {p}, which does not exist"]
        if (t, p) in seen:
            out.append(f"task {g.names[t]} runs twice on processor {p}")
        seen.add((t, p))
        if not (np.isfinite(s) and np.isfinite(f)):
            return [f"task {g.names[t]} never ran"]
        if not np.isfinite(W[t, p]):
            out.append(f"task {g.names[t]} ran on processor {p}, which may not run it")
            continue
        if s < g.arrival[t] - eps:
            out.append(f"task {g.names[t]} started at {s} before its arrival {g.arrival[t]}")
        if durations and abs((f - s) - expected[t][p]) > eps + REL_TOL * expected[t][p]:
            out.append(f"task {g.names[t]} ran {f - s} on processor {p}, its cost there is {expected[t][p]}")
        if f < s - eps:
            out.append(f"task {g.names[t]} finished before it started")
    by_task: dict[int, list[tuple[int, float]]] = {}
    for t, p, _s, f in data_inst:
        by_task.setdefault(t, []).append((p, f))
    for k in range(g.n_edges):
        u, v = int(g.edge_src[k]), int(g.edge_dst[k])
        for t, q, s, _f in data_inst:
            if t != v:
                continue
            arrive = min(f + _transfer(problem, k, p, q) for p, f in by_task[u])
            if s < arrive - eps:
                out.append(f"task {g.names[v]} started at {s} on processor {q} before the data of "
                           f"{g.names[u]} arrived at {arrive}")
    for q in range(m):
        on = sorted((s, f, t) for t, p, s, f in inst if p == q)
        for i, (s, f, t) in enumerate(on):
            for s2, f2, t2 in on[i + 1:]:
                if s2 >= f - eps:
                    break
                # s <= s2 < f: the later one starts while the earlier one is busy, unless the
                # earlier one is itself zero-length at the same instant
                if f - s > eps or (f2 - s2 > eps and s2 > s + eps):
                    out.append(f"on processor {q}, {g.names[t2]} [{s2}, {f2}) starts inside "
                               f"{g.names[t]} [{s}, {f})")
    if plan is not None:  # executions of a processor run in increasing order (ties: any order)
        orders = list(plan.order) + ([] if plan.copies is None else list(plan.copies.order))
        if len(inst) != len(orders):  # a gang: each member's execution has its task's order
            orders = [float(plan.order[t]) for t, *_ in inst]
        for q in range(m):
            seq = sorted((orders[i], i) for i, (_t, p, _s, _f) in enumerate(inst) if p == q)
            done_by, last, group_end = -np.inf, None, -np.inf
            for o, i in seq:
                if o != last:
                    done_by, last = max(done_by, group_end), o
                t, _p, s, f = inst[i]
                if s < done_by - eps:
                    out.append(f"on processor {q} {g.names[t]} starts at {s}, before a task the plan "
                               f"puts earlier finishes at {done_by}")
                group_end = max(group_end, f)
    return out[:limit]


def replay_differences(problem: Problem, planned: Schedule, simulated: Schedule, limit: int = 3) -> list[str]:
    """Tasks (and copies) whose simulated start or finish differs from the planned one by more than
    :data:`REL_TOL` relative to the makespan.  O(n)."""
    scale = REL_TOL * max(1.0, float(np.abs(simulated.finish).max()))
    out = []
    for what in ("start", "finish"):
        a, b = getattr(planned, what), getattr(simulated, what)
        for i in np.flatnonzero(~(np.abs(a - b) <= scale))[:limit]:
            out.append(f"task {problem.graph.names[i]}: planned {what} {a[i]:.12g}, engine {b[i]:.12g}")
        if planned.copies is not None and simulated.copies is not None:
            a, b = getattr(planned.copies, what), getattr(simulated.copies, what)
            for k in np.flatnonzero(~(np.abs(a - b) <= scale))[:limit]:
                out.append(f"copy of {problem.graph.names[planned.copies.task[k]]}: planned {what} "
                           f"{a[k]:.12g}, engine {b[k]:.12g}")
    return out[:limit]


# --------------------------------------------------------------------------- the campaign
@dataclass
class Tally:
    """Per scheduler: runs, skipped (too large for it), and violations by kind with a first example
    (``(seed, index, message)``) of each."""

    runs: int = 0
    skipped: int = 0
    violations: Counter = field(default_factory=Counter)
    examples: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def add(self, kind: str, seed: int, index: int, message: str) -> None:
        self.violations[kind] += 1
        self.examples.setdefault(kind, (seed, index, message))


def _approximate(scheduler: object) -> bool:
    return bool(getattr(type(scheduler), "approximate_plan", False))


def check_one(name: str, scheduler: object, problem: Problem, seed: int) -> list[tuple[str, str]]:
    """The violations ``(kind, message)`` of one scheduler on one problem: ``error`` (any exception
    but an expected :class:`SimschedError`), ``not-executable`` (the engine refuses the plan),
    ``invalid-plan`` / ``invalid-run`` (the independent validator on the planned / simulated
    schedule), ``replay`` (planned times differ from the engine's, planners that do not declare
    ``approximate_plan``)."""
    from simsched.errors import PlanError
    from simsched.schedulers import registry
    from simsched.simulator.engine import execute_plan, run_online

    rng = np.random.default_rng(seed)
    found: list[tuple[str, str]] = []
    try:
        if registry.kind(type(scheduler)) == "static":
            plan = scheduler.plan(problem, rng)  # type: ignore[attr-defined]
            try:
                simulated = execute_plan(problem, plan)
            except PlanError as exc:
                return [("not-executable", str(exc))]
            planned = plan.planned_schedule()
            if planned is not None:
                found += [("invalid-plan", v) for v in independent_violations(problem, planned, plan)[:1]]
                if not _approximate(scheduler):
                    found += [("replay", d) for d in replay_differences(problem, planned, simulated)[:1]]
            found += [("invalid-run", v) for v in independent_violations(problem, simulated, plan)[:1]]
        else:
            simulated, _ = run_online(problem, scheduler, None, rng)  # type: ignore[arg-type]
            found += [("invalid-run", v) for v in independent_violations(problem, simulated)[:1]]
    except SimschedError as exc:
        found.append(("error", f"{type(exc).__name__}: {exc}"))
    except Exception as exc:  # noqa: BLE001 - a crash is what the campaign counts
        found.append(("error", f"{type(exc).__name__}: {exc}"))
    return found


def _schedulers(names: list[str]) -> dict[str, object]:
    from simsched.schedulers import registry

    out = {}
    for name in names:
        try:
            out[name] = registry.create(name, **CAMPAIGN_PARAMS.get(name, {}))
        except SimschedError as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
    return out


def run_campaign(dags: int, seed: int = 0, names: list[str] | None = None, max_tasks: int = 30,
                 max_processors: int = 8, start: int = 0) -> dict[str, Tally]:
    """Draw problems ``start .. start + dags - 1`` (problem ``i`` from ``default_rng([seed, i])``, so any
    one can be redrawn alone with :func:`problem_of`) and run every scheduler in ``names`` (default:
    all registered ones) on each.  Returns a :class:`Tally` per scheduler.  O(dags x schedulers x
    one run)."""
    from simsched.schedulers import registry

    scheds = _schedulers(names or registry.names())
    tallies = {name: Tally() for name in scheds}
    for i in range(start, start + dags):
        problem = problem_of(seed, i, max_tasks, max_processors)
        for name, sched in scheds.items():
            lim = SLOW_LIMITS.get(name)
            if lim and (problem.n_tasks > lim[0] or problem.n_processors > lim[1]):
                tallies[name].skipped += 1
                continue
            tallies[name].runs += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for kind, msg in check_one(name, sched, problem, i):
                    tallies[name].add(kind, seed, i, msg)
    return tallies


def problem_of(seed: int, index: int, max_tasks: int = 30, max_processors: int = 8) -> Problem:
    """Problem ``index`` of the campaign with ``seed`` (independent of every other problem)."""
    return random_problem(np.random.default_rng([seed, index]), max_tasks, max_processors)


def _merge(parts: list[dict[str, Tally]]) -> dict[str, Tally]:
    out: dict[str, Tally] = {}
    for part in parts:
        for name, t in part.items():
            acc = out.setdefault(name, Tally())
            acc.runs += t.runs
            acc.skipped += t.skipped
            acc.violations.update(t.violations)
            for k, v in t.examples.items():
                acc.examples.setdefault(k, v)
    return out


def _worker(args: tuple) -> dict[str, Tally]:
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    return run_campaign(*args)


def format_tallies(tallies: dict[str, Tally]) -> str:
    """A plain-text table: scheduler, runs, skipped, violations by kind, then one example each."""
    lines = [f"{'scheduler':16} {'runs':>8} {'skipped':>8} {'violations':>10}  kinds"]
    for name, t in tallies.items():
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(t.violations.items())) or "-"
        lines.append(f"{name:16} {t.runs:>8} {t.skipped:>8} {sum(t.violations.values()):>10}  {kinds}")
    for name, t in tallies.items():
        for kind, (seed, i, msg) in t.examples.items():
            lines.append(f"  {name} {kind}: problem_of({seed}, {i}): {msg[:300]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simsched.testing.campaign", description=__doc__.split("\n")[0])
    parser.add_argument("--dags", type=int, default=1000, help="number of random problems (nightly: 100000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--max-tasks", type=int, default=30)
    parser.add_argument("--max-processors", type=int, default=8)
    parser.add_argument("--scheduler", action="append", help="only these (repeatable); default: all registered")
    a = parser.parse_args(argv)
    if a.dags < 1 or a.jobs < 1 or a.max_tasks < 1 or a.max_processors < 1 or a.seed < 0:
        print("campaign: --dags, --jobs, --max-tasks and --max-processors must be >= 1, --seed >= 0",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    chunks = [(a.dags * k // a.jobs, a.dags * (k + 1) // a.jobs) for k in range(a.jobs)]
    args = [(hi - lo, a.seed, a.scheduler, a.max_tasks, a.max_processors, lo) for lo, hi in chunks if hi > lo]
    if a.jobs == 1:
        parts = [_worker(args[0])]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(a.jobs) as pool:
            parts = list(pool.map(_worker, args))
    tallies = _merge(parts)
    print(format_tallies(tallies))
    total = sum(sum(t.violations.values()) for t in tallies.values())
    runs = sum(t.runs for t in tallies.values())
    print(f"{a.dags} problems, {runs} scheduler runs, {total} violations in {time.perf_counter() - t0:.0f} s")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
