"""``simsched workload ...``: inspect and convert workload files.

* ``info FILE-or-SCENARIO``: size, edges, depth, width, CCR, critical path, total work (rich table);
  a scenario's workload is built exactly as ``simsched run`` builds it (its seed, its platform).
* ``convert IN OUT``: read any importer form, write any exporter form (by extension or ``--to``),
  atomically: a failed conversion leaves no output file.

The graph comes from :func:`simsched.scenario.build.load_any_graph`, the table from
:mod:`simsched.report.workload`.  Errors are :class:`~simsched.errors.SimschedError`: one line, exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from simsched.cli.common import console, user_errors

app = typer.Typer(help="Inspect and convert workloads (task graphs).", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)


@app.command("info")
@user_errors
def info(
    source: Path = typer.Argument(..., help="Workload file, scenario YAML, or a model name (resnet18)."),
    form: str = typer.Option(None, "--from", help="Input form (default: from the extension)."),
    bandwidth: float = typer.Option(None, help="Bandwidth for CCR and critical path (default: the "
                                    "scenario's mean, else 1)."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
) -> None:
    """Print size, edges, depth, width, CCR, critical path and total work."""
    from simsched.errors import SimschedError
    from simsched.report.workload import print_graph_stats
    from simsched.scenario.build import load_any_graph
    from simsched.workloads.importers import check_form
    from simsched.workloads.stats import graph_stats

    check_form(form, option="--from")
    graph, bw = load_any_graph(source, form)
    bw = bandwidth if bandwidth is not None else (bw or 1.0)
    if not bw > 0:
        raise SimschedError(f"--bandwidth must be > 0, got {bw}")
    stats = graph_stats(graph, bandwidth=bw)
    if as_json:
        typer.echo(json.dumps(stats, indent=1))
        return
    print_graph_stats(stats, f"{source}  (bandwidth {bw:g})", console())


@app.command("convert")
@user_errors
def convert(
    source: Path = typer.Argument(..., help="Input workload file (or scenario, or model name)."),
    target: Path = typer.Argument(..., help="Output file."),
    form: str = typer.Option(None, "--from", help="Input form (default: from the extension)."),
    to: str = typer.Option(None, "--to", help="Output form: wfcommons, dax, stg, dot, graphml, tasklist, "
                           "inline (default: from the extension)."),
) -> None:
    """Convert a workload between formats (written atomically)."""
    from simsched.outputs import check_output
    from simsched.scenario.build import load_any_graph
    from simsched.workloads.importers import check_form, save

    check_form(form, option="--from")
    check_form(to, writing=True, option="--to")
    check_output(target, option="TARGET", inputs=[source] if source.exists() else [])
    graph, _ = load_any_graph(source, form)
    save(graph, target, to)
    typer.echo(f"wrote {target}: {graph.n_tasks} tasks, {graph.n_edges} edges")
