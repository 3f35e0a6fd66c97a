"""``simsched generalise`` on a cluster log with windows (:mod:`simsched.learned.generalise_windows`):
the days are windows of the log, from a seed space or, for ``draw: rlscheduler``, the protocol's own;
the policy is a ``simsched run -s`` text, paired with the best heuristic of each cell.  Bad input: exit
2 with one located line, nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def generalise_log(path: Path, loaded: Any, scheduler: str, *, days: int, cells: list[str] | None, fresh: bool,
                   seed: int | None, seed_space: str | None, json_path: Path | None,
                   html_path: Path | None) -> None:
    """Check the log's windows, the cells and the policy, choose the windows' days, run the matrix and
    print / write it (:func:`simsched.cli.generalise_io.write_outputs`)."""
    from simsched import __version__
    from simsched.cli.generalise_io import choose_days, write_outputs
    from simsched.errors import SimschedError
    from simsched.learned.generalise_matrix import summary
    from simsched.learned.generalise_windows import CELLS, log_matrix
    from simsched.run.runner import _select

    config = loaded.workload.options["batch"]
    w = config.windows
    if w is None:
        raise loaded.locate(SimschedError("the generalisation matrix of a cluster log pairs policies window by "
                                          "window: give the log windows (workload.stream.windows)"),
                            ("workload", "stream"))
    unknown = [c for c in cells or () if c not in CELLS]
    if unknown:
        raise SimschedError(f"unknown cell {unknown[0]!r} of a cluster log; choose from {', '.join(CELLS)}",
                            field="--cell")
    choice = _select(loaded, [scheduler], ("batch",))[0]  # an unknown policy, one the log cannot feed,
    try:  # a bad parameter or model file: refused before any run
        choice.create()
    except SimschedError as exc:  # a model file's own error names the file
        raise (exc if exc.file is not None else exc.located(field="--scheduler")) from None
    if w.draw == "rlscheduler":
        given = "--fresh" if fresh else "--seed-space" if seed_space is not None else "--seed" if seed is not None \
            else None
        if given is not None:
            raise SimschedError(f"this log's windows are drawn as RLScheduler draws them (draw: rlscheduler): day "
                                f"seed + k is its k-th window; {given} needs draw: seed", field=given)
        space, base, day_seeds = "protocol", loaded.seed, list(range(loaded.seed, loaded.seed + days))
    else:
        space, base, day_seeds = choose_days(loaded, days, fresh=fresh, seed=seed, seed_space=seed_space)
    typer.echo(f"{space} windows: days {day_seeds[0]} ... {day_seeds[-1]}", err=True)
    rows = log_matrix(path, scheduler, day_seeds, tuple(cells) if cells else CELLS,
                      progress=lambda text: typer.echo(f"  {text}", err=True))
    doc = {"scenario": loaded.name, "simsched_version": __version__, "scheduler": scheduler, "days": days,
           "seed_space": space, "seed": base, "metric": "mean bsld", "value": "bsld", "per": "windows",
           "trace": Path(config.trace.source).name, "window_jobs": w.jobs, "rows": rows, "summary": summary(rows)}
    write_outputs(doc, rows, json_path, html_path)
    from simsched.schedulers.batch_learned import describe_decisions

    for r in rows:
        if "decided_by" in r:
            typer.echo(f"{r['scheduler']} on {r['cell']}: {describe_decisions(r['decided_by'])}")
