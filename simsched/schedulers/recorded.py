"""Replay of a recorded placement: each task on a free slot of the machine it ran on.

A recorded execution (:class:`~simsched.workloads.recorded.RecordedRun`) names, per task, the machine
(host) that ran it and, in some traces, when it started.  :class:`Recorded` hands the simulator that
placement and order, so that a difference between a simulated and a recorded makespan is the model's
(overheads, I/O, concurrency) and not a scheduler's choice.

At each decision point the ready tasks, in queue order, each take free slots (idle processors with
an empty queue) of their recorded host: one slot, or ``procs_min`` slots of that host (and of one
type) for a task that needs several cores at once (a gang, :mod:`simsched.simulator.gang`).  A task
whose host has no free slot now waits for the next decision point; the tasks behind it are not held
up (first fit, as HTCondor's negotiator and Makeflow's local queue match each job on its own).  A
task with no recorded host takes the lowest-numbered free slots that may run it (of one host, for a
``same_host`` gang).  The queue order is the recorded start where the task has one, else the instant
the task was first offered (FIFO by readiness, the order of HTCondor's and Makeflow's queues); ties go
to the lower task index.  Both are times after the workflow's start.

The placement comes in as parameters (``hosts``, ``starts``: task name to host name and to start
time), built by :meth:`Recorded.from_run` or by :mod:`simsched.fidelity`; without them every task goes
to any free slot, FIFO.  A task's host must be a host of the platform (a processor's ``host``), else
:class:`~simsched.errors.SimschedError` at ``reset``.  O(k log k + m) per decision for k ready tasks on
m processors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from heapq import heappop, heappush

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem
from simsched.workloads.recorded import RecordedRun


def _checked_hosts(hosts: Mapping[str, str] | None) -> dict[str, str]:
    if hosts is None:
        return {}
    if not isinstance(hosts, Mapping):
        raise SimschedError(f"recorded: hosts must be a mapping of task name to host name, got {type(hosts).__name__}")
    for task, host in hosts.items():
        if not isinstance(task, str) or not isinstance(host, str) or not host:
            raise SimschedError(f"recorded: hosts[{task!r}] must map a task name to a host name, got {host!r}")
    return dict(hosts)


def _checked_starts(starts: Mapping[str, float] | None) -> dict[str, float]:
    if starts is None:
        return {}
    if not isinstance(starts, Mapping):
        raise SimschedError(f"recorded: starts must be a mapping of task name to a time, got {type(starts).__name__}")
    out = {}
    for task, t in starts.items():
        if (not isinstance(task, str) or isinstance(t, bool) or not isinstance(t, (int, float))
                or not math.isfinite(t) or t < 0):
            raise SimschedError(f"recorded: starts[{task!r}] must be a finite time >= 0, got {t!r}")
        out[task] = float(t)
    return out


class Recorded:
    """Replays a recorded placement: each task on a free slot of its recorded host, in recorded order.

    Parameters:
        hosts: task name to the host (machine) it ran on; tasks not named go to any free slot.
        starts: task name to its recorded start (seconds after the workflow's start), the queue order;
            tasks not named queue by the instant they became ready.
    """

    name = "recorded"
    multiprocessor_tasks = True  # a task needing k cores takes k free slots of its host

    def __init__(self, *, hosts: Mapping[str, str] | None = None, starts: Mapping[str, float] | None = None) -> None:
        self.hosts = _checked_hosts(hosts)
        self.starts = _checked_starts(starts)
        self._n = 0
        self.queued = np.zeros(0, dtype=bool)
        self.key = np.zeros(0)

    @classmethod
    def from_run(cls, run: RecordedRun) -> Recorded:
        """The policy replaying ``run``: each task's first recorded machine, and its recorded start
        where it has one.  O(n)."""
        machine = run.machine.tolist()
        hosts = {name: run.machines[k].name for name, k in zip(run.names, machine) if k >= 0}
        starts = {name: float(s) for name, s in zip(run.names, run.start.tolist()) if s == s}
        return cls(hosts=hosts, starts=starts)

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        """A fresh run: empty queues, the tables of ``problem``.  O(n + m)."""
        self.queued = np.zeros(0, dtype=bool)  # task is in one of the queues below
        self.key = np.zeros(0)  # its queue key, fixed when first offered
        self.waiting: dict[int, list[tuple[float, int]]] = {}  # host code (-1: any host) -> heap of (key, task)
        self._tables(problem)

    def _tables(self, problem: Problem) -> None:
        """Tables of the (visible) problem: each task's host code (-1: any) and recorded start (NaN:
        none); each processor's host and type.  :class:`SimschedError` for a host the platform lacks.
        O(n + m)."""
        plat, names = problem.platform, problem.graph.names
        host_code = {p.host: int(c) for p, c in zip(plat.processors, plat.host_index.tolist())}
        self.host_of = np.full(problem.n_tasks, -1, dtype=np.int64)
        for i, name in enumerate(names):
            h = self.hosts.get(name)
            if h is not None:
                code = host_code.get(h)
                if code is None:
                    shown = ", ".join(list(host_code)[:8]) + (", ..." if len(host_code) > 8 else "")
                    raise SimschedError(f"recorded: task {name!r} ran on {h!r}, which is not a host of the "
                                        f"platform (hosts: {shown})")
                self.host_of[i] = code
        self.start_of = np.array([self.starts.get(name, np.nan) for name in names], dtype=np.float64)
        self.proc_host = plat.host_index
        self.proc_type = plat.type_index
        self.could: dict[int, bool] = {}
        grow = problem.n_tasks - self.queued.size
        self.queued = np.concatenate([self.queued, np.zeros(grow, dtype=bool)])
        self.key = np.concatenate([self.key, np.full(grow, np.nan)])
        self._n = problem.n_tasks

    def _enqueue(self, view: DecisionView) -> None:
        """Queue the ready tasks not yet queued, each under its key: its recorded start, else now.
        O(k) in numpy plus O(log k) per new task."""
        if view.problem.n_tasks != self._n:  # more tasks arrived: the tables of the visible problem
            self._tables(view.problem)
        ready = view.ready
        fresh = ready[~self.queued[ready]]
        if not fresh.size:
            return
        now = float(view.now)
        key, start, host = self.key, self.start_of, self.host_of
        for t in fresh.tolist():
            if key[t] != key[t]:  # first offered now (a task handed back by a failure keeps its key)
                s = start[t]
                key[t] = s if s == s else now
            heappush(self.waiting.setdefault(int(host[t]), []), (float(key[t]), t))
        self.queued[fresh] = True

    def _gang_slots(self, problem: Problem, task: int, free: np.ndarray) -> tuple[int, ...] | None:
        """The ``procs_min`` free processors a gang ``task`` takes now, lowest indices first, of one
        type (and one host for a ``same_host`` gang, or on its recorded host), or None.  O(m)."""
        eligible = free & np.isfinite(problem.cost_row(task))
        h = int(self.host_of[task])
        if h >= 0:
            eligible &= self.proc_host == h
        k = int(problem.graph.procs_min[task])
        group = self.proc_type * (int(self.proc_host.max()) + 1) + self.proc_host \
            if problem.graph.same_host[task] or h >= 0 else self.proc_type
        for x in dict.fromkeys(group[eligible].tolist()):
            members = np.flatnonzero(eligible & (group == x))
            if members.size >= k:
                return tuple(members[:k].tolist())
        return None

    def _possible(self, problem: Problem, task: int) -> bool:
        """Whether ``task`` could ever be placed (enough processors that may run it, free or not);
        cached per task.  O(m) once."""
        ok = self.could.get(task)
        if ok is None:
            every = np.ones(problem.n_processors, dtype=bool)
            if problem.graph.gang and problem.graph.procs_min[task] > 1:
                ok = self._gang_slots(problem, task, every) is not None
            else:
                eligible = np.isfinite(problem.cost_row(task))
                if self.host_of[task] >= 0:
                    eligible &= self.proc_host == self.host_of[task]
                ok = bool(eligible.any())
            self.could[task] = ok
        return ok

    def decide(self, view: DecisionView) -> list[tuple[int, int | tuple[int, ...]]]:
        """First fit in queue order: repeatedly the first queued task that some free slot could take
        (the heads of the any-host queue and of the queues of hosts with a free slot) takes its slots,
        or is set aside for this decision when they do not fit it.  O(k + m + (placed + set aside) x
        (hosts + log k))."""
        if not view.ready.size:
            return []
        self._enqueue(view)
        free_idx = np.flatnonzero(view.idle)
        if not free_idx.size:
            return []
        problem, host, waiting = view.problem, self.proc_host, self.waiting
        everywhere = free_idx.tolist()  # free processors, ascending
        by_host = _by_host(free_idx, host)
        gang = problem.graph.procs_min if problem.graph.gang else None
        out: list[tuple[int, int | tuple[int, ...]]] = []
        aside: list[tuple[int, tuple[float, int]]] = []
        while everywhere:
            best, queue_of = None, -2
            for h in (-1, *by_host):
                q = waiting.get(h)
                if q and (h < 0 or by_host[h]) and (best is None or q[0] < best):
                    best, queue_of = q[0], h
            if best is None:
                break
            item = heappop(waiting[queue_of])
            t = item[1]
            if gang is not None and gang[t] > 1:
                free = np.zeros(problem.n_processors, dtype=bool)
                free[everywhere] = True
                slots = self._gang_slots(problem, t, free)
            else:
                pool = by_host[queue_of] if queue_of >= 0 else everywhere
                p = next((q for q in pool if problem.cost_at(t, q) < math.inf), -1)
                slots = (p,) if p >= 0 else None
            if slots is None:
                if not self._possible(problem, t):  # nowhere, ever: the engine refuses it, naming the task
                    return [(t, 0)]
                aside.append((queue_of, item))
                continue
            for q in slots:
                everywhere.remove(q)
                by_host[int(host[q])].remove(q)
            self.queued[t] = False
            out.append((t, slots[0] if len(slots) == 1 else slots))
        for h, item in aside:
            heappush(waiting[h], item)
        return out


def _by_host(free: np.ndarray, host: np.ndarray) -> dict[int, list[int]]:
    """The free processors ``free`` (ascending) grouped by their host code ``host[p]``, each group
    ascending, the groups in the order of their first processor.  O(m log m) in numpy, O(hosts) in
    Python (a decision is taken thousands of times a run; a loop over free slots was its largest
    cost)."""
    if not free.size:
        return {}
    codes = host[free]
    order = np.argsort(codes, kind="stable")
    codes, grouped = codes[order], free[order]
    cuts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    firsts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [grouped.size]))
    rank = np.argsort(grouped[firsts], kind="stable")  # by each group's lowest processor
    flat = grouped.tolist()
    return {int(codes[firsts[g]]): flat[firsts[g]:ends[g]] for g in rank.tolist()}
