"""Numbers for tables a person reads: one precision per column, no scientific notation, no ``± 0``.

Every cell of a column gets the same number of decimals, chosen so that the column's largest value
shows ``digits`` significant digits (``173.7``, ``5.1``, ``444.0`` for a makespan column; ``80``,
``86`` when every value is whole; ``3.2``, not ``3.200``, when no value needs the last decimals); a spread
(std or confidence half-width) uses the column's decimals too and is dropped when it rounds to zero
there.  O(cells).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MAX_DECIMALS = 6


def column_decimals(values: Sequence[float], digits: int = 4) -> int:
    """Decimals that give the largest finite non-zero ``|value|`` ``digits`` significant digits (none
    when every value is a whole number)."""
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    if not finite or all(abs(v - round(v)) < 1e-9 * max(1.0, v) for v in finite):
        return 0
    return min(MAX_DECIMALS, max(0, digits - 1 - math.floor(math.log10(max(finite)))))


def format_column(means: Sequence[float], spreads: Sequence[float] | None = None, *, digits: int = 4,
                  unit: str = "") -> list[str]:
    """``"mean ± spread"`` per row (``"-"`` for a missing mean), all with the column's decimals;
    ``± spread`` only where the spread is finite and does not round to zero."""
    d = column_decimals(means, digits)
    shown = [v for v in [*means, *(spreads or [])] if math.isfinite(v)]
    while d > 0 and all(abs(round(v, d - 1) - round(v, d)) < 1e-9 * max(1.0, abs(v)) for v in shown):
        d -= 1  # no trailing zeros common to the whole column (3.2, not 3.200)
    cells = []
    for k, mean in enumerate(means):
        if not math.isfinite(mean):
            cells.append("-")
            continue
        text = f"{mean:.{d}f}"
        spread = spreads[k] if spreads is not None else float("nan")
        if math.isfinite(spread) and round(abs(spread), d) > 0:
            text += f" ± {abs(spread):.{d}f}"
        cells.append(text + unit)
    return cells


def format_duration(seconds: float, spread: float = float("nan"), digits: int = 3) -> str:
    """A wall time in ms below 1 s, else in s, with ``digits`` significant digits in fixed notation
    (``0.415 ms``, ``2.93 s``, ``1234 s``); the spread in the same unit and decimals, left out when it
    rounds to zero."""
    scale, unit = (1e3, " ms") if abs(seconds) < 1 else (1.0, " s")
    return format_column([seconds * scale], [spread * scale], digits=digits, unit=unit)[0]
