"""A task graph's figures (:func:`simsched.workloads.stats.graph_stats`) as the table of ``simsched workload
info``: one row per metric, numbers to six significant digits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from simsched.report.fit import print_table

if TYPE_CHECKING:
    from rich.console import Console


def print_graph_stats(stats: Mapping[str, float | int], title: str, console: Console) -> None:
    """``stats`` as a two-column table (metric, value) titled ``title``.  O(metrics)."""
    from rich.table import Table

    table = Table(title=title, show_header=True)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in stats.items():
        table.add_row(k.replace("_", " "), f"{v:.6g}" if isinstance(v, float) else str(v))
    print_table(console, table)
