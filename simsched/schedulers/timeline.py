"""Processor timelines for list schedulers with the insertion-based policy.

List schedulers (HEFT, CPOP, PEFT, ETF, DLS ...) repeatedly ask: "if this task, whose inputs are on
processor q at ``ready[q]`` and which takes ``duration[q]`` there, were placed now, when could it
start on each processor?"  With the insertion-based policy of Topcuoglu et al. (2002) a task may
fill an idle gap between two tasks already placed, not only go after the last one.

:class:`Timelines` answers for all processors at once.  The append position is one numpy
expression; gaps are searched only on the processors where inserting could matter (the task fits
in the processor's largest gap and its inputs are ready before the processor's last task ends),
with a binary search over that processor's sorted gaps — never a scan of the tasks already placed.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable

import numpy as np

from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


class Timelines:
    """Busy periods of ``m`` processors, kept as the end of the last task plus sorted idle gaps.

    ``insertion=False`` gives the non-insertion policy (a task always goes after the last one).
    Memory: O(number of gaps).  All times are floats.
    """

    __slots__ = ("m", "insertion", "end", "max_gap", "_gap_start", "_gap_end")

    def __init__(self, m: int, insertion: bool = True) -> None:
        self.m = m
        self.insertion = insertion
        self.end = np.zeros(m)  # finish of the last task on each processor
        self.max_gap = np.zeros(m)  # length of the largest idle gap before ``end``
        self._gap_start: list[list[float]] = [[] for _ in range(m)]
        self._gap_end: list[list[float]] = [[] for _ in range(m)]

    def earliest_start(self, ready: np.ndarray, duration: np.ndarray, prune: bool = False) -> np.ndarray:
        """(m,) earliest start of a task with ``duration`` whose inputs are ready at ``ready``.

        With ``prune``, gaps are searched only on processors where the task could finish no later
        than its best append position anywhere (``ready + duration <= min(append finish)``);
        elsewhere the append position is returned.  That is an over-estimate only on processors
        that cannot give the minimum finish time, so earliest-finish rules stay exact.
        O(m) plus O(log g + scanned gaps) for each processor searched.
        """
        est = np.maximum(ready, self.end)
        if not self.insertion:
            return est
        lb = ready + duration
        cand = (self.max_gap >= duration) & (lb <= self.end)
        if prune:
            cand &= lb <= (est + duration).min()
        for q in np.flatnonzero(cand):
            s = self._gap_fit(int(q), float(ready[q]), float(duration[q]))
            if s is not None:
                est[q] = s
        return est

    def earliest_start_on(self, q: int, ready: float, duration: float) -> float:
        """Earliest start on processor ``q`` alone.  O(log g + scanned gaps)."""
        if self.insertion and self.max_gap[q] >= duration and ready + duration <= self.end[q]:
            s = self._gap_fit(q, ready, duration)
            if s is not None:
                return s
        return max(ready, float(self.end[q]))

    def _gap_fit(self, q: int, ready: float, duration: float) -> float | None:
        starts, ends = self._gap_start[q], self._gap_end[q]
        k = bisect_left(ends, ready + duration)  # gaps ending earlier cannot hold the task
        for j in range(k, len(ends)):
            s = starts[j] if starts[j] > ready else ready
            if s + duration <= ends[j]:
                return s
        return None

    def gaps(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ends)`` of processor ``q``'s idle gaps before :attr:`end`, sorted; the processor
        is also idle from ``end[q]`` on.  O(gaps on q)."""
        return np.array(self._gap_start[q], dtype=np.float64), np.array(self._gap_end[q], dtype=np.float64)

    def snapshot(self, q: int) -> tuple:
        """Processor ``q``'s state, for :meth:`restore` after a tentative :meth:`reserve` (a
        duplication-based scheduler tries a copy before committing to it).  O(gaps on q)."""
        return float(self.end[q]), float(self.max_gap[q]), list(self._gap_start[q]), list(self._gap_end[q])

    def restore(self, q: int, state: tuple) -> None:
        """Put processor ``q`` back as :meth:`snapshot` saw it.  O(1)."""
        self.end[q], self.max_gap[q], self._gap_start[q], self._gap_end[q] = state

    def reserve(self, q: int, start: float, finish: float) -> None:
        """Mark ``[start, finish)`` busy on processor ``q`` (it must be free).  O(g) worst case."""
        end = float(self.end[q])
        if start >= end:
            if start > end:
                self._gap_start[q].append(end)
                self._gap_end[q].append(start)
                if start - end > self.max_gap[q]:
                    self.max_gap[q] = start - end
            self.end[q] = finish
            return
        starts, ends = self._gap_start[q], self._gap_end[q]
        j = bisect_left(ends, finish)
        gs, ge = starts[j], ends[j]
        if not (gs <= start and finish <= ge):
            raise ValueError(f"[{start}, {finish}) is not free on processor {q}")
        pieces = [(a, b) for a, b in ((gs, start), (finish, ge)) if b > a]
        starts[j:j + 1] = [a for a, _ in pieces]
        ends[j:j + 1] = [b for _, b in pieces]
        if ge - gs >= self.max_gap[q]:
            self.max_gap[q] = max((b - a for a, b in zip(starts, ends)), default=0.0)


def data_ready(problem: Problem, task: int, processor: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """(m,) time all inputs of ``task`` could be on each processor, given where (``processor``) and
    when (``finish``) its predecessors ran, and no earlier than its arrival.  O(in-degree x m)."""
    g = problem.graph
    edges = g.pred_edges[g.pred_ptr[task]:g.pred_ptr[task + 1]]
    if edges.size == 0:
        return np.full(problem.n_processors, g.arrival[task])
    src = g.edge_src[edges]
    arrive = finish[src][:, None] + problem.transfer_to_all(edges, processor[src])
    return np.maximum(arrive.max(axis=0), g.arrival[task])


# ----------------------------------------------------------------------------- compiled EFT placement
COMPILED_MIN_WORK = 5_000_000
"""Problems with at least this many task x processor pairs use the compiled placement loop when numba
is installed: below it the numpy loop (~2e-8 s per pair) costs less than loading numba (~0.2-0.5 s of
CPU and ~100 MB of memory, once per process)."""



Place = Callable[[int, np.ndarray, Timelines], tuple[int, float]]
"""``place(task, data_ready_row, timelines) -> (processor, start)`` of a list scheduler."""


def ready_list_schedule(problem: Problem, key: np.ndarray, place: Place, *, insertion: bool = True,
                        by_level: bool = True) -> Plan:
    """The list-scheduling skeleton: take the ready task of smallest ``key`` (ties: level when
    ``by_level``, then index), ask ``place(task, data_ready_row, timelines)`` for its processor and
    start, reserve that slot.  A static order is the key of its positions.  O(n log n + e m) plus
    what ``place`` costs."""
    g = problem.graph
    n = g.n_tasks
    W = problem.W

    def entry(t: int) -> tuple:
        return (key[t], int(g.level[t]), t) if by_level else (key[t], t)

    tl = Timelines(problem.n_processors, insertion=insertion)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    waiting = g.in_degree.copy()
    heap = [entry(int(t)) for t in g.entry_tasks]
    heapq.heapify(heap)
    while heap:
        t = heapq.heappop(heap)[-1]
        q, s = place(t, data_ready(problem, t, proc, finish), tl)
        start[t], finish[t], proc[t] = s, s + W[t, q], q
        placed.append(t)
        tl.reserve(q, s, float(finish[t]))
        for j in g.successors(t):
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(heap, entry(int(j)))
    return Plan.from_times(proc, start, finish, placed=placed)


def compiled_available() -> bool:
    """True when numba is installed (extra ``simsched[fast]``), so :func:`place_eft` can compile."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def place_eft(problem: Problem, order: np.ndarray, insertion: bool = True
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """HEFT's placement loop compiled: tasks in ``order`` each on its earliest-finish processor
    (insertion-based when ``insertion``), ties to the lowest processor index.  Returns ``(processor,
    start, finish)``, or None when numba is not installed.

    The same floating-point operations in the same order as :class:`Timelines` and
    :func:`data_ready` (a property test holds the plans identical to the numpy loop's).
    O(n m + e m) plus the gap searches, in compiled code: no per-task Python work."""
    if not compiled_available():
        return None
    from simsched.readonly import read_only
    from simsched.schedulers.eft_kernel import eft_place

    g = problem.graph
    table, key, work, memory = problem.cost_arrays()
    return eft_place(*read_only([np.ascontiguousarray(order, dtype=np.int64), table, key, work, memory,
               np.ascontiguousarray(problem.platform.memory, dtype=np.float64), bool(problem.structured),
               g.pred_ptr.astype(np.int64, copy=False), g.pred_edges.astype(np.int64, copy=False),
               g.edge_src.astype(np.int64, copy=False), g.edge_data.astype(np.float64, copy=False),
               g.arrival.astype(np.float64, copy=False),  # the graph's own arrays (read-only views below)
               np.ascontiguousarray(problem.latency), np.ascontiguousarray(problem.inv_bandwidth), bool(insertion),
               16]))
