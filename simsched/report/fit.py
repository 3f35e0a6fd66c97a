"""Tables that fit 100 columns: measuring a rich table, and printing a table with one column per
processor in parts of consecutive processors when the whole is wider than the terminal (or than 100
columns, whichever is narrower).

The run table (:mod:`simsched.report.run_table`) fits by leaving out its least telling columns; a
teaching table (``simsched explain``) cannot leave out a processor, so it is split instead: each part
repeats the leading columns (step, task) and the closing ones (chosen, why), and its title says which
processors it shows.  ``wide=True`` prints the whole table at its natural width, as ``--wide`` does
for the run table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

MAX_COLUMNS = 100
"""The widest a table is printed without ``--wide``, whatever the terminal (a pipe is 200 wide)."""


def fit_width(console: Console) -> int:
    """The width to print at: the terminal's, at most :data:`MAX_COLUMNS`.  O(1)."""
    return min(console.width, MAX_COLUMNS)


def table_width(console: Console, table: Table, least: bool = False) -> int:
    """Columns ``table`` needs to show every cell on one line (title and caption aside, which wrap);
    with ``least``, the fewest it can be printed in without cutting a cell: text columns wrapped at
    their spaces, ``no_wrap`` columns whole.  O(cells)."""
    from rich.measure import Measurement

    measured = Measurement.get(console, console.options.update_width(10_000), table)
    return measured.minimum if least else measured.maximum


def print_natural(console: Console, table: Table) -> None:
    """Print ``table`` with every cell whole at its natural width, even wider than the terminal (which
    then wraps lines): what ``--wide`` promises.  O(cells)."""
    needed = table_width(console, table)
    if needed <= console.width:
        console.print(table)
        return
    from rich.console import Console

    Console(file=console.file, width=needed, color_system=console.color_system,
            force_terminal=console.is_terminal, no_color=console.no_color).print(table)


def column_widths(console: Console, table: Table) -> list[int]:
    """Each column's natural width (its widest cell or header, on one line), padding and rule
    excluded.  O(cells)."""
    from rich.measure import Measurement
    from rich.text import Text

    options = console.options.update_width(10_000)

    def width(cell: object) -> int:
        if isinstance(cell, str):
            return max((Text.from_markup(line).cell_len for line in cell.splitlines()), default=0)
        return Measurement.get(console, options, cell).maximum  # type: ignore[arg-type]

    return [max([width(c.header), *(width(cell) for cell in c.cells)]) for c in table.columns]


def parts(console: Console, table: Table, first: int, count: int, width: int) -> list[list[int]]:
    """Consecutive groups of ``range(count)`` (the names whose columns are ``table.columns[first:first +
    count]``) such that the table of the other columns and one group's fits ``width`` columns, each
    group as long as it can be (a group of one where even that does not fit).  One group when the
    whole table fits.  O(cells) for the measuring, O(count) for the packing.
    """
    widths = [w + 3 for w in column_widths(console, table)]  # one space each side, one rule
    fixed = 1 + sum(widths[:first]) + sum(widths[first + count:])  # the left edge, the other columns
    block = widths[first:first + count]
    if fixed + sum(block) <= width:
        return [list(range(count))]
    groups: list[list[int]] = [[]]
    used = fixed
    for i, w in enumerate(block):
        if groups[-1] and used + w > width:
            groups.append([])
            used = fixed
        groups[-1].append(i)
        used += w
    return groups


def print_in_parts(console: Console, build: Callable[[Sequence[int]], Table], names: Sequence[str], *,
                   first: int, what: str = "processors", wide: bool = False) -> None:
    """Print the table ``build(indices)`` makes with one column for each given index into ``names``,
    those columns forming the block that starts at column ``first``: whole when it fits
    :func:`fit_width` or ``wide`` is set (then at its natural width), otherwise in parts of
    consecutive names, each part's title ending with ``(what A-B, part i of k)``.  A part of one name
    that is still too wide has its wrappable text columns (those not ``no_wrap``, e.g. a "why"
    column) wrapped at spaces; no cell is ever cut.  ``names`` are printable (escaped) names.
    O(cells).
    """
    whole = build(range(len(names)))
    if wide:
        print_natural(console, whole)
        return
    groups = parts(console, whole, first, len(names), fit_width(console))
    for i, group in enumerate(groups, 1):
        table = whole if len(groups) == 1 else build(group)
        if len(groups) > 1:
            span = names[group[0]] if len(group) == 1 else f"{names[group[0]]}-{names[group[-1]]}"
            note = f"({what} {span}, part {i} of {len(groups)})"
            table.title = f"{table.title} {note}" if table.title else note
            table.title_justify = "left"
        console.print(table, width=max(fit_width(console), table_width(console, table, least=True)))
