"""Capacity what-if: the fewest processors (or servers) that meet a service objective, with confidence.

Question: "how many processors of type T (or autotuning servers) does scheduler S need so that the
objective holds on at least ``on_days`` of simulated days?"  A *day* is one seed: the seed draws the
workload (a generator's graph, a stream's arrivals, the autotuning arrivals) and the noise, so every
capacity and every scheduler sees the same ``days`` draws (common random numbers).

* The objective is a small expression (:func:`parse_objective`): clauses ``METRIC OP NUMBER[unit]``
  joined by ``and``, e.g. ``"jct_p95 <= 6h"``, ``"makespan <= 120"``,
  ``"deadline_miss_rate <= 1% and jct_mean <= 2h"``.  Units ``s``, ``min``, ``h``, ``d`` scale to
  seconds, ``%`` divides by 100.  A day meets it when every clause holds.
* The simulation behind a day is a *model*: ``model(variant, capacity, seed) -> {metric: float}``
  (:class:`TaskGraphModel` runs :func:`simsched.run.runner.run_scenario` on the scenario with the named
  processor entry's ``count`` set to the capacity — so any metric a run row carries, stream metrics
  included, can be an objective; :class:`AutotuneModel` runs the autotuning engine).
* :func:`search_capacity` assumes the day success rate is non-decreasing in capacity: it doubles from
  ``low`` until the rate reaches ``on_days``, then bisects between the last failure and the first
  success — O(days · log(answer)) simulations; the answer ``n`` is always simulated together with
  ``n - 1`` (which fails) unless ``n`` is the lowest capacity.
* Where the days run is a :class:`DayRunner`: here, one after another (:data:`IN_PROCESS`, the
  default), or on a sweep's executor with a results store (:mod:`simsched.study.capacity_days`).
  The searches of all variants advance in lockstep, so each *round* hands the runner every day of
  the capacities the variants ask for next (variants x days simulations that can run at once).
  Days come back in any order and are folded into each level in seed order, so the early stop and
  every number of the answer are the same whatever the runner.
* The confidence statement per evaluated capacity: days met ``k`` of ``days``, the Wilson 95% interval
  of the day success rate (Wilson 1927; Clopper–Pearson 1934 alongside), and for each clause's metric
  the mean over days with Student's t interval and its bootstrap interval (Efron & Tibshirani 1993),
  from :mod:`simsched.stats`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from simsched import limits
from simsched.errors import SimschedError, shown
from simsched.limits import not_a_number_check
from simsched.stats import bootstrap_interval, clopper_pearson_interval, t_interval, wilson_interval

DEFAULT_DAYS = 20
DEFAULT_ON_DAYS = 0.95
DEFAULT_MAX = 256

_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "%": 0.01}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda v, t: v <= t * (1 + 1e-12) + 1e-12, "<": lambda v, t: v < t,
    ">=": lambda v, t: v >= t * (1 - 1e-12) - 1e-12, ">": lambda v, t: v > t,
}
_TOKEN = re.compile(r"(?P<space>\s+)|(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"
                    r"|(?P<op><=|>=|=<|=>|≤|≥|<|>)|(?P<sep>&&|&|,)|(?P<word>[A-Za-z_][A-Za-z0-9_.\-]*|%)|(?P<bad>.)",
                    re.DOTALL)
"""The objective's tokens.  Every alternative is a run of one character class (no nested repetition),
tried at the current position only, so tokenizing is linear in the text whatever it holds."""
_ALIASES = {"deadline_miss": "deadline_miss_rate", "miss_rate": "deadline_miss_rate",
            "utilisation": "utilization", "turnaround": "avg_turnaround", "waiting": "avg_waiting"}


@dataclass(frozen=True)
class Clause:
    """``metric op threshold`` (threshold already in base units: seconds, fractions)."""

    metric: str
    op: str
    threshold: float
    text: str

    def holds(self, value: float) -> bool:
        """Whether ``value`` meets the clause; NaN never does."""
        return not math.isnan(value) and _OPS[self.op](value, self.threshold)

    @property
    def lower_is_better(self) -> bool:
        return self.op in ("<", "<=")


@dataclass(frozen=True)
class Objective:
    """Clauses that must all hold on a day."""

    clauses: tuple[Clause, ...]
    text: str

    def met(self, metrics: Mapping[str, float]) -> bool:
        return all(c.holds(float(metrics[c.metric])) for c in self.clauses)

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(c.metric for c in self.clauses))


def _normal_name(name: str) -> str:
    n = re.sub(r"[\s\-.]+", "_", name.strip().lower())
    m = re.fullmatch(r"p(\d+(?:_\d+)?)_jct", n)  # "p95 JCT" -> jct_p95
    if m:
        n = f"jct_p{m.group(1)}"
    return _ALIASES.get(n, n)


def parse_objective(text: Any, *, field: str = "--objective", file: Any = None, line: int | None = None) -> Objective:
    """Parse ``"METRIC OP NUMBER[unit] [and ...]"`` (see the module doc).  Metric names are
    lower-cased with spaces and dashes as ``_`` (``"p95 JCT"`` reads as ``jct_p95``).  Raises
    :class:`SimschedError` (exit 2) naming ``field``, ``file`` and ``line`` for anything else, and
    :class:`~simsched.limits.LimitError` for a text over ``max_objective`` characters.  O(len): one
    pass of a tokenizer without backtracking (:data:`_TOKEN`), then one pass over the tokens."""
    def bad(why: str) -> SimschedError:
        return SimschedError(f"bad objective {shown(text)}: {why}", field=field, file=file, line=line)

    if not isinstance(text, str) or not text.strip():
        raise bad("write it as METRIC OP NUMBER, e.g. 'jct_p95 <= 6h' or 'makespan <= 120'")
    cap = limits.current().max_objective
    if len(text) > cap:
        raise limits.LimitError(f"the objective is {len(text):,} characters long, more than the limit of {cap:,} "
                                f"(max_objective; to allow more, set SIMSCHED_MAX_OBJECTIVE); write it as "
                                f"METRIC OP NUMBER[unit] [and ...]", field=field, file=file, line=line)
    tokens = [(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text) if m.lastgroup != "space"]
    for kind, tok, at, _ in tokens:
        if kind == "bad":
            raise bad(f"unexpected character {tok!r} at position {at + 1}; write METRIC OP NUMBER[unit] "
                      f"(OP one of <=, <, >=, >), clauses joined by 'and'")
    # clauses: the tokens between separators ('and', '&', '&&', ',')
    groups: list[list[tuple[str, str, int, int]]] = [[]]
    for t in tokens:
        if t[0] == "sep" or (t[0] == "word" and t[1] == "and"):
            groups.append([])
        else:
            groups[-1].append(t)
    clauses = []
    for group in groups:
        part = text[group[0][2]:group[-1][3]] if group else ""
        ops = [k for k, t in enumerate(group) if t[0] == "op"]
        shape = (len(ops) == 1 and ops[0] >= 1 and group[0][0] == "word" and group[0][1] != "%"
                 and all(t[0] in ("word", "num") for t in group[:ops[0]])
                 and len(group) - ops[0] in (2, 3) and group[ops[0] + 1][0] == "num"
                 and (len(group) - ops[0] == 2 or group[-1][0] == "word"))
        if not shape:
            raise bad(f"{shown(part)} is not METRIC OP NUMBER[unit] (OP one of <=, <, >=, >)")
        k = ops[0]
        name = text[group[0][2]:group[k - 1][3]]
        op = {"≤": "<=", "=<": "<=", "≥": ">=", "=>": ">="}.get(group[k][1], group[k][1])
        unit_text = group[-1][1] if len(group) - k == 3 else ""
        unit = unit_text.lower()
        if unit not in _UNITS:
            raise bad(f"unknown unit {unit_text!r} in {part!r}; use s, min, h, d or %")
        value = float(group[k + 1][1]) * _UNITS[unit]
        if not limits.finite_value(value):
            raise bad(f"the threshold in {part!r} is not finite (or above {limits.MAX_VALUE:g})")
        clauses.append(Clause(_normal_name(name), op, value, part.strip()))
    return Objective(tuple(clauses), text.strip())


class CapacityModel(Protocol):
    """What the search needs: the capacity's unit, the variants (schedulers / policies), the metric
    names a day reports, and one simulated day."""

    unit: str
    variants: list[str]
    metrics: list[str]

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]: ...


def check_objective(objective: Objective, model: CapacityModel, *, field: str = "--objective",
                    file: Any = None, line: int | None = None) -> None:
    """A :class:`SimschedError` (located) for a clause whose metric the model does not report."""
    for c in objective.clauses:
        if c.metric not in model.metrics:
            raise SimschedError(f"objective {c.text!r}: no metric {c.metric!r} here; choose from "
                                f"{', '.join(model.metrics)}", field=field, file=file, line=line)


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
            for m in self.values:
                self.values[m].append(float(d[m]))
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


# ------------------------------------------------------------------ models
class TaskGraphModel:
    """Days of a task-graph (or stream) scenario: the processor entry that matches ``resource`` (its
    ``type``, or its ``name``) gets ``count = capacity``; every other entry stays.  A day is
    :func:`~simsched.run.runner.run_scenario` with one scheduler, the day's seed and one repetition;
    its metrics are the numeric fields of the run row (learned once, from one run of the scenario as
    written).  The scenario is re-validated per capacity (cached), so a cost matrix drawn per
    processor follows the count."""

    def __init__(self, doc: Any, resource: str | None, *, field_prefix: str = "capacity",
                 from_option: bool = False) -> None:
        """``resource`` names the entry to size (its type or name; None: the only entry).  Errors
        blame ``--resource`` when ``from_option`` (the command line named it), else
        ``<field_prefix>.resource`` at its line (or the processor list's, when the file names none)."""
        from simsched.scenario import parse_scenario

        self.doc = doc
        data = doc.data
        procs = (data.get("platform") or {}).get("processors") or []
        matches = [i for i, p in enumerate(procs) if isinstance(p, dict)
                   and (resource is None or resource in (p.get("type", "cpu"), p.get("name")))]
        blame = "--resource" if from_option else f"{field_prefix}.resource"
        line = None if from_option else (doc.line_of((field_prefix, "resource"))
                                         or doc.line_of(("platform", "processors")))
        if resource is None and len(matches) != 1:
            raise SimschedError("the platform has several processor entries: name the one to size "
                                "(--resource TYPE or NAME)", field=blame, file=doc.file,
                                line=doc.line_of(("platform", "processors")))
        if not matches:
            known = sorted({str(p.get(k)) for p in procs if isinstance(p, dict) for k in ("type", "name") if p.get(k)})
            raise SimschedError(f"no processor entry of type or name {resource!r}; known: {', '.join(known)}",
                                field=blame, file=doc.file, line=line)
        if len(matches) > 1:
            raise SimschedError(f"{len(matches)} processor entries match {resource!r}: name one entry instead",
                                field=blame, file=doc.file, line=line)
        self.index = matches[0]
        entry = procs[self.index]
        self.resource = str(entry.get("type", "cpu") if resource is None else resource)
        self.unit = f"processors ({self.resource})"
        self.display: dict[str, tuple[float, str]] = {}
        self._scenarios: dict[int, Any] = {}
        base = parse_scenario(doc)
        if not base.has_task_graph:
            raise SimschedError("this scenario has no platform and workload to size", file=doc.file)
        self.base = base
        self.variants = list(base.scheduler_labels)
        self._metrics: list[str] | None = None
        self.source = model_source("task-graph", doc, resource=resource)

    @property
    def metrics(self) -> list[str]:
        """The metric names a day reports, learned from one run of the scenario as written (on first
        use: a worker process that rebuilds the model never needs them)."""
        if self._metrics is None:
            self._metrics = sorted(k for k, v in self(self.variants[0], self._base_count(), self.base.seed).items())
        return self._metrics

    def _base_count(self) -> int:
        return int(self.doc.data["platform"]["processors"][self.index].get("count") or 1)

    def scenario(self, capacity: int) -> Any:
        """The scenario with ``capacity`` processors in the sized entry (validated once per capacity)."""
        if capacity not in self._scenarios:
            import copy

            from simsched.scenario import parse_scenario
            from simsched.yamlio import YamlDocument

            if capacity < 1:
                raise SimschedError(f"a processor entry needs count >= 1, got {capacity}", field="capacity")
            data = copy.deepcopy(self.doc.data)
            data["platform"]["processors"][self.index]["count"] = int(capacity)
            self._scenarios[capacity] = parse_scenario(YamlDocument(data, self.doc.lines, self.doc.file))
        return self._scenarios[capacity]

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        from simsched.run.runner import run_scenario

        report = run_scenario(self.scenario(capacity), schedulers=[variant], seed=seed, repetitions=1)
        row = report.rows[0]
        return with_energy_units({k: float(v) for k, v in row.items()
                                  if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "seed"})


def model_source(kind: str, doc: Any, **extra: Any) -> dict[str, Any]:
    """What rebuilds a capacity model in another process (plain data, picklable and JSON-able; see
    :func:`simsched.study.capacity_days.rebuild_model`): its ``kind``, the scenario data without its
    ``capacity:`` section (which changes no simulation, so a results store serves any objective),
    the absolute path of the file (relative workload paths resolve against it) and ``extra``."""
    data = {k: v for k, v in doc.data.items() if k != "capacity"} if isinstance(doc.data, dict) else doc.data
    file = str(Path(doc.file).resolve()) if getattr(doc, "file", None) is not None else None
    return {"kind": kind, "data": data, "file": file, **extra}


def with_energy_units(metrics: dict[str, float]) -> dict[str, float]:
    """``metrics`` with ``energy_kwh`` (from ``energy_j``) and ``carbon_kg`` (from ``carbon_g``) added
    where those are present (a scenario with a power model): the units objectives are written in,
    e.g. ``jct_p95 <= 300 and energy_kwh <= 500 and cost_usd <= 1200``."""
    if "energy_j" in metrics:
        metrics["energy_kwh"] = metrics["energy_j"] / 3.6e6
    if "carbon_g" in metrics:
        metrics["carbon_kg"] = metrics["carbon_g"] / 1000.0
    return metrics


class AutotuneModel:
    """Days of an ``autotuning:`` section: ``capacity`` copies of the first server; the day's jobs
    are :func:`~simsched.run.autotune.plan_jobs` of the seed (cached).  Metrics (seconds): job
    completion times ``jct_mean``, ``jct_max``, ``jct_pNN`` (the smallest completion time that
    ``NN%`` of the day's jobs meet: the inverted-CDF quantile, so ``jct_p95 <= T`` is exactly "95% of
    jobs within T"), ``makespan``; ``latency_penalty``, ``device_hours``, ``jobs``.  A policy that gives
    every job its own server (``dedicated``) needs as many as jobs are ever in the system at once: a
    capacity below that day's peak reports infinite completion times.  A day on which no job arrives
    reports 0 for every metric (it meets any upper bound)."""

    QUANTILES = (50, 90, 95, 99)

    def __init__(self, section: Mapping[str, Any], *, line_of: Any = None, quantiles: Sequence[float] = ()) -> None:
        from simsched.scenario.autotuning import validate_section

        self.cfg = validate_section(section, line_of=line_of)
        self.source = {"kind": "autotuning", "section": section, "quantiles": [float(q) for q in quantiles]}
        self.variants = list(self.cfg.capacity.policies or self.cfg.policies)
        self.unit = f"servers ({self.cfg.servers[0].name})"
        self.quantiles = sorted(set(self.QUANTILES) | {float(q) for q in quantiles})
        self.metrics: list[str] = sorted(["jct_mean", "jct_max", "makespan", "latency_penalty", "device_hours", "jobs",
                               *(self._qname(q) for q in self.quantiles)])
        self.display = {m: (3600.0, "h") for m in self.metrics if m.startswith("jct") or m == "makespan"}
        self._plans: dict[int, Any] = {}

    def describe_days(self, seeds: Sequence[int]) -> str:
        """``"1–10 jobs a day (mean 5.2)"``: how many jobs the days draw (what the answer rests on). O(jobs)."""
        from simsched.run.autotune import job_specs

        counts = [len(job_specs(self.cfg, np.random.default_rng(s))) for s in seeds]
        low, high = min(counts), max(counts)
        span = f"{low}" if low == high else f"{low}–{high}"
        return f"{span} job{'s' if high != 1 else ''} a day (mean {np.mean(counts):.3g})"

    @staticmethod
    def _qname(q: float) -> str:
        return f"jct_p{q:g}".replace(".", "_")

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        from simsched.run.autotune import plan_jobs, result_of
        from simsched.schedulers.registry import AUTOTUNE_POLICIES

        if seed not in self._plans:
            from simsched.run.autotune import job_specs

            empty = not job_specs(self.cfg, np.random.default_rng(seed))  # a quiet day: no arrivals
            self._plans[seed] = [] if empty else plan_jobs(self.cfg, seed)
        plans = self._plans[seed]
        if not plans:  # nothing to wait for: every completion-time bound holds
            return dict.fromkeys(self.metrics, 0.0)
        one_each = AUTOTUNE_POLICIES[variant].one_server_per_job
        res = result_of(plans, self.cfg, variant, 1 if one_each else capacity)
        jct = np.asarray([j.completion for j in res.jobs], dtype=np.float64)
        if one_each and capacity < _peak_concurrency(res.jobs):
            jct = np.full_like(jct, np.inf)
        out = {"jct_mean": float(jct.mean()), "jct_max": float(jct.max()), "makespan": float(res.makespan),
               "latency_penalty": float(res.mean_latency_penalty), "device_hours": float(res.device_hours),
               "jobs": float(len(jct))}
        for q in self.quantiles:
            out[self._qname(q)] = float(np.quantile(jct, q / 100, method="inverted_cdf"))
        return out


def _peak_concurrency(jobs: Sequence[Any]) -> int:
    """Most jobs in the system at once (an arrival at the instant of a finish counts after it). O(j log j)."""
    if not jobs:
        return 0
    times = np.asarray([j.arrival for j in jobs] + [j.finish for j in jobs])
    deltas = np.asarray([1] * len(jobs) + [-1] * len(jobs))
    order = np.lexsort((deltas, times))
    return int(np.max(np.cumsum(deltas[order])))


# ------------------------------------------------------------------ the whole question
def find_capacity(model: CapacityModel, objective: Objective, *, seed: int = 0, days: int = DEFAULT_DAYS,
                  on_days: float = DEFAULT_ON_DAYS, variants: Sequence[str] | None = None, low: int = 1,
                  high: int = DEFAULT_MAX, progress: Progress | None = None, all_days: bool = False,
                  runner: DayRunner | None = None) -> dict[str, Any]:
    """For each variant (default: all of the model's), the fewest capacity meeting ``objective`` on at
    least ``on_days`` of the ``days`` seeds ``seed .. seed + days - 1``; JSON-ready with every
    evaluated capacity's confidence summary (:meth:`Level.summary`), the same whatever ``runner``
    simulates the days (apart from ``wall_s``).  O(variants · days · log answer)."""
    if days < 1:
        raise SimschedError(f"must be >= 1, got {days}", field="--days")
    names = list(variants or model.variants)
    for v in names:
        if v not in model.variants:
            raise SimschedError(f"unknown scheduler {v!r} here; choose from {', '.join(model.variants)}",
                                field="--scheduler")
    seeds = list(range(seed, seed + days))
    out = []
    for ans in search_many(model, names, objective, seeds, on_days=on_days, low=low, high=high,
                           progress=progress, all_days=all_days, runner=runner):
        v = ans.variant
        levels = [ans.levels[k].summary(seed) for k in sorted(ans.levels)]
        out.append({"variant": v, "capacity": ans.capacity, "levels": levels,
                    "simulations": sum(lv["days"] for lv in levels),
                    "wall_s": ans.wall_s})
    return {"kind": "capacity", "objective": objective.text,
            "clauses": [{"metric": c.metric, "op": c.op, "threshold": c.threshold} for c in objective.clauses],
            "unit": model.unit, "display": {m: list(v) for m, v in getattr(model, "display", {}).items()
                                             if m in objective.metrics},
            "days": days, "seeds": [seeds[0], seeds[-1]],
            "days_note": model.describe_days(seeds) if hasattr(model, "describe_days") else None, "on_days": on_days,
            "max": high, "variants": out}


def level_of(entry: Mapping[str, Any], capacity: int | None) -> dict[str, Any] | None:
    """The evaluated level of ``capacity`` in one variant entry of :func:`find_capacity`'s answer."""
    return next((lv for lv in entry["levels"] if lv["capacity"] == capacity), None)


def confidence_statement(result: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """One sentence: the answer, on how many days it meets the objective with the Wilson interval,
    the first clause's metric mean with its t interval, and what one fewer gives."""
    n = entry["capacity"]
    if n is None:
        top = max(entry["levels"], key=lambda lv: lv["capacity"])
        return (f"{entry['variant']}: not met with up to {result['max']} {result['unit']} "
                f"(best {days_text(top)} days at {top['capacity']})")
    lv = level_of(entry, n)
    assert lv is not None
    lo, hi = lv["wilson"]
    clause = result["clauses"][0]
    m = lv["metrics"][clause["metric"]]
    scale, unit = display_of(result, clause["metric"])
    text = (f"{entry['variant']}: {n} {result['unit']} meets it on {lv['met_days']}/{lv['days']} days "
            f"({lv['rate']:.0%}; 95% Wilson interval {lo:.0%}–{hi:.0%}); {clause['metric']} mean "
            f"{_num(m['mean'] / scale)}{unit}" + (f" (95% t interval {_num(m['t_low'] / scale)}–"
                                                 f"{_num(m['t_high'] / scale)}{unit})"
                                                 if math.isfinite(m["t_low"]) else ""))
    below = level_of(entry, n - 1)
    if below is not None:
        text += f"; with {n - 1}: {days_text(below)} days"
    return text


def days_text(level: Mapping[str, Any]) -> str:
    """``"18/20"``, or for a capacity that stopped early ``"≤17/20"`` (at most that many could
    have met it: it had already missed too many)."""
    k, n, planned = level["met_days"], level["days"], level.get("planned_days", level["days"])
    return f"{k}/{n}" if n >= planned else f"≤{planned - (n - k)}/{planned}"


def display_of(result: Mapping[str, Any], metric: str) -> tuple[float, str]:
    """``(divide by, unit suffix)`` to show ``metric`` (seconds of autotuning jobs in hours)."""
    scale, unit = result.get("display", {}).get(metric, (1.0, ""))
    return float(scale), f" {unit}" if unit else ""


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "inf" if x == math.inf else "-"
    return f"{x:.4g}"


# ------------------------------------------------------------------ from a scenario file
@dataclass(frozen=True)
class CapacityQuestion:
    """A scenario's capacity question, with the command line's choices applied."""

    model: Any
    objective: Objective
    seed: int
    days: int
    on_days: float
    high: int
    variants: list[str] | None
    all_days: bool = False


_SECTION_FIELDS = {"objective": str, "resource": str, "days": int, "on_days": float, "max": int, "schedulers": list,
                   "mix": dict, "cheapest_by": str}
"""``mix`` and ``cheapest_by`` ask :mod:`simsched.run.mix`'s question (the cheapest mix of processor types)."""


def _section(doc: Any) -> dict[str, Any]:
    """The top-level ``capacity:`` section, checked field by field (located errors)."""
    raw = doc.data.get("capacity") or {}
    if not isinstance(raw, dict):
        raise SimschedError("must be a mapping (objective: ..., days: ...)", field="capacity", file=doc.file,
                            line=doc.line_of(("capacity",)))
    for key, value in raw.items():
        where = {"field": f"capacity.{key}", "file": doc.file, "line": doc.line_of(("capacity", key))}
        kind = _SECTION_FIELDS.get(key)
        if kind is None:
            raise SimschedError(f"unknown field; known: {', '.join(_SECTION_FIELDS)}", **where)
        ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
        if not ok or isinstance(value, bool):
            raise SimschedError(f"must be {kind.__name__}, got {shown(value)}", **where)
        if kind in (int, float):
            try:
                not_a_number_check(value, integer=kind is int)
            except ValueError as exc:
                raise SimschedError(str(exc), **where) from None
        if key in ("days", "max") and value < 1:
            raise SimschedError(f"must be >= 1, got {value}", **where)
        if key == "on_days" and not 0 < value <= 1:
            raise SimschedError(f"must be in (0, 1], got {value}", **where)
    return raw


def question_from(doc: Any, *, objective: str | None = None, resource: str | None = None, days: int | None = None,
                  on_days: float | None = None, seed: int | None = None, high: int | None = None,
                  variants: Sequence[str] | None = None, all_days: bool = False) -> CapacityQuestion:
    """The capacity question of a loaded scenario document: the command line's values win over the
    ``capacity:`` section's, which win over the defaults; an autotuning scenario's old
    ``autotuning.objective: {quantile: q, within_h: T}`` reads as ``jct_p{100q} <= T h``.  Errors are
    :class:`SimschedError` naming the file, field and line."""
    if not isinstance(doc.data, dict):
        raise SimschedError("the top level must be a mapping", file=doc.file)
    auto = doc.data.get("autotuning")
    autotuning_only = isinstance(auto, dict) and not doc.data.get("platform")
    if autotuning_only:  # the scenario's own errors first, then the question's
        from simsched.scenario.autotuning import validate_section

        validate_section(auto, line_of=doc.line_of, file=doc.file)
    else:
        from simsched.scenario import parse_scenario

        parse_scenario(doc)
    sec = _section(doc)
    text, field_, line = objective, "--objective", None
    if text is None and "objective" in sec:
        text, field_, line = sec["objective"], "capacity.objective", doc.line_of(("capacity", "objective"))
    quantiles: list[float] = []
    if text is None and isinstance(auto, dict) and isinstance(auto.get("objective"), dict):
        o = auto["objective"]
        q = float(o.get("quantile", 0.95)) * 100
        text, field_, line = (f"jct_p{q:g} <= {o.get('within_h')}h".replace(".", "_", 1) if q != int(q)
                              else f"jct_p{int(q)} <= {o.get('within_h')}h",
                              "autotuning.objective", doc.line_of(("autotuning", "objective")))
    if text is None:
        raise SimschedError("no service objective: give --objective 'METRIC <= NUMBER' or capacity.objective "
                            "in the scenario", field="--objective", file=doc.file)
    obj = parse_objective(text, field=field_, file=doc.file, line=line)
    for c in obj.clauses:
        m = re.fullmatch(r"jct_p(\d+)(?:_(\d+))?", c.metric)
        if m:
            quantiles.append(float(m.group(1) + ("." + m.group(2) if m.group(2) else "")))
    if autotuning_only:
        model: Any = AutotuneModel(auto, line_of=doc.line_of, quantiles=quantiles)
        default_high = model.cfg.capacity.max_servers
    else:
        res = resource if resource is not None else sec.get("resource")
        from simsched.run.batch import BatchCapacityModel, is_batch
        from simsched.scenario import parse_scenario

        parsed = parse_scenario(doc)
        if is_batch(parsed):  # a cluster log: the machine's processors, under each batch policy
            model = BatchCapacityModel(parsed)
            model.source = model_source("batch", doc)
            default_high = max(DEFAULT_MAX, 4 * parsed.platform.n_processors)
        else:
            model = TaskGraphModel(doc, res, from_option=resource is not None)
            default_high = DEFAULT_MAX
    check_objective(obj, model, field=field_, file=doc.file, line=line)
    sec_vars = sec.get("schedulers")
    question = CapacityQuestion(
        model, obj, int(seed if seed is not None else doc.data.get("seed", 0) or 0),
        int(days if days is not None else sec.get("days", DEFAULT_DAYS)),
        float(on_days if on_days is not None else sec.get("on_days", DEFAULT_ON_DAYS)),
        int(high if high is not None else sec.get("max", default_high)),
        list(variants) if variants else ([str(v) for v in sec_vars] if sec_vars else None), all_days)
    days_where = ({"field": "--days"} if days is not None else
                  {"field": "capacity.days", "file": doc.file, "line": doc.line_of(("capacity", "days"))})
    try:
        limits.check_amount(simulations_bound(question), "max_runs",
                            what="the simulations of this capacity search (schedulers x days x 2 log2(max) + 2)")
    except SimschedError as exc:
        raise exc.located(**days_where) from None
    return question


def simulations_bound(question: CapacityQuestion) -> float:
    """An upper bound on the simulated days of :func:`answer`: per variant, doubling then bisection
    evaluate at most ``2 ceil(log2 max) + 2`` capacities of ``days`` days each.  O(1)."""
    variants = len(question.variants) if question.variants else len(question.model.variants)
    steps = 2 * math.ceil(math.log2(max(question.high, 2))) + 2
    return float(variants) * float(question.days) * steps


def answer(question: CapacityQuestion, progress: Progress | None = None,
           runner: DayRunner | None = None) -> dict[str, Any]:
    """:func:`find_capacity` for a :class:`CapacityQuestion` (a ``capacity.mix`` question is
    :mod:`simsched.run.mix`'s), its days simulated by ``runner`` (default: here, in order)."""
    return find_capacity(question.model, question.objective, seed=question.seed, days=question.days,
                         on_days=question.on_days, variants=question.variants, high=question.high,
                         progress=progress, all_days=question.all_days, runner=runner)
