"""``simsched summarize RESULTS``: mean ± 95% confidence interval per study point and scheduler, then
the schedulers compared on the same seeds (paired ratios with 95% intervals, the significantly best
in bold, wins/ties/losses).

Reads a sweep's results (CSV or Parquet, including the parts of a sweep still running or
interrupted) and prints a rich table; ``--json PATH`` also writes the figures (atomically).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from simsched.errors import SimschedError

DEFAULT_METRICS = ("makespan", "slr", "utilization")


def check_metric(name: str, option: str) -> str:
    """``name`` if it is a metric column; a :class:`SimschedError` listing them otherwise."""
    from simsched.study.work import METRICS

    if name not in METRICS:
        raise SimschedError(f"{option} {name!r} is not a metric; choose from {', '.join(METRICS)}")
    return name




def print_summary(entries: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str],
                  title: str) -> None:
    """The summary as a rich table: override fields, scheduler, runs, one column per metric."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.cli.common import console as _console

    table = Table(title=escape(title), caption="mean ± half-width of the 95% confidence interval (Student's t) "
                                               "over seeds (left out where below the last digit); "
                                               "failed runs are counted, not averaged")
    for f in fields:
        table.add_column(escape(f), justify="right")
    table.add_column("scheduler", style="bold")
    table.add_column("runs", justify="right")
    for m in metrics:
        table.add_column(m, justify="right")
    from simsched.study.stats import column_decimals, format_mean_ci

    places = {m: column_decimals([(e[m]["mean"], e[m]["ci"]) for e in entries]) for m in metrics}
    for e in entries:
        runs = str(e["runs"]) + (f" ([red]{e['failed']} failed[/red])" if e["failed"] else "")
        table.add_row(*(escape(str(e.get(f))) for f in fields), escape(str(e["scheduler"])), runs,
                      *(format_mean_ci(e[m]["mean"], e[m]["ci"], decimals=places[m]) for m in metrics))
    _console().print(table)


def paired_entries(rows: Sequence[dict[str, Any]], fields: Sequence[str],
                   metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Per study point: its override values and, per metric, the paired comparison of its schedulers
    on their common seeds (:func:`simsched.study.stats.paired_comparison`), matrix keys as ``"a vs b"``."""
    from simsched.study.stats import group_rows, paired_comparison

    out = []
    for (point,), members in group_rows(sorted(rows, key=lambda r: r.get("point") or 0), ["point"]).items():
        entry: dict[str, Any] = {"point": point, **{f: members[0].get(f) for f in fields}}
        for m in metrics:
            comp = paired_comparison(members, m)
            comp["matrix"] = {f"{a} vs {b}": cell for (a, b), cell in comp["matrix"].items()}
            entry[m] = comp
        out.append(entry)
    return out


def print_paired(paired: Sequence[dict[str, Any]], fields: Sequence[str], metrics: Sequence[str]) -> None:
    """Per point and scheduler: the paired ratio to the point's best mean (same seeds) with its 95%
    interval per metric, and wins/ties/losses against that reference on the first metric; the
    significantly best scheduler of a point in bold green."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.cli.common import console as _console
    from simsched.study.stats import format_ratio, format_wtl

    table = Table(title="paired comparison (same seeds)",
                  caption="ratio: geometric mean over seeds of value / the point's best mean (ref) on the same "
                          "seed, paired 95% interval; bold green: significantly best at the point (its paired "
                          f"interval against every other excludes no difference); W/T/L on {metrics[0]} against "
                          "ref, * when significant")
    for f in fields:
        table.add_column(escape(f), justify="right")
    table.add_column("scheduler")
    for m in metrics:
        table.add_column(f"{m} ratio", justify="right")
    table.add_column(f"W/T/L vs ref ({metrics[0]})", justify="right")
    for p in paired:
        first = p[metrics[0]]
        names = list(first["ratios"])
        for name in names:
            cells = []
            for m in metrics:
                comp = p[m]
                ref_mark = " ref" if comp["reference"] == name else ""
                text = escape(format_ratio(comp["ratios"].get(name, {})) + ref_mark)
                cells.append(f"[bold green]{text}[/bold green]" if comp["best"] == name else text)
            ref = first["reference"]
            cell = first["matrix"].get(f"{name} vs {ref}")
            table.add_row(*(escape(str(p.get(f))) for f in fields), escape(name), *cells,
                          "-" if cell is None else format_wtl(cell))
    _console().print(table)


def objective_entries(rows: Sequence[dict[str, Any]], fields: Sequence[str], text: str) -> list[dict[str, Any]]:
    """Per study point and scheduler: on how many seeds (days) the objective ``text`` holds, the rate
    and its Wilson 95% interval (a failed run counts as a day that misses it).  With capacity as a
    study field this is the capacity what-if swept over a grid.  O(rows)."""
    from simsched.run.capacity import parse_objective
    from simsched.stats import wilson_interval
    from simsched.study.stats import group_rows

    objective = parse_objective(text, field="--objective")
    for c in objective.clauses:
        check_metric(c.metric, "--objective metric")
    out = []
    groups = group_rows(sorted(rows, key=lambda r: r.get("point") or 0), ["point", "scheduler"])
    for (point, scheduler), members in groups.items():
        met = 0
        for r in members:
            values = {c.metric: r.get(c.metric) for c in objective.clauses}
            if not r.get("error") and all(v is not None for v in values.values()) and objective.met(values):
                met += 1
        lo, hi = wilson_interval(met, len(members))
        out.append({"point": point, **{f: members[0].get(f) for f in fields}, "scheduler": scheduler,
                    "days": len(members), "met_days": met, "rate": met / len(members), "wilson": [lo, hi]})
    return out


def print_objective(entries: Sequence[dict[str, Any]], fields: Sequence[str], text: str) -> None:
    """The days-met table of :func:`objective_entries`."""
    from rich.markup import escape
    from rich.table import Table

    from simsched.cli.common import console as _console

    table = Table(title=escape(f"objective {text}: seeds (days) that meet it"),
                  caption="95% interval: Wilson, of the day success rate; a failed run misses the objective")
    for f in fields:
        table.add_column(escape(f), justify="right")
    for col in ("scheduler", "days met", "rate", "95% interval"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    for e in entries:
        table.add_row(*(escape(str(e.get(f))) for f in fields), escape(str(e["scheduler"])),
                      f"{e['met_days']}/{e['days']}", f"{e['rate']:.0%}",
                      f"{e['wilson'][0]:.0%}–{e['wilson'][1]:.0%}")
    _console().print(table)


def _summarize(results: Path, metric: list[str] | None, json_path: Path | None,
               objective: str | None = None) -> None:
    from simsched.study.stats import override_fields, summarize_rows
    from simsched.study.store import load_rows

    metrics = [check_metric(m, "--metric") for m in (metric or DEFAULT_METRICS)]
    if objective is not None:
        objective_entries([], [], objective)  # a bad objective fails before anything is printed
    if json_path is not None:
        from simsched.outputs import check_output

        check_output(json_path, option="--json", suffixes=(".json",))
    rows = load_rows(results)
    if not rows:
        raise SimschedError("the results file has no rows", file=results)
    fields = override_fields(rows)
    entries = summarize_rows(rows, metrics)
    print_summary(entries, fields, metrics, f"{results}: {len(rows)} runs")
    paired = paired_entries(rows, fields, metrics)
    print_paired(paired, fields, metrics)
    met = None
    if objective is not None:
        met = objective_entries(rows, fields, objective)
        print_objective(met, fields, objective)
    if json_path is not None:
        from simsched.run.results import write_document

        doc = {"results": str(results), "level": 0.95, "fields": fields, "metrics": metrics,
               "groups": entries, "paired": paired}
        if met is not None:
            doc["objective"] = {"text": objective, "groups": met}
        write_document(doc, json_path)
        typer.echo(f"summary written to {json_path}")


def summarize(
    results: Path = typer.Argument(..., help="Results of a sweep (.csv or .parquet).", show_default=False),
    metric: list[str] | None = typer.Option(None, "--metric", "-m",
                                            help="Metric to show (repeatable; default: makespan, slr, utilization)."),
    json_path: Path | None = typer.Option(None, "--json", help="Also write the summary as JSON here."),
    objective: str | None = typer.Option(None, "--objective", "-o",
                                         help="Also count the seeds meeting a service objective per point, "
                                              "e.g. 'makespan <= 120' (Wilson 95% interval)."),
) -> None:
    """Print mean ± 95% confidence interval per study point and scheduler, and the paired comparison."""
    from simsched.cli.common import user_errors

    user_errors(_summarize)(results, metric, json_path, objective)
