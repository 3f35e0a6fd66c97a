"""``simsched workload ...``: inspect and convert workload files.

* ``info FILE-or-SCENARIO``: size, edges, depth, width, CCR, critical path, total work (rich table);
  a scenario's workload is built exactly as ``simsched run`` builds it (its seed, its platform).
* ``convert IN OUT``: read any importer form, write any exporter form (by extension or ``--to``),
  atomically: a failed conversion leaves no output file.

Errors are :class:`~simsched.errors.SimschedError`: one line, exit code 2.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(help="Inspect and convert workloads (task graphs).", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)


def _user_errors(func: F) -> F:
    """The main CLI's error handling (imported at call time: main imports this module)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from simsched.cli.common import user_errors

        return user_errors(func)(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _is_scenario(path: Path) -> bool:
    if path.suffix.lower() not in (".yaml", ".yml"):
        return False
    from simsched.yamlio import load_yaml

    data = load_yaml(path).data
    return isinstance(data, dict) and ("platform" in data or "schedulers" in data)


def load_any(path: Path, form: str | None = None) -> tuple[Any, float | None]:
    """The task graph in a workload file or scenario, and the scenario's mean bandwidth (if any)."""
    import numpy as np

    from simsched.errors import SimschedError
    from simsched.workloads.importers import load

    if form is None and not path.exists() and path.suffix == "":
        from simsched.workloads.dlmodels import ALIASES, MODELS

        if path.name.lower() in MODELS or path.name.lower() in ALIASES:
            return load(str(path), "model"), None
    if form is None and path.is_file() and _is_scenario(path):
        from simsched.scenario import build_graph, load_scenario

        sc = load_scenario(path)
        if not sc.has_task_graph:
            raise SimschedError("the scenario has no task-graph workload", file=path)
        bw = sc.platform.bandwidth
        off = bw[~np.eye(bw.shape[0], dtype=bool)]
        off = off[np.isfinite(off)]
        return build_graph(sc, sc.seed), (float(off.mean()) if off.size else None)
    return load(path, form), None


@app.command("info")
@_user_errors
def info(
    source: Path = typer.Argument(..., help="Workload file, scenario YAML, or a model name (resnet18)."),
    form: str = typer.Option(None, "--from", help="Input form (default: from the extension)."),
    bandwidth: float = typer.Option(None, help="Bandwidth for CCR and critical path (default: the "
                                    "scenario's mean, else 1)."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
) -> None:
    """Print size, edges, depth, width, CCR, critical path and total work."""
    from simsched.errors import SimschedError
    from simsched.workloads.stats import graph_stats

    graph, bw = load_any(source, form)
    bw = bandwidth if bandwidth is not None else (bw or 1.0)
    if not bw > 0:
        raise SimschedError(f"--bandwidth must be > 0, got {bw}")
    stats = graph_stats(graph, bandwidth=bw)
    if as_json:
        typer.echo(json.dumps(stats, indent=1))
        return
    from rich.table import Table

    table = Table(title=f"{source}  (bandwidth {bw:g})", show_header=True)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in stats.items():
        table.add_row(k.replace("_", " "), f"{v:.6g}" if isinstance(v, float) else str(v))
    from simsched.cli.common import console

    console().print(table)


@app.command("convert")
@_user_errors
def convert(
    source: Path = typer.Argument(..., help="Input workload file (or scenario, or model name)."),
    target: Path = typer.Argument(..., help="Output file."),
    form: str = typer.Option(None, "--from", help="Input form (default: from the extension)."),
    to: str = typer.Option(None, "--to", help="Output form: wfcommons, dax, stg, dot, graphml, tasklist, "
                           "inline (default: from the extension)."),
) -> None:
    """Convert a workload between formats (written atomically)."""
    from simsched.outputs import check_output
    from simsched.workloads.importers import save

    check_output(target, option="TARGET", inputs=[source] if source.exists() else [])
    graph, _ = load_any(source, form)
    save(graph, target, to)
    typer.echo(f"wrote {target}: {graph.n_tasks} tasks, {graph.n_edges} edges")
