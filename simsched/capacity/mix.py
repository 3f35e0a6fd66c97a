"""The cheapest platform mix that meets a service objective, and the front of service against cost.

Question: "which mix of processor types — k CPUs and g GPUs, each with its price and power — meets
``jct_p95 <= 300`` on 95% of days at the least cost (or energy, or carbon)?"  A scenario asks it with
a ``capacity.mix`` section naming each processor entry to size (its type or name) and a range of
counts, and ``capacity.cheapest_by`` (default ``cost_usd`` when the platform has prices, else
``energy_kwh``)::

    capacity:
      objective: jct_p95 <= 300
      mix: {cpu: [2, 8], gpu: [0, 3]}
      cheapest_by: cost_usd

Every mix of the grid (:class:`~simsched.capacity.models.mix.MixModel`) is simulated on the same days
(seeds: common random numbers) with one scheduler; a mix's confidence is its capacity level's
(:meth:`~simsched.capacity.search.Level.summary`: days met with the Wilson interval, each metric's
mean with Student's t interval).  The answer is the passing mix with the least mean ``cheapest_by``;
the *front* is the set of mixes no other mix beats on both the objective's first metric and
``cheapest_by`` (means over the days), passing or not.  Cost: O(grid points x days) simulations; the
grid is capped at :data:`~simsched.capacity.models.mix.MAX_MIXES` points.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from simsched.capacity.models.mix import MixModel
from simsched.capacity.objective import Objective
from simsched.capacity.search import COSTS, IN_PROCESS, DayRunner, Level, Progress
from simsched.errors import SimschedError


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both ``x`` and ``y`` (lower is better; NaN never
    on the front), by increasing ``x``.  O(k log k)."""
    ok = np.flatnonzero(~(np.isnan(x) | np.isnan(y)))
    order = ok[np.lexsort((y[ok], x[ok]))]
    front, best = [], math.inf
    for i in order.tolist():
        if y[i] < best:
            front.append(i)
            best = y[i]
    return np.array(front, dtype=np.int64)


def find_mix(model: MixModel, objective: Objective, *, variant: str, seed: int = 0, days: int = 20,
             on_days: float = 0.95, cheapest_by: str | None = None, progress: Progress | None = None,
             runner: DayRunner | None = None) -> dict[str, Any]:
    """Every mix of ``model`` simulated on days ``seed .. seed + days - 1`` with ``variant``; the
    cheapest passing mix by mean ``cheapest_by`` and the front of the objective's first metric against
    it (module docstring).  The ``"mix"`` answer as data (:mod:`simsched.capacity.answer`).  The first
    day of the first mix runs here (it checks the metrics exist); the others on ``runner`` (default:
    here, in order), all at once, and the answer is the same whatever the runner.  O(mixes x days)
    simulations."""
    if variant not in model.variants:
        raise SimschedError(f"unknown scheduler {variant!r} here; choose from {', '.join(model.variants)}",
                            field="--scheduler")
    seeds = list(range(seed, seed + days))
    probe = model(variant, model.mixes[0], seeds[0])
    unknown = [m for m in objective.metrics if m not in probe]
    if unknown:
        raise SimschedError(f"no metric {unknown[0]!r} in a day's results; known: {', '.join(sorted(probe))}",
                            field="--objective")
    by = cheapest_by or ("cost_usd" if "cost_usd" in probe else "energy_kwh")
    if by not in probe:
        raise SimschedError(f"no metric {by!r} in a day's results: cheapest_by needs a power model (energy_kwh, "
                            f"carbon_kg) or prices (cost_usd)", field="capacity.cheapest_by")
    service = objective.clauses[0].metric
    names = list(dict.fromkeys([*objective.metrics, by, *(m for m in COSTS if m in probe)]))
    requests = [(variant, counts, s) for counts in model.mixes for s in seeds]
    got: dict[int, Mapping[str, float]] = {}

    def arrived(i: int, day: Mapping[str, float]) -> None:
        got[i] = day
        if progress is not None:
            counts, s = requests[i][1], requests[i][2]
            progress(f"{variant}: {model.label(counts)}, day {s - seed + 1}/{days}", len(got), s == seeds[-1])

    arrived(0, probe)
    for j, day in (runner or IN_PROCESS).run(model, requests[1:], lambda j: False):
        arrived(j + 1, day)
    points = []
    for k, counts in enumerate(model.mixes):
        values: dict[str, list[float]] = {m: [] for m in names}
        met = []
        for d in range(days):
            day = got[k * days + d]
            for m in names:
                values[m].append(float(day.get(m, math.nan)))
            met.append(objective.met(day))
        level = Level(0, values, met, days)
        summary = level.summary(seed)
        summary.pop("capacity")
        summary["counts"] = dict(zip((key for key, *_ in model.entries), counts))
        summary["label"] = model.label(counts)
        summary["passes"] = level.passes(on_days)
        points.append(summary)
    cost = np.array([p["metrics"][by]["mean"] for p in points])
    serv = np.array([p["metrics"][service]["mean"] for p in points])
    passing = [i for i, p in enumerate(points) if p["passes"]]
    best = min(passing, key=lambda i: (cost[i], i)) if passing else None
    return {"kind": "mix", "objective": objective.text, "variant": variant, "cheapest_by": by, "service": service,
            "clauses": objective.as_data(), "days": days, "seeds": [seeds[0], seeds[-1]], "on_days": on_days,
            "entries": [key for key, *_ in model.entries], "points": points,
            "answer": best, "front": pareto_front(serv, cost).tolist()}
