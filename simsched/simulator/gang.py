"""Multi-processor (gang) tasks: a task that runs on ``k`` processors of one type at once.

A task demands ``procs_min <= k <= procs_max`` processors (``TaskGraph.procs_min/procs_max``):

* **rigid** when the two are equal (``procs: k``): it runs on exactly ``k`` processors;
* **moldable** otherwise (``procs: [k_min, k_max]``): the scheduler chooses ``k`` when it places the
  task, and the duration follows a speedup model ``S(k)``, ``t(k) = t(1) / S(k)``: **Amdahl's law**
  (G. M. Amdahl, "Validity of the single processor approach to achieving large scale computing
  capabilities", AFIPS SJCC 1967) with serial fraction ``f`` (``TaskGraph.serial``), ``t(k) = t(1) *
  (f + (1 - f) / k)``; or **Downey's model** (A. B. Downey, "A model for speedup of parallel
  programs", UC Berkeley TR UCB/CSD-97-933, 1997) with average parallelism ``A`` and variance
  ``sigma`` (``TaskGraph.downey``; :func:`downey`).

A task with ``same_host`` (``TaskGraph.same_host``) runs all its ``k`` processors on one host (and
of one type, as every gang).

The cost model's time of a task on a processor is its time on ``k_min`` processors of that kind (for
a rigid task: its time on its ``k``; with ``k_min = 1``: ``t(1)``).  On a set of processors the task
runs in lock step, so the slowest member sets the pace: its duration on members ``P`` with ``k =
|P|`` is ``max_{p in P} cost(p) * S(k_min) / S(k)`` (Amdahl: ``a(k) / a(k_min)``, ``a(k) = f + (1 -
f) / k``) — the factor is applied only when ``k != k_min``, so a task at its ``k_min`` (every
single-processor task) takes exactly the cost model's time, to the last bit.

All ``k`` start together, when every member has finished what it runs before and the task's data is
there, and all end together.  The task's **lead** (its first member, ``Plan.processor``/
``Schedule.processor``) sends and receives its data: an edge costs the transfer between the leads of
its two tasks, as for single-processor tasks.  Plans and schedules name the members in a
:class:`Gang` (``None`` when every task has one processor: those paths are unchanged).  O(n + sum k)
per function below unless stated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simsched.errors import PlanError
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph


def amdahl(k: np.ndarray | int, serial: np.ndarray | float) -> np.ndarray:
    """Amdahl's time fraction ``f + (1 - f) / k`` of a task with serial fraction ``f`` on ``k``
    processors (Amdahl 1967).  Broadcasts.  O(size)."""
    return serial + (1.0 - serial) / np.asarray(k, dtype=np.float64)


def downey(k: np.ndarray | int, a: np.ndarray | float, sigma: np.ndarray | float) -> np.ndarray:
    """Downey's speedup ``S(k)`` of a program of average parallelism ``A >= 1`` and variance
    ``sigma >= 0`` on ``k`` processors (A. B. Downey, "A model for speedup of parallel programs",
    UC Berkeley TR UCB/CSD-97-933, 1997).  Low variance (``sigma <= 1``)::

        S(k) = A k / (A + sigma (k - 1) / 2)               1 <= k <= A
        S(k) = A k / (sigma (A - 1/2) + k (1 - sigma / 2))  A <= k <= 2A - 1
        S(k) = A                                            k >= 2A - 1

    high variance (``sigma >= 1``)::

        S(k) = k A (sigma + 1) / (sigma (k + A - 1) + A)    1 <= k <= A + A sigma - sigma
        S(k) = A                                            k >= A + A sigma - sigma

    (the high branch computed divided through by ``sigma``, so a huge ``sigma`` cannot overflow).
    ``S(1) = 1``, ``S`` is continuous, non-decreasing in ``k`` and at most ``min(k, A)``; ``sigma =
    0`` gives ``min(k, A)``.  Broadcasts.  O(size)."""
    k = np.asarray(k, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(k <= a, a * k / (a + sigma * (k - 1.0) / 2.0),
                       np.where(k <= 2.0 * a - 1.0, a * k / (sigma * (a - 0.5) + k * (1.0 - sigma / 2.0)), a))
        inv = 1.0 / np.maximum(sigma, 1.0)
        high = np.where(k <= a + a * sigma - sigma, k * a * (1.0 + inv) / (k + a - 1.0 + a * inv), a)
    return np.where(sigma <= 1.0, low, high)


def moldable_factor(k: np.ndarray, k_min: np.ndarray, serial: np.ndarray,
                    downey_rows: np.ndarray | None = None) -> np.ndarray:
    """(n,) duration factor of tasks on ``k`` processors relative to their ``k_min``, exactly 1.0
    where ``k == k_min``: ``a(k) / a(k_min)`` with Amdahl's ``a`` (serial fraction ``serial``), or
    ``S(k_min) / S(k)`` with Downey's speedup :func:`downey` where the task's ``downey_rows`` row
    ``[A, sigma]`` has ``A > 0`` (``TaskGraph.downey``; broadcast like ``k``).  The one formula every
    time model uses.  O(n)."""
    k = np.asarray(k, dtype=np.int64)
    k_min = np.asarray(k_min, dtype=np.int64)
    out = np.ones(np.broadcast(k, k_min).shape)
    diff = k != k_min
    if np.any(diff):
        s = np.broadcast_to(serial, out.shape)
        kk, km = np.broadcast_to(k, out.shape), np.broadcast_to(k_min, out.shape)
        if downey_rows is None or not np.any(np.asarray(downey_rows)[..., 0] > 0):
            out[diff] = amdahl(kk[diff], s[diff]) / amdahl(km[diff], s[diff])
        else:
            d = np.broadcast_to(downey_rows, (*out.shape, 2))
            a, sig = d[..., 0][diff], d[..., 1][diff]
            by_downey = a > 0
            out[diff] = np.where(by_downey, downey(km[diff], np.where(by_downey, a, 1.0), sig)
                                 / downey(kk[diff], np.where(by_downey, a, 1.0), sig),
                                 amdahl(kk[diff], s[diff]) / amdahl(km[diff], s[diff]))
    return out


def task_factor(graph: TaskGraph, tasks: np.ndarray, k: np.ndarray) -> np.ndarray:
    """:func:`moldable_factor` of ``graph``'s ``tasks`` on ``k`` processors each, with each task's own
    speedup model.  O(len(tasks))."""
    return moldable_factor(k, graph.procs_min[tasks], graph.serial[tasks], graph.downey[tasks])


@dataclass(frozen=True, eq=False)
class Gang:
    """The processors of every task: task ``i`` runs on ``members[ptr[i]:ptr[i + 1]]``, its lead
    (the plan's or schedule's ``processor[i]``) first."""

    ptr: np.ndarray
    members: np.ndarray

    def __post_init__(self) -> None:
        for name in ("ptr", "members"):
            a = np.array(getattr(self, name), dtype=np.int64)
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @classmethod
    def from_lists(cls, members: Sequence[Sequence[int]]) -> Gang:
        """From one list of processors per task (lead first).  O(n + sum k)."""
        counts = np.fromiter((len(m) for m in members), dtype=np.int64, count=len(members))
        ptr = np.zeros(len(members) + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        flat = np.fromiter((p for m in members for p in m), dtype=np.int64, count=int(ptr[-1]))
        return cls(ptr, flat)

    @property
    def n_tasks(self) -> int:
        return self.ptr.size - 1

    @property
    def k(self) -> np.ndarray:
        """(n,) processors of each task."""
        return np.diff(self.ptr)

    @property
    def lead(self) -> np.ndarray:
        """(n,) each task's first member."""
        return self.members[self.ptr[:-1]]

    def of(self, task: int) -> np.ndarray:
        """The processors of ``task``, lead first.  O(k)."""
        return self.members[self.ptr[task]:self.ptr[task + 1]]

    def owner(self) -> np.ndarray:
        """(sum k,) the task of each member entry."""
        return np.repeat(np.arange(self.n_tasks), self.k)


def single(processor: np.ndarray) -> Gang:
    """The gang of a plan where every task has one processor.  O(n)."""
    n = processor.size
    return Gang(np.arange(n + 1), processor)


def check_gang(problem: Problem, processor: np.ndarray, gang: Gang | None,
               tasks: np.ndarray | None = None) -> None:
    """Raise :class:`PlanError` unless every task has between ``procs_min`` and ``procs_max``
    distinct processors of one type (and of one host where ``same_host``), led by ``processor``.
    ``gang=None``: each task has one.  ``tasks``: the task of each of the gang's rows (default: all,
    in order)."""
    g, pnames = problem.graph, problem.platform.names
    tasks = np.arange(problem.n_tasks) if tasks is None else np.asarray(tasks, dtype=np.int64)
    names = [g.names[t] for t in tasks.tolist()] if tasks.size < problem.n_tasks else g.names
    n, m = tasks.size, problem.n_processors
    procs_min, procs_max = g.procs_min[tasks], g.procs_max[tasks]
    if gang is None:
        bad = np.flatnonzero(procs_min > 1)
        if bad.size:
            i = int(bad[0])
            raise PlanError(f"task {names[i]!r} needs {procs_min[i]} processors at once but the plan gives it "
                            f"one; schedule multi-processor tasks with a gang-aware scheduler (heft)")
        return
    if gang.ptr.shape != (n + 1,) or gang.ptr[0] != 0 or (np.diff(gang.ptr) < 1).any() \
            or gang.ptr[-1] != gang.members.size:
        raise PlanError(f"the plan's gang must name at least one processor for each of the {n} tasks")
    if ((gang.members < 0) | (gang.members >= m)).any():
        raise PlanError(f"the plan's gang names a processor outside 0..{m - 1}")
    if not np.array_equal(gang.lead, processor):
        i = int(np.flatnonzero(gang.lead != processor)[0])
        raise PlanError(f"task {names[i]!r}: its first gang member must be its processor")
    k = gang.k
    bad = np.flatnonzero((k < procs_min) | (k > procs_max))
    if bad.size:
        i = int(bad[0])
        want = f"{procs_min[i]}" if procs_min[i] == procs_max[i] else f"{procs_min[i]} to {procs_max[i]}"
        raise PlanError(f"task {names[i]!r} runs on {k[i]} processors but needs {want}")
    owner = gang.owner()
    tp = problem.platform.type_index
    bad = np.flatnonzero(tp[gang.members] != tp[processor[owner]])
    if bad.size:
        i = int(owner[bad[0]])
        raise PlanError(f"task {names[i]!r} runs on processors of different types "
                        f"({pnames[processor[i]]!r}, {pnames[gang.members[bad[0]]]!r}); a gang is of one type")
    one_host = problem.graph.same_host[tasks]
    if one_host.any():
        host = problem.platform.host_index
        bad = np.flatnonzero(one_host[owner] & (host[gang.members] != host[processor[owner]]))
        if bad.size:
            i = int(owner[bad[0]])
            raise PlanError(f"task {names[i]!r} must run on one host but its processors {pnames[processor[i]]!r} "
                            f"and {pnames[gang.members[bad[0]]]!r} are on different hosts")
    pair = owner * m + gang.members
    if np.unique(pair).size != pair.size:
        uniq, counts = np.unique(pair, return_counts=True)
        i, q = divmod(int(uniq[counts > 1][0]), m)
        raise PlanError(f"task {names[i]!r} names processor {pnames[q]!r} twice")


def gang_durations(problem: Problem, processor: np.ndarray, gang: Gang | None,
                   tasks: np.ndarray | None = None) -> np.ndarray:
    """(n,) duration of each task on its processors (module docstring: the slowest member's cost
    times the moldable factor); ``inf`` where some member may not run the task.  ``gang=None``: the
    cost on ``processor``, scaled for moldable tasks run at k = 1 above their ``k_min`` (never: see
    :func:`check_gang`), i.e. exactly ``cost_pairs``.  ``tasks``: the task of each row (default:
    all, in order).  O(n + sum k)."""
    tasks = np.arange(problem.n_tasks) if tasks is None else np.asarray(tasks, dtype=np.int64)
    if gang is None:
        return problem.cost_pairs(tasks, processor)
    cost = problem.cost_pairs(tasks[gang.owner()], gang.members)
    base = np.maximum.reduceat(cost, gang.ptr[:-1]) if cost.size else np.zeros(tasks.size)
    g = problem.graph
    return base * task_factor(g, tasks, gang.k) if g.gang else base


def member_sequences(processor: np.ndarray, order: np.ndarray, gang: Gang,
                     rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(before, after)``: every pair of tasks consecutive on some processor's sequence, a gang
    task sitting in the sequence of each of its members.  Sequences follow ``order``, ties by
    ``rank`` then index (as :meth:`~simsched.simulator.schedule.Plan.sequences`).  One global order
    over all processors, so the pairs never form a cycle among themselves.  O(N log N), N = sum k."""
    owner = gang.owner()
    proc = gang.members
    key = np.lexsort((owner, rank[owner], order[owner], proc))
    p, t = proc[key], owner[key]
    same = p[1:] == p[:-1]
    return t[:-1][same], t[1:][same]


def busy_intervals(processor: np.ndarray, start: np.ndarray, finish: np.ndarray,
                   gang: Gang | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(task, processor, start, finish)`` of every processor a task occupies (all members of a
    gang task, each for the task's whole run).  O(n + sum k)."""
    n = processor.size
    if gang is None:
        return np.arange(n), processor, start, finish
    owner = gang.owner()
    return owner, gang.members, start[owner], finish[owner]
