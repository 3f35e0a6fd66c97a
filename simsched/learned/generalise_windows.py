"""The generalisation matrix of a batch policy on a cluster log with windows (RLScheduler's protocol,
``workload.stream.windows``): ``simsched generalise LOG_SCENARIO -s POLICY``.

Each day of a cell replays one window of consecutive jobs from an empty machine
(:mod:`simsched.workloads.log_windows`): with ``draw: seed`` the days come from a seed space (the
scenario's ``evaluate`` days, ``--seed-space train|select``, or fresh days from a printed seed), so the
windows are ones nobody tuned on, as the days of a stream are; with ``draw: rlscheduler`` they are the
protocol's own windows (days ``seed ... seed + n - 1``).  Cells (:data:`CELLS`):

* ``windows`` — the log as the scenario reads it;
* ``load -30%`` / ``load +30%`` — the log's submit times divided by 0.7 / 1.3 (``scale``): the same
  jobs, sparser or denser.

Per cell, the policy under test and every heuristic of :data:`RULES` run on the same windows; the
best heuristic (lowest mean over the cell's windows of a window's mean bounded slowdown) is the
reference, and the policy is paired with it window by window
(:func:`simsched.learned.generalise_matrix.pair_with_best`: geometric mean of the per-window bsld
ratio, paired 95% t interval, ``better`` / ``tie`` / ``worse``).  A learned policy's own account of
which decisions its fallback rule took is summed over the cell (``decided_by``).  Cost: cells x
windows x (1 + rules) engine runs of one window.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CELLS = ("windows", "load -30%", "load +30%")
RULES = tuple(f"{name}{suffix}" for name in ("fcfs-priority", "sjf-priority", "wfp3", "uni", "f1")
              for suffix in ("", "(backfill=true)"))
"""RLScheduler's five heuristics (published WFP3 and UNI waiting time), each without and with its
greedy backfilling: the best of them on a cell is the reference."""


def log_cell_data(data: dict, cell: str) -> tuple[dict | None, str]:
    """The scenario mapping ``data`` of a cluster log changed into ``cell``'s world and a short
    description; ``(None, why)`` when the cell does not apply.  O(size of the mapping)."""
    data = copy.deepcopy(data)
    stream = (data.get("workload") or {}).get("stream")
    if not isinstance(stream, dict):
        return None, "not a cluster log"
    if cell == "windows":
        return data, "the log itself"
    if cell in ("load -30%", "load +30%"):
        f = 0.7 if "-" in cell else 1.3
        stream["scale"] = float(stream.get("scale", 1.0)) * f
        return data, f"load x{f:g}"
    raise ValueError(f"unknown cell {cell!r}; choose from {', '.join(CELLS)}")


def log_matrix(path: str | Path, scheduler: str, days: Sequence[int], cells: Sequence[str] = CELLS,
               rules: Sequence[str] = RULES, progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One row per cell (see the module docstring): ``{cell, world, days, scheduler, bsld, best_rule,
    best_bsld, ratio, low, high, verdict, wins, starts, per_day}`` and ``decided_by`` for a policy that
    keeps that account.  ``scheduler`` is a ``simsched run -s`` text (``"learned-priority(checkpoint=m.json)"``);
    refusals (an unknown name, a policy that observes requested times on a log without them) are
    located at ``--scheduler``.  O(cells x days x (1 + rules)) engine runs of one window."""
    from simsched.learned.generalise_matrix import cell_scenario, pair_with_best
    from simsched.run.batch import log_window, replay
    from simsched.run.log_windows import add_decisions
    from simsched.run.runner import _select

    rows: list[dict[str, Any]] = []
    for cell in cells:
        sc, world = cell_scenario(path, cell, log_cell_data)
        if sc is None:
            rows.append({"cell": cell, "world": world, "skipped": world})
            continue
        mine = _select(sc, [scheduler], ("batch",))[0]
        others = [c for c in _select(sc, list(rules), ("batch",)) if c.label != mine.label]
        bsld: dict[str, dict[int, float]] = {c.label: {} for c in (mine, *others)}
        decided: dict[str, Any] = {}
        starts = []
        for day in days:
            if progress is not None:
                progress(f"{cell}: window of day {day}")
            starts.append(log_window(sc, int(day))[1])
            for choice in (mine, *others):
                result = replay(sc, choice, seed=int(day))
                bsld[choice.label][int(day)] = float(result.metrics()["bsld_mean"])
                if choice is mine and "decided_by" in result.extra:
                    add_decisions(decided, result.extra["decided_by"])
        pair = pair_with_best(bsld, mine.label, [c.label for c in others])
        rows.append({"cell": cell, "world": world, "days": len(days), "scheduler": mine.label,
                     "bsld": pair["mean"], "best_rule": pair["best_rule"], "best_bsld": pair["best_mean"],
                     **{k: pair[k] for k in ("ratio", "low", "high", "verdict", "wins")}, "starts": starts,
                     **({"decided_by": decided} if decided else {}),
                     "per_day": {lab: {str(d): v for d, v in vals.items()} for lab, vals in bsld.items()}})
    return rows
