"""A frozen copy of HEFT's placement loop and processor timelines as they were before the compiled
kernel (commit b11a042 of branch optimum-scale): the reference that the property test in
test_heft_speed.py holds the fast implementation equal to, bit for bit.  Do not edit."""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from simsched.schedulers.heft import priority_order, upward_rank
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


class FrozenTimelines:
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


def frozen_data_ready(problem: Problem, task: int, processor: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """(m,) time all inputs of ``task`` could be on each processor, given where (``processor``) and
    when (``finish``) its predecessors ran, and no earlier than its arrival.  O(in-degree x m)."""
    g = problem.graph
    edges = g.pred_edges[g.pred_ptr[task]:g.pred_ptr[task + 1]]
    if edges.size == 0:
        return np.full(problem.n_processors, g.arrival[task])
    src = g.edge_src[edges]
    arrive = finish[src][:, None] + problem.transfer_to_all(edges, processor[src])
    return np.maximum(arrive.max(axis=0), g.arrival[task])


def frozen_heft_schedule(problem: Problem, order: np.ndarray | None = None, insertion: bool = True) -> Plan:
    """Place tasks in ``order`` (default: decreasing upward rank) each on its earliest-finish
    processor.  Returns a plan with the planned start and finish of every task.

    Cost: O(n log n + (e + n) m) numpy work, plus a gap search on the few processors where
    insertion could win.  84,654 tasks on 188 processors take a few seconds.
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    if order is None:
        order = priority_order(problem, upward_rank(problem))
    W = problem.W
    tl = FrozenTimelines(m, insertion=insertion)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    for t in order:
        t = int(t)
        w = W[t]
        ready = frozen_data_ready(problem, t, proc, finish)
        est = tl.earliest_start(ready, w, prune=True)
        eft = est + w
        q = int(np.argmin(eft))
        start[t], finish[t], proc[t] = est[q], eft[q], q
        tl.reserve(q, float(est[q]), float(eft[q]))
    return Plan.from_times(proc, start, finish)
