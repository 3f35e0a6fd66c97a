"""HEFT with critical-parent duplication: a task may also run where its data is needed.

At a high communication-to-computation ratio (CCR) a list scheduler's tasks wait mostly for
transfers.  Duplication-based schedulers run a predecessor a second time on the consumer's
processor, in an idle slot, so its output needs no transfer.  This module follows the
*critical-parent duplication* rule of DSH (Kruatrachue & Lewis, "Grain size determination for
parallel processing", IEEE Software 5(1), 1988) in the heterogeneous form of the "fast duplicator"
of HCPFD (Hagras & Janeček, "A high performance, low complexity algorithm for compile-time task
scheduling in heterogeneous systems", Parallel Computing 31(7):653-670, 2005), on top of HEFT's
list (Topcuoglu et al. 2002):

1. Take tasks in decreasing upward rank (HEFT's list).
2. For task ``t`` and every processor ``q``: its inputs arrive at ``q`` at the earliest over every
   instance (original or copy) of each predecessor; ``t`` gets the earliest insertion slot after
   that.  Then, while it helps: the *critical parent* — the predecessor whose data reaches ``q``
   last and that has no instance on ``q`` yet — is copied into ``q``'s earliest idle slot after its
   own inputs are there (from existing instances; copies are one level deep, as in HCPFD's fast
   duplicator); the copy is kept only if ``t``'s finish time on ``q`` strictly improves.
3. ``t`` goes (with the copies that served it) on the processor of least finish time, ties to the
   lowest index; the rest of the trial copies are discarded.

The planned times are estimates made while the plan grows (a copy added later can deliver data
earlier than the planner assumed); the returned plan carries the exact times of executing it
(:func:`~simsched.simulator.evaluate.evaluate_with_copies`), never later than the estimates.
Cost: HEFT's O(e m + n m) plus, per task and processor where a copy could win, one trial per
predecessor — O(e m) trials of O(in-degree + gaps) each.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.heft import priority_order, upward_rank
from simsched.schedulers.timeline import Timelines
from simsched.simulator.copies import Copies
from simsched.simulator.evaluate import evaluate_with_copies
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


class _Instances:
    """Where and when every task runs so far: per task, lists of (processor, finish)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.where: list[list[int]] = [[] for _ in range(problem.n_tasks)]
        self.done: list[list[float]] = [[] for _ in range(problem.n_tasks)]

    def add(self, task: int, q: int, finish: float) -> None:
        self.where[task].append(q)
        self.done[task].append(finish)

    def arrivals(self, task: int) -> tuple[np.ndarray, np.ndarray]:
        """``(preds, arrive)``: the predecessors of ``task`` and, (len(preds), m), the earliest time
        each one's data can be on each processor, over all its instances.  O(in-degree x copies x m)."""
        prob, g = self.problem, self.problem.graph
        edges = g.pred_edges[g.pred_ptr[task]:g.pred_ptr[task + 1]]
        preds = g.edge_src[edges]
        arrive = np.empty((edges.size, prob.n_processors))
        for k, (e, u) in enumerate(zip(edges.tolist(), preds.tolist())):
            where = np.array(self.where[u])
            done = np.array(self.done[u])
            t = done[:, None] + prob.latency[where] + prob.graph.edge_data[e] * prob.inv_bandwidth[where]
            arrive[k] = t.min(axis=0)
        return preds, arrive


def _ready(arrive: np.ndarray, release: float) -> np.ndarray:
    return np.maximum(arrive.max(axis=0), release) if arrive.size else np.full(arrive.shape[1], release)


def heft_duplication_schedule(problem: Problem, max_copies: int | None = None) -> Plan:
    """The plan of :class:`HEFTDuplication` (see the module docstring).  ``max_copies`` bounds the
    copies tried per task and processor (default: the task's in-degree)."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    W = problem.W
    order = priority_order(problem, upward_rank(problem))
    tl = Timelines(m, insertion=True)
    inst = _Instances(problem)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    copy_task: list[int] = []
    copy_proc: list[int] = []
    copy_start: list[float] = []
    copy_finish: list[float] = []
    placed: list[int] = []  # instances (task i, copy n + k) in placement order: ties of equal times
    for t in order.tolist():
        w = W[t]
        preds, arrive = inst.arrivals(t)
        ready = _ready(arrive, g.arrival[t])
        est = tl.earliest_start(ready, w, prune=True)
        eft = est + w
        best_q = int(np.argmin(eft))
        best = (float(eft[best_q]), est[best_q], [])  # (finish, start, copies [(u, s, f)])
        if preds.size:
            # processors where t waits for data (a copy could only shorten that wait)
            for q in np.flatnonzero(np.isfinite(w) & (ready > g.arrival[t])).tolist():
                trial = _try_copies(problem, tl, inst, t, q, preds, arrive[:, q].copy(),
                                    float(eft[q]), max_copies)
                if trial is not None and (trial[0] < best[0] or (trial[0] == best[0] and q < best_q)):
                    best_q, best = q, trial
        f, s, copies = best
        for u, cs, cf in copies:
            tl.reserve(best_q, cs, cf)
            inst.add(u, best_q, cf)
            placed.append(n + len(copy_task))
            copy_task.append(u)
            copy_proc.append(best_q)
            copy_start.append(cs)
            copy_finish.append(cf)
        tl.reserve(best_q, float(s), f)
        inst.add(t, best_q, f)
        proc[t], start[t], finish[t] = best_q, s, f
        placed.append(t)
    copies = Copies(np.array(copy_task, dtype=np.int64), np.array(copy_proc, dtype=np.int64),
                    start=np.array(copy_start), finish=np.array(copy_finish))
    plan = Plan.from_times(proc, start, finish, {"copies": len(copy_task)}, copies, placed=placed)
    if plan.copies is None:
        return plan
    exact = evaluate_with_copies(problem, plan)
    c = exact.copies
    return Plan(proc, plan.order, exact.start, exact.finish, plan.info,
                Copies(c.task, c.processor, plan.copies.order, c.start, c.finish))


def _try_copies(problem: Problem, tl: Timelines, inst: _Instances, t: int, q: int, preds: np.ndarray,
                arrive_q: np.ndarray, eft_q: float, max_copies: int | None
                ) -> tuple[float, float, list[tuple[int, float, float]]] | None:
    """Copy critical parents of ``t`` onto ``q`` while that lowers ``t``'s finish there.  Returns
    ``(finish, start, copies)`` when at least one copy helped, else None; ``tl`` is left as found."""
    W, release = problem.W, float(problem.graph.arrival[t])
    saved = tl.snapshot(q)
    kept: list[tuple[int, float, float]] = []
    best_f, best_s = eft_q, None
    limit = preds.size if max_copies is None else min(max_copies, preds.size)
    try:
        for _ in range(limit):
            k = int(np.argmax(arrive_q))
            u = int(preds[k])
            if q in inst.where[u] or not np.isfinite(W[u, q]) or arrive_q[k] <= release:
                break
            _, u_arrive = inst.arrivals(u)
            u_ready = float(_ready(u_arrive[:, q:q + 1], float(problem.graph.arrival[u]))[0])
            cs = tl.earliest_start_on(q, u_ready, float(W[u, q]))
            cf = cs + float(W[u, q])
            if cf >= arrive_q[k]:
                break
            state = tl.snapshot(q)
            tl.reserve(q, cs, cf)
            new_arrive = arrive_q.copy()
            new_arrive[k] = cf
            ready = max(float(new_arrive.max()), release)
            s = tl.earliest_start_on(q, ready, float(W[t, q]))
            f = s + float(W[t, q])
            if not f < best_f:
                tl.restore(q, state)
                break
            kept.append((u, cs, cf))
            arrive_q = new_arrive
            best_f, best_s = f, s
    finally:
        tl.restore(q, saved)
    return None if best_s is None else (best_f, best_s, kept)


class HEFTDuplication:
    """HEFT with critical-parent duplication into idle slots (DSH / HCPFD's fast duplicator on
    HEFT's list); wins where transfers dominate (high CCR).  Deterministic (``rng`` unused).

    Parameters:
        max_copies: at most this many predecessors copied per task and processor (default: all
            that help, one at a time, most critical first).
    """

    name = "heft-dup"

    def __init__(self, *, max_copies: int | None = None) -> None:
        if max_copies is not None and max_copies < 0:
            raise ValueError(f"max_copies must be >= 0, got {max_copies}")
        self.max_copies = max_copies

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return heft_duplication_schedule(problem, self.max_copies)
