"""The generalisation matrix: one scheduler on one stream scenario and its neighbouring worlds, each
against the best rule, paired per day.

``simsched generalise SCENARIO -s SCHEDULER [--days N] [--cell NAME]... [--fresh] [--json P] [--html P]``
runs :func:`matrix`.  Cells (:data:`CELLS`; a cell that does not apply to a scenario is skipped with
the reason):

* ``fresh days`` — the scenario itself;
* ``load -30%`` / ``load +30%`` — arrival rates times 0.7 / 1.3 (rate-change times divided by the
  factor: the same burst, compressed or stretched);
* ``2x jobs`` — twice the jobs per day;
* ``more fast processors`` / ``fewer fast processors`` — the fastest processor entry's count times
  1.5 (rounded up) / halved (at least one);
* ``speed ratio x2`` — the fastest processor entry twice as fast;
* ``failures on/off`` — the scenario's failures and stragglers removed, or (when it has none)
  failures added with a mean time between failures of 20 mean inter-arrival gaps and a repair time
  of half a gap;
* ``unseen job families`` — the job mix replaced by the shipped real workflows (Montage,
  Epigenomics, the Kasahara STG graph, the pipeline DOT graph) that the scenario's mix does not use.

Days: the scenario's ``evaluate`` seed space (:mod:`simsched.run.seedspace`), or fresh days drawn
from a printed seed; every cell uses the same day numbers, every scheduler meets the same stream,
noise and failures on a day.  Per cell: the mean JCT per day of the scheduler under test and of each
rule (:data:`RULES`), the best rule (lowest mean over the cell's days), and the per-day ratio to it
as a geometric mean with its paired 95% t interval (:func:`simsched.stats.paired_ratio`): ``better``
or ``worse`` when the interval excludes 1, ``tie`` otherwise.  Cost: cells x days x (1 + rules)
engine runs.

**Safety check** (:mod:`simsched.learned.rl.worlds.safety`): the same rows on worlds drawn from a space
wider than a learned stream scheduler's training (more processor types, speed ratios up to 8, heavy-tailed
job sizes, up to five times the failures), against ``srjf-eft``; one world significantly worse and the
policy is not a default candidate (``python -m simsched.learned.rl.worlds safety -s rl-gate``).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

CELLS = ("fresh days", "load -30%", "load +30%", "2x jobs", "more fast processors", "fewer fast processors",
         "speed ratio x2", "failures on/off", "unseen job families")
RULES = ("srjf-eft", "fair-eft", "mct")
"""The rules the scheduler is compared with; the best of them on each cell is the reference."""

SHIPPED_WORKFLOWS = (("wfcommons", "montage_60.json"), ("dax", "epigenomics_50.dax"),
                     ("stg", "kasahara_40.stg"), ("dot", "pipeline_30.dot"))
"""The real workflows shipped in ``scenarios/data`` (importer, file)."""


def _data_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "scenarios" / "data"


def _scale_arrivals(stream: dict, f: float) -> bool:
    arr = stream.get("arrivals") or {}
    if "poisson" in arr:
        arr["poisson"] = float(arr["poisson"]) * f
        return True
    if "rates" in arr:
        arr["rates"] = [[float(t) / f, float(r) * f] for t, r in arr["rates"]]
        return True
    return False


def _mean_gap(stream: dict) -> float | None:
    arr = stream.get("arrivals") or {}
    if "poisson" in arr:
        return 1.0 / float(arr["poisson"])
    if "rates" in arr:
        return 1.0 / float(np.mean([r for _, r in arr["rates"]]))
    return None


def cell_data(data: dict, cell: str) -> tuple[dict | None, str]:
    """The scenario YAML mapping ``data`` changed into ``cell``'s world, and a short description;
    ``(None, why)`` when the cell does not apply.  O(size of the mapping)."""
    data = copy.deepcopy(data)
    stream = ((data.get("workload") or {}).get("stream"))
    if not isinstance(stream, dict):
        return None, "not a stream scenario"
    procs = (data.get("platform") or {}).get("processors") or []
    if cell == "fresh days":
        return data, "the scenario itself"
    if cell in ("load -30%", "load +30%"):
        f = 0.7 if "-" in cell else 1.3
        return (data, f"arrival rates x{f:g}") if _scale_arrivals(stream, f) else (None, "arrivals from a trace")
    if cell == "2x jobs":
        if "count" not in stream:
            return None, "the day has no job count"
        stream["count"] = 2 * int(stream["count"])
        return data, f"{stream['count']} jobs per day"
    if cell in ("more fast processors", "fewer fast processors", "speed ratio x2"):
        if not procs:
            return None, "no processor list"
        fast = max(procs, key=lambda p: float(p.get("speed", 1.0)))
        count = int(fast.get("count", 1))
        if cell == "speed ratio x2":
            fast["speed"] = 2.0 * float(fast.get("speed", 1.0))
            return data, f"{fast.get('name', 'fastest')} speed {fast['speed']:g}"
        new = math.ceil(1.5 * count) if cell.startswith("more") else max(1, count // 2)
        if new == count:
            return None, f"{count} fastest processor cannot be halved"
        fast["count"] = new
        return data, f"{new} x {fast.get('name', 'fastest')} (was {count})"
    if cell == "failures on/off":
        if data.get("failures") or data.get("stragglers"):
            data.pop("failures", None)
            data.pop("stragglers", None)
            return data, "failures and stragglers off"
        gap = _mean_gap(stream)
        if gap is None:
            return None, "no arrival rate to scale failures by"
        data["failures"] = {"mtbf": 20.0 * gap, "mttr": 0.5 * gap}
        return data, f"failures on (MTBF {20 * gap:.4g}, MTTR {0.5 * gap:.4g})"
    if cell == "unseen job families":
        used = str(stream.get("jobs"))
        fresh = [(kind, f) for kind, f in SHIPPED_WORKFLOWS if f not in used and (_data_dir() / f).is_file()]
        if not fresh:
            return None, "every shipped workflow is in the mix already"
        stream["jobs"] = [{"weight": 1, kind: str(_data_dir() / f)} for kind, f in fresh]
        return data, "jobs: " + ", ".join(f.split("_")[0] for _, f in fresh)
    raise ValueError(f"unknown cell {cell!r}; choose from {', '.join(CELLS)}")


def cell_scenario(path: str | Path, cell: str,
                  change: Callable[[dict, str], tuple[dict | None, str]] | None = None):  # -> (Scenario | None, str)
    """The scenario at ``path`` in ``cell``'s world (``change``, default :func:`cell_data`: the YAML
    mapping changed into the cell's world).  Errors as ``simsched run``'s.  O(scenario)."""
    from simsched.scenario import parse_scenario
    from simsched.yamlio import load_yaml

    doc = load_yaml(path)
    data, what = (change or cell_data)(doc.data if isinstance(doc.data, dict) else {}, cell)
    if data is None:
        return None, what
    return parse_scenario(dataclasses.replace(doc, data=data)), what


def matrix(path: str | Path, scheduler: str, days: Sequence[int], cells: Sequence[str] = CELLS,
           rules: Sequence[str] = RULES, progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One row per cell (see the module docstring): ``{cell, world, days, scheduler, jct, best_rule,
    best_jct, ratio, low, high, verdict, wins, warnings, per_day}`` or ``{cell, world, skipped:
    reason}``; ``warnings``: a learned scheduler's training-range warning for the cell's world (the
    line ``simsched run`` prints; it says when the agent falls back to srjf-eft).
    ``scheduler`` is a registry name with ``:key=value`` parameters (``rl:checkpoint=rl_dynamic``).
    O(cells x days x (1 + rules)) engine runs."""
    from simsched.learned.rl.dynamic import parse_spec
    from simsched.run.streams import largest_job_problem, simulate_stream, stream_of
    from simsched.schedulers import registry
    name, params = parse_spec(scheduler)
    labels = [scheduler, *[r for r in rules if r != scheduler]]
    specs = [(name, params)] + [parse_spec(r) for r in labels[1:]]
    rows: list[dict[str, Any]] = []
    for cell in cells:
        sc, world = cell_scenario(path, cell)
        if sc is None:
            rows.append({"cell": cell, "world": world, "skipped": world})
            continue
        jct: dict[str, dict[int, float]] = {lab: {} for lab in labels}
        warnings: list[str] = []
        for day in days:
            if progress is not None:
                progress(f"{cell}: day {day}")
            stream = stream_of(sc, int(day))
            for lab, (n, p) in zip(labels, specs):
                instance = registry.create(n, **p)
                if getattr(instance, "range_warning", None) is not None and not warnings:
                    from simsched.run.runner import range_line  # a learned scheduler: its range, as `run` says it
                    from simsched.simulator.problem import Problem

                    probe = largest_job_problem(Problem(stream.graph, sc.platform, sc.affinity), stream)
                    warnings.append(range_line(instance, probe, lab, stream=True) or "")
                run = simulate_stream(sc, n, int(day), stream, instance)
                jct[lab][int(day)] = float(run.metrics.summary["jct_mean"])
        pair = pair_with_best(jct, scheduler, labels[1:])
        rows.append({"cell": cell, "world": world, "days": len(days), "scheduler": scheduler,
                     "jct": pair["mean"], "best_rule": pair["best_rule"], "best_jct": pair["best_mean"],
                     **{k: pair[k] for k in ("ratio", "low", "high", "verdict", "wins")},
                     "warnings": [w for w in warnings if w],
                     "per_day": {lab: {str(d): v for d, v in vals.items()} for lab, vals in jct.items()}})
    return rows


def pair_with_best(values: dict[str, dict[int, float]], scheduler: str, rules: Sequence[str]) -> dict[str, Any]:
    """The scheduler under test against the best rule of one cell.  ``values``: label -> day -> the
    day's value (lower is better: mean JCT of a day, mean bounded slowdown of a window).  The best rule
    is the one of ``rules`` with the lowest mean over its days (ties: the first label in sort order);
    ``ratio``, ``low``, ``high``: the geometric mean of the per-day ratio scheduler / best rule with its
    paired 95% t interval (:func:`simsched.stats.paired_ratio`); ``verdict``: ``better`` / ``worse``
    when the interval lies below / above 1, else ``tie``; ``wins``: days strictly below the best rule;
    ``mean``, ``best_mean``: the two means over days.  O(rules x days)."""
    from simsched.stats import paired_ratio

    def mean(label: str) -> float:
        return float(np.mean(list(values[label].values())))

    best = min(rules, key=lambda lab: (mean(lab), lab))
    pr = paired_ratio(values[scheduler], values[best])
    verdict = "tie" if not pr.significant else ("better" if pr.high < 1.0 else "worse")
    return {"best_rule": best, "mean": mean(scheduler), "best_mean": mean(best), "ratio": pr.estimate,
            "low": pr.low, "high": pr.high, "verdict": verdict,
            "wins": int(sum(values[scheduler][d] < values[best][d] for d in values[best]))}


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Over the cells that ran: how many are better / tie / worse, and the geometric mean ratio."""
    ran = [r for r in rows if "skipped" not in r]
    ratios = [r["ratio"] for r in ran if np.isfinite(r["ratio"])]
    return {"cells": len(ran), "better": sum(r["verdict"] == "better" for r in ran),
            "tie": sum(r["verdict"] == "tie" for r in ran), "worse": sum(r["verdict"] == "worse" for r in ran),
            "geomean_ratio": float(np.exp(np.mean(np.log(ratios)))) if ratios else float("nan")}
