"""The tables of ``simsched train deepsched``: training metrics, the paper's turnaround evaluation and the
scheduler times (the figures come from :mod:`simsched.learned.deepsched`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simsched.report.fit import print_table

if TYPE_CHECKING:
    from rich.console import Console


def print_metrics(metrics: dict[str, float], console: Console) -> None:
    """The training metrics: processor accuracy against HEFT's choice (untrained, then per split),
    cross-entropy and the time head's error, and how long training took."""
    from rich.table import Table

    table = Table(title="DeepSched training (accuracy = processor choice equal to HEFT's)")
    for col in ("split", "accuracy", "cross-entropy", "time MSE"):
        table.add_column(col, justify="left" if col == "split" else "right")
    table.add_row("untrained (val)", f"{metrics['untrained_val_acc']:.3f}", "-", "-")
    for split in ("val", "test", "unseen"):
        if f"{split}_acc" in metrics:
            table.add_row(split, f"{metrics[f'{split}_acc']:.3f}", f"{metrics[f'{split}_ce']:.3f}",
                          f"{metrics[f'{split}_mse']:.4f}")
    print_table(console, table)
    console.print(f"{int(metrics['epochs'])} epochs on {int(metrics['instances'])} instances "
                  f"in {metrics['train_s']:.0f} s")


def print_turnaround(rows: list[dict], console: Console) -> None:
    """The paper's evaluation (:func:`simsched.learned.deepsched.evaluate.turnaround_rows`): per split, family
    and size, DeepSched's makespan and turnaround gaps to HEFT, the three schedulers' turnaround, how often
    DeepSched beats GA and its processor accuracy."""
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
    print_table(console, table)


def print_timing(rows: list[dict], console: Console) -> None:
    """Scheduler time of HEFT and DeepSched at growing sizes, and the size from which DeepSched is faster."""
    from rich.table import Table

    from simsched.learned.deepsched.evaluate import crossover_size

    table = Table(title="scheduler execution time (best of repeats after a warm-up; checkpoint pre-loaded)")
    for col in ("tasks", "processors", "HEFT", "DeepSched", "HEFT / DeepSched"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(f"{r['tasks']:,}", str(r["processors"]), f"{r['heft_s']:.4f} s", f"{r['deepsched_s']:.4f} s",
                      f"{r['ratio']:.2f}x")
    print_table(console, table)
    size = crossover_size(rows)
    console.print("DeepSched is faster than HEFT from " + (f"{size:,} tasks on" if size else
                                                         "no size tried (HEFT stays faster)"))
