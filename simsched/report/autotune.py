"""The autotuning comparison as a terminal table (:func:`simsched.run.autotune.run_autotuning`'s summary)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simsched.report.fit import print_table

if TYPE_CHECKING:
    from rich.console import Console


def print_autotuning_table(result: dict, console: Console) -> None:
    """Print :func:`run_autotuning`'s summary as a rich table (one row per policy)."""
    from rich.table import Table

    table = Table(title="autotuning: policies compared (means over seeds)")
    for col in ("policy", "all done (h)", "vs seq", "job (h)", "dev idle", "CPU", "distorted", "penalty",
                "dev-h"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for s in result["summary"]:
        ratio = s["makespan_vs_sequential"]
        table.add_row(s["policy"], f"{s['makespan_h']:.2f}", "-" if ratio is None else f"{ratio:.2f}x",
                      f"{s['mean_completion_h']:.2f}", f"{s['device_idle_fraction']:.0%}",
                      f"{s['cpu_utilisation']:.0%}", f"{s['distorted_measurements']:.0f}",
                      f"{s['mean_latency_penalty']:.1%}", f"{s['device_hours']:.1f}")
    print_table(console, table)
