"""``simsched train``: train learned schedulers.  This module is the ``train`` command group; other
learned schedulers add their own commands to :data:`app` (one import line each, below).

* ``simsched train deepsched CONFIG.yaml`` — generate (or reuse) HEFT-labelled data, train, write the
  checkpoint named in the config, print the metrics;
* ``... --evaluate`` — afterwards reproduce the DeepSched paper's evaluation (average turnaround of
  HEFT / GA / DeepSched on seen and unseen families at the config's sizes, processor accuracy against
  HEFT, scheduler time at growing sizes); ``--eval-only`` evaluates the existing checkpoint without
  training; ``--json PATH`` writes the figures.

Only typer is imported at module level: torch loads inside the command.  Bad input → exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

app = typer.Typer(help="Train the learned schedulers: DeepSched (`train deepsched`) and the RL agents rl and "
                  "rl-world (`train rl`). Needs PyTorch, the 'learned' extra.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)


def _guarded(fn: Any, *args: Any, **kwargs: Any) -> Any:
    from simsched.cli.common import user_errors

    return user_errors(fn)(*args, **kwargs)


def _console() -> Any:
    from simsched.cli.common import console

    return console()


def print_metrics(metrics: dict[str, float], console: Any) -> None:
    from rich.table import Table

    table = Table(title="DeepSched training (accuracy = processor choice equal to HEFT's)")
    for col in ("split", "accuracy", "cross-entropy", "time MSE"):
        table.add_column(col, justify="left" if col == "split" else "right")
    table.add_row("untrained (val)", f"{metrics['untrained_val_acc']:.3f}", "-", "-")
    for split in ("val", "test", "unseen"):
        if f"{split}_acc" in metrics:
            table.add_row(split, f"{metrics[f'{split}_acc']:.3f}", f"{metrics[f'{split}_ce']:.3f}",
                          f"{metrics[f'{split}_mse']:.4f}")
    console.print(table)
    console.print(f"{int(metrics['epochs'])} epochs on {int(metrics['instances'])} instances "
                  f"in {metrics['train_s']:.0f} s")


def print_turnaround(rows: list[dict], console: Any) -> None:
    from rich.table import Table

    table = Table(title="DeepSched vs HEFT (and the paper's GA), every plan simulated",
                  caption="gap = mean over instances of DeepSched / HEFT - 1, worst = largest per-instance ratio - 1; "
                          "turnaround = average turnaround; accuracy = processor equal to HEFT's")
    for col in ("split", "family", "tasks", "makespan gap", "worst", "turnaround gap", "worst", "HEFT",
                "GA", "DeepSched", "beats GA", "accuracy"):
        table.add_column(col, justify="left" if col in ("split", "family") else "right")
    for r in rows:
        table.add_row(r["split"], r["family"], f"{r['tasks']:.0f}", f"{100 * r['makespan_gap']:+.1f}%",
                      f"{100 * r['worst_makespan_gap']:+.1f}%", f"{100 * r['gap_vs_heft']:+.1f}%",
                      f"{100 * r['worst_turnaround_gap']:+.1f}%", f"{r['heft']:.4g}", f"{r['ga']:.4g}",
                      f"{r['deepsched']:.4g}", f"{100 * r['beats_ga']:.0f}%", f"{r['accuracy']:.3f}")
    console.print(table)


def print_timing(rows: list[dict], console: Any) -> None:
    from rich.table import Table

    from simsched.learned.deepsched.evaluate import crossover_size

    table = Table(title="scheduler execution time (best of repeats after a warm-up; checkpoint pre-loaded)")
    for col in ("tasks", "processors", "HEFT", "DeepSched", "HEFT / DeepSched"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(f"{r['tasks']:,}", str(r["processors"]), f"{r['heft_s']:.4f} s", f"{r['deepsched_s']:.4f} s",
                      f"{r['ratio']:.2f}x")
    console.print(table)
    size = crossover_size(rows)
    console.print("DeepSched is faster than HEFT from " + (f"{size:,} tasks on" if size else
                                                         "no size tried (HEFT stays faster)"))


def _deepsched(config: Path, evaluate: bool, eval_only: bool, device: str | None, json_path: Path | None,
               quiet: bool, top_k: int | None = None) -> None:
    from simsched.errors import SimschedError
    from simsched.extras import require_learned
    from simsched.learned.deepsched.config import load_config

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


@app.command("deepsched")
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
    _guarded(_deepsched, config, evaluate, eval_only, device, json_path, quiet, top_k)


# other learned schedulers register their commands on `app` here, one import line each:
from simsched.cli import rl_cmd  # noqa: E402  (light: torch loads inside the command)

app.command("rl")(rl_cmd.rl)
