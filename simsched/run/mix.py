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

Every mix of the grid is simulated on the same days (seeds: common random numbers) with one
scheduler; a mix's confidence is its capacity level's (:meth:`~simsched.run.capacity.Level.summary`:
days met with the Wilson interval, each metric's mean with Student's t interval).  The answer is the
passing mix with the least mean ``cheapest_by``; the *front* is the set of mixes no other mix beats on
both the objective's first metric and ``cheapest_by`` (means over the days), passing or not.  A count
of 0 drops the entry, and with it its type's power, price, carbon and affinity entries.  Cost:
O(grid points x days) simulations; the grid is capped at :data:`MAX_MIXES` points.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.run.capacity import (
    DEFAULT_DAYS,
    DEFAULT_ON_DAYS,
    IN_PROCESS,
    DayRunner,
    Level,
    Objective,
    Progress,
    _section,
    model_source,
    parse_objective,
    with_energy_units,
)

MAX_MIXES = 400


def _strip_type(data: dict[str, Any], ptype: str) -> None:
    """Remove every per-type entry of ``ptype`` (power, prices, carbon, affinity) from a scenario."""
    plat = data["platform"]
    for key in ("power", "prices", "carbon"):
        sec = plat.get(key)
        if isinstance(sec, dict) and isinstance(sec.get("types"), dict):
            sec["types"].pop(ptype, None)
    for per in (plat.get("affinity") or {}).values():
        if isinstance(per, dict):
            per.pop(ptype, None)


class MixModel:
    """Days of a task-graph or stream scenario on a platform whose sized entries get the counts of a
    mix (``{entry: count}``); a day is one :func:`~simsched.run.runner.run_scenario` repetition whose
    numeric row fields are its metrics, with ``energy_kwh`` and ``carbon_kg`` beside ``energy_j`` and
    ``carbon_g``."""

    def __init__(self, doc: Any, mix: Mapping[str, Any], *, field: str = "capacity.mix") -> None:
        from simsched.scenario import parse_scenario

        self.doc = doc
        where = {"field": field, "file": doc.file, "line": doc.line_of(tuple(field.split(".")))}
        procs = (doc.data.get("platform") or {}).get("processors") or []
        if not isinstance(mix, Mapping) or not mix:
            raise SimschedError("give each processor entry to size and its range: {cpu: [2, 8], gpu: [0, 3]}",
                                **where)
        self.entries: list[tuple[str, int, str, range]] = []
        for key, span in mix.items():
            matches = [i for i, p in enumerate(procs) if isinstance(p, dict) and key in (p.get("type", "cpu"),
                                                                                      p.get("name"))]
            if len(matches) != 1:
                raise SimschedError(f"{key!r} must name exactly one processor entry (its type or name); "
                                    f"{len(matches)} match", **where)
            ok = (isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                   for x in span) and 0 <= span[0] <= span[1])
            if not ok:
                raise SimschedError(f"{key}: a range is [lowest, highest] counts, integers with 0 <= lowest <= "
                                    f"highest, got {span!r}", **where)
            entry = procs[matches[0]]
            self.entries.append((str(key), matches[0], str(entry.get("type", "cpu")), range(span[0], span[1] + 1)))
        self.mixes = [tuple(c) for c in itertools.product(*(r for *_, r in self.entries))]
        self.mixes = [c for c in self.mixes if sum(c) > 0 or len(procs) > len(self.entries)]
        if not self.mixes:
            raise SimschedError("every mix of these ranges has no processor", **where)
        if len(self.mixes) > MAX_MIXES:
            raise SimschedError(f"{len(self.mixes)} mixes is more than {MAX_MIXES}: narrow the ranges", **where)
        self.base = parse_scenario(doc)
        self.variants = list(self.base.scheduler_labels)
        self._scenarios: dict[tuple[int, ...], Any] = {}
        self.source = model_source("mix", doc, mix=dict(mix), field=field)

    def label(self, counts: Sequence[int]) -> str:
        return " + ".join(f"{c} {key}" for (key, *_), c in zip(self.entries, counts))

    def scenario(self, counts: tuple[int, ...]) -> Any:
        """The scenario with the sized entries at ``counts`` (a zero drops the entry and its type's
        per-type entries), validated once per mix."""
        if counts not in self._scenarios:
            from simsched.scenario import parse_scenario
            from simsched.yamlio import YamlDocument

            data = copy.deepcopy(self.doc.data)
            procs = data["platform"]["processors"]
            drop = []
            for (_key, index, _type, _r), c in zip(self.entries, counts):
                if c == 0:
                    drop.append(index)
                else:
                    procs[index]["count"] = int(c)
            data["platform"]["processors"] = [p for i, p in enumerate(procs) if i not in drop]
            left = {p.get("type", "cpu") for p in data["platform"]["processors"] if isinstance(p, dict)}
            for index in drop:
                ptype = procs[index].get("type", "cpu")
                if ptype not in left:
                    _strip_type(data, ptype)
            self._scenarios[counts] = parse_scenario(YamlDocument(data, self.doc.lines, self.doc.file))
        return self._scenarios[counts]

    def __call__(self, variant: str, counts: tuple[int, ...], seed: int) -> dict[str, float]:
        from simsched.run.runner import run_scenario

        row = run_scenario(self.scenario(counts), schedulers=[variant], seed=seed, repetitions=1).rows[0]
        out = {k: float(v) for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
               and k != "seed"}
        return with_energy_units(out)


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
    it (module docstring).  JSON-ready.  The first day of the first mix runs here (it checks the
    metrics exist); the others on ``runner`` (default: here, in order), all at once, and the answer is
    the same whatever the runner.  O(mixes x days) simulations."""
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
    names = list(dict.fromkeys([*objective.metrics, by]))
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
            "clauses": [{"metric": c.metric, "op": c.op, "threshold": c.threshold} for c in objective.clauses],
            "days": days, "seeds": [seeds[0], seeds[-1]], "on_days": on_days,
            "entries": [key for key, *_ in model.entries], "points": points,
            "answer": best, "front": pareto_front(serv, cost).tolist()}


def mix_statement(result: Mapping[str, Any]) -> str:
    """One sentence: the cheapest passing mix, its days met with the Wilson interval and its mean cost
    with the t interval, or that no mix passes."""
    by = result["cheapest_by"]
    if result["answer"] is None:
        return (f"{result['variant']}: no mix meets {result['objective']} on {result['on_days']:.0%} of "
                f"{result['days']} days")
    p = result["points"][result["answer"]]
    c = p["metrics"][by]
    lo, hi = p["wilson"]
    return (f"{result['variant']}: the cheapest mix by {by} meeting {result['objective']} is {p['label']}: "
            f"{p['met_days']}/{p['days']} days ({p['rate']:.0%}; 95% Wilson interval {lo:.0%}–{hi:.0%}), "
            f"{by} mean {c['mean']:.4g}" + (f" (95% t interval {c['t_low']:.4g}–{c['t_high']:.4g})"
                                            if math.isfinite(c["t_low"]) else ""))


@dataclass(frozen=True)
class MixQuestion:
    """A scenario's ``capacity.mix`` question with the command line's choices applied."""

    model: MixModel
    objective: Objective
    variant: str
    seed: int
    days: int
    on_days: float
    cheapest_by: str | None


def mix_question(doc: Any, *, objective: str | None = None, resource: str | None = None, days: int | None = None,
                 on_days: float | None = None, seed: int | None = None,
                 variants: Sequence[str] | None = None) -> MixQuestion | None:
    """The mix question of a loaded scenario document, or None when it has no ``capacity.mix`` or the
    command line names one ``--resource`` to size (then it is :func:`~simsched.run.capacity.question_from`'s).
    The command line's values win over the section's; the scheduler is the first chosen (default: the
    scenario's first).  Errors name the file, field and line."""
    if not isinstance(doc.data, dict) or resource is not None:
        return None
    sec = _section(doc)
    if "mix" not in sec:
        return None
    text, field, line = objective, "--objective", None
    if text is None and "objective" in sec:
        text, field, line = sec["objective"], "capacity.objective", doc.line_of(("capacity", "objective"))
    if text is None:
        raise SimschedError("no service objective: give --objective 'METRIC <= NUMBER' or capacity.objective",
                            field="--objective", file=doc.file)
    obj = parse_objective(text, field=field, file=doc.file, line=line)
    model = MixModel(doc, sec["mix"])
    chosen = list(variants) if variants else [str(v) for v in sec.get("schedulers") or []] or model.variants
    return MixQuestion(model, obj, chosen[0], int(seed if seed is not None else doc.data.get("seed", 0) or 0),
                       int(days if days is not None else sec.get("days", DEFAULT_DAYS)),
                       float(on_days if on_days is not None else sec.get("on_days", DEFAULT_ON_DAYS)),
                       sec.get("cheapest_by"))


def answer_mix(question: MixQuestion, progress: Progress | None = None,
               runner: DayRunner | None = None) -> dict[str, Any]:
    """:func:`find_mix` for a :class:`MixQuestion`, its days simulated by ``runner``."""
    return find_mix(question.model, question.objective, variant=question.variant, seed=question.seed,
                    days=question.days, on_days=question.on_days, cheapest_by=question.cheapest_by,
                    progress=progress, runner=runner)
