"""``simsched train``: train learned schedulers.  This module is the ``train`` command group; other
learned schedulers add their own commands to :data:`app` (one import line each, below).

* ``simsched train deepsched CONFIG.yaml`` — generate (or reuse) HEFT-labelled data, train, write the
  checkpoint named in the config, print the metrics;
* ``... --evaluate`` — afterwards reproduce the DeepSched paper's evaluation (average turnaround of
  HEFT / GA / DeepSched on seen and unseen families at the config's sizes, processor accuracy against
  HEFT, scheduler time at growing sizes); ``--eval-only`` evaluates the existing checkpoint without
  training; ``--json PATH`` writes the figures.

The tables are :mod:`simsched.report.deepsched`'s.  Only typer is imported at module level: torch loads
inside the command.  Bad input → exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from simsched.cli.common import console as _console
from simsched.cli.common import user_errors

app = typer.Typer(help="Train the learned schedulers: DeepSched (`train deepsched`) and the RL agents rl and "
                  "rl-world (`train rl`). Needs PyTorch, the 'learned' extra.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)


@app.command("deepsched")
@user_errors
def deepsched(
    config: Path = typer.Argument(..., help="DeepSched YAML configuration (see scenarios/deepsched/).",
                                  show_default=False),
    evaluate: bool = typer.Option(False, "--evaluate", help="After training, run the paper's evaluation."),
    eval_only: bool = typer.Option(False, "--eval-only", help="Evaluate the config's checkpoint; do not train."),
    device: str | None = typer.Option(None, "--device", help="cpu, cuda or auto (default: the config's)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write metrics and evaluation figures here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No per-epoch log or progress bar."),
    top_k: int | None = typer.Option(None, "--top-k", help="Evaluate with this decode (default: all processors)."),
) -> None:
    """Train DeepSched (a network imitating HEFT) from CONFIG and write its checkpoint."""
    from simsched.errors import SimschedError
    from simsched.extras import require_learned
    from simsched.learned.deepsched.config import load_config
    from simsched.report.deepsched import print_metrics, print_timing, print_turnaround

    require_learned("`simsched train deepsched`")

    if json_path is not None:
        from simsched.outputs import check_output

        check_output(json_path, option="--json", suffixes=None)
    if top_k is not None and top_k < 1:
        raise SimschedError(f"--top-k must be >= 1, got {top_k}")
    cfg = load_config(config)
    if device is not None:
        if device not in ("cpu", "cuda", "auto"):
            raise SimschedError(f"--device must be cpu, cuda or auto, got {device!r}")
        cfg.train.device = device  # type: ignore[assignment]
    if not eval_only:  # where training writes, checked before it starts (minutes of work)
        from simsched.outputs import check_output, output_dir

        ckpt_path = cfg.path(cfg.checkpoint)
        try:
            output_dir(ckpt_path.parent, option="checkpoint")
            check_output(ckpt_path, option="checkpoint", inputs=[config, json_path])
            output_dir(cfg.path(cfg.data.dir), option="data.dir")
        except SimschedError as exc:
            raise exc.located(file=config) from None
    console = _console()
    doc: dict[str, Any] = {"config": str(config), "checkpoint": str(cfg.path(cfg.checkpoint))}
    if not eval_only:
        from simsched.learned.deepsched.train import train

        metrics = train(cfg, log=(lambda s: None) if quiet else console.print, show_progress=not quiet)
        print_metrics(metrics, console)
        doc["metrics"] = metrics
    if evaluate or eval_only:
        from simsched.learned.deepsched import evaluate as ev
        from simsched.learned.deepsched.train import resolve_device

        dev = resolve_device(cfg.train.device)
        ckpt = cfg.path(cfg.checkpoint)
        rows = ev.turnaround_rows(cfg, ckpt, device=dev, top_k=top_k)
        print_turnaround(rows, console)
        summary = ev.summarize(rows) if any(r["split"] == "unseen" for r in rows) else {}
        for key, value in summary.items():
            console.print(f"{key}: {100 * value:+.1f}%")
        timing = ev.timing_rows(ckpt, cfg.eval.timing_sizes, cfg.eval.timing_processors, cfg.eval.timing_repeat, dev)
        print_timing(timing, console)
        doc.update(turnaround=rows, summary=summary, timing=timing)
    if json_path is not None:
        from simsched.run.results import write_document

        write_document(doc, json_path)
        typer.echo(f"results written to {json_path}")


# other learned schedulers register their commands on `app` here, one import line each:
from simsched.cli import rl_cmd  # noqa: E402  (light: torch loads inside the command)

app.command("rl")(rl_cmd.rl)


@app.command("batch-priority")
@user_errors
def batch_priority(
    scenario: Path = typer.Argument(..., help="Scenario of a cluster log with windows.", show_default=False),
    out: Path = typer.Option(..., "--output", "-o", "--out", help="Model file (JSON) to write.", show_default=False),
    train: int = typer.Option(20, "--train-windows", help="Windows of the train seed space to fit on."),
    select: int = typer.Option(30, "--select-windows", help="Windows of the select seed space to judge the fit."),
    iterations: int = typer.Option(8, "--iterations", help="Cross-entropy iterations."),
    population: int = typer.Option(20, "--population", help="Candidates per iteration."),
    seed: int = typer.Option(0, "--seed", help="Seed of the search."),
    features: str = typer.Option("", "--features", help="Comma-separated job features to weigh (default: all of "
                                 "log_requested, log_procs, log_wait, fits, log_slowdown, requested_rank, "
                                 "procs_over_free, log_area).", show_default=False),
    hold: bool = typer.Option(True, "--hold/--no-hold", help="Also fit the hold-back of long jobs."),
    backfill_order: str = typer.Option("score", "--backfill-order", help="Backfilling candidates in 'score' "
                                       "(learned) or 'submit' order."),
) -> None:
    """Fit a learned priority function (learned-priority) on train windows of a cluster log; keep it only if
    it beats the best heuristic on select windows, else the model names that heuristic."""
    import json

    from simsched.errors import SimschedError
    from simsched.learned.batch_fit import fit_priority
    from simsched.outputs import check_output
    from simsched.scenario import load_scenario
    from simsched.schedulers.batch_features import FEATURES

    names = tuple(f.strip() for f in features.split(",") if f.strip()) if features else FEATURES
    if not names or len(set(names)) != len(names) or any(n not in FEATURES for n in names):
        raise SimschedError(f"--features: {features!r} is not a list of distinct names from {', '.join(FEATURES)}")
    if backfill_order not in ("submit", "score"):
        raise SimschedError(f"--backfill-order: {backfill_order!r} is not 'submit' or 'score'")
    check_output(out, option="--output", suffixes=(".json",), inputs=[scenario])
    loaded = load_scenario(scenario)
    doc = fit_priority(loaded, train=train, select=select, iterations=iterations, population=population, seed=seed,
                       features=names, hold=hold, backfill_order=backfill_order, log=_console().print)
    from simsched.fileio import atomic_path

    with atomic_path(out) as tmp:
        Path(tmp).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    typer.echo(f"model written to {out} (use: {doc['use']})")
