"""Hypothesis strategies for task graphs, platforms and scheduling problems.

Every parameter a scheduler's behaviour depends on is a knob of :class:`ProblemSpace`: sizes,
communication-to-computation ratio (CCR), heterogeneity of execution costs, eligibility constraints
(some processors may not run some tasks), arrival times, latency/bandwidth and hosts.  The
strategies are built from hypothesis primitives (not from a seeded generator), so a failing example
*shrinks*: edges disappear, costs drop to small whole numbers, cost factors, arrivals and latencies
to their simplest level, hosts merge — what is left is a small problem a person can read
(:func:`describe_problem`).  Costs, data and arrivals are whole numbers and factors come from a few
levels: that keeps shrinking fast (tens of runs, not hundreds) at little loss of generality.

Example::

    from hypothesis import given
    from simsched.testing.strategies import problems

    @given(problems(max_tasks=8, eligibility=0.3, arrivals=20.0))
    def test_my_planner(problem): ...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.taskgraph import TaskGraph


@dataclass(frozen=True)
class ProblemSpace:
    """The family of problems a strategy draws from (each value is a range's upper end unless said).

    Attributes:
        min_tasks, max_tasks: number of tasks.
        min_processors, max_processors: number of processors.
        max_hosts: processors are spread over at most this many hosts (None: up to one per
            processor); processors on one host exchange data for free.
        edge_density: at most ``edge_density * n (n - 1) / 2`` edges.
        mean_cost: task costs lie in ``[1, 2 mean_cost]`` (``[0, ...]`` with ``zero_costs``).
        ccr: edge data lies in ``[0, 2 ccr mean_cost]`` (at unit bandwidth, mean transfer ≈ ccr x
            mean cost).
        heterogeneity: cost of task i on processor j is ``w_i x U[1 - h/2, 1 + h/2]`` (explicit
            costs) or processor speeds lie in ``[1 - h/2, 1 + h/2]`` (``explicit_costs=False``).
        eligibility: up to this fraction of (task, processor) pairs is barred (every task keeps at
            least one processor).  Explicit costs only.
        arrivals: tasks arrive in ``[0, arrivals]`` (0: all at time 0).
        latency: latency between hosts in ``[0, latency]``.
        bandwidth: ``(low, high)`` bandwidth between hosts.
        explicit_costs: an explicit cost matrix (Topcuoglu style) rather than work / speed.
        zero_costs: each task is of zero duration with even odds (STG dummy tasks, WfCommons
            auxiliary tasks, DAX stage-in jobs).
        zero_data: each edge carries no data with even odds.
        tied_costs: task costs come from a few small values (0 with ``zero_costs``, 1, 2, 5), so
            ranks, start times and finish times tie.
        shuffled: task indices are a drawn permutation of a topological order, so an edge may go
            from a higher to a lower index (t1 -> t0); shrinks to the identity.
        gang: with even odds each task needs several processors at once (needs ``processors``):
            rigid ``k`` or moldable ``[k_min, k_max]`` within the processors that may run it, with
            a serial fraction of 0, 0.1, 0.5 or 1, or (moldable, with even odds) Downey's model
            (:mod:`simsched.simulator.gang`).
    """

    min_tasks: int = 1
    max_tasks: int = 10
    min_processors: int = 1
    max_processors: int = 4
    max_hosts: int | None = None
    edge_density: float = 0.5
    mean_cost: float = 10.0
    ccr: float = 1.0
    heterogeneity: float = 1.0
    eligibility: float = 0.0
    arrivals: float = 0.0
    latency: float = 2.0
    bandwidth: tuple[float, float] = (0.5, 4.0)
    explicit_costs: bool = True
    zero_costs: bool = False
    zero_data: bool = False
    tied_costs: bool = False
    shuffled: bool = False
    gang: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.min_tasks <= self.max_tasks:
            raise ValueError(f"need 1 <= min_tasks <= max_tasks, got {self.min_tasks}, {self.max_tasks}")
        if not 1 <= self.min_processors <= self.max_processors:
            raise ValueError("need 1 <= min_processors <= max_processors")
        if not 0 <= self.heterogeneity < 2:
            raise ValueError("heterogeneity must be in [0, 2)")
        if not 0 < self.bandwidth[0] <= self.bandwidth[1]:
            raise ValueError("bandwidth must be (low, high) with 0 < low <= high")

    def replace(self, **changes: object) -> ProblemSpace:
        """A copy with some fields changed (unknown names raise TypeError)."""
        return dataclasses.replace(self, **changes)


def _whole(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Whole numbers in [lo, hi] as floats: they shrink fast and read well in a failing example."""
    lo_i, hi_i = int(np.ceil(lo)), int(np.floor(hi))
    return st.integers(lo_i, hi_i).map(float) if hi_i > lo_i else st.just(float(max(lo, min(hi, lo_i))))


def _levels(lo: float, hi: float, first: float = 1.0) -> st.SearchStrategy[float]:
    """One of a few values spanning [lo, hi], ``first`` (the simplest, where shrinking goes) first."""
    values = [first] if lo <= first <= hi else []
    values += [v for v in (lo, hi, (lo + hi) / 2, lo + (hi - lo) / 4, hi - (hi - lo) / 4) if v not in values]
    return st.sampled_from(values)


@st.composite
def platforms(draw: st.DrawFn, space: ProblemSpace = ProblemSpace(), processors: int | None = None) -> Platform:
    """A platform of ``processors`` (default: drawn from the space) named ``p0..``, grouped into hosts
    ``h0..``, with one latency/bandwidth between hosts.  O(m^2)."""
    m = processors if processors is not None else draw(st.integers(space.min_processors, space.max_processors))
    hosts = min(m, space.max_hosts or m)
    host = [draw(st.integers(0, hosts - 1)) for _ in range(m)]
    h = space.heterogeneity
    speed = [1.0] * m if space.explicit_costs else [draw(_levels(1 - h / 2, 1 + h / 2)) for _ in range(m)]
    procs = [Processor(f"p{j}", speed=speed[j], host=f"h{host[j]}") for j in range(m)]
    return Platform.uniform(procs, bandwidth=draw(_levels(*space.bandwidth)),
                            latency=draw(_levels(0.0, space.latency, first=0.0)))


@st.composite
def task_graphs(draw: st.DrawFn, space: ProblemSpace = ProblemSpace(), processors: int | None = None) -> TaskGraph:
    """A DAG named ``t0..`` (edges go from a lower to a higher task index unless
    ``space.shuffled``); with
    ``processors`` and ``space.explicit_costs``, an explicit (n, processors) cost matrix with
    ``inf`` for barred pairs.  O(n m + e)."""
    n = draw(st.integers(space.min_tasks, space.max_tasks))
    max_edges = int(space.edge_density * n * (n - 1) / 2)
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=max_edges)) if n > 1 else []
    edges = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})
    if space.shuffled and n > 1:
        perm = draw(st.permutations(range(n)))
        edges = sorted((perm[a], perm[b]) for a, b in edges)
    top = 2 * space.mean_cost
    data = [0.0 if space.zero_data and draw(st.booleans()) else draw(_whole(0.0, 2 * space.ccr * space.mean_cost))
            for _ in edges]
    if space.tied_costs:
        cost_of = st.sampled_from([1.0, 2.0, 5.0])
    else:
        cost_of = _whole(0.0 if space.zero_costs else 1.0, top)
    work = [0.0 if space.zero_costs and draw(st.booleans()) else draw(cost_of) for _ in range(n)]
    arrival = [draw(_whole(0.0, space.arrivals)) for _ in range(n)] if space.arrivals > 0 else None
    cost = None
    if processors is not None and space.explicit_costs:
        h = space.heterogeneity
        cost = np.array([[w * draw(_levels(1 - h / 2, 1 + h / 2)) for _ in range(processors)] for w in work])
        if space.eligibility > 0 and processors > 1:
            barred = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, processors - 1)),
                                   max_size=int(space.eligibility * n * processors)))
            for t, p in barred:
                cost[t, p] = np.inf
            stuck = np.flatnonzero(np.isinf(cost).all(axis=1))
            cost[stuck, stuck % processors] = np.array(work)[stuck]
    names = [f"t{i}" for i in range(n)]
    procs = serial = downey = None
    if space.gang and processors is not None:
        room = np.isfinite(cost).sum(axis=1) if cost is not None else np.full(n, processors)
        procs, serial, downey = [], [], []
        for i in range(n):
            lo = draw(st.integers(1, int(room[i]))) if draw(st.booleans()) else 1
            hi = draw(st.integers(lo, int(room[i]))) if draw(st.booleans()) else lo
            procs.append([lo, hi])
            serial.append(draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])))
            downey.append([0.0, 0.0])
            if lo < hi and draw(st.booleans()):  # Downey's model instead of Amdahl's
                serial[-1] = 0.0
                downey[-1] = [draw(st.sampled_from([1.0, 2.5, 8.0])), draw(st.sampled_from([0.0, 0.5, 1.0, 4.0]))]
    return TaskGraph(names, edges, data, work=work, arrival=arrival, cost=cost, procs=procs, serial=serial,
                     downey=downey)


@st.composite
def problems(draw: st.DrawFn, space: ProblemSpace | None = None, **overrides: object) -> Problem:
    """A :class:`Problem`: a platform from :func:`platforms`, then a graph from :func:`task_graphs`
    sized for it.  Keyword arguments override fields of ``space`` (default :class:`ProblemSpace`),
    e.g. ``problems(max_tasks=6, eligibility=0.3)``."""
    space = (space or ProblemSpace()).replace(**overrides) if overrides else (space or ProblemSpace())
    platform = draw(platforms(space))
    graph = draw(task_graphs(space, processors=platform.n_processors))
    return Problem(graph, platform)


EDGE_CASES = ProblemSpace(eligibility=0.3, arrivals=15.0, zero_costs=True, zero_data=True, shuffled=True)
"""A space that exercises the corners: barred processors, late arrivals, zero-length tasks, edges
without data, task indices that are not a topological order."""

DEGENERATE = ProblemSpace(max_tasks=6, max_processors=3, eligibility=0.4, zero_costs=True, zero_data=True,
                          tied_costs=True, shuffled=True, edge_density=0.4, latency=0.0)
"""Tiny, degenerate problems: one to six tasks, one to three processors, half the tasks of zero cost,
the others of cost 1, 2 or 5 (ties everywhere), edges often without data, barred processors, indices
not in topological order — where the zero-cost tie that deadlocked 15 planners lived."""


def random_plan(problem: Problem, rng: np.random.Generator) -> Plan:
    """A valid plan: a random eligible processor per task and, per processor, a random linear
    extension of the DAG (level plus a random fraction).  O(n m)."""
    n = problem.n_tasks
    elig = problem.eligible
    pick = np.floor(rng.random(n) * elig.sum(axis=1)).astype(np.int64)
    proc = np.argmax(np.cumsum(elig, axis=1) > pick[:, None], axis=1)
    return Plan(proc, problem.graph.level + rng.random(n))


@st.composite
def problems_and_plans(draw: st.DrawFn, space: ProblemSpace | None = None, **overrides: object) -> tuple[Problem, Plan]:
    """A problem from :func:`problems` and a valid :func:`random_plan` for it."""
    problem = draw(problems(space, **overrides))
    return problem, random_plan(problem, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))


def _num(x: float) -> str:
    return "inf" if np.isinf(x) else f"{x:.6g}"


def describe_problem(problem: Problem) -> str:
    """A compact, readable description of a (small) problem: processors and hosts, network, every
    task's costs and arrival (and a multi-processor task's demand and speedup model), every edge's
    data.  O(n m + e)."""
    g, plat = problem.graph, problem.platform
    hosts: dict[str, list[str]] = {}
    for p in plat.processors:
        hosts.setdefault(p.host, []).append(p.name)
    lines = [f"{g.n_tasks} task(s), {g.n_edges} edge(s), {plat.n_processors} processor(s) on "
             f"{len(hosts)} host(s): " + "; ".join(f"{h}: {', '.join(ps)}" for h, ps in hosts.items())]
    if len(hosts) > 1:
        off = ~np.eye(plat.n_processors, dtype=bool) & (plat.host_index[:, None] != plat.host_index[None, :])
        lat, bw = np.unique(plat.latency[off]), np.unique(plat.bandwidth[off])
        lines.append("network between hosts: latency " + "/".join(_num(x) for x in lat)
                     + ", bandwidth " + "/".join(_num(x) for x in bw))
    lines.append("task: cost on " + ", ".join(plat.names) + (" | arrival" if g.arrival.any() else ""))
    for i, name in enumerate(g.names):
        row = f"  {name}: " + ", ".join(_num(c) for c in problem.W[i])
        if g.arrival.any():
            row += f" | {_num(g.arrival[i])}"
        if g.procs_max[i] > 1:  # a multi-processor task: its demand and speedup model
            lo, hi = int(g.procs_min[i]), int(g.procs_max[i])
            row += f" | procs {lo}" if lo == hi else f" | procs [{lo}, {hi}]"
            if g.downey[i, 0] > 0:
                row += f", Downey A {_num(g.downey[i, 0])} sigma {_num(g.downey[i, 1])}"
            elif lo < hi:
                row += f", serial {_num(g.serial[i])}"
            row += ", one host" if g.same_host[i] else ""
        lines.append(row)
    if g.n_edges:
        lines.append("edges (data): " + ", ".join(
            f"{g.names[a]}->{g.names[b]} ({_num(d)})" for a, b, d in zip(g.edge_src, g.edge_dst, g.edge_data)))
    return "\n".join(lines)
