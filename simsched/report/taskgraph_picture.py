"""A weighted task-graph picture for teaching: tasks as circles with their costs, edges with their data,
the critical path highlighted.

Layout: tasks in layers by depth (the longest chain of edges from an entry task), entry tasks on top, each
layer centred; the order inside a layer follows the barycentre of the predecessors (one downward sweep,
Sugiyama et al. 1981) so that edges cross less.  Node label: the task name inside; its cost to its right —
the per-processor costs ``14 | 16 | 9`` when the problem has at most :data:`COST_COLUMNS` processors, else the
mean cost ``w̄ 13``.  Edge label: its data size at the middle of the edge.

The critical path is CPOP's (Topcuoglu, Hariri & Wu, IEEE TPDS 2002): priority = upward rank + downward rank
over mean costs and mean transfers; the path runs from the entry task with the highest priority through the
successors whose priority equals it (:func:`simsched.schedulers.cpop.critical_path`).  On the paper's
example (``scenarios/topcuoglu2002.yaml``) that is n1-n2-n9-n10.  Its tasks are outlined and its edges drawn
thick in :data:`CP_COLOUR`.

:func:`describe_graph` returns what the picture shows (layout, labels, highlighted edges) as data, so tests
check the content; :func:`draw_graph` draws it with matplotlib (imported only there).  O(n + e) to describe;
labels are drawn up to :data:`LABEL_LIMIT` tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simsched.fileio import save_figure
from simsched.schedulers.cpop import critical_path
from simsched.schedulers.heft import upward_rank
from simsched.simulator.problem import Problem
from simsched.workloads.paths import longest_path_to

SUFFIXES = (".png", ".svg")
CP_COLOUR = "#d7301f"
COST_COLUMNS = 4
"""Up to this many processors, a node shows its cost on each; beyond, the mean cost."""
LABEL_LIMIT = 80
"""Costs and data are written on the picture for graphs of at most this many tasks."""


def _fmt(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.4g}"


@dataclass(frozen=True)
class GraphPicture:
    """What the picture shows.

    Attributes:
        names: task names.
        position: (n, 2) x, y of each task (y = -depth).
        node_label: the cost text under each task.
        edges: (src, dst) task indices of each edge.
        edge_label: the data text of each edge.
        critical_path: task indices on the critical path, entry to exit.
        highlighted: indices of the edges on the critical path.
        cost_caption: what the node numbers are (per-processor costs, or the mean cost).
    """

    names: tuple[str, ...]
    position: np.ndarray
    node_label: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]
    edge_label: tuple[str, ...]
    critical_path: tuple[int, ...]
    highlighted: tuple[int, ...]
    cost_caption: str

    def highlighted_names(self) -> list[tuple[str, str]]:
        """The highlighted edges as (source name, destination name), along the path."""
        return [(self.names[self.edges[e][0]], self.names[self.edges[e][1]]) for e in self.highlighted]


def _layers(problem: Problem) -> np.ndarray:
    """Depth of every task: edges on the longest chain from an entry task.  O(n + e)."""
    g = problem.graph
    return longest_path_to(g, np.zeros(g.n_tasks), np.ones(g.n_edges)).astype(np.int64)


def describe_graph(problem: Problem) -> GraphPicture:
    """The layout, labels and critical path of ``problem``'s task graph (see the module docstring).  O(n + e)
    plus a sort per layer.

    >>> from simsched.workloads.taskgraph import TaskGraph
    >>> from simsched.simulator.platform import Platform, Processor
    >>> g = TaskGraph(["a", "b", "c"], [(0, 1), (1, 2)], [1.0, 2.0], work=[1.0, 2.0, 3.0])
    >>> pic = describe_graph(Problem(g, Platform.uniform([Processor("p")])))
    >>> pic.highlighted_names(), pic.node_label
    ([('a', 'b'), ('b', 'c')], ('1', '2', '3'))
    """
    g = problem.graph
    n, m = g.n_tasks, problem.n_processors
    depth = _layers(problem)
    position = np.zeros((n, 2))
    src, dst = g.edge_src, g.edge_dst
    for d in range(int(depth.max(initial=0)) + 1):
        tasks = np.flatnonzero(depth == d)
        if d == 0:
            key = tasks.astype(np.float64)
        else:
            key = np.array([position[g.predecessors(t), 0].mean() if g.predecessors(t).size else 0.0
                            for t in tasks])
        tasks = tasks[np.lexsort((tasks, key))]
        position[tasks, 0] = np.arange(tasks.size) - (tasks.size - 1) / 2
        position[tasks, 1] = -d
    W = problem.W
    if m <= COST_COLUMNS:
        node_label = tuple(" | ".join(_fmt(float(x)) for x in W[i]) for i in range(n))
        caption = "node: cost on " + " | ".join(problem.platform.names)
    else:
        node_label = tuple(f"w̄ {_fmt(float(x))}" for x in problem.mean_cost)
        caption = f"node: mean cost over {m} processors"
    priority = upward_rank(problem) + longest_path_to(g, problem.mean_cost, problem.mean_transfer)
    cp = critical_path(problem, priority)
    pairs = {(int(a), int(b)) for a, b in zip(cp[:-1], cp[1:])}
    edges = tuple((int(a), int(b)) for a, b in zip(src.tolist(), dst.tolist()))
    index = {e: k for k, e in enumerate(edges)}
    highlighted = tuple(index[(int(a), int(b))] for a, b in zip(cp[:-1], cp[1:]) if (int(a), int(b)) in pairs)
    return GraphPicture(names=tuple(g.names), position=position, node_label=node_label, edges=edges,
                        edge_label=tuple(_fmt(float(x)) for x in g.edge_data), critical_path=tuple(int(t) for t in cp),
                        highlighted=highlighted, cost_caption=caption)


def draw_graph(problem: Problem, *, title: str = "") -> Any:
    """The matplotlib figure of :func:`describe_graph` (the caller closes it).  O(n + e) artists."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    pic = describe_graph(problem)
    n = len(pic.names)
    width = max(int(np.ptp(pic.position[:, 0])) + 1, 1)
    depth = int(-pic.position[:, 1].min()) + 1
    labelled = n <= LABEL_LIMIT
    fig, ax = plt.subplots(figsize=(min(4 + 1.6 * width, 18), min(1.5 + 1.35 * depth, 16)), layout="constrained")
    on_cp = set(pic.critical_path)
    hot = set(pic.highlighted)
    radius = 0.22
    for k, (a, b) in enumerate(pic.edges):
        (x0, y0), (x1, y1) = pic.position[a], pic.position[b]
        dx, dy = x1 - x0, y1 - y0
        length = float(np.hypot(dx, dy)) or 1.0
        ux, uy = dx / length, dy / length  # the arrow runs from circle rim to circle rim
        is_cp = k in hot
        ax.add_patch(FancyArrowPatch((x0 + radius * ux, y0 + radius * uy), (x1 - radius * ux, y1 - radius * uy),
                                     arrowstyle="-|>", mutation_scale=14 if is_cp else 11, shrinkA=0, shrinkB=1,
                                     lw=3.0 if is_cp else 1.0, color=CP_COLOUR if is_cp else "#555555",
                                     zorder=2 if is_cp else 1, gid=f"edge-{pic.names[a]}-{pic.names[b]}"))
        if labelled:
            # labels of edges leaving one layer sit at different heights: nearer the source when the edge
            # goes right, nearer the target when it goes left, midway when it goes straight down
            t = 0.5 if abs(dx) < 1e-9 else (0.3 if dx > 0 else 0.68)
            ax.text(x0 + t * dx, y0 + t * dy, pic.edge_label[k], fontsize=8, ha="center",
                    va="center", color=CP_COLOUR if is_cp else "#333333", zorder=4,
                    weight="bold" if is_cp else "normal",
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.9})
    for i, name in enumerate(pic.names):
        x, y = pic.position[i]
        cp_node = i in on_cp
        ax.add_patch(plt.Circle((x, y), radius, facecolor="#fde0dd" if cp_node else "#deebf7",
                                edgecolor=CP_COLOUR if cp_node else "#3182bd", lw=2.5 if cp_node else 1.2, zorder=5))
        ax.text(x, y, name, ha="center", va="center", fontsize=10 if len(name) <= 4 else 7, weight="bold",
                zorder=6)
        if labelled:  # the costs to the right of the node, where no edge passes
            ax.text(x + radius + 0.04, y, pic.node_label[i], ha="left", va="center", fontsize=7.5, zorder=6,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    ax.set_xlim(pic.position[:, 0].min() - 0.5, pic.position[:, 0].max() + 1.0)
    ax.set_ylim(pic.position[:, 1].min() - 0.75, 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    cp_names = "–".join(pic.names[t] for t in pic.critical_path)
    head = f"{title}: " if title else ""
    ax.set_title(f"{head}{n} tasks, {len(pic.edges)} edges; critical path {cp_names} (red)\n"
                 f"{pic.cost_caption}; edge: data", fontsize=10)
    return fig


def write_graph(problem: Problem, path: str | Path, *, title: str = "") -> Path:
    """Draw :func:`draw_graph` to ``path`` (``.png`` or ``.svg``) atomically."""
    fig = draw_graph(problem, title=title)
    import matplotlib.pyplot as plt

    try:
        return save_figure(fig, path)
    finally:
        plt.close(fig)
