"""Benchmark rows as terminal tables (``simsched bench``): the benchmarks return rows, this prints them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simsched.report.fit import print_table as print_fitted

if TYPE_CHECKING:
    from rich.console import Console


def show_rows(rows: list[dict], title: str, console: Console) -> None:
    """One benchmark group's rows: target rows (keys ``what``, ``measured``, ``baseline``, ``ratio``,
    ``target``, ``ok``) by :func:`print_rows`, any other flat rows by :func:`print_table`."""
    if rows and "what" in rows[0]:
        print_rows(rows, title, console)
    elif rows:
        print_table(rows, title, console)


def print_table(rows: list[dict], title: str, console: Console) -> None:
    """Any list of flat dict rows as a rich table (columns in the first row's key order; a column of
    floats at one precision, :func:`simsched.report.numbers.format_column`)."""
    from rich.table import Table

    from simsched.report.numbers import format_column

    table = Table(title=title)
    keys = list(rows[0])
    cells = {}
    for key in keys:
        values = [row.get(key) for row in rows]
        numeric = all(isinstance(v, float) for v in values)
        # the first column names the row (a scheduler, a size): kept whole, the others fit around it
        table.add_column(key, justify="right" if numeric else "left", no_wrap=key == keys[0])
        cells[key] = format_column(values) if numeric else ["" if v is None else str(v) for v in values]
    for i in range(len(rows)):
        table.add_row(*(cells[k][i] for k in keys))
    print_fitted(console, table)


def print_rows(rows: list[dict], title: str, console: Console) -> None:
    """A rich table of benchmark rows (seconds unless a row says otherwise)."""
    from rich.table import Table

    table = Table(title=title, caption="ratio = baseline / measured (inst/s rows: measured / baseline), "
                  "both timed in this run (the DeepSched paper's figure is quoted, not re-measured); ok: whether "
                  "the target is met, '-' where the target is for another size than measured")
    for col in ("what", "size", "measured", "baseline", "ratio", "target", "ok"):
        table.add_column(col, justify="left" if col in ("what", "size", "target") else "right")

    def fmt(value: Any, unit: str) -> str:
        if value is None:
            return "-"
        if unit == "inst/s":  # throughput rows: ratio = measured / baseline
            return f"{value:,.0f} {unit}"
        if unit == "ms":  # seconds shown in milliseconds (sub-millisecond steps)
            return f"{value * 1e3:.3f} ms"
        return f"{value:.0f} {unit}" if unit == "MB" else f"{value:.3f} s"

    for row in rows:
        unit = row.get("unit", "s")
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}x" if row["ratio"] < 1 else f"{row['ratio']:.1f}x"
        table.add_row(row["what"], row["size"], fmt(row["measured"], unit), fmt(row["baseline"], unit), ratio,
                      row["target"], "-" if row["ok"] is None else "yes" if row["ok"] else "NO")
    print_fitted(console, table)
