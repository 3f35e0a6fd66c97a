"""Cluster-log runs in pictures and tables: the table ``simsched run`` prints (one row per batch
policy, narrow enough for 100 columns) and the HTML report of a cluster log's results document
(``simsched report results.json``): its metrics table and two plots, **utilisation over time** and
**queue length over time**, one line per policy, drawn from the engine's ``timeline`` (the machine's
state after every decision point) and embedded as PNG data URIs (no file beside the page, no
network).  matplotlib is imported only to draw.

The series are step functions (a value holds until the next decision point); a run of thousands of
decision points is drawn as its time-weighted mean over :data:`BINS` equal bins, the exact mean of
the step function over each bin (numpy, O(points + bins) per policy), so lines of different
policies stay readable on one axis.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich.markup import escape
from rich.table import Table

from simsched.report.fit import fit_width, print_table
from simsched.report.plots import plain_numbers, png_base64
from simsched.report.terminal import wrap

BINS = 120
"""Bins of the plotted time-weighted means."""


USEFUL_NOTE = ("util.: useful work, the completed jobs' work over the processors' time from first submit to "
               "last end; the timeline plot shows busy processors, failed runs included")
"""One name per meaning: the table's ``util.`` is useful work (``utilisation`` in the results), not the plot's
busy processors, which count runs a failure later killed."""


def print_batch_report(report: Any, console: Any) -> None:
    """Print ``report`` (a :class:`~simsched.run.batch.BatchReport`): wait (mean, p95), bounded
    slowdown (mean, p95), utilisation and lost capacity per policy; the best mean bounded slowdown in
    green; with failures, one line per policy: failures, requeued and lost jobs, wasted work and
    down capacity."""
    what = report.scenario.workload.describe()
    table = Table(title=escape(f"{report.scenario.name}: {what} on {report.processors} processors"),
                  caption=escape("; ".join([*report.notes, "bsld: bounded slowdown, tau = 10 s", USEFUL_NOTE])))
    table.add_column("policy", style="bold")
    for name in ("wait mean", "wait p95", "bsld mean", "bsld p95", "util.", "lost cap."):
        table.add_column(name, justify="right")
    best = min((r["bsld_mean"] for r in report.rows), default=float("nan"))
    for r in report.rows:
        bsld = f"{r['bsld_mean']:.4g}"
        table.add_row(escape(r["scheduler"]), f"{r['wait_mean']:.5g}", f"{r['wait_p95']:.5g}",
                      f"[green]{bsld}[/green]" if r["bsld_mean"] <= best else bsld, f"{r['bsld_p95']:.4g}",
                      f"{100 * r['utilisation']:.1f}%", f"{100 * r['lost_capacity']:.1f}%")
    print_table(console, table)
    for r in report.rows:  # with failures: what they cost each policy
        if "lost_jobs" in r:
            console.print(escape(wrap(f"  {r['scheduler']}: {r['failures']} processor failures, {r['requeues']} jobs "
                                      f"requeued, {r['lost_jobs']} lost; work wasted {100 * r['wasted_work']:.1f}%, "
                                      f"capacity down {100 * r['down_capacity']:.1f}%", fit_width(console), "    ")),
                          highlight=False, soft_wrap=True)


def print_windows_report(report: Any, console: Any) -> None:
    """Print a windowed run (a :class:`~simsched.run.log_windows.WindowsReport`): per policy the mean
    bounded slowdown over the windows with its 95% interval, its per-window ratio to the best policy
    (geometric mean, paired 95% interval), and the windows' first jobs."""
    w = report.scenario.workload.options["batch"].windows
    table = Table(title=escape(f"{report.scenario.name}: {len(report.days)} windows of {w.jobs:,} jobs on "
                               f"{report.processors} processors, each from an empty machine"),
                  caption=escape("; ".join([*report.notes, "bsld: bounded slowdown, tau = 10 s, mean over each "
                                            "window's jobs, then over windows (95% t interval); / best: "
                                            "geometric mean of the per-window ratio to the lowest mean "
                                            "(paired 95% interval)"])))
    table.add_column("policy", style="bold")
    rows = report.summary()
    for name in ("windows", "bsld mean", "95% interval", f"/ {rows[0]['vs_best'] if rows else 'best'}"):
        table.add_column(escape(name), justify="right")
    best = min((r["mean"] for r in rows), default=float("nan"))
    for r in rows:
        mean = f"{r['mean']:.2f}"
        shown = f"[green]{mean}[/green]" if r["mean"] <= best else mean
        table.add_row(escape(r["scheduler"]), str(r["windows"]), shown,
                      f"[{r['low']:.2f}, {r['high']:.2f}]",
                      f"{r['ratio']:.3f} [{r['ratio_low']:.3f}, {r['ratio_high']:.3f}]")
    console.print(table)
    console.print(escape(f"windows' first jobs (0-based): {', '.join(map(str, report.starts))}; days "
                         f"{report.days[0]} ... {report.days[-1]}"), highlight=False)


# --------------------------------------------------------------------------- series and plots
def binned_mean(t: np.ndarray, y: np.ndarray, end: float, bins: int = BINS) -> tuple[np.ndarray, np.ndarray]:
    """``(bin centres, mean of y over each bin)`` of the step function ``y[i]`` on ``[t[i], t[i+1])``
    (the last step up to ``end``), over ``bins`` equal bins of ``[t[0], end]``: exact time-weighted
    means, from the integral of the steps at the bin edges.  ``(t, y)`` themselves when there are
    fewer steps than bins or the span is zero.  O(len(t) + bins)."""
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if t.size == 0:
        return t, y
    if t.size <= bins or end <= t[0]:
        return t, y
    knots = np.append(t, max(end, t[-1]))
    area = np.concatenate([[0.0], np.cumsum(y * np.diff(knots))])  # integral up to each knot
    edges = np.linspace(t[0], knots[-1], bins + 1)
    k = np.clip(np.searchsorted(knots, edges, side="right") - 1, 0, y.size - 1)
    at = area[k] + y[k] * (edges - knots[k])  # integral up to each edge (inside step k)
    return (edges[:-1] + edges[1:]) / 2, np.diff(at) / np.diff(edges)


def _time_unit(span: float) -> tuple[float, str]:
    if span >= 3 * 86400:
        return 86400.0, "days"
    if span >= 3 * 3600:
        return 3600.0, "hours"
    return 1.0, "seconds"


def draw_batch_plots(rows: Sequence[Mapping[str, Any]], processors: int, waiting: str = "jobs") -> Any:
    """The matplotlib figure of a cluster log's runs: utilisation over time (processors in use over
    ``processors``, %; with failures the processors up as a dotted line of the same colour) above
    queue length over time (``waiting``: jobs, or a DAG stream's tasks), one line per row's policy,
    time-weighted means per bin (:func:`binned_mean`).  Rows without a ``timeline`` are skipped."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    runs = [r for r in rows if isinstance(r.get("timeline"), Mapping) and r["timeline"].get("t")]
    first = min((float(r["timeline"]["t"][0]) for r in runs), default=0.0)
    last = max((max(float(j["end"]) for j in r["jobs"] if j.get("end") is not None) for r in runs if r["jobs"]),
               default=1.0)
    scale, unit = _time_unit(last - first)
    fig, (ax_u, ax_q) = plt.subplots(2, 1, figsize=(10, 6.4), sharex=True)
    colours = plt.get_cmap("tab10").colors
    for i, r in enumerate(runs):
        tl, colour = r["timeline"], colours[i % len(colours)]
        end = max([float(j["end"]) for j in r["jobs"] if j.get("end") is not None] or [float(tl["t"][-1])])
        t = np.asarray(tl["t"], dtype=np.float64)
        x, u = binned_mean(t, 100.0 * np.asarray(tl["busy"], dtype=np.float64) / processors, end)
        ax_u.plot((x - first) / scale, u, color=colour, lw=1.0, alpha=0.85, label=str(r["scheduler"]))
        if tl.get("up") is not None:
            x, up = binned_mean(t, 100.0 * np.asarray(tl["up"], dtype=np.float64) / processors, end)
            ax_u.plot((x - first) / scale, up, color=colour, lw=0.9, ls=":")
        x, q = binned_mean(t, np.asarray(tl["queued"], dtype=np.float64), end)
        ax_q.plot((x - first) / scale, q, color=colour, lw=1.1, label=str(r["scheduler"]))
    ax_u.set_ylabel(f"busy processors (% of {processors})")
    ax_u.set_ylim(0, 105)
    ax_q.set_ylabel(f"queue length ({waiting} waiting)")
    ax_q.set_xlabel(f"time since the first submit ({unit})")
    ax_q.set_ylim(bottom=0)
    for ax in (ax_u, ax_q):
        ax.grid(alpha=0.3)
    dotted = " (dotted: processors up)" if any(r["timeline"].get("up") is not None for r in runs) else ""
    ax_u.set_title(f"Busy processors over time, failed runs included{dotted}", fontsize=10)
    ax_q.set_title("Queue length over time", fontsize=10)
    if runs:  # one legend for both panels, above them: outside the data
        handles, labels = ax_u.get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", ncol=min(len(runs), 6), fontsize=9, frameon=False,
                   bbox_to_anchor=(0.5, 1.0))
        fig.tight_layout(rect=(0, 0, 1, 0.95))
    else:
        fig.tight_layout()
    return fig


def write_batch_plots(rows: Sequence[Mapping[str, Any]], processors: int, path: Any, dpi: int = 100) -> Any:
    """:func:`draw_batch_plots` written to ``path`` (``.png`` or ``.svg``, ``dpi`` dots per inch) atomically."""
    import matplotlib.pyplot as plt

    from simsched.fileio import save_figure

    fig = draw_batch_plots(rows, processors)
    try:
        return save_figure(plain_numbers(fig), path, dpi=dpi)
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------- the HTML page
_HTML_COLUMNS = (("wait_mean", "wait mean (s)"), ("wait_p95", "wait p95 (s)"), ("bsld_mean", "bsld mean"),
                 ("bsld_p95", "bsld p95"), ("utilisation", "useful work"), ("lost_capacity", "lost capacity"),
                 ("killed_jobs", "killed"), ("failures", "failures"), ("requeues", "requeued"),
                 ("lost_jobs", "lost jobs"), ("wasted_work", "wasted work"), ("down_capacity", "down"))
_PERCENT = {"utilisation", "lost_capacity", "wasted_work", "down_capacity"}


def batch_report_html(doc: Mapping[str, Any], css: str = "") -> str:
    """The report page of a cluster log's results document (``"workload": "batch"``): what ran, the
    metrics per policy (the best mean bounded slowdown in bold) and the two plots of
    :func:`draw_batch_plots` as a PNG data URI.  O(jobs + timeline points) plus the rendering."""
    rows = list(doc["results"])
    processors = int(doc.get("processors") or max((j["procs"] for r in rows for j in r["jobs"]), default=1))
    trace = doc.get("trace") or {}
    name = str(doc.get("scenario", "simsched run"))
    unit = "tasks" if trace.get("stream") else "jobs"  # a DAG stream's rows are its tasks
    what = (f"{trace.get('jobs', '?')} {unit} of {trace.get('file') or trace.get('stream') or 'a cluster log'} on "
            f"{processors} processors")
    notes = "; ".join(str(n) for n in trace.get("notes") or ())
    cols = [(k, h) for k, h in _HTML_COLUMNS if any(isinstance(r.get(k), (int, float)) for r in rows)]
    best = min((float(r["bsld_mean"]) for r in rows if isinstance(r.get("bsld_mean"), (int, float))), default=None)
    head = "<th>policy</th>" + "".join(f"<th>{html.escape(h)}</th>" for _, h in cols)
    body = []
    for r in rows:
        cells = [f"<td>{html.escape(str(r['scheduler']))}</td>"]
        for k, _ in cols:
            v = r.get(k)
            text = "-" if not isinstance(v, (int, float)) else (f"{100 * v:.1f}%" if k in _PERCENT else f"{v:.5g}")
            bold = k == "bsld_mean" and best is not None and isinstance(v, (int, float)) and v <= best
            cells.append(f"<td class=\"best\">{text}</td>" if bold else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    plots = ""
    if any(isinstance(r.get("timeline"), Mapping) for r in rows):
        png = png_base64(draw_batch_plots(rows, processors, unit))
        plots = (f"<h2>Busy processors and queue length over time</h2><figure><img id=\"batch-timeline\" "
                 f"alt=\"busy processors and queue length over time per policy\" "
                 f"src=\"data:image/png;base64,{png}\"><figcaption>Time-weighted means over {BINS} equal bins of "
                 f"the engine's state after every decision point: processors in use (failed runs included; the "
                 f"table's useful work counts completed jobs only) over the machine's {processors} (top) and "
                 f"{unit} waiting (bottom), one line per policy.</figcaption></figure>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{html.escape(name)}: "
            f"simsched report</title><style>{css}figure img{{max-width:100%}}</style></head><body>"
            f"<h1>{html.escape(name)}</h1><p class=\"meta\">{html.escape(what)}; simsched "
            f"{html.escape(str(doc.get('simsched_version', '?')))}</p>"
            + (f"<p class=\"meta\">{html.escape(notes)}</p>" if notes else "")
            + f"<h2>Metrics</h2><p class=\"meta\">bsld: bounded slowdown, tau = 10 s; lost capacity: processors idle "
            f"(and up) while a job waits.</p><table id=\"batch-metrics\"><thead><tr>{head}</tr></thead><tbody>"
            f"{''.join(body)}</tbody></table>{plots}</body></html>\n")
