"""Per-(task, processor) cost tables built from the exits upwards: PEFT's OCT, IPEFT's PCT and
CNCT, BIL's best imaginary level.

All are one recurrence over the edges ``i -> j`` with ``c_ij`` the edge's mean transfer time::

    T[i, p] = own[i, p] + max_{j in succ(i)} inner_w (T[j, w] + add[j, w] + c_ij [w != p]),   T[exit, p] = own[exit, p]

with ``inner`` the minimum (optimistic: the successor goes where it is cheapest) or the maximum
(pessimistic: where it is dearest; ineligible processors are left out).  Evaluated level by level
from the exits, all edges of a level at once: O((n + e) m) work in O(depth) numpy passes.
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.problem import Problem


def _via_min(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(E, m): ``min_w (a[e, w] + c[e] [w != p])`` for every p."""
    return np.minimum(a, a.min(axis=1, keepdims=True) + c[:, None])


def _via_max(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(E, m): ``max_w (a[e, w] + c[e] [w != p])`` over finite ``a`` for every p: the largest
    other entry (second largest where p holds the largest) plus the transfer, or ``a[e, p]``."""
    a = np.where(np.isfinite(a), a, -np.inf)
    m = a.shape[1]
    if m == 1:
        return a
    top2 = np.partition(a, m - 2, axis=1)[:, m - 2:]  # second largest, largest
    arg = np.argmax(a, axis=1)
    other = np.broadcast_to(top2[:, 1:2], a.shape).copy()
    other[np.arange(a.shape[0]), arg] = top2[:, 0]
    return np.maximum(a, other + c[:, None])


def successor_cost_table(problem: Problem, *, own: np.ndarray | None = None, add: np.ndarray | None = None,
                         pessimistic: bool = False, edges: np.ndarray | None = None) -> np.ndarray:
    """(n, m) table of the module docstring.

    Args:
        own: (n, m) cost added to a task's own row (BIL: ``W``); default 0.
        add: (n, m) cost of a successor on each processor (OCT: ``W``); default 0.
        pessimistic: inner maximum instead of minimum.
        edges: (e,) bool, the edges taken into account (IPEFT's CNCT: edges to critical nodes);
            default all.  A task none of whose edges count gets ``own`` alone.
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    table = np.zeros((n, m)) if own is None else np.array(own, dtype=np.float64)
    if not g.n_edges:
        return table
    inner = np.full((n, m), -np.inf)
    c = problem.mean_transfer
    lvl = g.level[g.edge_src]
    keep = np.ones(g.n_edges, dtype=bool) if edges is None else np.asarray(edges, dtype=bool)
    by_level = np.argsort(lvl, kind="stable")
    by_level = by_level[keep[by_level]]
    bounds = np.searchsorted(lvl[by_level], np.arange(g.depth + 1))
    via = _via_max if pessimistic else _via_min
    for d in range(g.depth - 2, -1, -1):
        es = by_level[bounds[d]:bounds[d + 1]]
        if not es.size:
            continue
        src = g.edge_src[es]
        j = g.edge_dst[es]
        a = table[j] if add is None else table[j] + add[j]
        np.maximum.at(inner, src, via(a, c[es]))
        rows = np.unique(src)
        table[rows] += inner[rows]
    return table
