"""Tables that fit 100 columns: measuring a rich table, and printing a table with one column per
processor in parts of consecutive processors when the whole is wider than the terminal (or than 100
columns, whichever is narrower).

The run table (:mod:`simsched.report.run_table`) fits by leaving out its least telling columns; a
teaching table (``simsched explain``) cannot leave out a processor, so it is split instead: each part
repeats the leading columns (step, task) and the closing ones (chosen, why), and its title says which
processors it shows.  ``wide=True`` prints the whole table at its natural width, as ``--wide`` does
for the run table.

Any other table goes through :func:`print_table`: whole when it fits (its text columns wrapped at
their spaces), else in parts of consecutive columns, each repeating the leading key column(s), so that
no line is wider than the terminal and no number is cut.
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


def _copy(table: Table, keep: Sequence[int]) -> Table:
    """A table with ``table``'s title, caption, box and the columns ``keep`` (indices), cells and all.
    O(cells)."""
    from rich.table import Table

    part = Table(title=table.title, caption=table.caption, box=table.box, show_header=table.show_header,
                 show_lines=table.show_lines, title_justify=table.title_justify,
                 caption_justify=table.caption_justify, header_style=table.header_style,
                 show_edge=table.show_edge, expand=False)
    for i in keep:
        c = table.columns[i]
        part.add_column(c.header, footer=c.footer, justify=c.justify, style=c.style,
                        header_style=c.header_style, overflow=c.overflow, no_wrap=c.no_wrap,
                        min_width=c.min_width, max_width=c.max_width, vertical=c.vertical)
    for r, row in enumerate(table.rows):
        part.add_row(*(table.columns[i]._cells[r] for i in keep), style=row.style, end_section=row.end_section)
    return part


FOLDED = 12
"""The narrowest a ``overflow="fold"`` text column is counted as: its long words (a regular expression,
a path) fold onto the next line rather than push the table into parts."""


def _least_columns(console: Console, table: Table) -> list[int]:
    """Each column's fewest columns with its rule (text wrapped at spaces, a fold column at most
    :data:`FOLDED`, a ``no_wrap`` column whole, its header too).  O(cells)."""
    least = [table_width(console, _copy(table, [i]), least=not c.no_wrap) - 1 for i, c in enumerate(table.columns)]
    return [min(w, FOLDED + 3) if c.overflow == "fold" and not c.no_wrap else w
            for w, c in zip(least, table.columns)]


def column_parts(console: Console, table: Table, width: int, key: int = 1) -> list[list[int]]:
    """Groups of column indices, each beginning with the ``key`` leading columns and then consecutive
    other columns, such that each group's table needs at most ``width`` columns with its text wrapped
    (at least one other column per group).  One group (every column) when the table fits.  O(cells)."""
    if len(table.columns) <= key + 1:
        return [list(range(len(table.columns)))]
    least = _least_columns(console, table)
    fixed = 1 + sum(least[:key])
    if fixed + sum(least[key:]) <= width:
        return [list(range(len(table.columns)))]
    groups: list[list[int]] = [[]]
    used = fixed
    for i in range(key, len(table.columns)):
        if groups[-1] and used + least[i] > width:
            groups.append([])
            used = fixed
        groups[-1].append(i)
        used += least[i]
    return [[*range(key), *g] for g in groups]


def print_table(console: Console, table: Table, wide: bool = False, key: int = 1) -> None:
    """Print ``table`` within :func:`fit_width`: whole when it fits with its text columns wrapped at their
    spaces, else in parts of consecutive columns, each repeating the first ``key`` columns (the row's
    name) and titled ``(columns A-B, part i of k)``; a cell is never cut.  ``wide``: whole at its natural
    width (the ``--wide`` promise).  O(cells)."""
    if wide:
        print_natural(console, table)
        return
    width = fit_width(console)
    groups = column_parts(console, table, width, key)
    for i, group in enumerate(groups, 1):
        part = table if len(groups) == 1 else _copy(table, group)
        if len(groups) > 1:  # the title above each part, the caption once after the last, at the terminal's width
            note = f"(part {i} of {len(groups)})"
            console.print(f"{table.title} {note}" if table.title else note, width=width, highlight=False)
            part.title = part.caption = None
        need = 1 + sum(_least_columns(console, part)) if len(groups) > 1 else width
        console.print(part, width=max(width, need))
    if len(groups) > 1 and table.caption:
        console.print(table.caption, width=width, highlight=False)
