"""The search: the fewest capacity whose days meet the objective, with the confidence of each level.

A *day* is one seed: the seed draws the workload (a generator's graph, a stream's arrivals, the
autotuning arrivals) and the noise, so every capacity and every variant (scheduler or policy) sees
the same days (common random numbers).  A *level* is one capacity simulated over the days.

* :func:`search_capacity` assumes the day success rate is non-decreasing in capacity: it doubles from
  ``low`` until the rate reaches ``on_days``, then bisects between the last failure and the first
  success — O(days · log(answer)) simulations; the answer ``n`` is always simulated together with
  ``n - 1`` (which fails) unless ``n`` is the lowest capacity.
* Where the days run is a :class:`DayRunner`: here, one after another (:data:`IN_PROCESS`, the
  default), or on an executor with a results store (:mod:`simsched.capacity.days`).  The searches of
  all variants advance in lockstep, so each *round* hands the runner every day of the capacities the
  variants ask for next (variants x days simulations that can run at once).  Days come back in any
  order and are folded into each level in seed order, so the early stop and every number of the
  answer are the same whatever the runner.
* The confidence of each level (:meth:`Level.summary`): days met ``k`` of ``days``, the Wilson 95%
  interval of the day success rate (Wilson 1927; Clopper–Pearson 1934 alongside), and for each
  clause's metric the mean over days with Student's t interval and its bootstrap interval (Efron &
  Tibshirani 1993), from :mod:`simsched.stats`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from simsched.capacity.answer import capacity_answer
from simsched.capacity.objective import Objective
from simsched.errors import SimschedError
from simsched.stats import bootstrap_interval, clopper_pearson_interval, t_interval, wilson_interval

DEFAULT_DAYS = 20
DEFAULT_ON_DAYS = 0.95
DEFAULT_MAX = 256


class CapacityModel(Protocol):
    """What the search needs: the capacity's unit, the variants (schedulers / policies), the metric
    names a day reports, and one simulated day (:mod:`simsched.capacity.models`)."""

    unit: str
    variants: list[str]
    metrics: list[str]

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]: ...


@dataclass
class Level:
    """One capacity evaluated over the days."""

    capacity: int
    values: dict[str, list[float]]
    met: list[bool]
    planned: int = 0
    """Days the level was to simulate; more than ``len(met)`` when it stopped early (see
    :func:`evaluate`)."""

    @property
    def met_days(self) -> int:
        return int(sum(self.met))

    @property
    def stopped_early(self) -> bool:
        return self.planned > len(self.met)

    def passes(self, on_days: float) -> bool:
        """Whether at least ``on_days`` of the planned days meet the objective."""
        return self.met_days >= on_days * max(self.planned, len(self.met)) - 1e-9

    @property
    def rate(self) -> float:
        return self.met_days / len(self.met) if self.met else math.nan

    def summary(self, seed: int = 0) -> dict[str, Any]:
        """JSON-ready: days met, their rate with Wilson and Clopper–Pearson intervals, and per metric
        the mean with t and bootstrap intervals and the 95th percentile over days."""
        n, k = len(self.met), self.met_days
        metrics = {}
        for name, vals in self.values.items():
            x = np.asarray(vals, dtype=np.float64)
            mean, half, used = t_interval(x)
            _, blo, bhi = bootstrap_interval(x, seed=seed)
            finite = x[np.isfinite(x)]
            metrics[name] = {"mean": mean, "t_low": mean - half, "t_high": mean + half, "boot_low": blo,
                             "boot_high": bhi, "p95_over_days": float(np.quantile(finite, 0.95)) if finite.size
                             else math.nan, "days": used, "infinite_days": int(np.isinf(x).sum())}
        return {"capacity": self.capacity, "days": n, "planned_days": max(self.planned, n),
                "stopped_early": self.stopped_early, "met_days": k, "rate": self.rate,
                "wilson": list(wilson_interval(k, n)), "clopper_pearson": list(clopper_pearson_interval(k, n)),
                "metrics": metrics}


COSTS = ("energy_kwh", "carbon_kg", "cost_usd")
"""What a simulated day draws and costs, where the platform has a power model, intensities or prices:
carried in every level's ``metrics`` beside the objective's (per day, so their means are per day), so that
an answer says what it costs as well as whether it meets the objective."""

Progress = Callable[[str, int, bool], None]
"""``progress(text, simulations_done, level_done)`` after each simulated day (``level_done``: the
day was a capacity's last)."""


Request = tuple[str, Any, int]
"""One simulated day: ``(variant, capacity, seed)``; the capacity is a count, or a mix's counts."""


class DayRunner(Protocol):
    """Where a search's days are simulated."""

    def run(self, model: Any, requests: Sequence[Request],
            skip: Callable[[int], bool]) -> Iterator[tuple[int, dict[str, float]]]:
        """Yield ``(index into requests, the day's metrics)`` for every request, in any order, except
        those for which ``skip(index)`` has become true (no longer wanted); the caller may stop
        iterating (and close the iterator) once it has what it needs."""
        ...


class InProcess:
    """Days simulated in this process, one after another in request order (lazily: a request no
    longer wanted when its turn comes is not simulated)."""

    description = "this process"

    def run(self, model: Any, requests: Sequence[Request],
            skip: Callable[[int], bool]) -> Iterator[tuple[int, dict[str, float]]]:
        for i, (variant, capacity, seed) in enumerate(requests):
            if not skip(i):
                yield i, model(variant, capacity, seed)


IN_PROCESS = InProcess()


class _Fold:
    """One capacity level being filled: days arrive in any order and are folded in seed order;
    with ``on_days`` the level is *decided* once more days have missed than ``on_days`` allows."""

    def __init__(self, capacity: Any, objective: Objective, n_days: int, on_days: float | None) -> None:
        self.capacity, self.objective, self.n = capacity, objective, n_days
        self.values: dict[str, list[float]] = {m: [] for m in objective.metrics}
        self.costs: tuple[str, ...] | None = None  # the COSTS the days have: known at the first day folded
        self.met: list[bool] = []
        self.waiting: dict[int, Mapping[str, float]] = {}
        self.allowed = math.inf if on_days is None else n_days - math.ceil(on_days * n_days - 1e-9)
        self.decided = False

    def add(self, k: int, day: Mapping[str, float]) -> list[tuple[int, bool]]:
        """Day ``k``'s metrics; returns ``(day index, stopped)`` for each day folded now."""
        self.waiting[k] = day
        folded = []
        while not self.decided and len(self.met) in self.waiting:
            i = len(self.met)
            d = self.waiting.pop(i)
            if self.costs is None:
                self.costs = tuple(m for m in COSTS if m in d and m not in self.values)
                self.values.update({m: [] for m in self.costs})
            for m in self.values:
                self.values[m].append(float(d.get(m, math.nan)))
            self.met.append(self.objective.met(d))
            stop = len(self.met) - sum(self.met) > self.allowed
            self.decided = stop or len(self.met) == self.n
            folded.append((i, stop))
        return folded

    def level(self) -> Level:
        return Level(self.capacity, self.values, self.met, self.n)


def evaluate_levels(model: CapacityModel, wanted: Sequence[tuple[str, Any]], objective: Objective,
                    seeds: Sequence[int], progress: Progress | None = None, counter: list[int] | None = None,
                    on_days: float | None = None, runner: DayRunner | None = None) -> list[Level]:
    """Simulate each ``(variant, capacity)`` of ``wanted`` on the seeds: all their days are handed to
    ``runner`` at once (:data:`IN_PROCESS` by default) and folded in seed order; with ``on_days`` a
    level stops at the day it can no longer pass (the days after it are skipped, or cancelled on an
    executor) and holds the days up to it.  The levels are the same whatever the runner and the
    order days finish in.  O(len(wanted) · days) simulations at most."""
    runner = runner or IN_PROCESS
    n = len(seeds)
    folds = [_Fold(c, objective, n, on_days) for _v, c in wanted]
    requests = [(v, c, s) for v, c in wanted for s in seeds]
    open_levels = len(folds)
    days = runner.run(model, requests, lambda i: folds[i // n].decided)
    try:
        for i, day in days:
            f = folds[i // n]
            if f.decided:
                continue
            variant = wanted[i // n][0]
            for k, stop in f.add(i % n, day):
                if counter is not None:
                    counter[0] += 1
                if progress is not None:
                    ok = sum(f.met)
                    progress(f"{variant}: {f.capacity} {model.unit}, day {k + 1}/{n} ({ok} met"
                             + (", cannot pass: stopped)" if stop and k + 1 < n else ")"),
                             counter[0] if counter else k + 1, f.decided)
            if f.decided:
                open_levels -= 1
                if open_levels == 0:
                    break
    finally:
        close = getattr(days, "close", None)
        if close is not None:
            close()
    if open_levels:
        raise SimschedError(f"{open_levels} capacity level(s) got fewer days than asked for from "
                            f"{getattr(runner, 'description', 'the runner')}")
    return [f.level() for f in folds]


def evaluate(model: CapacityModel, variant: str, capacity: int, objective: Objective, seeds: Sequence[int],
             progress: Progress | None = None, counter: list[int] | None = None,
             on_days: float | None = None, runner: DayRunner | None = None) -> Level:
    """Simulate ``variant`` at ``capacity`` on the seeds in order; O(days) simulations.  With
    ``on_days``, stop as soon as more days have missed the objective than ``on_days`` allows (the
    level cannot pass any more): the level then holds the days simulated so far."""
    return evaluate_levels(model, [(variant, capacity)], objective, seeds, progress, counter, on_days, runner)[0]


@dataclass
class Answer:
    """The search's answer for one variant."""

    variant: str
    capacity: int | None
    levels: dict[int, Level] = field(default_factory=dict)
    wall_s: float = 0.0


def _bisect(low: int, high: int) -> Iterator[int]:
    """The doubling-then-bisection of :func:`search_capacity` as a coroutine: yields each capacity to
    evaluate, is sent whether it passes, and returns the answer (``None``: even ``high`` fails)."""
    lo, n = low - 1, low
    if low == 0:
        if (yield 0):
            return 0
        lo, n = 0, 1
    while not (yield n):
        lo = n
        if n >= high:
            return None
        n = min(2 * n, high)
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (yield mid):
            hi = mid
        else:
            lo = mid
    return hi


def search_many(model: CapacityModel, variants: Sequence[str], objective: Objective, seeds: Sequence[int], *,
                on_days: float = DEFAULT_ON_DAYS, low: int = 1, high: int = DEFAULT_MAX,
                progress: Progress | None = None, counter: list[int] | None = None,
                all_days: bool = False, runner: DayRunner | None = None) -> list[Answer]:
    """:func:`search_capacity` for every variant, the searches advancing in lockstep: each round
    evaluates the next capacity of every unfinished search together (:func:`evaluate_levels`), so
    a parallel ``runner`` has variants x days simulations at a time.  Each answer's ``wall_s`` is the
    time until it was known.  O(variants · days · log(answer)) simulations."""
    if not seeds:
        raise SimschedError("at least one day is needed", field="--days")
    if not 0 < on_days <= 1:
        raise SimschedError(f"must be in (0, 1], got {on_days}", field="--on-days")
    if low < 0 or high < max(low, 1):
        raise SimschedError(f"need 0 <= low <= high and high >= 1, got {low}..{high}", field="capacity.max")
    t0 = time.perf_counter()
    counter = counter if counter is not None else [0]
    answers = {v: Answer(v, None) for v in variants}
    steps = {v: _bisect(low, high) for v in answers}
    want = {v: next(step) for v, step in steps.items()}
    while want:
        todo = [(v, n) for v, n in want.items() if n not in answers[v].levels]
        if todo:
            levels = evaluate_levels(model, todo, objective, seeds, progress, counter,
                                     None if all_days else on_days, runner)
            for (v, n), level in zip(todo, levels):
                answers[v].levels[n] = level
        following = {}
        for v, n in want.items():
            try:
                following[v] = steps[v].send(answers[v].levels[n].passes(on_days))
            except StopIteration as done:
                answers[v].capacity, answers[v].wall_s = done.value, time.perf_counter() - t0
        want = following
    return list(answers.values())


def search_capacity(model: CapacityModel, variant: str, objective: Objective, seeds: Sequence[int], *,
                    on_days: float = DEFAULT_ON_DAYS, low: int = 1, high: int = DEFAULT_MAX,
                    progress: Progress | None = None, counter: list[int] | None = None,
                    all_days: bool = False, runner: DayRunner | None = None) -> Answer:
    """Fewest capacity in ``[low, high]`` whose day success rate is ``>= on_days`` (doubling, then
    bisection; see the module doc).  ``capacity`` is ``None`` when even ``high`` fails.  A capacity
    stops simulating days once it cannot pass (:func:`evaluate`) unless ``all_days``.
    O(days · log(answer)) simulations."""
    return search_many(model, [variant], objective, seeds, on_days=on_days, low=low, high=high, progress=progress,
                       counter=counter, all_days=all_days, runner=runner)[0]


def find_capacity(model: CapacityModel, objective: Objective, *, seed: int = 0, days: int = DEFAULT_DAYS,
                  on_days: float = DEFAULT_ON_DAYS, variants: Sequence[str] | None = None, low: int = 1,
                  high: int = DEFAULT_MAX, progress: Progress | None = None, all_days: bool = False,
                  runner: DayRunner | None = None) -> dict[str, Any]:
    """For each variant (default: all of the model's), the fewest capacity meeting ``objective`` on at
    least ``on_days`` of the ``days`` seeds ``seed .. seed + days - 1``; the answer as data
    (:func:`~simsched.capacity.answer.capacity_answer`), with every evaluated capacity's confidence
    summary (:meth:`Level.summary`), the same whatever ``runner`` simulates the days (apart from
    ``wall_s``).  O(variants · days · log answer)."""
    if days < 1:
        raise SimschedError(f"must be >= 1, got {days}", field="--days")
    names = list(variants or model.variants)
    for v in names:
        if v not in model.variants:
            raise SimschedError(f"unknown scheduler {v!r} here; choose from {', '.join(model.variants)}",
                                field="--scheduler")
    seeds = list(range(seed, seed + days))
    entries = []
    for ans in search_many(model, names, objective, seeds, on_days=on_days, low=low, high=high,
                           progress=progress, all_days=all_days, runner=runner):
        levels = [ans.levels[k].summary(seed) for k in sorted(ans.levels)]
        entries.append({"variant": ans.variant, "capacity": ans.capacity, "levels": levels,
                        "simulations": sum(lv["days"] for lv in levels), "wall_s": ans.wall_s})
    return capacity_answer(model, objective, seeds, on_days, high, entries)
