"""Plans, schedules, their invariants and their metrics.

A :class:`Plan` is what a static planner decides before time 0: a processor per task and, per
processor, the order its tasks run in (``order``: tasks on one processor run in increasing
``order``; tasks of equal ``order`` in topological order, :func:`topological_rank`, so a tie can
never put a task before its own ancestor).  It may also carry the planner's own predicted
start/finish times.  A zero-cost task still takes its place in its processor's sequence: it runs
after the task before it has finished and before the next one starts (docs/model.md).

A :class:`Schedule` is what happened (or would happen): per task a processor, a start and a finish.
``validate`` checks the invariants every schedule must hold; ``metrics`` computes the figures
simsched reports.

Both may carry :class:`~simsched.simulator.copies.Copies`: extra executions of tasks (task
duplication).  Without them (``copies is None``) every path below is the one-execution-per-task
code; with them see :mod:`simsched.simulator.copies` for the rule (a consumer takes each input from
the earliest-arriving instance of its producer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from simsched.errors import PlanError
from simsched.simulator.copies import Copies, input_pairs, instance_tasks
from simsched.simulator.gang import Gang, busy_intervals, check_gang, gang_durations
from simsched.simulator.problem import Problem

TOL = 1e-9


def _frozen(a: np.ndarray, dtype: type) -> np.ndarray:
    """``a`` as a read-only contiguous array of ``dtype``: one already so that is no view of another array (the
    compiled loop's results, set read-only) is shared, anything else copied, so nothing can write the result
    through another name (#42: three fewer per-task copies at a stream run's peak).  O(1) or O(n)."""
    if isinstance(a, np.ndarray) and a.dtype == dtype and not a.flags.writeable and a.flags.c_contiguous \
            and not isinstance(a.base, np.ndarray):
        return a
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Plan:
    """A static plan: ``processor[t]`` and a per-processor sequence given by ``order`` (sort key;
    ties run in topological order).

    ``start``/``finish`` are the planner's own predicted times when it computed them (HEFT does);
    executing the plan with deterministic durations must reproduce them.  ``copies`` lists extra
    executions of tasks (duplication-based planners), each with an ``order`` on its processor.
    ``gang`` names the processors of multi-processor tasks (:mod:`simsched.simulator.gang`; lead =
    ``processor``): such a task takes its place, by ``order``, in the sequence of every member.
    """

    processor: np.ndarray
    order: np.ndarray
    start: np.ndarray | None = None
    finish: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    copies: Copies | None = None
    gang: Gang | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "processor", _frozen(self.processor, np.int64))
        object.__setattr__(self, "order", _frozen(self.order, np.float64))
        for name in ("start", "finish"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, _frozen(v, np.float64))

        if self.copies is not None and len(self.copies) == 0:
            object.__setattr__(self, "copies", None)
        if self.copies is not None and self.copies.order is None:
            raise ValueError("a plan's copies need an order")
        _normalise_gang(self)

    @classmethod
    def from_times(cls, processor: np.ndarray, start: np.ndarray, finish: np.ndarray,
                   info: dict | None = None, copies: Copies | None = None, *,
                   placed: Sequence[int] | np.ndarray | None = None, gang: Gang | None = None) -> Plan:
        """A plan whose per-processor order is the order of the planned ``(start, finish)`` pairs,
        ties (zero-cost tasks at one instant) broken by ``placed``.

        ``placed``: every instance (task ``i < n``, copy ``n + k``) in the order the planner placed
        it.  A list scheduler places a task after all its predecessors, so this tie-break keeps the
        order a linear extension of precedence *and* reproduces the planner's times: a zero-cost task
        placed after another at the same instant may have waited for it.  Without ``placed``, equal
        pairs get the same ``order`` and the engine runs them in topological order
        (:meth:`sequences`).

        When the planned times respect precedence (``finish[u] + transfer <= start[v]`` on every
        edge, costs and transfers >= 0) the order is always a linear extension of precedence: along
        an edge ``(start, finish)`` never decreases, and where it stays equal the tie-break follows
        the edge.  O(n log n)."""
        n = len(processor)
        start = np.asarray(start, dtype=np.float64)
        finish = np.asarray(finish, dtype=np.float64)
        if copies is not None and len(copies):
            st = np.concatenate([start, copies.start])
            fi = np.concatenate([finish, copies.finish])
            rank = _time_rank(st, fi, placed)
            copies = Copies(copies.task, copies.processor, rank[n:], copies.start, copies.finish)
            return cls(processor, rank[:n], start, finish, info or {}, copies)
        return cls(processor, _time_rank(start, finish, placed), start, finish, info or {}, gang=gang)

    def planned_schedule(self) -> Schedule | None:
        """The planner's own times as a :class:`Schedule` (copies included), or None without them."""
        if self.start is None or self.finish is None:
            return None
        copies = self.copies
        if copies is not None and (copies.start is None or copies.finish is None):
            return None
        return Schedule(self.processor, self.start, self.finish, copies, self.gang)

    def _sequence_key(self, rank: np.ndarray | None) -> np.ndarray:
        """Tasks sorted by processor, then ``order``, then ``rank`` (when given), then index.
        O(n log n)."""
        n = self.order.size
        keys = (np.arange(n),) if rank is None else (np.arange(n), rank)
        return np.lexsort((*keys, self.order, self.processor))

    def sequences(self, m: int, rank: np.ndarray | None = None) -> list[np.ndarray]:
        """Tasks of each processor in planned order; tasks of equal ``order`` by ``rank`` (pass
        :func:`topological_rank` of the problem, as the engine does), then index."""
        counts = np.bincount(self.processor, minlength=m)
        return np.split(self._sequence_key(rank), np.cumsum(counts)[:-1])

    def previous_on_processor(self, rank: np.ndarray | None = None) -> np.ndarray:
        """(n,) the task planned just before each task on its processor, -1 for the first (ties in
        ``order`` broken by ``rank`` as in :meth:`sequences`).  O(n log n)."""
        key = self._sequence_key(rank)
        prev = np.full(len(self.order), -1, dtype=np.int64)
        same = self.processor[key[1:]] == self.processor[key[:-1]]
        prev[key[1:][same]] = key[:-1][same]
        return prev


def _normalise_gang(obj: Plan | Schedule) -> None:
    """Drop a gang where every task has one processor (the single-processor paths then run,
    unchanged); refuse a gang beside copies (duplication of multi-processor tasks is not modelled)."""
    gang = obj.gang
    if gang is None:
        return
    if gang.members.size == gang.n_tasks and gang.n_tasks == obj.processor.size \
            and np.array_equal(gang.members, obj.processor):
        object.__setattr__(obj, "gang", None)
    elif obj.copies is not None:
        raise ValueError("a plan or schedule may have copies or a gang of multi-processor tasks, not both")


def _time_rank(start: np.ndarray, finish: np.ndarray, placed: Sequence[int] | np.ndarray | None) -> np.ndarray:
    """(k,) ranks 0, 1, ... by increasing ``(start, finish)``, then by position in ``placed`` (every
    index once); without ``placed`` equal pairs share a rank.  O(k log k)."""
    k = start.size
    if placed is not None:
        placed = np.asarray(placed, dtype=np.int64)
        if placed.shape != (k,) or not np.array_equal(np.sort(placed), np.arange(k)):
            raise ValueError(f"placed must list each of the {k} executions once")
        position = np.empty(k, dtype=np.int64)
        position[placed] = np.arange(k)
        key = np.lexsort((position, finish, start))
        rank = np.empty(k)
        rank[key] = np.arange(k)
        return rank
    key = np.lexsort((finish, start))
    if k == 0:
        return np.zeros(0)
    s, f = start[key], finish[key]
    new = np.ones(k, dtype=bool)
    new[1:] = (s[1:] != s[:-1]) | (f[1:] != f[:-1])
    rank = np.empty(k)
    rank[key] = np.cumsum(new) - 1
    return rank


def topological_rank(problem: Problem) -> np.ndarray:
    """(n,) each task's position in one fixed topological order: by level (longest edge count from
    an entry task), then index.  The engine, the fast evaluator and duplication break ties in a
    plan's ``order`` with it, so a tie never puts a task before its own ancestor.  O(n log n)."""
    g = problem.graph
    rank = np.empty(g.n_tasks, dtype=np.int64)
    rank[np.lexsort((np.arange(g.n_tasks), g.level))] = np.arange(g.n_tasks)
    return rank


@dataclass(frozen=True, eq=False)
class Schedule:
    """Per task: the processor its primary execution ran on and its start and finish time; plus,
    for duplication-based plans, the extra executions (``copies``, with their times); for
    multi-processor tasks, all the processors each ran on (``gang``, lead = ``processor``)."""

    processor: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    copies: Copies | None = None
    gang: Gang | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "processor", _frozen(self.processor, np.int64))
        object.__setattr__(self, "start", _frozen(self.start, np.float64))
        object.__setattr__(self, "finish", _frozen(self.finish, np.float64))
        if self.copies is not None and len(self.copies) == 0:
            object.__setattr__(self, "copies", None)
        if self.copies is not None and (self.copies.start is None or self.copies.finish is None):
            raise ValueError("a schedule's copies need start and finish times")
        _normalise_gang(self)

    @property
    def makespan(self) -> float:
        """Last finish of any execution (copies included)."""
        if self.copies is None:
            return float(self.finish.max())
        return float(max(self.finish.max(), self.copies.finish.max()))

    def instances(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(task, processor, start, finish)`` of every execution: primaries, then copies."""
        n = self.processor.size
        c = self.copies
        if c is None:
            return instance_tasks(n, None), self.processor, self.start, self.finish
        return (instance_tasks(n, c), np.concatenate([self.processor, c.processor]),
                np.concatenate([self.start, c.start]), np.concatenate([self.finish, c.finish]))

    def input_arrivals(self, problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(edge, consumer instance, arrival)``: when each edge's data first reached each
        instance of its consumer (the earliest over the producer's instances).  O(triples)."""
        task, proc, _, finish = self.instances()
        e, src, dst, delay, slot = input_pairs(problem, task, proc)
        n_slots = int(slot.max()) + 1 if slot.size else 0
        arrival = np.full(n_slots, np.inf)
        np.minimum.at(arrival, slot, finish[src] + delay)
        edge = np.zeros(n_slots, dtype=np.int64)
        consumer = np.zeros(n_slots, dtype=np.int64)
        edge[slot], consumer[slot] = e, dst
        return edge, consumer, arrival

    def ready_times(self, problem: Problem) -> np.ndarray:
        """(n,) when each task's inputs were all available on its (primary's) processor and it
        had arrived: ``max(arrival, max over predecessors of finish + transfer)`` (with copies, the
        earliest arrival from any instance of each predecessor).  O(n + e)."""
        g = problem.graph
        ready = np.array(g.arrival, dtype=np.float64)
        if g.n_edges and self.copies is None:
            arrive = self.finish[g.edge_src] + problem.edge_delays(self.processor)
            np.maximum.at(ready, g.edge_dst, arrive)
        elif g.n_edges:
            _, consumer, arrival = self.input_arrivals(problem)
            primary = consumer < g.n_tasks
            np.maximum.at(ready, consumer[primary], arrival[primary])
        return ready

    def validate(self, problem: Problem, tol: float = TOL) -> list[str]:
        """Every violated invariant, as readable sentences (empty when the schedule is valid).

        Checks: one entry per task; finite times; start >= arrival; duration equals the task's
        execution time on its processor (deterministic runs only, see ``check_durations``);
        each edge's data arrives before its consumer starts; no two tasks overlap on a processor
        (a zero-cost task may not start strictly inside another task's busy interval); every task
        runs on an eligible processor.  With copies: every execution is checked, no
        task runs twice on one processor, and each input needs the earliest-arriving instance of
        its producer only.  O(n log n + e) (plus the producer-consumer instance pairs with copies).
        """
        return validate_schedule(self, problem, tol=tol)

    def metrics(self, problem: Problem, end: float | None = None) -> Metrics:
        """Makespan, average turnaround and waiting, utilisation, SLR, speedup and efficiency of this schedule
        on ``problem`` (:func:`compute_metrics`; ``end``: when the run ended, if after the last finish).  O(n + m)."""
        return compute_metrics(self, problem, end)

    def busy_intervals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(task, processor, start, finish)`` of every execution on every processor it occupies:
        :meth:`instances` with each multi-processor task once per member."""
        if self.gang is None:
            return self.instances()
        return busy_intervals(self.processor, self.start, self.finish, self.gang)

    def to_records(self, problem: Problem) -> list[dict]:
        """One record per task (its primary execution), then one per copy with ``"copy": true``; a
        multi-processor task's record also lists all its ``"processors"`` (lead first)."""
        names, procs = problem.graph.names, problem.platform.names
        records = [
            {"task": names[i], "processor": procs[int(p)], "start": float(s), "finish": float(f)}
            for i, (p, s, f) in enumerate(zip(self.processor, self.start, self.finish))
        ]
        if self.gang is not None:
            for i in np.flatnonzero(self.gang.k > 1).tolist():
                records[i]["processors"] = [procs[int(q)] for q in self.gang.of(i)]
        c = self.copies
        if c is not None:
            records += [{"task": names[int(t)], "processor": procs[int(p)], "start": float(s),
                         "finish": float(f), "copy": True}
                        for t, p, s, f in zip(c.task, c.processor, c.start, c.finish)]
        return records


def validate_schedule(s: Schedule, problem: Problem, *, tol: float = TOL,
                      check_durations: bool = True, limit: int = 20, transfers: bool = True) -> list[str]:
    """See :meth:`Schedule.validate`.  With ``check_durations=False`` (stochastic runs, or a model of
    execution that adds time on the processor: overheads, storage) only the sign of each duration is
    checked; with ``transfers=False`` (data moved through a storage service, not the network) each
    consumer is checked to start after its producers finished, without the network's delay."""
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
    copy_error = _check_copies(s, problem)
    if copy_error:
        return [copy_error]
    if s.gang is not None or g.gang:
        try:
            check_gang(problem, s.processor, s.gang)
        except PlanError as exc:  # the sentence is the finding
            return [str(exc)]
    task, proc, start, finish = s.instances()
    scale = tol * max(1.0, float(np.abs(finish).max()))

    expected = problem.cost_pairs(task, proc) if s.gang is None else gang_durations(problem, s.processor, s.gang)
    bad = np.flatnonzero(~np.isfinite(expected)) if s.gang is None else ()  # members: checked below
    for i in bad[:limit]:
        add(f"task {names[task[i]]!r} ran on {pnames[proc[i]]!r}, which may not run it")
    bad = np.flatnonzero(start < g.arrival[task] - scale)
    for i in bad[:limit]:
        add(f"task {names[task[i]]!r} started at {start[i]:g} before it arrived at {g.arrival[task[i]]:g}")
    duration = finish - start
    if check_durations:
        bad = np.flatnonzero(np.abs(duration - expected) > scale + tol * np.abs(expected))
        for i in bad[:limit]:
            add(f"task {names[task[i]]!r} ran {duration[i]:g} on {pnames[proc[i]]!r} but takes {expected[i]:g} there")
    else:
        bad = np.flatnonzero(duration < -scale)
        for i in bad[:limit]:
            add(f"task {names[task[i]]!r} finished at {finish[i]:g} before it started at {start[i]:g}")
    if g.n_edges:
        if s.copies is None:
            edge, consumer = np.arange(g.n_edges), g.edge_dst
            arrive = s.finish[g.edge_src] + (problem.edge_delays(s.processor) if transfers else 0.0)
        else:  # the earliest arrival from any instance of the producer counts
            edge, consumer, arrive = s.input_arrivals(problem)
        bad = np.flatnonzero(start[consumer] < arrive - scale)
        for k in bad[:limit]:
            a, b = g.edge_src[edge[k]], consumer[k]
            add(f"task {names[task[b]]!r} started at {start[b]:g} before the data of {names[a]!r} "
                f"arrived at {arrive[k]:g}")
    task, proc, start, finish = s.busy_intervals()  # every member of a gang task
    bad = np.flatnonzero(~np.isfinite(problem.cost_pairs(task, proc)))
    for i in bad[:limit] if s.gang is not None else ():
        add(f"task {names[task[i]]!r} ran on {pnames[proc[i]]!r}, which may not run it")
    # no overlap: sort by (processor, start, finish) and compare neighbours.  A zero-cost task takes
    # its place in the processor's sequence: it may sit where one busy period ends and the next
    # begins, never strictly inside one (docs/model.md).  Neighbours suffice: if every neighbour
    # starts after the previous one finished, finishes are sorted too.
    key = np.lexsort((finish, start, proc))
    p, st, fi = proc[key], start[key], finish[key]
    same = p[1:] == p[:-1]
    clash = same & (st[1:] < fi[:-1] - scale)
    for k in np.flatnonzero(clash)[:limit]:
        a, b = key[k], key[k + 1]
        add(f"tasks {names[task[a]]!r} [{start[a]:g}, {finish[a]:g}) and {names[task[b]]!r} "
            f"[{start[b]:g}, {finish[b]:g}) overlap on {pnames[p[k]]!r}")
    return errors


def _check_copies(s: Schedule, problem: Problem) -> str | None:
    """The first structural problem of a schedule's copies (a task that does not exist, a missing
    processor, an unfinished copy, two executions of one task on one processor), or None."""
    c = s.copies
    if c is None:
        return None
    n, m, names = problem.n_tasks, problem.n_processors, problem.graph.names
    if ((c.task < 0) | (c.task >= n)).any():
        return f"a copy names task index {int(c.task[(c.task < 0) | (c.task >= n)][0])}, which does not exist"
    if ((c.processor < 0) | (c.processor >= m)).any():
        k = int(np.flatnonzero((c.processor < 0) | (c.processor >= m))[0])
        return f"a copy of task {names[c.task[k]]!r} is on processor {c.processor[k]}, which does not exist"
    if not (np.isfinite(c.start).all() and np.isfinite(c.finish).all()):
        k = int(np.flatnonzero(~(np.isfinite(c.start) & np.isfinite(c.finish)))[0])
        return f"a copy of task {names[c.task[k]]!r} never ran"
    task, proc, _, _ = s.instances()
    pair = task * m + proc
    uniq, counts = np.unique(pair, return_counts=True)
    if (counts > 1).any():
        t, q = divmod(int(uniq[counts > 1][0]), m)
        return f"task {names[t]!r} runs more than once on {problem.platform.names[q]!r}"
    return None


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


def compute_metrics(s: Schedule, problem: Problem, end: float | None = None) -> Metrics:
    """Makespan (last finish minus first arrival); average turnaround (finish - arrival); average
    waiting (start - ready, where ready is when the task's inputs were on its processor); utilisation
    (busy time / makespan, per processor and mean; copies count as busy time, while turnaround and
    waiting use each task's primary execution); SLR (makespan / sum of minimum costs on the
    minimum-cost critical path, Topcuoglu et al. 2002); speedup (best single-processor sequential
    time / makespan) and efficiency (speedup / processors).  ``end``: when the run ended if not at its
    last finish (under workflow-system overheads, the last task's post step: the makespan counts it).
    O(n + e)."""
    from simsched.simulator.bounds import critical_path_min_cost

    g = problem.graph
    m = problem.n_processors
    origin = float(g.arrival.min())
    makespan = (s.makespan if end is None else max(end, s.makespan)) - origin
    _, proc, start, finish = s.busy_intervals()
    busy = np.bincount(proc, weights=finish - start, minlength=m)
    util = busy / makespan if makespan > 0 else np.zeros(m)
    ready = s.ready_times(problem)
    cp = critical_path_min_cost(problem)
    sequential = problem.sequential_times().min()
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
