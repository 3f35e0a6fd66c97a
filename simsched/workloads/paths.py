"""Longest paths in a task graph, level by level with numpy.

Upward and downward ranks (Topcuoglu et al. 2002), critical paths and lower bounds are all longest
paths with node and edge weights.  Because a task's level is its longest distance (in tasks) from an
entry task, every edge goes from a lower to a strictly higher level; so all tasks of one level can
be finished in one vectorised step once the levels after (or before) it are done.  Cost: O(n + e)
work in O(depth) numpy passes.
"""

from __future__ import annotations

import numpy as np

from simsched.workloads.taskgraph import TaskGraph


def _groups(keys: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Items sorted by key, and boundaries so that items of key k are ``order[b[k]:b[k+1]]``."""
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(keys[order], np.arange(depth + 1))
    return order, bounds


def longest_path_from(graph: TaskGraph, node_weight: np.ndarray, edge_weight: np.ndarray | None = None) -> np.ndarray:
    """``L[i] = node_weight[i] + max over successors j of (edge_weight[i->j] + L[j])``.

    With mean costs and mean transfer times this is HEFT's upward rank.  O(n + e).
    """
    g = graph
    node_weight = np.asarray(node_weight, dtype=np.float64)
    ew = np.zeros(g.n_edges) if edge_weight is None else np.asarray(edge_weight, dtype=np.float64)
    depth = g.depth
    nodes, nb = _groups(g.level, depth)
    edges, eb = _groups(g.level[g.edge_src], depth)
    best = np.zeros(g.n_tasks)
    out = np.zeros(g.n_tasks)
    for lvl in range(depth - 1, -1, -1):
        es = edges[eb[lvl]:eb[lvl + 1]]
        if es.size:
            np.maximum.at(best, g.edge_src[es], ew[es] + out[g.edge_dst[es]])
        ns = nodes[nb[lvl]:nb[lvl + 1]]
        out[ns] = node_weight[ns] + best[ns]
    return out


def longest_path_to(graph: TaskGraph, node_weight: np.ndarray, edge_weight: np.ndarray | None = None) -> np.ndarray:
    """``L[i] = max over predecessors j of (L[j] + node_weight[j] + edge_weight[j->i])``, 0 at entries.

    The length of the longest path ending just before ``i`` starts; with mean costs and transfers
    this is the downward rank of Topcuoglu et al. 2002.  O(n + e).
    """
    g = graph
    node_weight = np.asarray(node_weight, dtype=np.float64)
    ew = np.zeros(g.n_edges) if edge_weight is None else np.asarray(edge_weight, dtype=np.float64)
    depth = g.depth
    edges, eb = _groups(g.level[g.edge_dst], depth)
    out = np.zeros(g.n_tasks)
    for lvl in range(1, depth):
        es = edges[eb[lvl]:eb[lvl + 1]]
        if es.size:
            src = g.edge_src[es]
            np.maximum.at(out, g.edge_dst[es], out[src] + node_weight[src] + ew[es])
    return out
