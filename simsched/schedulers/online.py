"""Classic online list heuristics for heterogeneous systems, as :class:`OnlinePolicy` classes.

Immediate-mode heuristics (random, round-robin, OLB, MET, MCT) map the ready tasks one at a time,
in ascending task index; batch-mode heuristics (Min-Min, Max-Min) map the whole ready set at once.
All are from Braun et al., "A comparison of eleven static heuristics for mapping a class of
independent tasks onto heterogeneous distributed computing systems", JPDC 61(6), 2001, run in the
dynamic (immediate / batch) modes of Maheswaran et al., "Dynamic matching and scheduling of a class
of independent tasks onto heterogeneous computing systems", HCW 1999.  On a DAG the engine offers
a task once it is ready, so the "independent tasks" of those papers are the ready set.

Costs are expected completion times ``max(available_p, data_ready_{t,p}) + W[t, p]`` (the
:class:`~simsched.simulator.policy.DecisionView` estimate), updated column-wise as tasks are mapped.
Ineligible pairs (``W = inf``) are never chosen; ties go to the lowest index.  ``k`` below is the
number of ready tasks at a decision point and ``m`` the number of processors.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem

Assignments = list[tuple[int, int]]


class _Board:
    """Expected completion times of ``tasks`` on every processor, updated as tasks are mapped."""

    def __init__(self, view: DecisionView, tasks: np.ndarray) -> None:
        self.W = view.problem.cost_rows(tasks)
        self.data = view.data_ready(tasks)
        self.available = np.array(view.available, dtype=np.float64)
        self.ct = np.maximum(self.available[None, :], self.data) + self.W  # (k, m), inf = ineligible

    def assign(self, i: int, p: int) -> None:
        """Map row ``i`` to processor ``p``: ``p`` is busy until ``ct[i, p]``; refresh column ``p``."""
        self.available[p] = self.ct[i, p]
        self.ct[:, p] = np.maximum(self.available[p], self.data[:, p]) + self.W[:, p]


class _Policy:
    name = ""

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        self.rng = rng

    @staticmethod
    def _pairs(tasks: np.ndarray, procs: np.ndarray | list[int]) -> Assignments:
        return list(zip(np.asarray(tasks).tolist(), np.asarray(procs).tolist()))


class RandomPolicy(_Policy):
    """Random: each ready task goes to a processor drawn uniformly among those that may run it.

    O(k m) per decision, vectorised.  The baseline of Braun et al. (JPDC 2001) comparisons.
    """

    name = "random"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def decide(self, view: DecisionView) -> Assignments:
        tasks = view.ready
        eligible = view.problem.eligible_rows(tasks)
        pick = np.floor(self.rng.random(tasks.size) * eligible.sum(axis=1)).astype(np.int64)
        procs = np.argmax(np.cumsum(eligible, axis=1) > pick[:, None], axis=1)
        return self._pairs(tasks, procs)


class RoundRobin(_Policy):
    """Round-robin: each ready task goes to the next eligible processor in cyclic order.

    O(k m) per decision.  The cyclic baseline of Maheswaran et al. (HCW 1999).
    """

    name = "round-robin"

    def __init__(self) -> None:
        self.next = 0

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        super().reset(problem, rng)
        self.next = 0

    def decide(self, view: DecisionView) -> Assignments:
        eligible = view.problem.eligible_rows(view.ready)
        m = eligible.shape[1]
        procs = []
        for i in range(view.ready.size):
            p = (self.next + int(np.argmax(np.roll(eligible[i], -self.next)))) % m
            procs.append(p)
            self.next = (p + 1) % m
        return self._pairs(view.ready, procs)


class OLB(_Policy):
    """OLB (opportunistic load balancing): each task to the eligible processor available earliest.

    Ignores execution times; immediate mode, tasks in index order, availability updated after each.
    O(k m) per decision.  Braun et al. (JPDC 2001), Maheswaran et al. (HCW 1999).
    """

    name = "olb"

    def decide(self, view: DecisionView) -> Assignments:
        tasks = view.ready
        board = _Board(view, tasks)
        eligible = view.problem.eligible_rows(tasks)
        procs = []
        for i in range(tasks.size):
            p = int(np.argmin(np.where(eligible[i], board.available, np.inf)))
            board.assign(i, p)
            procs.append(p)
        return self._pairs(tasks, procs)


class MET(_Policy):
    """MET (minimum execution time): each task to the processor that runs it fastest.

    Ignores availability (so it may overload the fastest processor).  O(k m) per decision,
    vectorised.  Braun et al. (JPDC 2001), Maheswaran et al. (HCW 1999).
    """

    name = "met"

    def decide(self, view: DecisionView) -> Assignments:
        tasks = view.ready
        return self._pairs(tasks, np.argmin(view.problem.cost_rows(tasks), axis=1))


class MCT(_Policy):
    """MCT (minimum completion time): each task to the processor expected to finish it first.

    Immediate mode, tasks in index order; completion ``max(available, data ready) + W``, availability
    updated after each.  O(k m) per decision.  Braun et al. (JPDC 2001), Maheswaran et al. (HCW 1999).
    """

    name = "mct"

    compiled_kernel = "mct"
    """The compiled stream engine runs this rule in its own loop (:mod:`simsched.simulator.engine.compiled`),
    the same decisions float for float; declared on this class only, so a subclass runs on SimPy."""

    ROW_BY_ROW = 4
    """Up to this many ready tasks, each task's row is computed when its turn comes (with the
    availability as updated so far) instead of building the (k, m) board: the same numbers (the
    board's row ``i`` after ``i`` column refreshes is exactly that row), fewer numpy calls when
    ``k`` is small."""

    def decide(self, view: DecisionView) -> Assignments:
        tasks = view.ready
        if tasks.size <= self.ROW_BY_ROW:  # the usual online case: one or a few ready tasks
            available, out = view.available, []
            for t in tasks.tolist():
                ct = np.maximum(available, view.data_ready_row(t)) + view.problem.cost_row(t)
                p = int(ct.argmin())
                out.append((t, p))
                if len(out) < tasks.size:
                    if available is view.available:
                        available = np.array(available, dtype=np.float64)
                    available[p] = ct[p]
            return out
        board = _Board(view, tasks)
        procs = []
        for i in range(tasks.size):
            p = int(np.argmin(board.ct[i]))
            board.assign(i, p)
            procs.append(p)
        return self._pairs(tasks, procs)


def _batch_map(view: DecisionView, largest: bool) -> Assignments:
    """Min-Min (``largest=False``) or Max-Min over the ready set: repeatedly take the task whose best
    completion time is smallest (largest), map it to that processor, update the processor's column.

    Only rows whose best processor was the updated one are re-minimised (a column only grows).
    O(k m + k^2 + r m), r = rows re-minimised; O(k^2 m) in the worst case.
    """
    tasks = view.ready
    board = _Board(view, tasks)
    ct = board.ct
    best_p = np.argmin(ct, axis=1)
    best = ct[np.arange(tasks.size), best_p]
    left = np.ones(tasks.size, dtype=bool)
    out: Assignments = []
    for _ in range(tasks.size):
        i = int(np.argmax(np.where(left, best, -np.inf)) if largest else np.argmin(np.where(left, best, np.inf)))
        p = int(best_p[i])
        out.append((int(tasks[i]), p))
        left[i] = False
        board.assign(i, p)
        stale = np.flatnonzero(left & (best_p == p))
        if stale.size:
            rows = ct[stale]
            best_p[stale] = np.argmin(rows, axis=1)
            best[stale] = rows[np.arange(stale.size), best_p[stale]]
    return out


class MinMin(_Policy):
    """Min-Min: batch mode, map first the ready task with the smallest minimum completion time.

    Favours short tasks.  O(k^2 m) per decision at worst (typically ~O(k m + k^2)).
    Braun et al. (JPDC 2001); batch mode of Maheswaran et al. (HCW 1999).
    """

    name = "minmin"
    compiled_kernel = "minmin"
    """The compiled stream engine runs this rule in its own loop (:mod:`simsched.simulator.engine.compiled`),
    the same decisions float for float; declared on this class only, so a subclass runs on SimPy."""

    def decide(self, view: DecisionView) -> Assignments:
        return _batch_map(view, largest=False)


class MaxMin(_Policy):
    """Max-Min: batch mode, map first the ready task with the largest minimum completion time.

    Favours long tasks, which helps when a few long tasks dominate.  O(k^2 m) per decision at worst.
    Braun et al. (JPDC 2001); batch mode of Maheswaran et al. (HCW 1999).
    """

    name = "maxmin"
    compiled_kernel = "maxmin"
    """The compiled stream engine runs this rule (Min-Min's board, :mod:`simsched.simulator.engine.compiled`),
    the same decisions float for float; declared on this class only, so a subclass runs on SimPy."""

    def decide(self, view: DecisionView) -> Assignments:
        return _batch_map(view, largest=True)
