"""HOFT: Heterogeneous Optimistic Finish Time, for CPU + GPU (and other multi-type) platforms.

McSweeney, Walton & Zounon, "An efficient new static scheduling heuristic for accelerated
architectures", ICCS 2020, LNCS 12137, pp. 3-16 — HEFT re-tuned for platforms made of a few
*types* of processors; it continues the CPU-GPU HEFT optimisations of Shetti, Fahmy & Bretschneider
("Optimization of the HEFT algorithm for a CPU-GPU environment", PDCAT 2013), which balance the
locally best choice against where the task's children will probably run.

1. *Optimistic finish time* per processor type k, from the entries down (``W_k``: the task's mean
   cost on the eligible processors of type k; ``C_e[k', k]``: the edge's mean transfer time between
   a processor of type k' and one of type k, same processor counted as 0)::

       OFT[t, k] = W_k[t] + max_{p in pred(t)} min_{k'} (OFT[p, k'] + C_e[k', k])

2. Priority: ``rank(t) = max_k OFT[t, k] / min_k OFT[t, k] + max_{s in succ(t)} rank(s)``, larger
   first (ties: level, then index); a topological order.
3. Processor: the earliest-finish processor (insertion-based), unless its type is not the type
   that runs t fastest; then the earliest-finish processor of the fastest type is kept instead
   unless the finish time saved exceeds the extra cost expected for t's children
   ``max_s (W_{k_s}[s] + C[type, k_s])`` (each child s on its optimistic type ``k_s``).

With a single processor type HOFT is HEFT with the OFT-ratio priority.
"""

from __future__ import annotations

import numpy as np

from simsched.schedulers.heft import priority_order
from simsched.schedulers.timeline import Timelines, ready_list_schedule
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.paths import longest_path_from


def type_costs(problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W_k (n, K), latency (K, K), time per data unit (K, K))``: mean costs per processor type and
    mean transfer parameters between types (pairs of one processor included, at 0).  O(n m + m^2)."""
    types = problem.platform.type_index
    K = int(types.max()) + 1
    member = np.eye(K)[types]  # (m, K)
    count = member.sum(axis=0)
    elig = problem.eligible
    wsum = np.where(elig, problem.W, 0.0) @ member
    ecount = elig.astype(np.float64) @ member
    with np.errstate(divide="ignore", invalid="ignore"):
        wk = np.where(ecount > 0, wsum / np.maximum(ecount, 1), np.inf)
    pairs = np.outer(count, count)
    lat = member.T @ problem.latency @ member / pairs
    inv = member.T @ problem.inv_bandwidth @ member / pairs
    return wk, lat, inv


def optimistic_finish_table(problem: Problem, wk: np.ndarray, lat: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """(n, K) OFT, level by level from the entries, all edges into a level at once.
    O((n + e) K^2) numpy work in O(depth) passes."""
    g = problem.graph
    oft = np.array(wk, dtype=np.float64)
    if not g.n_edges:
        return oft
    inner = np.full(oft.shape, -np.inf)
    lvl = g.level[g.edge_dst]
    by_level = np.argsort(lvl, kind="stable")
    bounds = np.searchsorted(lvl[by_level], np.arange(g.depth + 1))
    for d in range(1, g.depth):
        es = by_level[bounds[d]:bounds[d + 1]]
        if not es.size:
            continue
        src, dst = g.edge_src[es], g.edge_dst[es]
        cost = lat[None] + g.edge_data[es][:, None, None] * inv[None]  # (E, K', K)
        np.maximum.at(inner, dst, (oft[src][:, :, None] + cost).min(axis=1))
        rows = np.unique(dst)
        oft[rows] = wk[rows] + inner[rows]
    return oft


def hoft_schedule(problem: Problem, insertion: bool = True) -> Plan:
    """The HOFT plan with planned start/finish times.  O(n log n + (e + n) m + e K^2) plus gap searches."""
    g = problem.graph
    n = g.n_tasks
    W = problem.W
    types = problem.platform.type_index
    wk, lat, inv = type_costs(problem)
    oft = optimistic_finish_table(problem, wk, lat, inv)
    finite = np.isfinite(oft)
    hi = np.where(finite, oft, -np.inf).max(axis=1)
    lo = np.where(finite, oft, np.inf).min(axis=1)
    ratio = np.where(lo > 0, hi / np.where(lo > 0, lo, 1.0), 1.0)
    order = priority_order(problem, longest_path_from(g, ratio))
    child_type = np.argmin(oft, axis=1)
    child_cost = wk[np.arange(n), child_type]
    fastest_type = np.argmin(wk, axis=1)
    position = np.empty(n)
    position[order] = np.arange(n)

    def place(t: int, ready: np.ndarray, tl: Timelines) -> tuple[int, float]:
        est = tl.earliest_start(ready, W[t], prune=False)
        eft = est + W[t]
        q = int(np.argmin(eft))
        k_min, k_fast = int(types[q]), int(fastest_type[t])
        if k_min != k_fast:
            q_fast = int(np.argmin(np.where(types == k_fast, eft, np.inf)))
            out = g.succ_edges[g.succ_ptr[t]:g.succ_ptr[t + 1]]
            extra = 0.0
            if out.size:
                kids = g.edge_dst[out]
                ks, data = child_type[kids], g.edge_data[out]
                after_min = (child_cost[kids] + lat[k_min, ks] + data * inv[k_min, ks]).max()
                after_fast = (child_cost[kids] + lat[k_fast, ks] + data * inv[k_fast, ks]).max()
                extra = after_min - after_fast
            if not eft[q_fast] - eft[q] > extra:
                q = q_fast
        return q, float(est[q])

    return ready_list_schedule(problem, position, place, insertion=insertion, by_level=False)


class HOFT:
    """Heterogeneous Optimistic Finish Time: HEFT tuned for CPU + GPU, per-type optimistic finish.

    McSweeney, Walton & Zounon, "An efficient new static scheduling heuristic for accelerated
    architectures", ICCS 2020 (after Shetti, Fahmy & Bretschneider's HEFT-NC, PDCAT 2013).
    O(n log n + (e + n) m + e K^2) plus insertion gap searches, K processor types; deterministic.

    Parameters:
        insertion: allow filling idle gaps (as in HEFT); ``False`` always appends.
    """

    name = "hoft"

    def __init__(self, *, insertion: bool = True) -> None:
        self.insertion = insertion

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return hoft_schedule(problem, insertion=self.insertion)
