"""Summaries of study results: mean and 95% confidence interval per study point and scheduler.

The interval is Student's t: ``mean ± t(0.975, n-1) · s / sqrt(n)`` with the sample standard
deviation ``s`` over the successful runs (seeds) of a group; it is NaN for a single run.  Failed
runs are counted, never averaged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from simsched.errors import SimschedError
from simsched.run.columns import DAY_RECORD, KNOWN
from simsched.stats import t_interval


def override_fields(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The study's override columns (every column that is not a fixed one, nor a capacity day's record:
    :data:`~simsched.run.columns.DAY_RECORD`), in first-seen order."""
    return list(dict.fromkeys(k for r in rows for k in r if k not in KNOWN and k not in DAY_RECORD))


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


HIGHER_IS_BETTER = frozenset({"utilization", "speedup", "efficiency", "throughput"})
"""Metrics where a larger mean is better; for every other metric a smaller one is."""

PERCENT = frozenset({"utilization", "deadline_miss_rate", "lost_work_fraction"})
"""Metrics that are fractions, shown as percentages in tables."""

GRAPH_DEFAULTS = ("makespan", "slr", "utilization")
STREAM_DEFAULTS = ("jct_mean", "jct_p95", "slowdown_mean", "utilization")


def default_metrics(rows: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """The metrics a table of ``rows`` shows when the user names none: for results that include job
    streams (a successful row with a finite ``jct_mean``) the job metrics — mean and p95 JCT,
    slowdown — plus utilisation, and ``deadline_miss_rate`` when some job had a deadline; otherwise
    makespan, SLR and utilisation.  O(rows)."""
    def finite(r: dict[str, Any], key: str) -> bool:
        v = r.get(key)
        return not r.get("error") and isinstance(v, (int, float)) and math.isfinite(v)

    if not any(finite(r, "jct_mean") for r in rows):
        return GRAPH_DEFAULTS
    if any(finite(r, "deadline_miss_rate") for r in rows):
        return (*STREAM_DEFAULTS[:3], "deadline_miss_rate", STREAM_DEFAULTS[3])
    return STREAM_DEFAULTS


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


def paired_comparison(rows: Sequence[dict[str, Any]], metric: str, level: float = 0.95) -> dict[str, Any]:
    """Schedulers of one study point (or one run) compared on the seeds they share.

    ``rows`` carry ``scheduler``, ``seed`` and ``metric`` (failed runs, NaN or with an ``error``, are
    left out pair by pair).  Returns ``{"reference": the scheduler with the best mean (geometric when every
    value is > 0, the mean the ratios show; ``"reference_by"`` says which), "best": the
    significantly best scheduler or None (:func:`simsched.stats.significantly_best`), "ratios":
    {scheduler: {"ratio", "low", "high", "n", "significant"}} — the geometric mean of the per-seed
    ratio to the reference with its paired 95% interval — and "matrix": {(a, b): {"win", "tie",
    "loss", "n", "better", "worse"}}}``.  Larger is better for :data:`HIGHER_IS_BETTER` metrics.
    O(k² · seeds) for k schedulers."""
    from simsched.stats import paired_ratio, significantly_best, win_tie_loss

    higher = metric in HIGHER_IS_BETTER
    per_seed: dict[str, dict[int, float]] = {}
    for r in rows:
        value = r.get(metric)
        if r.get("error") or value is None or not math.isfinite(float(value)):
            per_seed.setdefault(str(r["scheduler"]), {})
            continue
        per_seed.setdefault(str(r["scheduler"]), {})[int(r.get("seed") or 0)] = float(value)
    means, by = _reference_means(per_seed)
    if not means:
        return {"metric": metric, "reference": None, "best": None, "ratios": {}, "matrix": {}}
    reference = (max if higher else min)(means, key=lambda k: means[k])
    ratios = {}
    for name, values in per_seed.items():
        p = paired_ratio(values, per_seed[reference], level)
        ratios[name] = {"ratio": p.estimate, "low": p.low, "high": p.high, "n": p.n,
                        "significant": p.significant}
    return {"metric": metric, "reference": reference, "reference_by": by,
            "best": significantly_best(per_seed, higher, level),
            "ratios": ratios, "matrix": win_tie_loss(per_seed, higher, level)}


def _reference_means(per_seed: Mapping[str, Mapping[int, float]]) -> tuple[dict[str, float], str]:
    """Each scheduler's mean over its seeds, on the scale the paired ratios are shown on: the geometric
    mean when every value is > 0 (the ratios are geometric means of per-seed ratios, so the reference
    chosen by it is never beaten on that same mean), else the arithmetic mean (a zero has no logarithm).
    Returns the means and ``"geometric"`` or ``"arithmetic"``.  O(values)."""
    values = [x for v in per_seed.values() for x in v.values()]
    if values and all(x > 0 for x in values):
        return {k: math.exp(sum(math.log(x) for x in v.values()) / len(v)) for k, v in per_seed.items() if v}, \
            "geometric"
    return {k: sum(v.values()) / len(v) for k, v in per_seed.items() if v}, "arithmetic"


def format_ratio(entry: Mapping[str, Any]) -> str:
    """``×1.12 [1.05, 1.20]`` for a paired ratio (``×1`` for the reference itself, ``-`` for none)."""
    r, lo, hi = entry.get("ratio", math.nan), entry.get("low", math.nan), entry.get("high", math.nan)
    if not math.isfinite(r):
        return "-"
    if not math.isfinite(lo):
        return f"×{r:.3f}"
    if lo == hi == r:
        return f"×{r:.3f}"
    return f"×{r:.3f} [{lo:.3f}, {hi:.3f}]"


def format_wtl(cell: Mapping[str, Any]) -> str:
    """``W/T/L`` with ``*`` when the paired interval is significant either way."""
    mark = "*" if cell.get("better") or cell.get("worse") else ""
    return f"{cell['win']}/{cell['tie']}/{cell['loss']}{mark}"


def paired_entries(rows: Sequence[dict[str, Any]], fields: Sequence[str],
                   metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Per study point: its override values and, per metric, the paired comparison of its schedulers
    on their common seeds (:func:`simsched.study.stats.paired_comparison`), matrix keys as ``"a vs b"``."""
    out = []
    for (point,), members in group_rows(sorted(rows, key=lambda r: r.get("point") or 0), ["point"]).items():
        entry: dict[str, Any] = {"point": point, **{f: members[0].get(f) for f in fields}}
        for m in metrics:
            comp = paired_comparison(members, m)
            comp["matrix"] = {f"{a} vs {b}": cell for (a, b), cell in comp["matrix"].items()}
            entry[m] = comp
        out.append(entry)
    return out


def objective_entries(rows: Sequence[dict[str, Any]], fields: Sequence[str], text: str) -> list[dict[str, Any]]:
    """Per study point and scheduler: on how many seeds (days) the objective ``text`` holds, the rate
    and its Wilson 95% interval (a failed run counts as a day that misses it).  With capacity as a
    study field this is the capacity what-if swept over a grid.  O(rows)."""
    from simsched.capacity.objective import parse_objective
    from simsched.run.columns import METRICS
    from simsched.stats import wilson_interval

    objective = parse_objective(text, field="--objective")
    for c in objective.clauses:
        if c.metric not in METRICS:
            raise SimschedError(f"--objective metric {c.metric!r} is not a metric; choose from {', '.join(METRICS)}",
                                field="--objective")
    out = []
    groups = group_rows(sorted(rows, key=lambda r: r.get("point") or 0), ["point", "scheduler"])
    for (point, scheduler), members in groups.items():
        met = 0
        for r in members:
            values = {c.metric: r.get(c.metric) for c in objective.clauses}
            if not r.get("error") and all(v is not None for v in values.values()) and objective.met(values):
                met += 1
        lo, hi = wilson_interval(met, len(members))
        out.append({"point": point, **{f: members[0].get(f) for f in fields}, "scheduler": scheduler,
                    "days": len(members), "met_days": met, "rate": met / len(members), "wilson": [lo, hi]})
    return out
