"""A self-contained HTML report of a study: ``simsched report RESULTS.csv -o study.html``.

From a sweep's results (CSV or Parquet, with the parts of a sweep still running) the page shows
what was run (points, schedulers, seeds, failures), the summary table — per study point and
scheduler the mean ± half-width of the 95% confidence interval (Student's t over seeds,
:func:`simsched.study.stats.summarize_rows`) of each metric, the paired ratio to the point's best
mean on the same seeds, the scheduler *significantly* best at each point in bold
(:func:`simsched.study.stats.paired_comparison`), a win/tie/loss matrix per point — and the
plots of ``simsched plot``, one per metric and study field, embedded as PNG data
URIs (no file next to the page, no network).  A study whose points vary no field gets one box plot
per metric over the schedulers.  The most common errors of failed runs are listed.  O(rows) plus
the plots' rendering.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsched.errors import SimschedError
from simsched.fileio import atomic_write_text
from simsched.report.html import BASE_CSS, wtl_matrix_html

if TYPE_CHECKING:
    from simsched.run.store import Completion

_CSS = BASE_CSS + """
body{max-width:1400px} td.name,th.name{text-align:left} tr.first td{border-top:1px solid #bbb}
.failed{color:#b2182b} figure{margin:12px 0 24px} figure img{max-width:100%;border:1px solid #e5e5e5}
figcaption{color:#666;font-size:13px}
p.incomplete{background:#fde0dd;border:1px solid #b2182b;padding:6px 10px}
table.wtl{margin:8px 0 16px} table.wtl caption{text-align:left;color:#555}
"""


def _png(rows: Sequence[dict[str, Any]], x: str, y: str, kind: str) -> str:
    """The plot of ``simsched plot`` as a base64 PNG."""
    from simsched.report.plots import draw_plot, png_base64

    return png_base64(draw_plot(rows, x, y, kind))


def _comparisons(rows: Sequence[dict[str, Any]], metrics: Sequence[str]) -> dict[tuple[Any, str], dict[str, Any]]:
    """Per (study point, metric): :func:`simsched.study.stats.paired_comparison` over its seeds."""
    from simsched.study.stats import group_rows, paired_comparison

    out = {}
    for (point,), members in group_rows(rows, ["point"]).items():
        for m in metrics:
            out[(point, m)] = paired_comparison(members, m)
    return out


def _summary_table(entries: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str],
                   comparisons: dict[tuple[Any, str], dict[str, Any]]) -> str:
    from simsched.study.stats import PERCENT, column_decimals, format_mean_ci, format_ratio

    places = {m: column_decimals([(e[m]["mean"], e[m]["ci"]) for e in entries], percent=m in PERCENT)
              for m in metrics}
    head = "".join(f"<th class=\"name\">{html.escape(f)}</th>" for f in fields)
    head += "<th class=\"name\">scheduler</th><th>runs</th>" + "".join(
        f"<th>{html.escape(m)}</th><th>{html.escape(m)} paired ratio</th>" for m in metrics)
    body, previous = [], object()
    for e in entries:
        cells = "".join(f"<td class=\"name\">{html.escape(str(e.get(f)))}</td>" for f in fields)
        runs = str(e["runs"]) + (f" <span class=\"failed\">({e['failed']} failed)</span>" if e["failed"] else "")
        cells += f"<td class=\"name\">{html.escape(str(e['scheduler']))}</td><td>{runs}</td>"
        for m in metrics:
            mean, ci = e[m]["mean"], e[m]["ci"]
            comp = comparisons.get((e["point"], m), {})
            cls = " class=\"best\"" if comp.get("best") == str(e["scheduler"]) else ""
            ratio = comp.get("ratios", {}).get(str(e["scheduler"]), {})
            ref = " (ref)" if comp.get("reference") == str(e["scheduler"]) else ""
            cells += (f"<td{cls}>{html.escape(format_mean_ci(mean, ci, m in PERCENT, places[m]))}</td>"
                      f"<td>{html.escape(format_ratio(ratio) + ref)}</td>")
        first = " class=\"first\"" if e["point"] != previous else ""
        previous = e["point"]
        body.append(f"<tr{first}>{cells}</tr>")
    return f"<table id=\"summary\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _matrices(rows: Sequence[dict[str, Any]], fields: Sequence[str], metric: str,
              comparisons: dict[tuple[Any, str], dict[str, Any]]) -> str:
    from simsched.study.stats import group_rows

    out = []
    for (point,), members in group_rows(sorted(rows, key=lambda r: r.get("point") or 0), ["point"]).items():
        comp = comparisons.get((point, metric))
        if not comp:
            continue
        label = ", ".join(f"{f}={members[0].get(f)}" for f in fields) or "all runs"
        out.append(wtl_matrix_html(comp, f"{metric}, {label}: wins/ties/losses of the row scheduler"))
    return "".join(out)


def _plots(rows: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str]) -> str:
    ok = [r for r in rows if not r.get("error")]
    varying = [f for f in fields if len({str(r.get(f)) for r in ok}) > 1]
    figures = []
    for y in metrics:
        for x, kind in ([(f, "line") for f in varying] or [("scheduler", "box")]):
            caption = (f"{y} against {x}: mean and 95% confidence interval over seeds" if kind == "line"
                       else f"{y} per scheduler: distribution over seeds")
            figures.append(f"<figure data-metric=\"{html.escape(y)}\" data-x=\"{html.escape(x)}\">"
                           f"<img alt=\"{html.escape(caption)}\" src=\"data:image/png;base64,{_png(ok, x, y, kind)}\">"
                           f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    return "".join(figures)


def _failures(rows: Sequence[dict[str, Any]]) -> str:
    errors = Counter(str(r["error"]) for r in rows if r.get("error"))
    if not errors:
        return ""
    items = "".join(f"<li>{n} × {html.escape(text)}</li>" for text, n in errors.most_common(10))
    return f"<h2>Failed runs</h2><ul id=\"failures\">{items}</ul>"


def study_report_html(rows: Sequence[dict[str, Any]], source: str | Path,
                      metrics: Sequence[str] | None = None, done: Completion | None = None) -> str:
    """The report page of a study's result ``rows`` read from ``source`` (see the module docstring);
    ``metrics`` default to :func:`simsched.study.stats.default_metrics` (job metrics for streams).
    ``done`` (:func:`simsched.run.store.completion`) puts "143 of 144 runs" in the header and, for
    an incomplete study, a banner, "(incomplete)" in the title and ``data-complete="false"`` on the body."""
    from simsched.study.stats import default_metrics, override_fields, summarize_rows

    metrics = tuple(metrics) if metrics else default_metrics(rows)
    fields = override_fields(rows)
    entries = summarize_rows(rows, metrics)
    comparisons = _comparisons(rows, metrics)
    failed = sum(1 for r in rows if r.get("error"))
    schedulers = list(dict.fromkeys(str(r["scheduler"]) for r in rows))
    seeds = sorted({r["seed"] for r in rows if r.get("seed") is not None})
    points = len({r.get("point_id") for r in rows})
    name = Path(source).name
    if done is None:
        from simsched.run.store import Completion

        done = Completion(len(rows), None, 0)
    meta = (f"{done.runs()}: {points} study point{'s' if points != 1 else ''} × {len(schedulers)} "
            f"scheduler{'s' if len(schedulers) != 1 else ''} ({', '.join(schedulers)}) × {len(seeds)} "
            f"seed{'s' if len(seeds) != 1 else ''}; {failed} failed"
            + (f"; study fields: {', '.join(fields)}" if fields else ""))
    incomplete = "" if done.complete else " (incomplete)"
    expected = f' data-expected-runs="{done.expected}"' if done.expected is not None else ""
    banner = "" if done.complete else f"<p class=\"incomplete\" id=\"incomplete\">{html.escape(done.note())}</p>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{html.escape(name)}: "
        f"simsched study report{incomplete}</title><style>{_CSS}</style></head>"
        f"<body data-complete=\"{str(done.complete).lower()}\" data-runs=\"{done.done}\""
        f"{expected}>"
        f"<h1>Study {html.escape(name)}{incomplete}</h1><p class=\"meta\">{html.escape(meta)}</p>{banner}"
        "<h2>Summary</h2><p class=\"meta\">Per study point and scheduler: mean ± half-width of the 95% "
        "confidence interval (Student's t over seeds; no interval for a single run). Paired ratio: "
        "geometric mean over the seeds of the scheduler's value divided by the reference's (the best mean "
        "of the point, marked ref) on the same seed, with its paired 95% interval. Bold: the scheduler "
        "significantly best at the point — its paired interval against every other one excludes no "
        "difference (lowest, or highest for utilisation, speedup, efficiency and throughput); no bold when the "
        "best ties another. Failed runs are counted, not averaged.</p>"
        f"{_summary_table(entries, fields, metrics, comparisons)}"
        f"<h2>Win / tie / loss</h2><p class=\"meta\">Per study point, on the seeds both ran: how often the "
        f"row scheduler beats, ties or loses to the column one on {html.escape(metrics[0])}; * (coloured): "
        f"the paired 95% interval of the difference excludes zero.</p>"
        f"{_matrices(rows, fields, metrics[0], comparisons)}"
        f"<h2>Plots</h2>{_plots(rows, fields, metrics)}{_failures(rows)}</body></html>\n")


def write_study_report(results: str | Path, output: str | Path, metrics: Sequence[str] | None = None) -> Path:
    """Read the study results at ``results`` and write their report page to ``output`` atomically
    (``metrics``: see :func:`study_report_html`).
    :class:`SimschedError` for an unreadable file, one without rows or one where every run failed."""
    from simsched.run.store import completion, load_rows

    if not metrics:  # the defaults follow the rows (job metrics for streams); their columns are checked
        from simsched.study.stats import default_metrics

        metrics = default_metrics(load_rows(results))
    rows = load_rows(results, need=metrics)
    if not rows:
        raise SimschedError("the results file has no rows", file=results)
    if all(r.get("error") for r in rows):
        raise SimschedError("every run in the results failed: nothing to report", file=results)
    return atomic_write_text(output, study_report_html(rows, results, metrics, completion(results, rows)))


def is_study_results(path: str | Path) -> bool:
    """Whether ``path`` names a sweep's results (``.csv`` or ``.parquet``) rather than a run's JSON."""
    return Path(path).suffix.lower() in (".csv", ".parquet")
