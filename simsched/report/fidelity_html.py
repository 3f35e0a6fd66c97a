"""The HTML report of ``simsched fidelity --html``: one self-contained page (inline CSS, server-side SVG,
no script, no network).

It shows the held-out errors by installation, workflow system and application (each model side by
side), the recorded against the simulated makespan of every execution (a log-log scatter, one colour
per model, held-out runs filled and training runs hollow, the diagonal and a ±10% band), a table of every
execution, and the Gantt chart of the simulated run of chosen executions (slots as rows grouped by
host, a bar per task coloured by its kind), with the recorded Gantt above it where the run recorded
task start times (each host's tasks packed into as few rows as overlap needs, since a trace names the
machine, not the core).  A run without recorded starts says so in place of its recorded chart.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from simsched.fidelity.table import FidelityTable
from simsched.fileio import atomic_write_text
from simsched.report.fidelity import percent

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")
_MODEL_COLOURS = ("#7f7f7f", "#d62728", "#1f77b4", "#2ca02c")
_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:8px 0 20px;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}tr.sec td{border-top:2px solid #888}
.note{color:#555;font-size:13px}svg text{font-size:11px;font-family:system-ui,sans-serif}
h3{margin-bottom:2px}"""


def _e(x: object) -> str:
    return html.escape(str(x))


def _groups_table(table: FidelityTable) -> str:
    head = "".join(f"<th>{_e(m)} median</th><th>{_e(m)} mean</th><th>{_e(m)} max</th><th>{_e(m)} bias</th>"
                   for m in table.models)
    rows, kind = [], None
    for g in table.groups:
        cls = ' class="sec"' if kind is not None and g.kind != kind else ""
        kind = g.kind
        cells = "".join(f'<td class="n">{percent(s.median)}</td><td class="n">{percent(s.mean)}</td>'
                        f'<td class="n">{percent(s.max)}</td><td class="n">{percent(s.bias, True)}</td>'
                        for s in g.stats)
        label = "all held-out runs" if g.kind == "all" else f"{g.kind}: {g.key}"
        rows.append(f"<tr{cls}><td>{_e(label)}</td><td class=\"n\">{g.runs}</td>{cells}</tr>")
    return f"<table><tr><th>group</th><th>runs</th>{head}</tr>{''.join(rows)}</table>"


def _spread_table(table: FidelityTable) -> str:
    """The run-to-run spread (:mod:`simsched.fidelity.repeats`), or a note when no run has a repeat."""
    if not table.spread:
        return "<p class=note>No held-out run has a repeat (same workflow on the same installation).</p>"
    m = _e(table.models[-1])
    rows = "".join(f'<tr><td>{_e(g.installation)}</td><td class="n">{g.runs}</td>'
                   f'<td class="n">{percent(g.repeats_median)}</td><td class="n">{percent(g.repeats_mean)}</td>'
                   f'<td class="n">{percent(g.model_median)}</td><td class="n">{percent(g.model_mean)}</td></tr>'
                   for g in table.spread)
    return ("<p>Each held-out run that has repeats, predicted by its own runtimes plus the median overhead its "
            "repeats showed (an oracle: it sees other runs' recorded makespans).</p>"
            f"<table><tr><th>installation</th><th>runs</th><th>repeats median</th><th>repeats mean</th>"
            f"<th>{m} median</th><th>{m} mean</th></tr>{rows}</table>")


def _executions_table(table: FidelityTable) -> str:
    head = "".join(f"<th>{_e(m)} s</th><th>{_e(m)} error</th>" for m in table.models)
    rows = []
    for r in table.rows:
        cells = "".join(f'<td class="n">{"-" if not math.isfinite(r.simulated[k]) else f"{r.simulated[k]:.0f}"}</td>'
                        f'<td class="n">{percent(r.error(k), True)}</td>' for k in range(len(table.models)))
        rec = "-" if r.recorded is None else f"{r.recorded:.0f}"
        rows.append(f"<tr><td>{_e(r.name)}</td><td>{_e(r.installation)}</td><td>{_e(r.application)}</td>"
                    f"<td>{r.part}</td><td class=\"n\">{r.tasks}</td><td class=\"n\">{rec}</td>{cells}</tr>")
    return (f"<table><tr><th>execution</th><th>installation</th><th>application</th><th>part</th><th>tasks</th>"
            f"<th>recorded s</th>{head}</tr>{''.join(rows)}</table>")


def scatter_svg(table: FidelityTable, size: int = 460) -> str:
    """Recorded (x) against simulated (y) makespan, log-log: one point per execution and model."""
    pts = [(r.recorded, r.simulated[k], k, r.part == "held-out", r.name) for r in table.rows if r.recorded
           for k in range(len(table.models)) if math.isfinite(r.simulated[k]) and r.simulated[k] > 0]
    if not pts:
        return "<p class=\"note\">No execution has a recorded and a simulated makespan.</p>"
    values = np.array([v for p in pts for v in p[:2]])
    lo, hi = math.floor(math.log10(values.min())), math.ceil(math.log10(values.max()))
    hi = max(hi, lo + 1)
    pad = 58
    span = size - 2 * pad

    def at(v: float) -> float:
        return pad + (math.log10(v) - lo) / (hi - lo) * span

    out = [f'<svg width="{size}" height="{size}" role="img" aria-label="recorded against simulated makespan">']
    a, b = 10.0 ** lo, 10.0 ** hi
    band = [(a, a * 1.1), (b, b * 1.1), (b, b * 0.9), (a, a * 0.9)]
    poly = " ".join(f"{at(x):.1f},{size - at(min(max(y, a), b)):.1f}" for x, y in band)
    out.append(f'<polygon points="{poly}" fill="#e8f3e8"/>')
    out.append(f'<line x1="{at(10 ** lo):.1f}" y1="{size - at(10 ** lo):.1f}" x2="{at(10 ** hi):.1f}" '
               f'y2="{size - at(10 ** hi):.1f}" stroke="#999"/>')
    for d in range(lo, hi + 1):
        p = at(10 ** d)
        out.append(f'<line x1="{p:.1f}" y1="{size - pad}" x2="{p:.1f}" y2="{size - pad + 4}" stroke="#555"/>'
                   f'<text x="{p:.1f}" y="{size - pad + 16}" text-anchor="middle">{_power(d)}</text>'
                   f'<line x1="{pad - 4}" y1="{size - p:.1f}" x2="{pad}" y2="{size - p:.1f}" stroke="#555"/>'
                   f'<text x="{pad - 6}" y="{size - p + 4:.1f}" text-anchor="end">{_power(d)}</text>')
    out.append(f'<rect x="{pad}" y="{pad}" width="{span}" height="{span}" fill="none" stroke="#555"/>')
    out.append(f'<text x="{size / 2}" y="{size - 14}" text-anchor="middle">recorded makespan (s)</text>'
               f'<text x="16" y="{size / 2}" text-anchor="middle" transform="rotate(-90 16 {size / 2})">'
               f'simulated makespan (s)</text>')
    for x, y, k, held, name in pts:
        colour = _MODEL_COLOURS[k % len(_MODEL_COLOURS)]
        fill = colour if held else "none"
        out.append(f'<circle cx="{at(x):.1f}" cy="{size - at(y):.1f}" r="3" fill="{fill}" stroke="{colour}">'
                   f'<title>{_e(name)} ({_e(table.models[k])}): recorded {x:.0f} s, simulated {y:.0f} s'
                   f'</title></circle>')
    legend = "".join(f'<rect x="{pad + 8}" y="{pad + 8 + 16 * k}" width="10" height="10" fill="{_MODEL_COLOURS[k]}"/>'
                     f'<text x="{pad + 22}" y="{pad + 17 + 16 * k}">{_e(m)}</text>' for k, m in enumerate(table.models))
    out.append(legend + f'<text x="{pad + 8}" y="{pad + 17 + 16 * len(table.models)}">filled: held out; '
               f'hollow: trained on; band: ±10%</text></svg>')
    return "".join(out)


LEGEND_KINDS = 12
"""Most kinds a Gantt chart's legend names; past it, kinds are grouped by their first word."""


def colour_kinds(kinds: list[str]) -> list[str]:
    """``kinds`` as the chart colours them: as they are when there are at most :data:`LEGEND_KINDS`,
    else by their first ``_``-separated word (a Pegasus trace gives every task its own name as its kind,
    ``fast2bfq_fast2bfq_080603_..._sequence_1``: the program is the first word).  O(n)."""
    if len(set(kinds)) <= LEGEND_KINDS:
        return kinds
    return [k.split("_")[0] or k for k in kinds]


def _power(d: int) -> str:
    """``10`` with ``d`` as a superscript (``10³``, ``10⁻¹``)."""
    return "10" + str(d).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def lanes(hosts: Sequence[str], start: np.ndarray, end: np.ndarray) -> list[int]:
    """A row per task within its host: the lowest row free at its start (tasks in start order), so a
    host's tasks take as many rows as the most that overlap.  O(n log n + n x rows)."""
    row = [0] * len(hosts)
    busy: dict[str, list[float]] = {}
    for i in sorted(range(len(hosts)), key=lambda i: (start[i], i)):
        ends = busy.setdefault(hosts[i], [])
        k = next((j for j, e in enumerate(ends) if e <= start[i]), len(ends))
        if k == len(ends):
            ends.append(0.0)
        ends[k] = float(end[i])
        row[i] = k
    return row


def gantt_svg(hosts: Sequence[str], rows: Sequence[int], start: np.ndarray, end: np.ndarray,
              kinds: Sequence[str], horizon: float, title: str, recorded: float | None = None,
              width: int = 1100) -> str:
    """A Gantt chart: one band per host (rows ``rows`` inside it), a bar per task coloured by kind, the
    time axis 0 to ``horizon`` seconds, the recorded makespan as a dashed line when given."""
    order = list(dict.fromkeys(hosts))
    depth = {h: 0 for h in order}
    for h, r in zip(hosts, rows):
        depth[h] = max(depth[h], r + 1)
    total = sum(depth.values())
    row_h = max(1.5, min(12.0, 520.0 / max(total, 1)))
    left, top = 190, 22
    span = width - left - 20
    height = top + total * row_h + 30 + 16 * ((min(len(set(kinds)), LEGEND_KINDS) + 5) // 6)
    colour = {k: _PALETTE[i % len(_PALETTE)] for i, k in enumerate(sorted(set(kinds)))}
    base, y = {}, top
    out = [f'<svg width="{width}" height="{height:.0f}" role="img" aria-label="{_e(title)}">',
           f'<text x="{left}" y="14">{_e(title)}</text>']
    for h in order:
        base[h] = y
        out.append(f'<rect x="{left}" y="{y:.1f}" width="{span}" height="{depth[h] * row_h:.1f}" fill="#fafafa" '
                   f'stroke="#ddd"/><text x="{left - 6}" y="{y + min(depth[h] * row_h, 14) - 3:.1f}" '
                   f'text-anchor="end">{_e(h)}</text>')
        y += depth[h] * row_h
    scale = span / horizon if horizon > 0 else 0.0
    for h, r, s, e, k in zip(hosts, rows, start.tolist(), end.tolist(), kinds):
        out.append(f'<rect x="{left + s * scale:.1f}" y="{base[h] + r * row_h:.1f}" '
                   f'width="{max((e - s) * scale, 0.5):.1f}" height="{max(row_h - 0.4, 1):.1f}" fill="{colour[k]}">'
                   f'<title>{_e(k)}: {s:.1f}-{e:.1f} s</title></rect>')
    if recorded:
        x = left + recorded * scale
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{y + 2:.1f}" stroke="#d62728" '
                   f'stroke-dasharray="4 3"/><text x="{x - 4:.1f}" y="{top - 6}" text-anchor="end" '
                   f'fill="#d62728">recorded makespan {recorded:.0f} s</text>')
    step = 10 ** math.floor(math.log10(horizon)) if horizon > 0 else 1
    tick = step if horizon / step >= 3 else step / 2
    ticks = np.arange(0, horizon * (1 + 1e-9) + (tick if horizon <= 0 else 0), tick)  # none past the axis's end
    for t in ticks.tolist():
        out.append(f'<text x="{left + t * scale:.1f}" y="{y + 14:.1f}" text-anchor="middle">{t:g}</text>')
    out.append(f'<text x="{left + span:.1f}" y="{y + 28:.1f}" text-anchor="end">time (s)</text>')
    for i, (k, c) in enumerate(list(colour.items())[:LEGEND_KINDS]):
        x0, y0 = left + (i % 6) * (span / 6), y + 40 + 16 * (i // 6)
        out.append(f'<rect x="{x0:.0f}" y="{y0 - 9:.0f}" width="10" height="10" fill="{c}"/>'
                   f'<text x="{x0 + 14:.0f}" y="{y0:.0f}">{_e(k[:28])}</text>')
    out.append("</svg>")
    return "".join(out)


def _execution_section(table: FidelityTable, name: str) -> str:
    sim = table.simulations[name]
    row = next(r for r in table.rows if r.name == name)
    problem, schedule = sim.problem, sim.schedule
    procs = problem.platform.processors
    kinds = colour_kinds([problem.graph.kind_names[k] for k in problem.graph.kind.tolist()])
    hosts = [procs[p].host for p in schedule.processor.tolist()]
    used = sorted({int(p) for p in schedule.processor.tolist()})
    compact = {}
    for p in used:
        slots = compact.setdefault(procs[p].host, {})
        slots[p] = len(slots)
    rows = [compact[procs[p].host][p] for p in schedule.processor.tolist()]
    horizon = max(sim.makespan, row.recorded or 0.0)
    model = table.models[-1]
    recorded = "-" if row.recorded is None else f"{row.recorded:.0f} s"
    parts = [f"<h3>{_e(name)}</h3><p class=\"note\">{_e(row.installation)}, {row.part}; recorded makespan "
             f"{recorded}, simulated ({_e(model)}) {sim.makespan:.0f} s "
             f"({percent(row.error(len(table.models) - 1), True)})</p>"]
    run = table.runs[name]
    starts = run.start
    if not np.isnan(starts).all():
        idx = np.flatnonzero(~np.isnan(starts))
        rec_hosts = [run.machines[m].name if m >= 0 else "unrecorded" for m in run.machine[idx].tolist()]
        rec_start, rec_end = starts[idx], starts[idx] + run.runtime[idx]
        parts.append(gantt_svg(rec_hosts, lanes(rec_hosts, rec_start, rec_end), rec_start, rec_end,
                               [kinds[i] for i in idx.tolist()], horizon, "recorded", row.recorded))
    else:
        parts.append("<p class=\"note\">recorded Gantt: this run recorded no task start times (no WfInstances run "
                     "does), so only its makespan and placement can be compared.</p>")
    parts.append(gantt_svg(hosts, rows, schedule.start, schedule.finish, kinds, horizon, f"simulated ({model})",
                           row.recorded))
    return "".join(parts)


def fidelity_html(table: FidelityTable, gantt: Sequence[str]) -> str:
    """The page (see the module docstring); ``gantt``: the executions whose Gantt charts it draws (each
    must be in ``table.simulations``)."""
    starts = sum(any(s is not None for s in r.start_error) for r in table.rows)
    held = sum(r.part == "held-out" for r in table.rows)
    summary = (f"{len(table.rows)} executions ({held} held out), {len(table.refused)} refused; models: "
               f"{', '.join(table.models)}; split seed {table.seed}; simulated in {table.cpu_s:.1f} CPU s"
               + (f"; profile {table.profile}" if table.profile else "") + ". "
               + (f"{starts} executions record task start times." if starts else
                  "No execution records task start times: there is no start-time error to report and no "
                  "recorded Gantt to draw."))
    refused = "".join(f"<li>{_e(n)}: {_e(r)}</li>" for n, r in table.refused)
    sections = "".join(_execution_section(table, name) for name in gantt)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>simsched fidelity</title>"
            f"<style>{_CSS}</style></head><body><h1>How far is the simulator from reality?</h1>"
            f"<p>{_e(summary)}</p>{f'<ul>{refused}</ul>' if refused else ''}"
            f"<h2>Relative makespan error on held-out runs</h2>{_groups_table(table)}"
            f"<h2>Run-to-run spread of repeated workflows</h2>{_spread_table(table)}"
            f"<h2>Recorded against simulated makespan</h2>{scatter_svg(table)}"
            f"<h2>Gantt charts</h2>{sections or '<p class=note>none chosen</p>'}"
            f"<h2>Every execution</h2>{_executions_table(table)}</body></html>")


def write_fidelity_html(table: FidelityTable, path: str | Path, gantt: Sequence[str]) -> Path:
    """Write :func:`fidelity_html` atomically."""
    return atomic_write_text(path, fidelity_html(table, gantt))
