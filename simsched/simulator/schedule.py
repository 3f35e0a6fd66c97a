"""Plans, schedules, their invariants and their metrics.

A :class:`Plan` is what a static planner decides before time 0: a processor per task and, per
processor, the order its tasks run in (``order``: tasks on one processor run in increasing
``order``).  It may also carry the planner's own predicted start/finish times.

A :class:`Schedule` is what happened (or would happen): per task a processor, a start and a finish.
``validate`` checks the invariants every schedule must hold; ``metrics`` computes the figures
simsched reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simsched.simulator.problem import Problem

TOL = 1e-9


def _frozen(a: np.ndarray, dtype: type) -> np.ndarray:
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Plan:
    """A static plan: ``processor[t]`` and a per-processor sequence given by ``order`` (sort key).

    ``start``/``finish`` are the planner's own predicted times when it computed them (HEFT does);
    executing the plan with deterministic durations must reproduce them.
    """

    processor: np.ndarray
    order: np.ndarray
    start: np.ndarray | None = None
    finish: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "processor", _frozen(self.processor, np.int64))
        object.__setattr__(self, "order", _frozen(self.order, np.float64))
        for name in ("start", "finish"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, _frozen(v, np.float64))

    @classmethod
    def from_times(cls, processor: np.ndarray, start: np.ndarray, finish: np.ndarray,
                   info: dict | None = None) -> Plan:
        """A plan whose per-processor order is the order of the planned start times (ties broken by
        finish time, then task index, so zero-length tasks keep a valid order)."""
        n = len(processor)
        key = np.lexsort((np.arange(n), finish, start))
        order = np.empty(n)
        order[key] = np.arange(n)
        return cls(processor, order, start, finish, info or {})

    def _sequence_key(self) -> np.ndarray:
        """Tasks sorted by processor, then ``order``, then index (two stable sorts: O(n log n))."""
        by_order = np.argsort(self.order, kind="stable")
        return by_order[np.argsort(self.processor[by_order], kind="stable")]

    def sequences(self, m: int) -> list[np.ndarray]:
        """Tasks of each processor in planned order."""
        counts = np.bincount(self.processor, minlength=m)
        return np.split(self._sequence_key(), np.cumsum(counts)[:-1])

    def previous_on_processor(self) -> np.ndarray:
        """(n,) the task planned just before each task on its processor, -1 for the first."""
        key = self._sequence_key()
        prev = np.full(len(self.order), -1, dtype=np.int64)
        same = self.processor[key[1:]] == self.processor[key[:-1]]
        prev[key[1:][same]] = key[:-1][same]
        return prev


@dataclass(frozen=True, eq=False)
class Schedule:
    """Per task: the processor it ran on and its start and finish time."""

    processor: np.ndarray
    start: np.ndarray
    finish: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "processor", _frozen(self.processor, np.int64))
        object.__setattr__(self, "start", _frozen(self.start, np.float64))
        object.__setattr__(self, "finish", _frozen(self.finish, np.float64))

    @property
    def makespan(self) -> float:
        return float(self.finish.max())

    def ready_times(self, problem: Problem) -> np.ndarray:
        """(n,) when each task's inputs were all available on its processor (and it had arrived):
        ``max(arrival, max over predecessors of finish + transfer)``.  O(n + e)."""
        g = problem.graph
        ready = np.array(g.arrival, dtype=np.float64)
        if g.n_edges:
            arrive = self.finish[g.edge_src] + problem.edge_delays(self.processor)
            np.maximum.at(ready, g.edge_dst, arrive)
        return ready

    def validate(self, problem: Problem, tol: float = TOL) -> list[str]:
        """Every violated invariant, as readable sentences (empty when the schedule is valid).

        Checks: one entry per task; finite times; start >= arrival; duration equals the task's
        execution time on its processor (deterministic runs only, see ``check_durations``);
        each edge's data arrives before its consumer starts; no two tasks overlap on a processor;
        every task runs on an eligible processor.  O(n log n + e).
        """
        return validate_schedule(self, problem, tol=tol)

    def metrics(self, problem: Problem) -> Metrics:
        return compute_metrics(self, problem)

    def to_records(self, problem: Problem) -> list[dict]:
        names, procs = problem.graph.names, problem.platform.names
        return [
            {"task": names[i], "processor": procs[int(p)], "start": float(s), "finish": float(f)}
            for i, (p, s, f) in enumerate(zip(self.processor, self.start, self.finish))
        ]


def validate_schedule(s: Schedule, problem: Problem, *, tol: float = TOL,
                      check_durations: bool = True, limit: int = 20) -> list[str]:
    """See :meth:`Schedule.validate`.  With ``check_durations=False`` (stochastic runs) only the
    sign of each duration is checked."""
    g, names, pnames = problem.graph, problem.graph.names, problem.platform.names
    n, m = g.n_tasks, problem.n_processors
    errors: list[str] = []

    def add(msg: str) -> None:
        if len(errors) < limit:
            errors.append(msg)

    for arr, what in ((s.processor, "processor"), (s.start, "start"), (s.finish, "finish")):
        if arr.shape != (n,):
            return [f"{what} has {arr.shape} entries for {n} tasks: every task must run exactly once"]
    if ((s.processor < 0) | (s.processor >= m)).any():
        i = int(np.flatnonzero((s.processor < 0) | (s.processor >= m))[0])
        return [f"task {names[i]!r} is on processor {s.processor[i]}, which does not exist"]
    if not (np.isfinite(s.start).all() and np.isfinite(s.finish).all()):
        i = int(np.flatnonzero(~(np.isfinite(s.start) & np.isfinite(s.finish)))[0])
        return [f"task {names[i]!r} never ran (start {s.start[i]}, finish {s.finish[i]})"]
    scale = tol * max(1.0, float(np.abs(s.finish).max()))

    bad = np.flatnonzero(~problem.eligible[np.arange(n), s.processor])
    for i in bad[:limit]:
        add(f"task {names[i]!r} ran on {pnames[s.processor[i]]!r}, which may not run it")
    bad = np.flatnonzero(s.start < g.arrival - scale)
    for i in bad[:limit]:
        add(f"task {names[i]!r} started at {s.start[i]:g} before it arrived at {g.arrival[i]:g}")
    duration = s.finish - s.start
    if check_durations:
        expected = problem.W[np.arange(n), s.processor]
        bad = np.flatnonzero(np.abs(duration - expected) > scale + tol * np.abs(expected))
        for i in bad[:limit]:
            add(f"task {names[i]!r} ran {duration[i]:g} on {pnames[s.processor[i]]!r} but takes {expected[i]:g} there")
    else:
        bad = np.flatnonzero(duration < -scale)
        for i in bad[:limit]:
            add(f"task {names[i]!r} finished at {s.finish[i]:g} before it started at {s.start[i]:g}")
    if g.n_edges:
        arrive = s.finish[g.edge_src] + problem.edge_delays(s.processor)
        bad = np.flatnonzero(s.start[g.edge_dst] < arrive - scale)
        for e in bad[:limit]:
            a, b = g.edge_src[e], g.edge_dst[e]
            add(f"task {names[b]!r} started at {s.start[b]:g} before the data of {names[a]!r} "
                f"arrived at {arrive[e]:g}")
    # no overlap: sort by (processor, start, finish) and compare neighbours
    key = np.lexsort((s.finish, s.start, s.processor))
    p, st, fi = s.processor[key], s.start[key], s.finish[key]
    same = p[1:] == p[:-1]
    # zero-length tasks never conflict
    clash = same & (st[1:] < fi[:-1] - scale) & (fi[1:] - st[1:] > scale) & (fi[:-1] - st[:-1] > scale)
    for k in np.flatnonzero(clash)[:limit]:
        a, b = key[k], key[k + 1]
        add(f"tasks {names[a]!r} [{s.start[a]:g}, {s.finish[a]:g}) and {names[b]!r} "
            f"[{s.start[b]:g}, {s.finish[b]:g}) overlap on {pnames[p[k]]!r}")
    return errors


@dataclass(frozen=True)
class Metrics:
    """The figures simsched reports for one schedule (times in the scenario's time unit)."""

    makespan: float
    avg_turnaround: float
    avg_waiting: float
    utilization: float
    utilization_per_processor: tuple[float, ...]
    slr: float
    speedup: float
    efficiency: float

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("makespan", "avg_turnaround", "avg_waiting", "utilization",
                                           "slr", "speedup", "efficiency")}
        d["utilization_per_processor"] = list(self.utilization_per_processor)
        return d


def compute_metrics(s: Schedule, problem: Problem) -> Metrics:
    """Makespan (last finish minus first arrival); average turnaround (finish - arrival); average
    waiting (start - ready, where ready is when the task's inputs were on its processor); utilisation
    (busy time / makespan, per processor and mean); SLR (makespan / sum of minimum costs on the
    minimum-cost critical path, Topcuoglu et al. 2002); speedup (best single-processor sequential
    time / makespan) and efficiency (speedup / processors).  O(n + e)."""
    from simsched.simulator.bounds import critical_path_min_cost

    g = problem.graph
    m = problem.n_processors
    origin = float(g.arrival.min())
    makespan = float(s.finish.max()) - origin
    busy = np.bincount(s.processor, weights=s.finish - s.start, minlength=m)
    util = busy / makespan if makespan > 0 else np.zeros(m)
    ready = s.ready_times(problem)
    cp = critical_path_min_cost(problem)
    sequential = problem.W.sum(axis=0).min()
    if not np.isfinite(sequential):  # no single processor may run everything
        sequential = problem.min_cost.sum()
    speedup = float(sequential / makespan) if makespan > 0 else float("nan")
    return Metrics(
        makespan=makespan,
        avg_turnaround=float((s.finish - g.arrival).mean()),
        avg_waiting=float(np.maximum(s.start - ready, 0.0).mean()),
        utilization=float(util.mean()),
        utilization_per_processor=tuple(float(u) for u in util),
        slr=float(makespan / cp) if cp > 0 else float("nan"),
        speedup=speedup,
        efficiency=speedup / m if np.isfinite(speedup) else float("nan"),
    )
