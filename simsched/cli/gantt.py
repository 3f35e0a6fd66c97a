"""Gantt charts of a run: one panel per scheduler (its first repetition), processors as rows, tasks
as bars coloured by kind, labelled with their names when there are few.  PNG or SVG, written
atomically.  matplotlib is imported only here, with the non-interactive Agg backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simsched.cli.runner import RunReport
from simsched.fileio import save_figure

SUFFIXES = (".png", ".svg")
LABEL_LIMIT = 60
"""Tasks are labelled with their names when a schedule has at most this many."""


def write_gantt(report: RunReport, path: str | Path) -> Path:
    """Draw the first repetition of every scheduler in ``report`` and write it to ``path`` (format
    from the suffix, ``.png`` or ``.svg``)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    problem = report.problem
    g, procs = problem.graph, problem.platform.names
    labels = [label for label in report.schedulers if label in report.schedules]
    m = len(procs)
    height = max(1.6, 0.28 * m + 0.9)
    fig, axes = plt.subplots(len(labels), 1, figsize=(11, height * len(labels)), squeeze=False, sharex=True)
    cmap = plt.get_cmap("tab10" if len(g.kind_names) <= 10 else "tab20")
    colours = {k: cmap(i % cmap.N) for i, k in enumerate(g.kind_names)}
    try:
        for ax, label in zip(axes[:, 0], labels):
            s = report.schedules[label]
            task, proc, start, finish = s.instances()  # copies (task duplication) drawn hatched
            order = np.argsort(proc, kind="stable")
            per_proc = np.split(order, np.cumsum(np.bincount(proc, minlength=m))[:-1])
            for p, runs in enumerate(per_proc):
                bars = [(float(start[i]), float(finish[i] - start[i])) for i in runs]
                for copy in (False, True):
                    pick = [k for k, i in enumerate(runs) if (i >= g.n_tasks) == copy]
                    if pick:
                        ax.broken_barh([bars[k] for k in pick], (p - 0.4, 0.8), edgecolor="black", linewidth=0.4,
                                       facecolors=[colours[g.kind_of(task[runs[k]])] for k in pick],
                                       hatch="//" if copy else None)
                if g.n_tasks <= LABEL_LIMIT:
                    for i, (x, w) in zip(runs, bars):
                        ax.text(x + w / 2, p, g.names[task[i]], ha="center", va="center", fontsize=7)
            ax.set_yticks(range(m))
            ax.set_yticklabels(procs, fontsize=7 if m > 12 else 9)
            ax.set_ylim(m - 0.5, -0.5)
            ax.set_title(f"{label}: makespan {s.makespan:.6g}", fontsize=10, loc="left")
            ax.grid(axis="x", alpha=0.3)
        axes[-1, 0].set_xlabel("time")
        if len(colours) > 1:
            handles = [Patch(facecolor=c, edgecolor="black", label=k) for k, c in colours.items()]
            fig.legend(handles=handles, loc="upper right", fontsize=8, title="kind")
        fig.suptitle(f"{report.scenario.name} (seed {report.seed})", fontsize=11)
        fig.tight_layout()
        return save_figure(fig, path)
    finally:
        plt.close(fig)
