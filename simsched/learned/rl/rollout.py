"""Decision-time search for online job-stream scheduling: rollout (policy improvement) over a numpy
forward model of the work that has arrived.

Rollout (Bertsekas, Tsitsiklis & Wu, "Rollout algorithms for combinatorial optimization", J.
Heuristics 1997; Bertsekas, "Rollout, Policy Iteration, and Distributed Reinforcement Learning",
2020): at a decision point, each of a few candidate actions is scored by applying it and then
simulating the rest of the *arrived* work forward with a fast base policy; the candidate with the
lowest resulting sum of job completion times is taken.  When the base policy's own action is among
the candidates, the rollout policy is never worse than the base policy *in the model* (the
cost-improvement property); in the real world the model is only approximate (noise, stragglers,
failures and later arrivals are not in it).

The forward model (:class:`ForwardModel`) knows only what an online scheduler may know at ``now``:
the tasks that have arrived (``arrival <= now``), the expected costs ``W`` (never the noise draws),
each processor's expected end of queue (``available``; a failed processor's is its repair time, as
the engine shows every online policy), and which tasks are assigned or finished.  Jobs that have not
arrived are not in it.  It is event driven and mirrors how the online rules of
:mod:`simsched.schedulers.jobaware` run on the engine: whenever a processor is idle and a task is
ready (its predecessors finished), the base policy picks a task, which goes to the processor where
it is expected to finish first (late binding; a transfer starts when the producer has finished and
the consumer is placed).  Tasks already assigned but unfinished are assumed to finish when their
processor's queue ends (the view does not reveal queue order).  Deterministic: no random draws.

Cost of one simulation: O(P (log P + m + d)) for P placements (bounded by ``horizon``), m
processors and in-degree d, in numpy on small arrays; one decision costs ``len(candidates)``
simulations sharing one O(n + e) set-up.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np

from simsched.simulator.policy import DecisionView
from simsched.simulator.problem import Problem

Priority = Callable[[np.ndarray, np.ndarray], int]
"""A base policy's task choice: given the ready tasks and the per-job remaining unassigned mean work,
the position (in the ready array) of the task to place next."""


class ForwardModel:
    """The arrived work of one decision point, ready to be rolled forward under candidate actions.

    ``jobs`` (n,) job index per task, ``rank`` (n,) upward rank, ``cost`` (n,) mean cost,
    ``priority`` (J,) job priority.  Set-up O(n + e); see :meth:`simulate`.
    """

    def __init__(self, view: DecisionView, jobs: np.ndarray, rank: np.ndarray, cost: np.ndarray,
                 priority: np.ndarray, job_arrival: np.ndarray) -> None:
        prob: Problem = view.problem
        g = prob.graph
        self.view, self.prob, self.jobs, self.rank, self.cost = view, prob, jobs, rank, cost
        self.priority, self.job_arrival = priority, job_arrival
        now = view.now
        self.now = float(now)
        arrived = g.arrival <= now
        done = ~np.isnan(view.finish)
        assigned = (view.processor >= 0) & ~done
        unplaced = arrived & ~done & (view.processor < 0)
        # expected finish of every task already placed: actual, or the end of its processor's queue
        fin = np.where(done, view.finish, np.nan)
        fin[assigned] = view.available[view.processor[assigned]]
        self.fin0 = fin
        self.unplaced = np.flatnonzero(unplaced)
        n_jobs = job_arrival.size
        self.open_jobs = np.unique(jobs[arrived & ~done])
        self.rem0 = np.bincount(jobs, weights=np.where(unplaced, cost, 0.0), minlength=n_jobs)
        self.cnt0 = np.bincount(jobs[unplaced], minlength=n_jobs)
        end = np.full(n_jobs, -np.inf)
        known = arrived & ~unplaced & ~np.isnan(fin)
        np.maximum.at(end, jobs[known], fin[known])
        self.end0 = end
        # predecessors of unplaced tasks not yet placed, and the latest finish among placed ones
        self.waiting0 = np.zeros(prob.n_tasks, dtype=np.int64)
        self.ready_at0 = np.full(prob.n_tasks, float(now))
        if g.n_edges and self.unplaced.size:
            e = g.pred_edges[np.isin(g.edge_dst[g.pred_edges], self.unplaced)]
            src, dst = g.edge_src[e], g.edge_dst[e]
            open_src = np.isnan(fin[src])
            self.waiting0 = np.bincount(dst[open_src], minlength=prob.n_tasks)
            np.maximum.at(self.ready_at0, dst[~open_src], fin[src[~open_src]])
        self.ready0 = [int(v) for v in view.ready]
        self.succ_ptr, self.succ_dst = g.succ_ptr, g.edge_dst[g.succ_edges]
        self.pred_ptr, self.pred_edges, self.edge_src = g.pred_ptr, g.pred_edges, g.edge_src
        self.W = prob.W
        self.n_unplaced = int(self.unplaced.size)
        u = self.unplaced
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isfinite(prob.W[u]), cost[u, None] / np.maximum(prob.W[u], 1e-12), 0.0)
        # aggregate processing rate in mean-cost units per unit of time (for the cut's estimate)
        self.rate = float(ratio.mean(axis=0).sum()) if u.size else float(prob.n_processors)

    # ------------------------------------------------------------------ simulation
    def _completion(self, v: int, t: float, avail: np.ndarray, proc: np.ndarray, fin: np.ndarray) -> np.ndarray:
        """(m,) expected finish of ``v`` placed at time ``t`` on each processor."""
        lo, hi = self.pred_ptr[v], self.pred_ptr[v + 1]
        ready = np.full(avail.shape, max(float(t), float(self.prob.graph.arrival[v])))
        if hi > lo:
            e = self.pred_edges[lo:hi]
            src = self.edge_src[e]
            sent = np.maximum(fin[src], t)
            ready = np.maximum(ready, (sent[:, None] + self.prob.transfer_to_all(e, proc[src])).max(axis=0))
        return np.maximum(avail, ready) + self.W[v]

    def simulate(self, first: tuple[int, int] | None, choose: Priority, horizon: int = 0,
                 record: dict | None = None) -> float:
        """Sum over the open arrived jobs of their expected completion time minus arrival, after
        placing ``first`` now (``None``: nothing) and then letting ``choose`` pick tasks whenever a
        processor is idle, each on its earliest-finish processor; at most ``horizon`` placements
        (0: until all arrived work is placed), jobs left unfinished at the cut are completed by
        an SRPT estimate on the platform's aggregate speed.  ``record``: if given, receives the
        simulated ``processor`` and ``finish`` arrays.  O(P (log P + m + d))."""
        view = self.view
        avail = np.array(view.available, dtype=float)
        proc = np.array(view.processor)
        fin = self.fin0.copy()
        rem = self.rem0.copy()
        cnt = self.cnt0.copy()
        end = self.end0.copy()
        waiting = self.waiting0.copy()
        ready_at = self.ready_at0.copy()
        jobs, cost = self.jobs, self.cost
        ready = list(self.ready0)
        heap: list[tuple[float, int]] = []
        t = self.now
        placed = 0

        def place(v: int, p: int, ct: float) -> None:
            avail[p] = ct
            proc[v] = p
            fin[v] = ct
            j = jobs[v]
            rem[j] -= cost[v]
            cnt[j] -= 1
            if ct > end[j]:
                end[j] = ct
            for w in self.succ_dst[self.succ_ptr[v]:self.succ_ptr[v + 1]].tolist():
                waiting[w] -= 1
                if ct > ready_at[w]:
                    ready_at[w] = ct
                if waiting[w] == 0:
                    heapq.heappush(heap, (float(ready_at[w]), w))

        if first is not None:
            v, p = first
            place(v, p, float(self._completion(v, t, avail, proc, fin)[p]))
            ready.remove(v)
            placed = 1
        # tasks whose predecessors are all placed but not all finished by now
        in_ready = set(self.ready0)
        for v in self.unplaced[(self.waiting0[self.unplaced] == 0)].tolist():
            if v not in in_ready:
                heapq.heappush(heap, (float(self.ready_at0[v]), v))
        limit = horizon if horizon > 0 else self.n_unplaced + 1
        while (ready or heap) and placed < limit:
            while heap and heap[0][0] <= t:
                ready.append(heapq.heappop(heap)[1])
            idle = avail <= t
            if not ready or not idle.any():
                nxt = heap[0][0] if heap else np.inf
                if ready:
                    nxt = min(nxt, float(avail[avail > t].min()))
                t = max(t, nxt)
                continue
            r = np.array(ready)
            k = choose(r, rem)
            v = int(r[k])
            ct = self._completion(v, t, avail, proc, fin)
            p = int(np.argmin(ct))
            place(v, p, float(ct[p]))
            ready.pop(k)
            placed += 1
        if record is not None:
            record.update(processor=proc, finish=fin)
        open_jobs = self.open_jobs
        left = np.maximum(rem[open_jobs], 0.0)
        cut = cnt[open_jobs] > 0
        total = float((end[open_jobs[~cut]] - self.job_arrival[open_jobs[~cut]]).sum())
        if cut.any():  # cut by the horizon: SRPT on the aggregate rate from the cut
            t_cut = max(t, float(avail.max()))
            done_at = t_cut + np.cumsum(np.sort(left[cut])) / max(self.rate, 1e-12)
            total += float(done_at.sum() - self.job_arrival[open_jobs[cut]].sum())
        return total


def srjf_choice(jobs: np.ndarray, rank: np.ndarray, job_priority: np.ndarray) -> Priority:
    """Shortest remaining job first (ties: higher job priority, then higher upward rank): the
    :class:`~simsched.schedulers.jobaware.ShortestJobEFT` rule as a forward-model base policy."""
    def choose(ready: np.ndarray, rem: np.ndarray) -> int:
        j = jobs[ready]
        return int(np.lexsort((-rank[ready], -job_priority[j], rem[j]))[0])
    return choose


def score_choice(score: np.ndarray) -> Priority:
    """The ready task of highest ``score`` (e.g. the network's task logits at the root, frozen over
    the rollout): a cheap network base policy."""
    def choose(ready: np.ndarray, rem: np.ndarray) -> int:
        return int(np.argmax(score[ready]))
    return choose


def best_candidate(model: ForwardModel, candidates: Sequence[tuple[int, int]], choose: Priority,
                   horizon: int = 0) -> tuple[tuple[int, int], np.ndarray]:
    """The candidate of lowest simulated sum of JCTs (ties: the earlier candidate) and every
    candidate's cost.  O(len(candidates)) simulations."""
    costs = np.array([model.simulate(c, choose, horizon) for c in candidates])
    return candidates[int(np.argmin(costs))], costs
