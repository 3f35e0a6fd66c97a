"""Summaries of study results: mean and 95% confidence interval per study point and scheduler.

The interval is Student's t: ``mean ± t(0.975, n-1) · s / sqrt(n)`` with the sample standard
deviation ``s`` over the successful runs (seeds) of a group; it is NaN for a single run.  Failed
runs are counted, never averaged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from simsched.stats import t_interval
from simsched.study.work import FIXED


def override_fields(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The study's override columns (every column that is not a fixed one), in first-seen order."""
    return list(dict.fromkeys(k for r in rows for k in r if k not in FIXED))


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, int]:
    """``(mean, half-width of the level-confidence interval, n)`` over the finite ``values``
    (:func:`simsched.stats.t_interval`).  O(n)."""
    return t_interval([v for v in values if v is not None], level)


def group_rows(rows: Sequence[dict[str, Any]], by: Sequence[str]) -> dict[tuple, list[dict[str, Any]]]:
    """Rows grouped by the values of the ``by`` columns, groups in first-seen order."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in by), []).append(r)
    return groups


def summarize_rows(rows: Sequence[dict[str, Any]], metrics: Sequence[str],
                   level: float = 0.95) -> list[dict[str, Any]]:
    """One entry per (study point, scheduler): the override values, ``scheduler``, ``runs``,
    ``failed`` and, per metric, ``{"mean", "ci", "n"}``.  Ordered by point, then scheduler as first
    seen.  O(rows)."""
    fields = override_fields(rows)
    out = []
    groups = group_rows(sorted(rows, key=lambda r: r.get("point") or 0), ["point_id", "scheduler"])
    for (_, scheduler), members in groups.items():
        point = members[0].get("point")
        ok = [r for r in members if not r.get("error")]
        entry: dict[str, Any] = {"point": point, **{f: members[0].get(f) for f in fields},
                                 "scheduler": scheduler, "runs": len(members), "failed": len(members) - len(ok)}
        for m in metrics:
            mean, ci, n = mean_ci([r.get(m) for r in ok], level)
            entry[m] = {"mean": mean, "ci": ci, "n": n}
        out.append(entry)
    return out


HIGHER_IS_BETTER = frozenset({"utilization", "speedup", "efficiency"})
"""Metrics where a larger mean is better; for every other metric a smaller one is."""


def decimals_of(mean: float, ci: float) -> int:
    """Decimal places that show ``ci`` to two significant digits (``mean`` to four significant
    digits when the interval is zero or unknown), between 0 and 6."""
    if not math.isfinite(mean):
        return 0
    if not math.isfinite(ci) or ci <= 0 or ci < abs(mean) * 1e-9:
        return min(max(0, 3 - math.floor(math.log10(abs(mean)))) if mean else 0, 6)
    return min(max(0, 1 - math.floor(math.log10(ci))), 6)


def column_decimals(pairs: Sequence[tuple[float, float]], percent: bool = False) -> int:
    """One number of decimal places for a table column of ``(mean, ci)`` pairs, so the column reads
    at one precision: what the column's median interval needs for two significant digits
    (:func:`decimals_of`; of the means when no row has an interval).  Rows with a much narrower
    interval show it as ``< 0.01``-style bounds rather than false digits in the others.
    O(n log n)."""
    import statistics

    scale = 100.0 if percent else 1.0
    finite = [(m * scale, c * scale) for m, c in pairs if math.isfinite(m)]
    pool = [decimals_of(m, c) for m, c in finite if math.isfinite(c) and c > abs(m) * 1e-9]
    pool = pool or [decimals_of(m, math.nan) for m, _ in finite]
    return int(statistics.median_low(pool)) if pool else 0


def format_mean_ci(mean: float, ci: float, percent: bool = False, decimals: int | None = None) -> str:
    """``mean ± ci`` for a table, both to ``decimals`` places (default :func:`decimals_of`: the
    interval to two significant digits); ``±`` dropped when the interval is zero or unknown (a
    single run).  ``percent`` shows both times 100 with a ``%``.  Never scientific notation."""
    if not math.isfinite(mean):
        return "-"
    scale, unit = (100.0, "%") if percent else (1.0, "")
    mean, ci = mean * scale, ci * scale
    places = decimals_of(mean, ci) if decimals is None else decimals
    if not math.isfinite(ci) or ci <= 0 or ci < abs(mean) * 1e-9:
        return f"{mean:.{places}f}{unit}"
    if round(ci, places) == 0:
        return f"{mean:.{places}f} ± <{10.0 ** -places:.{places}f}{unit}"
    return f"{mean:.{places}f} ± {ci:.{places}f}{unit}"
