"""A plain-Python HEFT written straight from the paper's pseudocode.

It exists for two reasons: ``simsched bench`` runs it side by side with the vectorised HEFT in
:mod:`simsched.schedulers.heft` as the baseline, and the tests hold the fast HEFT to it (same
processors, same times) on random DAGs.  It deliberately shares no code with the fast version:
its own upward rank (memoised recursion), its own per-processor loop and a linear scan of every
slot already placed — the textbook O(n^2 m) algorithm (Topcuoglu, Hariri & Wu, IEEE TPDS 2002).
"""

from __future__ import annotations

import numpy as np

from simsched.simulator.problem import Problem


def reference_heft(problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(processor, start, finish)`` of HEFT with insertion, ties broken as in the fast version
    (rank, then level, then index; lowest processor on equal finish).  O(n^2 m) worst case."""
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    W = problem.W.tolist()
    eligible = problem.eligible.tolist()
    succ = [[] for _ in range(n)]
    pred = [[] for _ in range(n)]
    for e, (a, b) in enumerate(zip(g.edge_src.tolist(), g.edge_dst.tolist())):
        succ[a].append((b, e))
        pred[b].append((a, e))
    pairs = [(p, q) for p in range(m) for q in range(m) if p != q]
    lat = problem.latency.tolist()
    inv = problem.inv_bandwidth.tolist()
    data = g.edge_data.tolist()
    mean_lat = sum(lat[p][q] for p, q in pairs) / len(pairs) if pairs else 0.0
    mean_inv = sum(inv[p][q] for p, q in pairs) / len(pairs) if pairs else 0.0
    wbar = [sum(W[i][p] for p in range(m) if eligible[i][p]) / sum(eligible[i]) for i in range(n)]

    rank = [None] * n
    for i in reversed(g.topo_order.tolist()):  # successors before predecessors
        best = 0.0
        for j, e in succ[i]:
            c = (mean_lat + data[e] * mean_inv) if pairs else 0.0
            best = max(best, c + rank[j])
        rank[i] = wbar[i] + best
    scale = max(abs(r) for r in rank) or 1.0
    level = g.level.tolist()
    order = sorted(range(n), key=lambda i: (-round(rank[i] / scale, 12), level[i], i))

    slots: list[list[tuple[float, float]]] = [[] for _ in range(m)]  # sorted by start
    proc = [-1] * n
    start = [0.0] * n
    finish = [0.0] * n
    arrival = g.arrival.tolist()
    for i in order:
        best = (float("inf"), -1, 0.0)
        for p in range(m):
            if not eligible[i][p]:
                continue
            ready = arrival[i]
            for a, e in pred[i]:
                q = proc[a]
                ready = max(ready, finish[a] + (0.0 if q == p else lat[q][p] + data[e] * inv[q][p]))
            w = W[i][p]
            s = ready
            prev_end = 0.0
            placed = False
            for bs, bf in slots[p]:  # first gap that fits, scanning every slot
                cand = max(ready, prev_end)
                if cand + w <= bs:
                    s, placed = cand, True
                    break
                prev_end = bf
            if not placed:
                s = max(ready, prev_end)
            if s + w < best[0]:
                best = (s + w, p, s)
        f, p, s = best
        proc[i], start[i], finish[i] = p, s, f
        slots[p].append((s, f))
        slots[p].sort()
    return np.array(proc), np.array(start), np.array(finish)
