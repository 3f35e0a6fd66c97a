"""The power and energy section of a run's HTML report (:mod:`simsched.report.html` places it).

From a results document whose rows carry ``energy_j`` (a scenario with ``platform.power``):

* a table per scheduler — energy (kWh), peak power (W), carbon (g) and money where the run has them,
  means over its rows (repetitions);
* for the first run of each scheduler, its power over time per processor type: one step line per
  type from the row's ``power`` profile (:func:`simsched.simulator.power.power_profile`: the mean
  watts over equal slices of the run, exact per slice), drawn as server-side SVG; each line carries
  ``data-energy-j``, the integral of what it draws (joules), so a reader (and the tests) can check
  the plot against the row's ``energy_j`` (which adds P-state switch, power-up/-down and link
  energy, not a power level);
* energy per job: for job streams a bar per job (the busy energy of its tasks' attempts, the job
  record's ``energy_j``) in arrival order, with the mean and the largest; for a single task graph
  the whole run is the one job and the table says it.

Everything is computed from the document alone: O(rows + types x slices + jobs drawn).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")
"""matplotlib's tab10, as the rest of the report."""

CSS = """
.power svg{width:100%;height:auto;border:1px solid #e5e5e5;background:#fcfcfc}
.power text{font-size:11px;fill:#333} .power h3{font-size:14px;margin:10px 0 2px}
"""
"""Styles the section needs (the page's own CSS covers tables and headings)."""


def _fmt(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "-"


def _mean(rows: Sequence[Mapping[str, Any]], key: str) -> float | None:
    vals = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return sum(vals) / len(vals) if vals else None


def energy_table(doc: Mapping[str, Any]) -> str:
    """Per scheduler (document order) the mean energy (kWh), peak (W), carbon (g) and cost over its
    rows, with the number of rows.  O(rows)."""
    by: dict[str, list[Mapping[str, Any]]] = {}
    for row in doc["results"]:
        by.setdefault(str(row["scheduler"]), []).append(row)
    cols = [("energy_j", "energy (kWh)", 1 / 3.6e6), ("peak_w", "peak (W)", 1.0), ("carbon_g", "carbon (g)", 1.0),
            ("cost_usd", "cost", 1.0)]
    cols = [c for c in cols if any(_mean(rows, c[0]) is not None for rows in by.values())]
    head = "<th>scheduler</th><th>runs</th>" + "".join(f"<th>{label}</th>" for _, label, _ in cols)
    body = []
    for name, rows in by.items():
        cells = [f"<td>{html.escape(name)}</td><td>{len(rows)}</td>"]
        for key, _, scale in cols:
            m = _mean(rows, key)
            cells.append(f"<td>{_fmt(m * scale) if m is not None else '-'}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table id=\"energy\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``top``."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    return [i * step for i in range(int(math.ceil(top / step - 1e-9)) + 1)]


def _total(run: Mapping[str, Any]) -> list[float]:
    series = [[float(w) for w in v] for v in run["power"]["watts"].values()]
    return [sum(col) for col in zip(*series)]


def power_svg(run: Mapping[str, Any], width: int = 1000, height: int = 230, top_w: float = 0.0,
              end: float = 0.0) -> str:
    """One run's power over time, a step line per processor type (and their total, dashed), as SVG:
    ``<path data-type=... data-energy-j=...>`` per line; the axes reach at least ``top_w`` watts and
    time ``end`` (shared scales let runs be compared by eye).  O(types x slices)."""
    prof = run["power"]
    horizon, unit = float(prof["horizon"]), float(prof["time_unit_s"])
    series = {str(k): [float(w) for w in v] for k, v in prof["watts"].items()}
    if not series:
        return ""
    bins = len(next(iter(series.values())))
    total = _total(run)
    lines = list(series.items()) + ([("total", total)] if len(series) > 1 else [])
    left, right, top, bottom = 60, 110, 12, 34
    yt = _ticks(max([top_w, *total]))
    xt = _ticks(max(horizon, end) or 1.0)
    xmax, ymax = (xt[-1] or 1.0), (yt[-1] or 1.0)
    sx = (width - left - right) / xmax
    sy = (height - top - bottom) / ymax

    def y(w: float) -> float:
        return height - bottom - w * sy

    parts = [f"<svg viewBox=\"0 0 {width} {height}\" class=\"power\" data-types=\"{html.escape(','.join(series))}\" "
             f"data-bins=\"{bins}\" data-horizon=\"{horizon!r}\">"]
    for v in yt:
        parts.append(f"<line x1=\"{left}\" y1=\"{y(v):.1f}\" x2=\"{width - right}\" y2=\"{y(v):.1f}\" stroke=\"#eee\"/>"
                     f"<text x=\"{left - 6}\" y=\"{y(v) + 4:.1f}\" text-anchor=\"end\">{v:.4g}</text>")
    for t in xt:
        x = left + t * sx
        parts.append(f"<line x1=\"{x:.1f}\" y1=\"{top}\" x2=\"{x:.1f}\" y2=\"{height - bottom}\" stroke=\"#eee\"/>"
                     f"<text x=\"{x:.1f}\" y=\"{height - bottom + 15}\" text-anchor=\"middle\">{t:.4g}</text>")
    parts.append(f"<text x=\"{left}\" y=\"{height - 4}\">time (x {unit:g} s)</text>"
                 f"<text x=\"4\" y=\"{top + 2}\" transform=\"rotate(90 4 {top + 2})\">watts</text>")
    dx = horizon / bins if bins else 0.0
    for i, (kind, watts) in enumerate(lines):
        colour = "#222" if kind == "total" else _COLOURS[i % len(_COLOURS)]
        d = [f"M{left:.1f},{y(watts[0]) if watts else y(0):.1f}"]
        for j, w in enumerate(watts):
            d.append(f"V{y(w):.1f}H{left + (j + 1) * dx * sx:.1f}")
        joules = sum(watts) * dx * unit
        dash = " stroke-dasharray=\"5,3\"" if kind == "total" else ""
        parts.append(f"<path data-type=\"{html.escape(kind)}\" data-energy-j=\"{joules!r}\" d=\"{''.join(d)}\" "
                     f"fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.6\"{dash}><title>{html.escape(kind)}: "
                     f"{joules:.4g} J ({joules / 3.6e6:.4g} kWh) drawn as power</title></path>")
        ly = top + 14 * i + 8
        parts.append(f"<line x1=\"{width - right + 10}\" y1=\"{ly}\" x2=\"{width - right + 30}\" y2=\"{ly}\" "
                     f"stroke=\"{colour}\" stroke-width=\"2\"{dash}/><text x=\"{width - right + 34}\" "
                     f"y=\"{ly + 4}\">{html.escape(kind)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def job_energy_svg(run: Mapping[str, Any], width: int = 1000, height: int = 160, max_jobs: int = 400) -> str:
    """A bar per job (arrival order, the first ``max_jobs``) of the job record's ``energy_j``, as SVG
    (``<rect class="jobenergy" data-job=... data-energy-j=...>``).  O(jobs)."""
    jobs = [j for j in run.get("jobs") or () if isinstance(j.get("energy_j"), (int, float))]
    jobs = sorted(jobs, key=lambda j: (j["arrival"], j["job"]))[:max_jobs]
    if not jobs:
        return ""
    left, top, bottom = 60, 10, 24
    emax = max(float(j["energy_j"]) for j in jobs)
    yt = _ticks(emax)
    sy = (height - top - bottom) / (yt[-1] or 1.0)
    bw = (width - left - 20) / len(jobs)
    parts = [f"<svg viewBox=\"0 0 {width} {height}\" class=\"jobenergy\" data-jobs=\"{len(jobs)}\">"]
    for v in yt:
        yy = height - bottom - v * sy
        parts.append(f"<line x1=\"{left}\" y1=\"{yy:.1f}\" x2=\"{width - 20}\" y2=\"{yy:.1f}\" stroke=\"#eee\"/>"
                     f"<text x=\"{left - 6}\" y=\"{yy + 4:.1f}\" text-anchor=\"end\">{v:.3g}</text>")
    for i, j in enumerate(jobs):
        e = float(j["energy_j"])
        parts.append(f"<rect class=\"jobenergy\" data-job=\"{j['job']}\" data-energy-j=\"{e!r}\" "
                     f"x=\"{left + i * bw:.2f}\" y=\"{height - bottom - e * sy:.1f}\" "
                     f"width=\"{max(bw - 0.5, 0.5):.2f}\" "
                     f"height=\"{e * sy:.1f}\" fill=\"#4c78a8\"><title>job {j['job']}: {e:.4g} J</title></rect>")
    parts.append(f"<text x=\"{left}\" y=\"{height - 6}\">jobs in arrival order; joules (busy energy of the "
                 f"job's task attempts)</text></svg>")
    return "".join(parts)


def power_section(doc: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> str:
    """The report's "Power and energy" section, or "" when no row has ``energy_j``.  ``runs``: the
    first run of each scheduler (what the page draws).  O(rows + types x slices + jobs)."""
    if not any(isinstance(r.get("energy_j"), (int, float)) for r in doc["results"]):
        return ""
    out = [f"<style>{CSS}</style><h2>Power and energy</h2><p class=\"meta\">Mean over each scheduler's runs. "
           "Energy = the integral of the platform's power (busy, idle, off, failed, switching) over the run, "
           "plus P-state switch, power-up/-down and link energy.</p>", energy_table(doc)]
    drawn = [r for r in runs if isinstance(r.get("power"), Mapping) and r["power"].get("watts")]
    top_w = max((max(_total(r), default=0.0) for r in drawn), default=0.0)
    end = max((float(r["power"]["horizon"]) for r in drawn), default=0.0)
    for r in runs:
        name = html.escape(f"{r['scheduler']} (seed {r.get('seed')})")
        if r in drawn:
            out.append(f"<div class=\"power\"><h3>{name}: power over time per processor type "
                       f"(mean watts over {len(next(iter(r['power']['watts'].values()), []))} equal slices; "
                       f"hover a line for its energy)</h3>{power_svg(r, top_w=top_w, end=end)}</div>")
        bars = job_energy_svg(r)
        if bars:
            energies = [float(j["energy_j"]) for j in r["jobs"] if isinstance(j.get("energy_j"), (int, float))]
            out.append(f"<div class=\"power\"><h3>{name}: energy per job ({len(energies)} jobs, mean "
                       f"{_fmt(sum(energies) / len(energies))} J, largest {_fmt(max(energies))} J)</h3>{bars}</div>")
    return "".join(out)
