"""A self-contained HTML report of one ``simsched run`` (its results document).

The page needs no network: CSS and JavaScript are inline, the data is embedded as JSON.  It shows
the metrics table (every row of the document; the best makespan in bold), with two or more seeds the
schedulers compared on the same seeds (paired ratios, the significantly best in bold, a win/tie/loss
matrix: :func:`paired_section`), an interactive Gantt
chart per scheduler (its first run; processors as rows, one ``<rect data-task=... data-kind=...>``
per task drawn by the page's script, coloured by task kind with a legend, hover for task, kind,
processor, start, finish and duration; the time axis ends on a tick past the last finish), the data
transfers between processors as arrows behind a check box (documents with a ``network`` section)
and each scheduler's utilisation per processor.  Documents of job-stream runs (rows with per-job
records, ``jobs``) add a job-stream metrics table and a job timeline per scheduler (server-side SVG:
waiting, running and deadline of every job).  When the script has drawn the charts it sets
``<body data-rendered-tasks="N" data-rendered-transfers="M">``, which tests read back from a
headless browser.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simsched.outputs import atomic_write
from simsched.report.power_plot import power_section
from simsched.run.document import first_runs, processors_of, transfers_of, utilisation

_COLUMNS = (("scheduler", "scheduler"), ("seed", "seed"), ("makespan", "makespan"),
            ("avg_turnaround", "avg turnaround"), ("avg_waiting", "avg waiting"), ("utilization", "utilisation"),
            ("slr", "SLR"), ("speedup", "speedup"), ("efficiency", "efficiency"),
            ("scheduler_time_s", "scheduler time (ms)"))

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")
"""matplotlib's tab10, the colours of the PNG Gantt charts, lightened in the page so labels stay legible."""
DEFAULT_KIND = "task"
"""The kind shown for tasks a document gives none (documents written before kinds were recorded)."""


def _tint(colour: str, white: float = 0.4) -> str:
    """``colour`` (``#rrggbb``) mixed with ``white`` parts of white."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * white):02x}" for c in rgb)


def kind_colours(doc: Mapping[str, Any], runs: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    """``(kind of each drawn task, colour of each kind)``: kinds from the document's
    ``problem.kinds`` (:data:`DEFAULT_KIND` for a task it does not name), colours in order of the
    sorted kind names.  O(tasks drawn)."""
    known = (doc.get("problem") or {}).get("kinds") or {}
    kinds = {str(rec["task"]): str(known.get(str(rec["task"]), DEFAULT_KIND)) for r in runs for rec in r["schedule"]}
    names = sorted(set(kinds.values()))
    return kinds, {k: _tint(_PALETTE[i % len(_PALETTE)]) for i, k in enumerate(names)}


def _legend(colours: Mapping[str, str]) -> str:
    items = "".join(f"<span class=\"kind\" data-kind=\"{html.escape(k)}\"><i style=\"background:{c}\"></i>"
                    f"{html.escape(k)}</span>" for k, c in colours.items())
    return f"<p class=\"legend\" id=\"kinds\">colour = task kind: {items}</p>"


BASE_CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.meta{color:#666;margin:0 0 12px} table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right} th{background:#f6f6f6}
.best{font-weight:700;color:#0a7c2f} .failed{color:#b2182b}
"""
"""The look both report pages share (this one and :mod:`simsched.report.study`)."""

_CSS = BASE_CSS + """
td:first-child,th:first-child{text-align:left}
.gantt{margin:6px 0 18px} .gantt h3{font-size:14px;margin:10px 0 2px}
.gantt svg{width:100%;height:auto;border:1px solid #e5e5e5;background:#fcfcfc}
.gantt rect.task{stroke:#333;stroke-width:.4} .gantt rect.task:hover{stroke:#000;stroke-width:1.6}
.gantt text{font-size:11px;fill:#333} .gantt text.lbl{font-size:9px;pointer-events:none}
.legend .kind{margin-left:12px;white-space:nowrap}
.legend i{display:inline-block;width:14px;height:11px;border:1px solid #333;margin-right:4px;vertical-align:-1px}
.gantt g.transfers{display:none} body.with-transfers .gantt g.transfers{display:inline}
.gantt line.transfer{stroke:#b2182b;stroke-width:1.4;opacity:.85} .gantt line.transfer:hover{stroke-width:3}
.gantt path.head{fill:#b2182b}
.bar{display:inline-block;height:10px;background:#4c78a8;vertical-align:middle;margin-right:6px}
#tip{position:fixed;display:none;background:#222;color:#fff;padding:6px 8px;border-radius:4px;
font-size:12px;pointer-events:none;white-space:pre;z-index:10}
"""

_JS = r"""
(function () {
  var data = JSON.parse(document.getElementById('simsched-data').textContent);
  var NS = 'http://www.w3.org/2000/svg', tip = document.getElementById('tip');
  var W = 1000, LEFT = 90, RIGHT = 28, ROW = 22, TOP = 6, AXIS = 22;
  var end = 0;
  data.runs.forEach(function (r) { r.schedule.forEach(function (t) { end = Math.max(end, t.finish); }); });
  end = end > 0 ? end : 1;
  var step = nice(end), axisEnd = Math.ceil(end / step - 1e-9) * step;  // the last tick is on the axis
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function kindOf(task) { return data.kinds[task] === undefined ? data.defaultKind : data.kinds[task]; }
  function nice(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return p * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
  }
  function fmt(x) { return Number(x.toPrecision(6)).toString(); }
  var rendered = 0, transfers = 0;
  data.runs.forEach(function (run, i) {
    var host = document.querySelector('.gantt[data-run="' + i + '"] .chart');
    var procs = data.processors, row = {};
    procs.forEach(function (p, k) { row[p] = k; });
    var H = TOP + procs.length * ROW + AXIS, scale = (W - LEFT - RIGHT) / axisEnd;
    var svg = el('svg', {viewBox: '0 0 ' + W + ' ' + H, 'data-scheduler': run.scheduler, role: 'img'}, host);
    procs.forEach(function (p, k) {
      var y = TOP + k * ROW;
      if (k % 2) el('rect', {x: LEFT, y: y, width: W - LEFT, height: ROW, fill: '#f1f1f1'}, svg);
      el('text', {x: 4, y: y + ROW * 0.68}, svg).textContent = p;
    });
    for (var k = 0; k * step <= axisEnd * 1.0000001; k++) {
      var x = LEFT + k * step * scale, yb = TOP + procs.length * ROW;
      el('line', {x1: x, x2: x, y1: TOP, y2: yb, stroke: '#ddd'}, svg);
      var t = el('text', {x: x, y: yb + 15, 'text-anchor': 'middle'}, svg);
      t.textContent = fmt(k * step);
    }
    run.schedule.forEach(function (t) {
      var x = LEFT + t.start * scale, w = Math.max((t.finish - t.start) * scale, 0.8);
      var y = TOP + row[t.processor] * ROW + 3;
      var kind = kindOf(t.task);
      var r = el('rect', {'class': 'task', x: x, y: y, width: w, height: ROW - 6,
        fill: data.colours[kind], 'data-task': t.task, 'data-kind': kind, 'data-processor': t.processor,
        'data-start': t.start, 'data-finish': t.finish}, svg);
      el('title', {}, r).textContent = t.task + ' (' + kind + ') on ' + t.processor + ': ' + fmt(t.start) +
        ' - ' + fmt(t.finish);
      if (w > 7 * String(t.task).length) {
        var l = el('text', {'class': 'lbl', x: x + w / 2, y: y + ROW * 0.5, 'text-anchor': 'middle'}, svg);
        l.textContent = t.task;
      }
      rendered++;
    });
    var group = el('g', {'class': 'transfers'}, svg);
    (run.transfers || []).forEach(function (t) {
      var x1 = LEFT + t[0] * scale, y1 = TOP + row[t[2]] * ROW + ROW / 2;
      var x2 = LEFT + t[1] * scale, y2 = TOP + row[t[3]] * ROW + ROW / 2;
      var line = el('line', {'class': 'transfer', x1: x1, y1: y1, x2: x2, y2: y2}, group);
      var angle = Math.atan2(y2 - y1, x2 - x1) * 180 / Math.PI;
      el('path', {'class': 'head', d: 'M0,0 L-8,-3.5 L-8,3.5 z',
        transform: 'translate(' + x2 + ',' + y2 + ') rotate(' + angle + ')'}, group);
      el('title', {}, line).textContent = 'data ' + t[4] + ': ' + t[2] + ' -> ' + t[3] + ', ' + fmt(t[0]) + ' - ' +
        fmt(t[1]);
      transfers++;
    });
  });
  var box = document.getElementById('show-transfers');
  function showTransfers() { document.body.classList.toggle('with-transfers', !!(box && box.checked)); }
  if (box) box.addEventListener('change', showTransfers);
  showTransfers();
  document.body.setAttribute('data-rendered-transfers', String(transfers));
  document.addEventListener('mousemove', function (ev) {
    var t = ev.target;
    if (!t.getAttribute || t.getAttribute('data-task') === null) { tip.style.display = 'none'; return; }
    var s = +t.getAttribute('data-start'), f = +t.getAttribute('data-finish');
    tip.textContent = 'task ' + t.getAttribute('data-task') + '\nkind ' + t.getAttribute('data-kind') +
      '\nprocessor ' + t.getAttribute('data-processor') +
      '\nstart ' + fmt(s) + '\nfinish ' + fmt(f) + '\nduration ' + fmt(f - s);
    tip.style.display = 'block';
    tip.style.left = (ev.clientX + 12) + 'px';
    tip.style.top = (ev.clientY + 12) + 'px';
  });
  document.body.setAttribute('data-rendered-tasks', String(rendered));
})();
"""


def _column_cells(rows: list[Mapping[str, Any]], key: str) -> list[str]:
    """The cells of one metrics column at one precision (:func:`simsched.report.numbers.format_column`):
    utilisation in %, scheduler time in ms, text as is, ``-`` where a value is missing.  O(rows)."""
    from simsched.report.numbers import format_column

    values = [r.get(key) for r in rows]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in values):
        return [html.escape(str(v)) for v in values]
    scale, unit = {"utilization": (100.0, "%"), "scheduler_time_s": (1000.0, "")}.get(key, (1.0, ""))
    means = [float(v) * scale if v is not None else math.nan for v in values]
    return format_column(means, unit=unit, digits=3 if key == "scheduler_time_s" else 4)


def _metrics_table(doc: Mapping[str, Any]) -> str:
    rows = doc["results"]
    spans = [r.get("makespan") for r in rows if isinstance(r.get("makespan"), (int, float))]
    best = min(spans) if spans else None
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in _COLUMNS)
    columns = {key: _column_cells(rows, key) for key, _ in _COLUMNS}
    body = []
    for i, r in enumerate(rows):
        cells = []
        for key, _ in _COLUMNS:
            cls = ' class="best"' if key == "makespan" and best is not None and r.get(key) == best else ""
            cells.append(f"<td{cls}>{columns[key][i]}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table id=\"metrics\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def wtl_matrix_html(comp: dict[str, Any], caption: str) -> str:
    """A win/tie/loss matrix (row scheduler against column scheduler, on their common seeds); a cell
    is marked ``*`` and coloured when the paired 95% interval excludes no difference."""
    from simsched.study.stats import format_wtl

    names = list(dict.fromkeys([a for a, _ in comp["matrix"]]))
    if len(names) < 2:
        return ""
    head = "<th class=\"name\">row vs column</th>" + "".join(f"<th>{html.escape(n)}</th>" for n in names)
    body = []
    for a in names:
        cells = f"<td class=\"name\">{html.escape(a)}</td>"
        for b in names:
            if a == b:
                cells += "<td>-</td>"
                continue
            c = comp["matrix"][(a, b)]
            cls = " class=\"best\"" if c["better"] else (" class=\"failed\"" if c["worse"] else "")
            cells += f"<td{cls}>{html.escape(format_wtl(c))}</td>"
        body.append(f"<tr>{cells}</tr>")
    return (f"<table class=\"wtl\"><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


PAIRED_METRICS = ("makespan", "avg_turnaround", "utilization")


def paired_section(rows: list[Mapping[str, Any]], metrics: tuple[str, ...] = PAIRED_METRICS) -> str:
    """Schedulers compared on the seeds they share (only when some scheduler ran two or more seeds):
    per metric the paired ratio to the best mean with its 95% interval, the significantly best in
    bold (:func:`simsched.study.stats.paired_comparison`), and the win/tie/loss matrix of the first
    metric.  Empty otherwise.  O(k² · seeds)."""
    from simsched.study.stats import format_ratio, paired_comparison

    seeds: dict[str, set] = {}
    for r in rows:
        seeds.setdefault(str(r.get("scheduler")), set()).add(r.get("seed"))
    if len(seeds) < 2 or max(len(v) for v in seeds.values()) < 2:
        return ""
    plain = [dict(r) for r in rows]
    comps = {m: paired_comparison(plain, m) for m in metrics if any(isinstance(r.get(m), (int, float)) for r in rows)}
    head = "<th>scheduler</th>" + "".join(f"<th>{html.escape(m)} ratio</th>" for m in comps)
    body = []
    for name in seeds:
        cells = ""
        for comp in comps.values():
            text = format_ratio(comp["ratios"].get(name, {})) + (" (ref)" if comp["reference"] == name else "")
            cls = ' class="best"' if comp["best"] == name else ""
            cells += f"<td{cls}>{html.escape(text)}</td>"
        body.append(f"<tr><td>{html.escape(name)}</td>{cells}</tr>")
    first = next(iter(comps), None)
    matrix = wtl_matrix_html(comps[first], f"{first}: wins/ties/losses of the row scheduler") if first else ""
    return ("<h2>Paired comparison</h2><p class=\"meta\">Every scheduler ran on the same seeds. Ratio: geometric "
            "mean over seeds of the scheduler's value divided by the reference's (the best mean) on the same "
            "seed, with its paired 95% interval; bold: significantly best (its paired interval against every "
            "other scheduler excludes no difference). Matrix cells: wins/ties/losses on the common seeds, * "
            "when the paired 95% interval of the difference excludes zero.</p>"
            f"<table id=\"paired\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{matrix}")


def _utilisation_table(runs: list[dict[str, Any]], processors: list[str]) -> str:
    per = [utilisation(r["schedule"], processors, r.get("makespan")) for r in runs]
    head = "<th>processor</th>" + "".join(f"<th>{html.escape(str(r['scheduler']))}</th>" for r in runs)
    body = []
    for p in processors:
        cells = "".join(f"<td><span class=\"bar\" style=\"width:{round(60 * u[p])}px\"></span>{100 * u[p]:.1f}%</td>"
                        for u in per)
        body.append(f"<tr><td>{html.escape(p)}</td>{cells}</tr>")
    mean = "".join(f"<td><b>{100 * sum(u.values()) / max(1, len(u)):.1f}%</b></td>" for u in per)
    body.append(f"<tr><td><b>mean</b></td>{mean}</tr>")
    return f"<table id=\"utilisation\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_STREAM_KEYS = (("jct_mean", "mean JCT"), ("jct_p50", "p50 JCT"), ("jct_p95", "p95 JCT"), ("jct_p99", "p99 JCT"),
                ("slowdown_mean", "mean slowdown"), ("waiting_mean", "mean waiting"),
                ("deadline_miss_rate", "deadline miss"), ("throughput", "throughput"), ("lost_work", "lost work"))


def _stream_table(doc: Mapping[str, Any]) -> str:
    """Job-stream metrics per scheduler (mean over its rows), for documents of dynamic runs; the
    best mean JCT in bold; the last column names the stream engine that ran its rows (``engine``).
    Empty for documents without per-job records."""
    rows = [r for r in doc["results"] if isinstance(r.get("jobs"), list)]
    if not rows:
        return ""
    util = sorted({k for r in rows for k in r if k.startswith("utilization_")})
    keys = list(_STREAM_KEYS) + [(k, "utilisation " + k.split("_", 1)[1]) for k in util]
    labels = list(dict.fromkeys(str(r["scheduler"]) for r in rows))
    means: dict[str, dict[str, float]] = {}
    for label in labels:
        mine = [r for r in rows if str(r["scheduler"]) == label]
        means[label] = {}
        for key, _ in keys:
            vals = [float(r[key]) for r in mine if isinstance(r.get(key), (int, float))]
            means[label][key] = sum(vals) / len(vals) if vals else float("nan")
    best = min((m["jct_mean"] for m in means.values() if m["jct_mean"] == m["jct_mean"]), default=None)
    engines = {label: ", ".join(dict.fromkeys(str(r["engine"]) for r in rows
                                                if str(r["scheduler"]) == label and "engine" in r)) or "-"
               for label in labels}  # which stream engine ran (a document written before says nothing: -)
    head = ("<th>scheduler</th>" + "".join(f"<th>{html.escape(h)}</th>" for _, h in keys)
            + "<th title=\"simpy: the SimPy engine (the ground truth); compiled: its compiled loop\">engine</th>")
    body = []
    for label in labels:
        cells = [f"<td>{html.escape(label)}</td>"]
        for key, _ in keys:
            v = means[label][key]
            text = "-" if v != v else (f"{100 * v:.3g}%" if key == "deadline_miss_rate" or key.startswith("util")
                                       else f"{v:.4g}")
            bold = key == "jct_mean" and best is not None and v <= best * (1 + 1e-12)
            cells.append(f"<td class=\"best\">{text}</td>" if bold else f"<td>{text}</td>")
        cells.append(f"<td>{html.escape(engines[label])}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<h2>Job stream</h2><p class=\"meta\">Mean over repetitions; JCT = job completion time "
            f"(completion - arrival), slowdown = JCT / the job's critical path alone.</p>"
            f"<table id=\"stream\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def _job_timeline(run: Mapping[str, Any], width: int = 1000, row_h: int = 7, max_jobs: int = 400) -> str:
    """An SVG timeline of one run's jobs, one row per job in arrival order (the first ``max_jobs``):
    a grey line from arrival to its first task's start (waiting), a bar from start to completion
    (blue, red when it missed its deadline), a black tick at its deadline.  O(jobs)."""
    jobs = sorted(run["jobs"], key=lambda j: (j["arrival"], j["job"]))[:max_jobs]
    if not jobs:
        return ""
    end = max([float(j["completion"] or 0) for j in jobs] + [float(j.get("deadline") or 0) for j in jobs]) or 1.0
    left, top = 60, 18
    scale = (width - left - 30) / end
    height = top + row_h * len(jobs) + 22
    parts = [f"<svg viewBox=\"0 0 {width} {height}\" class=\"jobs\" data-jobs=\"{len(jobs)}\">"]
    for i in range(6):
        t = end * i / 5
        x = left + t * scale
        parts.append(f"<line x1=\"{x:.1f}\" y1=\"{top - 4}\" x2=\"{x:.1f}\" y2=\"{height - 18}\" stroke=\"#eee\"/>"
                     f"<text x=\"{x:.1f}\" y=\"{height - 5}\" text-anchor=\"middle\">{t:.4g}</text>")
    parts.append("<text x=\"4\" y=\"12\">job (arrival order) / time</text>")
    for i, j in enumerate(jobs):
        y = top + i * row_h
        a, s0, c = (float(j[k]) for k in ("arrival", "start", "completion"))
        missed = bool(j.get("missed"))
        tip = (f"job {j['job']} ({j.get('source', '')}, {j['tasks']} tasks): arrival {a:.4g}, start {s0:.4g}, "
               f"completion {c:.4g}, JCT {float(j['jct']):.4g}, slowdown {float(j['slowdown'] or 0):.3g}"
               + (f", deadline {float(j['deadline']):.4g}{' MISSED' if missed else ''}" if "deadline" in j else ""))
        cls = "job missed" if missed else "job"
        parts.append(f"<g class=\"{cls}\" data-job=\"{j['job']}\"><title>{html.escape(tip)}</title>"
                     f"<line x1=\"{left + a * scale:.1f}\" y1=\"{y + row_h / 2:.1f}\" x2=\"{left + s0 * scale:.1f}\" "
                     f"y2=\"{y + row_h / 2:.1f}\" stroke=\"#999\"/>"
                     f"<rect x=\"{left + s0 * scale:.1f}\" y=\"{y + 1:.1f}\" width=\"{max((c - s0) * scale, 1):.1f}\" "
                     f"height=\"{row_h - 2}\" fill=\"{'#d62728' if missed else '#4c78a8'}\"/>")
        if "deadline" in j:
            x = left + float(j["deadline"]) * scale
            parts.append(f"<line x1=\"{x:.1f}\" y1=\"{y}\" x2=\"{x:.1f}\" y2=\"{y + row_h}\" stroke=\"#000\"/>")
        parts.append("</g>")
    parts.append("</svg>")
    more = f" (first {max_jobs} of {len(run['jobs'])})" if len(run["jobs"]) > max_jobs else ""
    return (f"<div class=\"gantt jobtimeline\"><h3>{html.escape(str(run['scheduler']))} (seed "
            f"{html.escape(str(run.get('seed')))}){more}</h3>{''.join(parts)}</div>")


def _job_timelines(runs: list[dict[str, Any]]) -> str:
    charts = "".join(_job_timeline(r) for r in runs if isinstance(r.get("jobs"), list))
    if not charts:
        return ""
    return ("<h2>Job timelines</h2><p class=\"meta\">First run of each scheduler, one row per job: grey = "
            "waiting (arrival to first start), bar = running (first start to completion; red = deadline "
            f"missed), black tick = deadline; hover for the numbers.</p>{charts}")


def report_html(doc: Mapping[str, Any], transfers: bool = False) -> str:
    """The report page for a checked results document (see the module docstring); ``transfers``
    shows the data transfers when the page opens (a check box toggles them).  A cluster log's
    document (``"workload": "batch"``) gets its own page (:mod:`simsched.report.batch`).  O(size of doc)."""
    if doc.get("workload") == "batch":
        from simsched.report.batch import batch_report_html

        return batch_report_html(doc, BASE_CSS)
    runs = first_runs(doc)
    processors = processors_of(doc)
    name = str(doc.get("scenario", "simsched run"))
    problem = doc.get("problem") or {}
    meta = [f"simsched {doc.get('simsched_version', '?')}"]
    if "seed" in doc:
        meta.append(f"seed {doc['seed']}, {doc.get('repetitions', 1)} repetition(s)")
    if problem:
        meta.append(f"{problem.get('tasks', '?')} tasks, {problem.get('edges', '?')} edges on "
                    f"{len(processors)} processors")
    if isinstance(doc.get("lower_bound"), (int, float)):
        meta.append(f"makespan lower bound {doc['lower_bound']:.5g}")
    kinds, colours = kind_colours(doc, runs)
    payload = {"processors": processors, "kinds": kinds, "colours": colours, "defaultKind": DEFAULT_KIND,
               "runs": [{"scheduler": str(r["scheduler"]), "seed": r.get("seed"),
                         "schedule": [{k: rec[k] for k in ("task", "processor", "start", "finish")}
                                      for rec in r["schedule"]],
                         "transfers": transfers_of(doc, r["schedule"])} for r in runs]}
    toggle = ""
    if any(run["transfers"] for run in payload["runs"]):
        checked = " checked" if transfers else ""
        toggle = (f"<label class=\"legend\"><input type=\"checkbox\" id=\"show-transfers\"{checked}> show data "
                  "transfers between processors (arrow from the producer's finish to the data's arrival)</label>")
    data = json.dumps(payload, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    charts = "".join(
        f"<div class=\"gantt\" data-run=\"{i}\"><h3>{html.escape(str(r['scheduler']))} "
        f"(seed {html.escape(str(r.get('seed')))}): makespan {_column_cells([r], 'makespan')[0]}</h3>"
        f"<div class=\"chart\"></div></div>"
        for i, r in enumerate(runs))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{html.escape(name)}: "
        f"simsched report</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(name)}</h1><p class=\"meta\">{html.escape('; '.join(meta))}</p>"
        f"<h2>Metrics</h2>{_metrics_table(doc)}{paired_section(doc['results'])}{_stream_table(doc)}"
        f"{_job_timelines(runs)}{power_section(doc, runs)}"
        f"<h2>Gantt charts</h2><p class=\"meta\">First run of each scheduler; hover a task for its times.</p>"
        f"{_legend(colours)}{toggle}{charts}<h2>Utilisation per processor</h2>{_utilisation_table(runs, processors)}"
        f"<div id=\"tip\"></div><script type=\"application/json\" id=\"simsched-data\">{data}</script>"
        f"<script>{_JS}</script></body></html>\n")


def write_report(doc: Mapping[str, Any], path: str | Path, transfers: bool = False) -> Path:
    """Write the report page of ``doc`` to ``path`` atomically."""
    text = report_html(doc, transfers)
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
