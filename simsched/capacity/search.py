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
  variants ask for next (variants x days simulations that can run at once); on parallel workers a
  round also holds the capacities of the steps after it, whatever their outcomes (speculative
  bisection, :func:`lookahead`), and cancels those the outcomes leave off the path as soon as a
  level's outcome is settled.  Days come back in any order and are folded into each level in seed
  order, and only the levels on the search's path are kept, so the early stop and every number of
  the answer are the same whatever the runner and the number of workers.
* The confidence of each level (:meth:`Level.summary`): days met ``k`` of ``days``, the Wilson 95%
  interval of the day success rate (Wilson 1927; Clopper–Pearson 1934 alongside), and for each
  clause's metric the mean over days with Student's t interval and its bootstrap interval (Efron &
  Tibshirani 1993), from :mod:`simsched.stats`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from simsched.capacity.answer import capacity_answer
from simsched.capacity.bisect import Done, Step, ahead, first_step, path, reachable
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


Rank = Callable[[Collection[int]], Callable[[int], Any]]
"""``rank(requests in flight)``: a sort key for the requests not yet handed out, lowest first
(:meth:`_Round.rank`), asked by a runner whose ``ranked`` is true each time a worker frees up."""


class DayRunner(Protocol):
    """Where a search's days are simulated (a runner whose ``ranked`` attribute is true also takes a
    ``rank`` keyword: :data:`Rank`)."""

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

    def __init__(self, capacity: Any, objective: Objective, n_days: int, on_days: float | None,
                 judge: float | None = None) -> None:
        self.capacity, self.objective, self.n = capacity, objective, n_days
        self.values: dict[str, list[float]] = {m: [] for m in objective.metrics}
        self.costs: tuple[str, ...] | None = None  # the COSTS the days have: known at the first day folded
        self.met: list[bool] = []
        self.waiting: dict[int, Mapping[str, float]] = {}
        self.allowed = math.inf if on_days is None else n_days - math.ceil(on_days * n_days - 1e-9)
        judge = on_days if judge is None else judge
        self.needed = math.inf if judge is None else math.ceil(judge * n_days - 1e-9)
        self.decided = False

    @property
    def verdict(self) -> bool | None:
        """Whether the level passes (``Level.passes`` of the ``judge`` fraction), as soon as the days
        folded so far settle it (enough met, or too many missed); None until then.  O(days)."""
        met = sum(self.met)
        if met >= self.needed:
            return True
        if len(self.met) - met > self.n - self.needed:
            return False
        return None

    def guess(self) -> bool | None:
        """:attr:`verdict` where known; else the outcome the days so far point to (folded or come back
        early): a fail once one missed, a pass once some came back and none missed; None before any
        came back.  A guess only orders speculative work (:meth:`_Round.rank`).  O(days)."""
        verdict = self.verdict
        if verdict is not None or not (self.met or self.waiting):
            return verdict
        return self.missed() == 0

    def missed(self) -> int:
        """Days that missed the objective among those come back (folded or waiting).  O(days)."""
        return len(self.met) - sum(self.met) + sum(not self.objective.met(d) for d in self.waiting.values())

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


def _fold_days(model: CapacityModel, wanted: Sequence[tuple[str, Any]], folds: Sequence[_Fold], seeds: Sequence[int],
               runner: DayRunner, wants: Callable[[int], bool], over: Callable[[], bool],
               progress: Progress | None, counter: list[int] | None, rank: Rank | None = None) -> None:
    """Hand ``runner`` every day of the ``wanted`` levels (level by level, seeds in order; in ``rank``'s
    order where the runner takes one) and fold each into its level's :class:`_Fold` as it comes; a day
    of a level that ``wants(level index)`` no longer wants (decided, or off the search's path) is
    skipped or cancelled.  Stops once ``over()``.  O(len(wanted) · days) simulations at most."""
    n = len(seeds)
    requests = [(v, c, s) for v, c in wanted for s in seeds]
    if rank is not None and getattr(runner, "ranked", False):
        days = runner.run(model, requests, lambda i: not wants(i // n), rank=rank)  # type: ignore[call-arg]
    else:
        days = runner.run(model, requests, lambda i: not wants(i // n))
    try:
        for i, day in days:
            f = folds[i // n]
            if not wants(i // n):
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
            if over():
                break
    finally:
        close = getattr(days, "close", None)
        if close is not None:
            close()


def _short(runner: DayRunner, missing: int) -> SimschedError:
    return SimschedError(f"{missing} capacity level(s) got fewer days than asked for from "
                         f"{getattr(runner, 'description', 'the runner')}")


def evaluate_levels(model: CapacityModel, wanted: Sequence[tuple[str, Any]], objective: Objective,
                    seeds: Sequence[int], progress: Progress | None = None, counter: list[int] | None = None,
                    on_days: float | None = None, runner: DayRunner | None = None) -> list[Level]:
    """Simulate each ``(variant, capacity)`` of ``wanted`` on the seeds: all their days are handed to
    ``runner`` at once (:data:`IN_PROCESS` by default) and folded in seed order; with ``on_days`` a
    level stops at the day it can no longer pass (the days after it are skipped, or cancelled on an
    executor) and holds the days up to it.  The levels are the same whatever the runner and the
    order days finish in.  O(len(wanted) · days) simulations at most."""
    runner = runner or IN_PROCESS
    folds = [_Fold(c, objective, len(seeds), on_days) for _v, c in wanted]
    _fold_days(model, wanted, folds, seeds, runner, lambda k: not folds[k].decided,
               lambda: all(f.decided for f in folds), progress, counter)
    missing = sum(not f.decided for f in folds)
    if missing:
        raise _short(runner, missing)
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


class _Round:
    """One round of :func:`search_many`: the levels of the next ``depth`` steps of every unfinished
    search (nearest first), and where each search stands as their outcomes come in."""

    def __init__(self, steps: Mapping[str, Step | Done], depth: int, objective: Objective, n_days: int,
                 stop_on: float | None, on_days: float) -> None:
        near: list[tuple[int, str, int]] = []  # (steps ahead, variant, capacity)
        self.start = {v: s for v, s in steps.items() if isinstance(s, Step)}
        self.reach: dict[str, set[int]] = {}
        for v, step in self.start.items():
            seen = ahead(step, depth)
            self.reach[v] = {c for c, _d in seen}
            near += [(d, v, c) for c, d in seen]
        self.wanted = [(v, c) for _d, v, c in sorted(near, key=lambda w: w[0])]
        self.folds = [_Fold(c, objective, n_days, stop_on, on_days) for _v, c in self.wanted]
        self.index = {w: k for k, w in enumerate(self.wanted)}
        self.live = {v: set(r) for v, r in self.reach.items()}
        self.through: dict[str, list[int]] = {v: [] for v in self.reach}
        self.where: dict[str, Step | Done] = dict(self.start)

    def _verdict(self, variant: str, capacity: int) -> bool | None:
        k = self.index.get((variant, capacity))
        return None if k is None else self.folds[k].verdict

    def wants(self, k: int) -> bool:
        """Whether level ``k`` still needs days: not decided, and on its search's path or reachable."""
        v, c = self.wanted[k]
        return not self.folds[k].decided and (c in self.live[v] or c in self.through[v])

    def over(self) -> bool:
        """Follow every outcome known so far; True once no search can reach another level of this round
        and every level on a path has all its days (or stopped).  O(levels)."""
        for v, step in self.start.items():
            self.where[v], self.through[v] = path(step, lambda c, v=v: self._verdict(v, c))
            self.live[v] = reachable(self.where[v], self.reach[v])
        return all(not self.live[v] and all(self.folds[self.index[(v, c)]].decided for c in self.through[v])
                   for v in self.start)

    def rank(self, n_days: int, out: Collection[int]) -> Callable[[int], tuple[int, float, int]]:
        """The order in which to hand out request ``i`` (level ``i // n_days``) with the requests ``out``
        in flight: first the levels on each search's *likely* path (following :meth:`_Fold.guess`), in
        path order, then the others nearest first; and after all of them the days of a level that
        already missed and whose days in flight could settle its failure (the next day would likely be
        cancelled once they come back).  Changes which days run, never the answer.  O(levels + out)."""
        flying: dict[int, int] = {}
        for i in out:
            flying[i // n_days] = flying.get(i // n_days, 0) + 1
        place: dict[int, int] = {}
        for v, step in self.start.items():
            cur: Step | Done = step
            while isinstance(cur, Step) and (v, cur.capacity) in self.index:
                k = self.index[(v, cur.capacity)]
                place[k] = len(place)
                guess = self.folds[k].guess()
                if guess is None:
                    break
                cur = cur.after(guess)

        def key(i: int) -> tuple[int, float, int]:
            f = self.folds[i // n_days]
            missed = f.missed()
            held = missed > 0 and missed + flying.get(i // n_days, 0) > f.allowed
            return int(held), place.get(i // n_days, math.inf), i

        return key

    def kept(self) -> dict[str, dict[int, Level]]:
        """The levels on each search's path (the others are dropped, even where some of their days ran)."""
        return {v: {c: self.folds[self.index[(v, c)]].level() for c in self.through[v]} for v in self.start}


def lookahead(runner: DayRunner | None) -> int:
    """How many steps of each search one round evaluates at once on ``runner``: 1 where days run one
    after another; on ``slots`` parallel workers, ``1 + ceil(log2(slots))`` (2 on two workers: a
    bisection's midpoint and both midpoints that may follow it; 3 on four), one more on a ``ranked``
    runner (which hands a speculative day out only to a worker that would otherwise wait, so a deeper
    round costs nothing, and spares a worker waiting at the end of a round for the last day of a level
    the next round follows).  The answer does not depend on it (:func:`search_many`), only how much of
    the workers' time is spent on capacities the search turns out not to need."""
    slots = int(getattr(runner, "slots", 1) or 1)
    if slots <= 1:
        return 1
    return 1 + math.ceil(math.log2(slots)) + int(bool(getattr(runner, "ranked", False)))


def search_many(model: CapacityModel, variants: Sequence[str], objective: Objective, seeds: Sequence[int], *,
                on_days: float = DEFAULT_ON_DAYS, low: int = 1, high: int = DEFAULT_MAX,
                progress: Progress | None = None, counter: list[int] | None = None,
                all_days: bool = False, runner: DayRunner | None = None, depth: int | None = None) -> list[Answer]:
    """:func:`search_capacity` for every variant, the searches advancing in lockstep.  Each round
    hands ``runner`` the days of the capacities the next ``depth`` steps of every unfinished search
    may evaluate (:func:`~simsched.capacity.bisect.ahead`; ``depth`` defaults to :func:`lookahead`, 1
    in this process): nearest steps first, so a parallel runner has work while a level's last days
    finish (speculative bisection).  As each level's outcome becomes known (:attr:`_Fold.verdict`:
    enough days met, or too many missed), the search follows it, and the days of capacities it can no
    longer reach are skipped or cancelled.  Only the capacities on the search's path are kept: the
    levels, the answer and every number in it are those of evaluating one capacity at a time,
    whatever ``depth``, the runner, or the order days finish in.  Each answer's ``wall_s`` is the
    time until it was known.  O(variants · days · log(answer)) simulations on the path, at most
    ``2 ** depth - 1`` times that in all."""
    if not seeds:
        raise SimschedError("at least one day is needed", field="--days")
    if not 0 < on_days <= 1:
        raise SimschedError(f"must be in (0, 1], got {on_days}", field="--on-days")
    if low < 0 or high < max(low, 1):
        raise SimschedError(f"need 0 <= low <= high and high >= 1, got {low}..{high}", field="capacity.max")
    runner = runner or IN_PROCESS
    depth = lookahead(runner) if depth is None else max(1, depth)
    t0 = time.perf_counter()
    counter = counter if counter is not None else [0]
    answers = {v: Answer(v, None) for v in variants}
    steps: dict[str, Step | Done] = {v: first_step(low, high) for v in answers}
    stop_on = None if all_days else on_days
    while any(isinstance(step, Step) for step in steps.values()):
        rnd = _Round(steps, depth, objective, len(seeds), stop_on, on_days)
        _fold_days(model, rnd.wanted, rnd.folds, seeds, runner, rnd.wants, rnd.over, progress, counter,
                   functools.partial(rnd.rank, len(seeds)))
        if not rnd.over():
            raise _short(runner, sum(rnd.wants(k) for k in range(len(rnd.wanted))))
        for v, levels in rnd.kept().items():
            answers[v].levels.update(levels)
            steps[v] = rnd.where[v]
            if isinstance(steps[v], Done):
                answers[v].capacity, answers[v].wall_s = steps[v].capacity, time.perf_counter() - t0
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
