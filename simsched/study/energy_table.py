"""What an energy-aware scheduler saves, and what it costs, against a baseline, paired by day.

``python -m simsched.study.energy_table RESULTS.json [--baseline LABEL]`` reads the results document
of ``simsched run --json`` (a scenario with a power model, several repetitions = days) and prints one
line per scheduler and metric — energy (kWh), carbon (kg), cost, peak watts and the service metrics
(mean and p95 JCT for streams, makespan otherwise) — with the mean over days and the geometric mean
of the per-day ratio to the baseline (default: the first scheduler) with its paired 95% t interval
(:func:`simsched.stats.paired_ratio`).  Non-finite ratios print as ``-``.  O(rows).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.run.document import load_document
from simsched.stats import paired_ratio

METRICS = (("energy_j", "energy kWh", 1 / 3.6e6), ("carbon_g", "carbon kg", 1e-3), ("cost_usd", "cost", 1.0),
           ("peak_w", "peak W", 1.0), ("jct_mean", "mean JCT", 1.0), ("jct_p95", "p95 JCT", 1.0),
           ("makespan", "makespan", 1.0))


def energy_table(doc: dict[str, Any], baseline: str | None = None) -> list[dict[str, Any]]:
    """Rows ``{scheduler, metric, mean, ratio, low, high, days}`` (module docstring).  Raises
    :class:`SimschedError` when the document has no energy or the baseline is unknown."""
    rows = doc.get("results") or []
    labels = list(dict.fromkeys(r["scheduler"] for r in rows))
    if not rows or "energy_j" not in rows[0]:
        raise SimschedError("these results have no energy_j: the scenario needs platform.power")
    base = baseline or labels[0]
    if base not in labels:
        raise SimschedError(f"no scheduler {base!r} in these results; they have {', '.join(labels)}",
                            field="--baseline")
    stream = "jct_mean" in rows[0]
    out = []
    for key, name, scale in METRICS:
        if key not in rows[0] or (stream and key == "makespan") or (not stream and key.startswith("jct")):
            continue
        ref = {r["seed"]: r[key] for r in rows if r["scheduler"] == base and r[key] is not None}
        for label in labels:
            mine = {r["seed"]: r[key] for r in rows if r["scheduler"] == label and r[key] is not None}
            p = paired_ratio(mine, ref)
            out.append({"scheduler": label, "metric": name, "mean": float(np.mean(list(mine.values()))) * scale,
                        "ratio": p.estimate, "low": p.low, "high": p.high, "days": p.n, "baseline": base})
    return out


def format_rows(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as a fixed-width text table."""
    def ratio(r: dict[str, Any]) -> str:
        if r["scheduler"] == r["baseline"]:
            return "baseline"
        if not math.isfinite(r["ratio"]):
            return "-"
        interval = f" [{r['low']:.3f}, {r['high']:.3f}]" if math.isfinite(r["low"]) else " (one day: no interval)"
        return f"x{r['ratio']:.3f}{interval}"

    width = max(len(r["scheduler"]) for r in rows)
    lines = [f"{'scheduler':<{width}}  {'metric':<10}  {'mean':>10}  vs baseline, paired by day (95%)"]
    for r in rows:
        lines.append(f"{r['scheduler']:<{width}}  {r['metric']:<10}  {r['mean']:>10.4g}  {ratio(r)}")
    days = max(r["days"] for r in rows)
    lines.append(f"{days} days; ratio = geometric mean of the per-day ratio to {rows[0]['baseline']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--baseline", default=None)
    args = ap.parse_args(argv)
    try:
        doc = load_document(args.results, schedules=False)  # the one reader of results documents
        print(format_rows(energy_table(doc, args.baseline)))
    except SimschedError as exc:
        print(f"error: {exc.located(file=args.results) if exc.file is None else exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
