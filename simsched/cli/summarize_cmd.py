"""``simsched summarize RESULTS``: mean ± 95% confidence interval per study point and scheduler, then
the schedulers compared on the same seeds (paired ratios with 95% intervals, the significantly best
in bold, wins/ties/losses).

Reads a sweep's results (CSV or Parquet, including the parts of a sweep still running or
interrupted) and prints a rich table; ``--json PATH`` also writes the figures (atomically).  The
table's title says how many of the study's runs the results hold ("143 of 144 runs"); an interrupted
sweep's results are marked INCOMPLETE, with a warning line, and ``"complete": false`` in the JSON.
"""

from __future__ import annotations

from pathlib import Path

import typer

from simsched.cli.common import console, user_errors, warning_line
from simsched.cli.flags import quoted, retired
from simsched.errors import SimschedError


@user_errors
def summarize(
    results: Path = typer.Argument(..., help="Results of a sweep (.csv or .parquet).", show_default=False),
    metric: list[str] | None = typer.Option(None, "--metric", "-m",
                                            help="Metric to show (repeatable; default: makespan, slr, utilization; for "
                                                 "job streams jct_mean, jct_p95, slowdown_mean, utilization)."),
    json_path: Path | None = typer.Option(None, "--json", help="Also write the summary as JSON here."),
    objective: str | None = typer.Option(None, "--objective",
                                         help="Also count the seeds meeting a service objective per point, "
                                              "e.g. 'makespan <= 120' (Wilson 95% interval)."),
    _old_o: str | None = retired("summarize", "-o", lambda v: f"give the objective with --objective {quoted(v)}"),
) -> None:
    """Print mean ± 95% confidence interval per study point and scheduler, and the paired comparison."""
    from simsched.report.summary import print_objective, print_paired, print_summary
    from simsched.run.store import completion, load_rows
    from simsched.study.stats import objective_entries, override_fields, paired_entries, summarize_rows
    from simsched.study.work import check_metric

    metrics = [check_metric(m, "--metric") for m in (metric or ())]
    if objective is not None:
        objective_entries([], [], objective)  # a bad objective fails before anything is printed
    if json_path is not None:
        from simsched.outputs import check_output

        check_output(json_path, option="--json", suffixes=(".json",), inputs=[results])
    if not metrics:  # the defaults follow the rows (job metrics for streams); their columns are checked
        from simsched.study.stats import default_metrics

        metrics = list(default_metrics(load_rows(results)))
    rows = load_rows(results, need=metrics)
    if not rows:
        raise SimschedError("the results file has no rows", file=results)
    done = completion(results, rows)
    fields = override_fields(rows)
    entries = summarize_rows(rows, metrics)
    if not done.complete:
        warning_line(f"{results}: {done.note()}")
    title = f"{results}: {done.runs()}" + ("" if done.complete else " (INCOMPLETE)")
    print_summary(entries, fields, metrics, title, console())
    paired = paired_entries(rows, fields, metrics)
    print_paired(paired, fields, metrics, console())
    met = None
    if objective is not None:
        met = objective_entries(rows, fields, objective)
        print_objective(met, fields, objective, console())
    if json_path is not None:
        from simsched.run.results import write_document

        doc = {"results": str(results), **done.as_dict(), "level": 0.95, "fields": fields, "metrics": metrics,
               "groups": entries, "paired": paired}
        if met is not None:
            doc["objective"] = {"text": objective, "groups": met}
        write_document(doc, json_path)
        typer.echo(f"summary written to {json_path}")
