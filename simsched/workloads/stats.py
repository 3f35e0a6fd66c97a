"""Summary metrics of a task graph, for ``simsched workload info`` and reports.

All O(n + e) with numpy (longest paths level by level, see :mod:`simsched.workloads.paths`).
"""

from __future__ import annotations

import numpy as np

from simsched.workloads.paths import longest_path_from
from simsched.workloads.taskgraph import TaskGraph


def graph_stats(graph: TaskGraph, *, bandwidth: float = 1.0) -> dict[str, float | int | str]:
    """Size and shape metrics.

    * ``tasks``, ``edges``, ``depth`` (levels), ``width`` (largest level), ``kinds``;
    * ``total_work`` (sum of mean execution time: the cost-matrix row mean over eligible processors,
      else ``work``), ``critical_path`` (longest path of mean times plus ``data / bandwidth``), and
      ``critical_path_work`` (the same without communication);
    * ``ccr``: mean transfer time (``data / bandwidth``) over mean execution time (Topcuoglu 2002);
    * ``parallelism``: total work / critical path without communication (average parallelism).
    """
    g = graph
    if g.cost is not None:
        finite = np.where(np.isinf(g.cost), np.nan, g.cost)
        w = np.nanmean(finite, axis=1)
    else:
        w = np.asarray(g.work, dtype=np.float64)
    comm = g.edge_data / bandwidth
    cp = float(longest_path_from(g, w, comm).max())
    cpw = float(longest_path_from(g, w).max())
    total = float(w.sum())
    mean_w = total / g.n_tasks
    ccr = float(comm.mean() / mean_w) if g.n_edges and mean_w > 0 else 0.0
    return {
        "tasks": g.n_tasks,
        "edges": g.n_edges,
        "depth": g.depth,
        "width": int(np.bincount(g.level).max()),
        "kinds": ", ".join(g.kind_names[:8]) + (" ..." if len(g.kind_names) > 8 else ""),
        "total_work": total,
        "critical_path": cp,
        "critical_path_work": cpw,
        "ccr": ccr,
        "parallelism": total / cpw if cpw > 0 else float(g.n_tasks),
        "total_data": float(g.edge_data.sum()),
        "cost_matrix": "yes" if g.cost is not None else "no",
    }
