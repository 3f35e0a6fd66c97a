"""Branch and bound for P|prec|Cmax (identical processors, precedence, no communication).

The setting of Kasahara's Standard Task Graph set, whose optima were proven by branch and bound
(Kasahara & Narita, IEEE TC 33(11), 1984: depth-first search over list schedules with critical-path
bounds).  This one:

* **Search space**: task lists decoded by :func:`~simsched.schedulers.identical.decode` (each task
  at ``max(ready, earliest free processor)``).  Some optimal schedule is the decoding of a list
  whose decoded starts are non-decreasing, ties in index order (decode an optimal schedule in
  start order: starts never grow; repeat until nothing changes; the sum of starts falls at each
  change), so a child is generated only if its start keeps that order: processors are
  interchangeable and no order of equal-start tasks is tried twice;
* **Bounds**: at the root the energetic bound of :mod:`~simsched.schedulers.identical` (heads,
  tails, energetic reasoning); at each node the earliest starts of the unscheduled tasks
  propagated from the partial schedule plus their tails, and, for every tail threshold ``tau``,
  ``X + tau`` where ``X`` is the earliest time the work of the tasks with tail >= ``tau`` can be
  done from their least earliest start on processors available from their free times;
* **Strategy**: destructive lower bounding — look for a schedule of makespan ``target`` starting
  at the root bound; if the tree holds none, ``target + 1`` is a proven bound, and so on up to
  the best known makespan (from :func:`~simsched.schedulers.identical.identical_search`).  Depth
  first, children in order of (start, tail + duration descending); visited states (scheduled set,
  processor free times, pending finish times, last start) are remembered and not expanded again.

Integer durations only (the bound steps are integers).  Used by the ``optimal`` scheduler
(:mod:`simsched.schedulers.exact`) whenever a problem is of this kind.  Worst case exponential; each node costs
O(n + e).  ``info``: ``optimal`` (proven), ``bound`` (proven lower bound), ``objective``, ``nodes``.
"""

from __future__ import annotations

import time

import numpy as np

from simsched.schedulers.identical import (
    Identical,
    decode,
    energetic_bound,
    heads_tails,
    identical_search,
    order_by_keys,
)
from simsched.simulator.evaluate import evaluate_plan
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


class _Timeout(Exception):
    pass


def _fill_time(free: list[int], t0: int, work: int, m: int) -> int:
    """Least integer X with ``sum_q max(0, X - max(t0, free_q)) >= work`` (``free`` sorted): the
    earliest time ``work`` units can be done from ``t0`` on processors available from their free
    times (water filling).  O(m)."""
    total = 0
    for k in range(m):
        g = free[k] if free[k] > t0 else t0
        total += g
        x = -(-(work + total) // (k + 1))  # fill the k + 1 earliest processors to a common level
        if k + 1 == m or x <= max(free[k + 1], t0):
            return x
    return t0  # not reached: m >= 1


class _Tree:
    """One depth-first search for a schedule of makespan <= ``target``."""

    def __init__(self, inst: Identical, tail: np.ndarray, deadline: float) -> None:
        self.inst, self.deadline = inst, deadline
        self.p = inst.p.astype(np.int64).tolist()
        self.tail = tail.astype(np.int64).tolist()
        self.prio = [-(self.tail[t] + self.p[t]) for t in range(inst.n)]
        self.positive = all(v > 0 for v in self.p)
        self.nodes = 0
        self.seen: set = set()
        self.by_tail = sorted(range(inst.n), key=lambda t: -self.tail[t])

    def _node_bound_ok(self, target: int, free: list[int], finish: list[int], done: list[bool],
                       floor: int) -> bool:
        """False when the partial schedule cannot be completed within ``target``.  O(n + e)."""
        inst, p, tail = self.inst, self.p, self.tail
        m = inst.m
        est = [0] * inst.n
        low = max(floor, free[0])
        for t in inst.topo.tolist():
            if done[t]:
                continue
            e = low
            for j in inst.preds[t]:
                v = finish[j] if done[j] else est[j] + p[j]
                if v > e:
                    e = v
            if e + p[t] + tail[t] > target:
                return False
            est[t] = e
        # energy: the tasks with tail >= tau all run after t0, on processors free from max(t0, free
        # time); they need the least X with sum_q max(0, X - max(t0, free_q)) >= their work, and
        # the last of them ends at X or later, tau before the makespan at the earliest
        work = 0
        t0 = None
        for t in self.by_tail:
            if done[t]:
                continue
            work += p[t]
            t0 = est[t] if t0 is None or est[t] < t0 else t0
            if _fill_time(free, t0, work, m) + tail[t] > target:
                return False
        return True

    def search(self, target: int, order_out: list[int]) -> bool:
        inst = self.inst
        n, m = inst.n, inst.m
        free = [0] * m
        finish = [0] * n
        done = [False] * n
        missing = [len(ps) for ps in inst.preds]
        ready = {t for t in range(n) if missing[t] == 0}
        self.seen = set()
        seq: list[int] = []
        p, tail, preds, succs = self.p, self.tail, inst.preds, inst.succs

        def rec(prev_start: int, prev_task: int, mask: int) -> bool:
            if len(seq) == n:
                return max(free) <= target
            self.nodes += 1
            if self.nodes & 15 == 0 and time.perf_counter() > self.deadline:
                raise _Timeout
            # which scheduled task finishes when matters to its unscheduled successors
            pending = tuple((j, finish[j]) for j in range(n) if done[j] and any(not done[s] for s in succs[j]))
            key = (mask, tuple(free), pending, prev_start, prev_task if self.positive else -1)
            if key in self.seen:
                return False
            self.seen.add(key)
            f0 = free[0]
            kids = []
            for t in ready:
                r = max((finish[j] for j in preds[t]), default=0)
                s = r if r > f0 else f0
                if s < prev_start or (self.positive and s == prev_start and t < prev_task):
                    continue
                if s + p[t] + tail[t] > target:
                    continue
                kids.append((s, self.prio[t], t))
            kids.sort()
            for s, _, t in kids:
                old_free = free[0]
                free[0] = s + p[t]
                free.sort()
                finish[t] = s + p[t]
                done[t] = True
                ready.discard(t)
                opened = []
                for c in succs[t]:
                    missing[c] -= 1
                    if missing[c] == 0:
                        ready.add(c)
                        opened.append(c)
                seq.append(t)
                if self._node_bound_ok(target, free, finish, done, s) and rec(s, t, mask | (1 << t)):
                    order_out[:] = seq
                    return True
                seq.pop()
                for c in opened:
                    ready.discard(c)
                for c in succs[t]:
                    missing[c] += 1
                ready.add(t)
                done[t] = False
                free.remove(s + p[t])
                free.insert(0, old_free)
                free.sort()
            return False

        return rec(-1, -1, 0)


def branch_and_bound(inst: Identical, *, time_limit_s: float = 10.0, seed: int = 0, search_s: float | None = None,
                     clock: float | None = None
                     ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Minimum makespan of P|prec|Cmax with integer durations (module docstring): returns ``(start,
    processor, info)``.  Runs :func:`identical_search` first (``search_s``, default 40% of the limit:
    on the STG set the search finds most optima, the tree the rest) for the upper bound, then raises
    the proven bound by exhausting trees until it meets the upper bound or ``time_limit_s`` (from
    ``clock``) runs out."""
    clock = time.perf_counter() if clock is None else clock
    deadline = clock + time_limit_s
    head, tail = heads_tails(inst)
    bound = energetic_bound(inst, heads=(head, tail))
    start, proc, best, stats = identical_search(inst, bound, time_limit_s=(search_s if search_s is not None
                                                                           else 0.4 * time_limit_s),
                                                seed=seed, clock=clock)
    tree = _Tree(inst, tail, deadline)
    proven = int(bound)
    timed_out = False
    while proven < best and not timed_out:
        order: list[int] = []
        try:
            found = tree.search(proven, order)
        except _Timeout:
            timed_out = True
            break
        if found:
            start, proc, mk = decode(inst, np.array(order, dtype=np.int64))
            best = mk
            break
        proven += 1
    info = {"optimal": proven >= best, "bound": float(min(proven, best)), "objective": float(best),
            "root_bound": float(bound), "nodes": tree.nodes, "search_rounds": stats["rounds"],
            "solve_time_s": time.perf_counter() - clock}
    return start, proc, info


def plan_from_starts(problem: Problem, inst: Identical, start: np.ndarray, proc: np.ndarray, info: dict) -> Plan:
    """The plan running tasks on ``proc`` in order of ``start``, re-timed by the evaluator; adds
    ``makespan`` and ``proven_optimal`` to ``info``.  O(n log n + e)."""
    g = problem.graph
    origin = float(g.arrival.min())
    order = np.empty(g.n_tasks)
    order[order_by_keys(inst, start + 1e-6 * (start + inst.p))] = np.arange(g.n_tasks)
    sched = evaluate_plan(problem, Plan(proc, order))
    makespan = float(sched.finish.max()) - origin
    info.update(makespan=makespan, proven_optimal=bool(info["optimal"] and makespan <= info["objective"]))
    return Plan(proc, order, sched.start, sched.finish, info)
