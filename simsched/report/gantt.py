"""Gantt charts of a run: one panel per scheduler (its first repetition), processors as rows, tasks
as bars coloured by kind, labelled with their names where the bar is wide enough.  With
``transfers=True`` every data transfer between two processors is drawn as an arrow from the
producer's processor, when it finishes, to the consumer's processor, when the data has arrived
(the engine's model: a transfer starts when its producer finishes and takes
``problem.transfer_time``; an online policy may start it later, at assignment, and the arrow then
shows the earliest arrival).  The legend (kinds, transfers) sits above the panels, outside every
axes.  PNG or SVG, written atomically.  matplotlib is imported only here (Agg backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simsched.fileio import save_figure
from simsched.run.runner import RunReport
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule

SUFFIXES = (".png", ".svg")
LABEL_LIMIT = 60
"""Tasks are labelled with their names when a schedule has at most this many."""
TRANSFER_COLOUR = "#b2182b"
EDGE_LABEL_LIMIT = 20
"""Transfers are labelled ``producer→consumer`` when a panel has at most this many."""
_WIDTH_IN = 11.0
_CHAR_IN = 0.075
"""Approximate width of one label character at fontsize 7, in inches (to decide what fits a bar)."""


def transfer_spans(schedule: Schedule, problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The data transfers of ``schedule`` that cross processors and take time, as three arrays:
    edge index, departure time (the producer's finish) and arrival time.  Source and destination
    processors are ``schedule.processor`` of the edge's ends.  O(e)."""
    g = problem.graph
    delay = problem.edge_delays(np.asarray(schedule.processor))
    moved = np.flatnonzero((schedule.processor[g.edge_src] != schedule.processor[g.edge_dst]) & (delay > 0))
    depart = np.asarray(schedule.finish, dtype=np.float64)[g.edge_src[moved]]
    return moved, depart, depart + delay[moved]


def _draw_transfers(ax: Any, schedule: Schedule, problem: Problem) -> int:
    """Arrows for the transfers of ``schedule`` on ``ax``; returns how many were drawn."""
    from matplotlib.collections import LineCollection

    g = problem.graph
    edges, depart, arrive = transfer_spans(schedule, problem)
    src, dst = schedule.processor[g.edge_src[edges]], schedule.processor[g.edge_dst[edges]]
    segments = np.stack([np.stack([depart, src], axis=1), np.stack([arrive, dst], axis=1)], axis=1)
    ax.add_collection(LineCollection(segments, colors=TRANSFER_COLOUR, linewidths=1.1, alpha=0.8, zorder=3,
                                     gid="transfers"))
    ax.scatter(depart, src, s=9, color=TRANSFER_COLOUR, zorder=4)
    ax.scatter(arrive, dst, s=28, color=TRANSFER_COLOUR, marker=">", zorder=4)
    if edges.size <= EDGE_LABEL_LIMIT:
        last = problem.n_processors - 1
        for e, x, p in zip(edges, arrive, dst):  # below the arrowhead, above it on the last row
            ax.annotate(f"{g.names[g.edge_src[e]]}→{g.names[g.edge_dst[e]]}", (x, p),
                        xytext=(-4, 7 if p == last else -7), va="bottom" if p == last else "top",
                        textcoords="offset points", ha="right", fontsize=7, color=TRANSFER_COLOUR,
                        zorder=5, bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85})
    return int(edges.size)


def write_gantt(report: RunReport, path: str | Path, *, transfers: bool = False) -> Path:
    """Draw :func:`draw_gantt` and write it to ``path`` atomically (format from the suffix, ``.png``
    or ``.svg``)."""
    fig = draw_gantt(report, transfers=transfers)
    import matplotlib.pyplot as plt

    from simsched.report.plots import plain_numbers

    try:
        return save_figure(plain_numbers(fig), path)
    finally:
        plt.close(fig)


def draw_gantt(report: RunReport, *, transfers: bool = False) -> Any:
    """The matplotlib figure of the first repetition of every scheduler in ``report``; with
    ``transfers``, the data transfers as arrows.  The caller closes it.  O(tasks + edges) artists
    per panel."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    problem = report.problem
    g, procs = problem.graph, problem.platform.names
    labels = [label for label in report.schedulers if label in report.schedules]
    m = len(procs)
    height = max(1.6, 0.28 * m + 0.9)
    fig, axes = plt.subplots(len(labels), 1, figsize=(_WIDTH_IN, height * len(labels) + 0.8), squeeze=False,
                             sharex=True, layout="constrained")
    cmap = plt.get_cmap("tab10" if len(g.kind_names) <= 10 else "tab20")
    colours = {k: cmap(i % cmap.N) for i, k in enumerate(g.kind_names)}
    end = max(float(report.schedules[label].finish.max(initial=0.0)) for label in labels) if labels else 1.0
    char = _CHAR_IN * max(end, 1e-12) / (_WIDTH_IN * 0.85)  # one label character in time units
    drawn = 0
    for ax, label in zip(axes[:, 0], labels):
        s = report.schedules[label]
        task, proc, start, finish = s.busy_intervals()  # copies (task duplication) drawn hatched; a gang on
        copied = np.arange(task.size) >= g.n_tasks if s.copies is not None else np.zeros(task.size, dtype=bool)
        order = np.argsort(proc, kind="stable")  # every processor it holds
        per_proc = np.split(order, np.cumsum(np.bincount(proc, minlength=m))[:-1])
        for p, runs in enumerate(per_proc):
            bars = [(float(start[i]), float(finish[i] - start[i])) for i in runs]
            for copy in (False, True):
                pick = [k for k, i in enumerate(runs) if copied[i] == copy]
                if pick:
                    ax.broken_barh([bars[k] for k in pick], (p - 0.4, 0.8), edgecolor="black", linewidth=0.4,
                                   facecolors=[colours[g.kind_of(task[runs[k]])] for k in pick],
                                   hatch="//" if copy else None, gid="tasks")
            if g.n_tasks <= LABEL_LIMIT:
                for i, (x, w) in zip(runs, bars):
                    name = g.names[task[i]]
                    if w >= char * (len(name) + 1):
                        ax.text(x + w / 2, p, name, ha="center", va="center", fontsize=7)
        if transfers:
            drawn += _draw_transfers(ax, s, problem)
        ax.set_yticks(range(m))
        ax.set_yticklabels(procs, fontsize=7 if m > 12 else 9)
        ax.set_ylim(m - 0.5, -0.5)
        ax.set_title(f"{label}: makespan {s.makespan:.6g}", fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("time")
    handles: list[Any] = []
    if len(colours) > 1:
        handles += [Patch(facecolor=c, edgecolor="black", label=k) for k, c in colours.items()]
    if transfers:
        handles.append(Line2D([], [], color=TRANSFER_COLOUR, marker=">", markersize=6,
                              label="data transfer (producer done → data arrived)"))
    title = f"{report.scenario.name} (seed {report.seed})"
    if transfers:
        title += f": {drawn} transfers between processors"
    if handles:  # the title heads the legend, so neither can overlap the other or a panel
        fig.legend(handles=handles, loc="outside upper center", ncol=min(len(handles), 6), fontsize=8,
                   frameon=False, title=title, title_fontsize=11)
    else:
        fig.suptitle(title, fontsize=11)
    return fig
