"""HEFT with one-step lookahead (Bittencourt, Sakellariou & Madeira, PDP 2010).

Tasks are taken in HEFT's order (decreasing upward rank).  Instead of the processor where the
current task t finishes earliest, t goes to the processor p that minimises the latest finish time
of t's children, when t is tentatively placed on p and the children are then placed one by one (in
upward-rank order) each on its own earliest-finish processor.  A task without children is placed by
its own earliest finish, as in HEFT.  Ties: t's own earlier finish, then the lowest processor.

The lookahead is an estimate and is evaluated for all m tentative processors at once: the m x m
matrix of "processor q's end time if t were on p" is updated as each child is placed, children's
data-ready times account for t's position (and ignore their other still-unplaced parents), and
children may use idle gaps of the current timelines.  Only the real placement of t (exact,
insertion-based) enters the plan.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.heft import priority_order, upward_rank
from simsched.schedulers.timeline import Timelines, data_ready
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


def _children_finish(problem: Problem, tl: Timelines, t: int, t_finish: np.ndarray, children: np.ndarray,
                     proc: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """(m,) latest earliest-finish of ``children`` if ``t`` ran on p and finished at ``t_finish[p]``.

    O(children x m^2) numpy work plus gap searches where a gap could beat the append position.
    """
    g = problem.graph
    m = problem.n_processors
    W = problem.W
    end = np.broadcast_to(tl.end, (m, m)).copy()  # [p, q]
    end[np.arange(m), np.arange(m)] = np.maximum(tl.end, t_finish)
    worst = np.full(m, -np.inf)
    for c in children:
        c = int(c)
        edges = g.pred_edges[g.pred_ptr[c]:g.pred_ptr[c + 1]]
        src = g.edge_src[edges]
        placed = proc[src] >= 0
        base = np.full(m, g.arrival[c])
        if placed.any():
            e, s = edges[placed], src[placed]
            base = np.maximum(base, (finish[s][:, None] + problem.transfer_to_all(e, proc[s])).max(axis=0))
        own = edges[src == t]
        via_t = t_finish[:, None] + problem.transfer_to_all(np.repeat(own, m), np.arange(m))  # [p, q]
        ready = np.maximum(base[None, :], via_t)
        w = W[c]
        est = np.maximum(ready, end)
        eft = est + w[None, :]
        best = eft.min(axis=1)
        # an idle gap can only help where the task fits and ends before the processor's last task
        cand = (tl.max_gap[None, :] >= w[None, :]) & (ready + w[None, :] <= tl.end[None, :]) \
            & (ready + w[None, :] < best[:, None])
        for p, q in np.argwhere(cand):
            s = tl.earliest_start_on(int(q), float(ready[p, q]), float(w[q]))
            eft[p, q] = min(eft[p, q], s + w[q])
        q_best = np.argmin(eft, axis=1)
        f = eft[np.arange(m), q_best]
        rows = np.arange(m)
        end[rows, q_best] = np.maximum(end[rows, q_best], f)
        worst = np.maximum(worst, f)
    return worst


def lookahead_schedule(problem: Problem, insertion: bool = True) -> Plan:
    """The lookahead-HEFT plan with planned start/finish times.

    O(n m log n + sum over tasks of children x m^2) plus gap searches.
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    rank = upward_rank(problem)
    order = priority_order(problem, rank)
    W = problem.W
    tl = Timelines(m, insertion=insertion)
    proc = np.full(n, -1, dtype=np.int64)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    placed: list[int] = []  # tasks in placement order: the tie-break of equal planned times
    for t in order:
        t = int(t)
        w = W[t]
        est = tl.earliest_start(data_ready(problem, t, proc, finish), w, prune=False)
        eft = est + w
        children = g.successors(t)
        if children.size:
            children = children[np.lexsort((children, -rank[children]))]
            look = _children_finish(problem, tl, t, eft, children, proc, finish)
            look = np.where(np.isfinite(w), look, np.inf)
            q = int(np.lexsort((np.arange(m), eft, look))[0])
        else:
            q = int(np.argmin(eft))
        start[t], finish[t], proc[t] = est[q], eft[q], q
        placed.append(t)
        tl.reserve(q, float(est[q]), float(eft[q]))
    return Plan.from_times(proc, start, finish, placed=placed)


class HEFTLookahead:
    """HEFT with one-step lookahead: place each task where its children can finish earliest.

    Bittencourt, Sakellariou & Madeira, "DAG scheduling using a lookahead variant of the
    Heterogeneous Earliest Finish Time algorithm", PDP 2010, pp. 27-34.  O(n m log n + e m^2) plus
    insertion gap searches; deterministic (``rng`` unused).

    Parameters:
        insertion: allow filling idle gaps (as in HEFT); ``False`` always appends.
    """

    name = "heft-lookahead"

    def __init__(self, *, insertion: bool = True) -> None:
        self.insertion = insertion

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return lookahead_schedule(problem, insertion=self.insertion)
