"""Task duplication: extra copies of tasks, and the structure every consumer of them shares.

A duplication-based scheduler runs some tasks more than once, on different processors, so that a
successor can take its input from a copy on its own processor instead of waiting for a transfer.
A plan or schedule keeps one *primary* execution per task (its ``processor``/``start``/``finish``
arrays, exactly as without duplication) plus an optional :class:`Copies` table of extra executions.
An *instance* is one execution: instance ``i < n`` is task ``i``'s primary, instance ``n + k`` is
copy ``k``.

The rule every part of simsched applies (validator, fast evaluator, SimPy engine): an instance of
``v`` may start once, for every predecessor ``u``, the data of *some* instance of ``u`` has reached
its processor — the earliest arrival counts (Kruatrachue & Lewis 1988; Sinnen, "Task Scheduling for
Parallel Systems", Wiley 2007, ch. 6.4).  :func:`input_pairs` lists, for every edge and every
instance of its consumer, every instance of its producer that could deliver the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem


def _frozen(a: np.ndarray | None, dtype: type) -> np.ndarray | None:
    if a is None:
        return None
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Copies:
    """Extra executions of tasks: copy ``k`` runs task ``task[k]`` on ``processor[k]``.

    In a plan, ``order[k]`` places the copy in its processor's sequence (compared with the plan's
    ``order`` of the primaries on that processor); ``start``/``finish`` are planned times when the
    planner computed them.  In a schedule, ``start``/``finish`` are what happened.
    """

    task: np.ndarray
    processor: np.ndarray
    order: np.ndarray | None = None
    start: np.ndarray | None = None
    finish: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "task", _frozen(self.task, np.int64))
        object.__setattr__(self, "processor", _frozen(self.processor, np.int64))
        for name in ("order", "start", "finish"):
            object.__setattr__(self, name, _frozen(getattr(self, name), np.float64))
        k = self.task.shape
        for name in ("processor", "order", "start", "finish"):
            v = getattr(self, name)
            if v is not None and v.shape != k:
                raise ValueError(f"copies: {name} has shape {v.shape}, task has {k}")

    def __len__(self) -> int:
        return int(self.task.size)


def instance_tasks(n: int, copies: Copies | None) -> np.ndarray:
    """(n + k,) the task of every instance: primaries first, then the copies."""
    base = np.arange(n, dtype=np.int64)
    return base if copies is None else np.concatenate([base, copies.task])


def group_by_task(task_of: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ptr, members)``: the instances of task ``t`` are ``members[ptr[t]:ptr[t+1]]`` (primary
    first).  O(N log N)."""
    members = np.argsort(task_of, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(task_of, minlength=n), out=ptr[1:])
    return ptr, members


def input_pairs(problem: Problem, task_of: np.ndarray, proc_of: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (edge, producer instance, consumer instance) triple, vectorised.

    Returns ``(edge, src, dst, delay, slot)``: ``delay`` is the transfer time from ``src``'s to
    ``dst``'s processor (0 on the same one); ``slot`` numbers the (edge, consumer instance) pairs
    ``0..S-1`` — a consumer instance has its input of that edge at the minimum over the triples of
    its slot of ``finish[src] + delay``.  O(sum over edges of copies(u) x copies(v)).
    """
    g = problem.graph
    n = g.n_tasks
    ptr, members = group_by_task(task_of, n)
    count = np.diff(ptr)
    edges = np.arange(g.n_edges, dtype=np.int64)
    cu, cv = count[g.edge_src], count[g.edge_dst]
    size = cu * cv
    total = int(size.sum())
    first = np.zeros(g.n_edges + 1, dtype=np.int64)
    np.cumsum(size, out=first[1:])
    e = np.repeat(edges, size)
    k = np.arange(total, dtype=np.int64) - first[e]
    src = members[ptr[g.edge_src[e]] + k // cv[e]]
    dst = members[ptr[g.edge_dst[e]] + k % cv[e]]
    slot_first = np.zeros(g.n_edges + 1, dtype=np.int64)
    np.cumsum(cv, out=slot_first[1:])
    slot = slot_first[e] + k % cv[e]
    delay = problem.transfer_time(e, proc_of[src], proc_of[dst])
    return e, src, dst, delay, slot


def previous_instance(proc_of: np.ndarray, order_of: np.ndarray, rank_of: np.ndarray | None = None) -> np.ndarray:
    """(N,) the instance planned just before each one on its processor (-1 for the first).
    Sorted by processor, then order, then ``rank_of`` (the topological rank of each instance's
    task, so equal orders never put a task before its ancestor), then instance index.  O(N log N)."""
    index = np.arange(proc_of.size)
    keys = (index,) if rank_of is None else (index, rank_of)
    key = np.lexsort((*keys, order_of, proc_of))
    prev = np.full(proc_of.size, -1, dtype=np.int64)
    same = proc_of[key[1:]] == proc_of[key[:-1]]
    prev[key[1:][same]] = key[:-1][same]
    return prev
