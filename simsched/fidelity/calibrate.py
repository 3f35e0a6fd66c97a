"""Calibration: fit the free parameters of the model of a recorded run, per installation, on its
training runs only.

**What is fitted.**  The fields of :class:`~simsched.fidelity.model.Parameters` that a
:class:`Bound` leaves free (``low < high``); a bound with ``low == high`` fixes that parameter.  The
default bounds (:func:`default_bounds`) free every parameter of the model over a range wide enough
for the published figures of the workflow systems it models.

**The objective** is the mean over the installation's training runs of ``|log(simulated makespan /
recorded makespan)|``: symmetric in over- and under-estimation (a model twice too slow costs what a
model twice too fast costs, which a relative error does not), scale-free (a 300 s run weighs what a
50,000 s run weighs), and its exponential is the geometric mean of the ratio, so a value of 0.05 means
"about 5% off" in the sense the fidelity table reports.

**The optimiser** is a global search for :data:`GLOBAL_SHARE` of the budget, then Nelder-Mead
(:func:`scipy.optimize.minimize`, bounded, restarted with a halved simplex while it improves) from the
best point for the rest (:mod:`simsched.fidelity.search`): CMA-ES from the best of a small Latin
hypercube sample (the default) or differential evolution (``search="de"``).  Why no gradient method:
the objective is a simulation — no gradient, piecewise constant in ``slots`` and kinked wherever an
overhead changes which task is critical — so finite differences mislead it.  Why a global search then
a local one: a budget allows a few hundred simulations of a training set, too few for a population
method alone to converge in nine dimensions, and the local search gets further from its best point
than more generations would (on the training runs of two installations, 100 CPU s each: mean training
error 0.215 for differential evolution then Nelder-Mead, 0.246 for it alone).  The start point
(``start``: the workflow system's documented defaults) competes with every sampled point, so the
result is never worse on the training runs than that point.

**The budget** is CPU time (``time.process_time``), shared by the installations in proportion to the
tasks of their training runs (what one evaluation costs); time an installation does not use (its
searches converged) passes to the next.  An evaluation that would start past the budget is not
started: the best point so far is the answer, and :attr:`Calibration.stopped` says ``"budget"``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from simsched.errors import SimschedError, did_you_mean
from simsched.fidelity.bottleneck import regression_start
from simsched.fidelity.corpus import Corpus, Execution
from simsched.fidelity.model import NAMES, Parameters, documented_defaults, simulate, task_io
from simsched.fidelity.search import SEARCH, Spent, check_search, global_search, prepare, refine
from simsched.simulator.engine import TaskIO


@dataclass(frozen=True)
class Bound:
    """The range of one parameter: ``[low, high]`` (equal: fixed), searched on a log scale when
    ``log`` (both ends > 0), in integers when ``integer``."""

    low: float
    high: float
    integer: bool = False
    log: bool = False

    def check(self, name: str) -> None:
        """:class:`SimschedError` (field ``name``) unless the range is finite, ordered and non-empty
        (and positive on a log scale, whole for an integer parameter); no parameter of the model is
        negative, and ``runtime_factor`` and ``bandwidth`` are positive."""
        lo, hi = self.low, self.high
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise SimschedError(f"bounds [{lo:g}, {hi:g}] must be finite numbers", field=f"bound {name}")
        if lo < 0 or (name in ("runtime_factor", "bandwidth") and lo <= 0):
            sign = "> 0" if name in ("runtime_factor", "bandwidth") else ">= 0"
            raise SimschedError(f"bounds [{lo:g}, {hi:g}] must be {sign} ({name} is never negative)",
                                field=f"bound {name}")
        if lo > hi:
            raise SimschedError(f"bounds [{lo:g}, {hi:g}] are empty (low > high)", field=f"bound {name}")
        if self.log and lo <= 0:
            raise SimschedError(f"bounds [{lo:g}, {hi:g}] must be > 0 (searched on a log scale)", field=f"bound {name}")
        if self.integer and (math.ceil(lo) > math.floor(hi) or lo < 1):
            raise SimschedError(f"bounds [{lo:g}, {hi:g}] hold no integer >= 1", field=f"bound {name}")

    @property
    def fixed(self) -> bool:
        return self.low == self.high


@dataclass(frozen=True)
class Calibration:
    """One calibration unit's result: an installation's (``application`` None) or one application's
    within an installation; the fitted ``parameters``, the objective on its training runs before (at
    ``start``) and after, how many simulations of a training set it took, its CPU seconds, why it
    stopped (``"converged"`` or ``"budget"``) and the training runs' names."""

    installation: str
    parameters: Parameters
    start: Parameters
    start_error: float
    train_error: float
    evaluations: int
    cpu_s: float
    stopped: str
    train: tuple[str, ...]
    application: str | None = None
    train_errors: tuple[float, ...] = ()
    """Each training run's ``|log(simulated / recorded)|`` at ``parameters`` (beside ``train``): what the
    prediction intervals of runs scored later are drawn from (:mod:`~simsched.fidelity.intervals`)."""

    @property
    def label(self) -> str:
        """``installation`` or ``installation / application``."""
        return self.installation if self.application is None else f"{self.installation} / {self.application}"


DEFAULT_BOUNDS: dict[str, Bound] = {
    "runtime_factor": Bound(0.5, 2.0, log=True),
    "submit": Bound(0.0, 120.0),
    "dispatch_interval": Bound(0.0, 60.0),
    "dispatch_per_queued": Bound(1e-6, 0.05, log=True),
    "cycle": Bound(0.0, 60.0),
    "pre": Bound(0.0, 120.0),
    "post": Bound(0.0, 120.0),
    "startup": Bound(0.0, 600.0),
    "bandwidth": Bound(1e6, 1e10, log=True),
    "latency": Bound(0.0, 0.0),
}
"""The search box of every parameter but ``slots`` (:func:`default_bounds`): overheads up to 2 minutes
per task (published HTCondor figures are 12-15 s per step), a dispatcher releasing from one task a
minute to any number of tasks per second and slowing by 1 µs to 0.05 s per task waiting in its queue
(searched on a log scale: a uniform search would spend most of its samples on dispatchers that take
tens of seconds per task behind a thousand waiting, and at 1 µs the slowing is nil for any corpus
run; 0.05 s with 1,000 waiting is 50 s, beyond what the corpus's largest fan-outs show), a cycle up to HTCondor's
60 s negotiator interval, a start-up up to 10 minutes, a storage service from 1 MB/s to 10 GB/s
(searched on a log scale; at 10 GB/s the corpus's I/O takes seconds, so "no storage bottleneck" is
inside the box), a runtime factor from 0.5 to 2.  The storage latency is fixed at 0 (a makespan
cannot tell it from ``pre``); ``--bound latency=0,1`` frees it."""


def default_bounds(train: Sequence[Execution]) -> dict[str, Bound]:
    """The search box of an installation: :data:`DEFAULT_BOUNDS`, and ``slots`` from 1 to the most cores
    of its machines (48 when no machine says).  O(runs x machines)."""
    cores = [m.cores for e in train for m in e.run.machines if m.cores]
    return {"slots": Bound(1, max(cores, default=48), integer=True), **DEFAULT_BOUNDS}


def parse_bounds(items: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``NAME=LOW,HIGH`` items (the command line's ``--bound``) as ``{name: (low, high)}``;
    :class:`SimschedError` (field ``--bound``) for an unknown name, a malformed item or a number that
    does not parse.  O(items)."""
    out: dict[str, tuple[float, float]] = {}
    for item in items:
        name, sep, rest = item.partition("=")
        name = name.strip()
        if name not in NAMES:
            raise SimschedError(f"{item!r}: unknown parameter {name!r}{did_you_mean(name, NAMES)}; "
                                f"parameters: {', '.join(NAMES)}", field="--bound")
        parts = rest.split(",")
        try:
            lo, hi = (float(p) for p in parts) if sep and len(parts) == 2 else (None, None)
        except ValueError:
            lo = hi = None
        if lo is None or hi is None:
            raise SimschedError(f"{item!r}: write NAME=LOW,HIGH, e.g. slots=1,8", field="--bound")
        out[name] = (lo, hi)
    return out


def bounds_for(train: Sequence[Execution], overrides: Mapping[str, tuple[float, float]]) -> dict[str, Bound]:
    """:func:`default_bounds` with ``overrides`` (``{name: (low, high)}``) in place, each checked
    (:meth:`Bound.check`).  O(runs x machines + names)."""
    bounds = default_bounds(train)
    for name, (lo, hi) in overrides.items():
        base = bounds.get(name, Bound(lo, hi))
        bounds[name] = Bound(float(lo), float(hi), base.integer, base.log and lo > 0)
    for name, b in bounds.items():
        b.check(name)
    return bounds


def log_error(simulated: float, recorded: float) -> float:
    """``|log(simulated / recorded)|``, the per-run term of the objective."""
    return abs(math.log(simulated / recorded))


def objective(train: Sequence[Execution], params: Parameters, scheduler: str = "recorded",
              io: Sequence[TaskIO] | None = None) -> float:
    """Mean ``|log(simulated / recorded makespan)|`` over ``train`` under ``params`` (``io``: each run's
    :func:`~simsched.fidelity.model.task_io`, built once by the caller).  One simulation per run."""
    return float(np.mean([log_error(simulate(e.graph, e.run, params, scheduler, io[i] if io else None).makespan,
                                    e.run.makespan) for i, e in enumerate(train)]))


PRIOR_WEIGHT = 0.0
"""The default ``prior`` of :func:`calibrate` (``--prior``): the weight of the pull towards the start
point (:func:`shrunk`).  0, the runs alone: a weight of 1, chosen on the draws of two splits, did not
predict held-out runs better on the draws of a fresh split (docs/fidelity.md, "How many runs does an
installation need?"), and the documented defaults it pulls towards are no credible centre where a
workflow system publishes no overheads (Makeflow: none, which is today's model)."""


def shrunk(error: float, u: np.ndarray, origin: np.ndarray, prior: float, runs: int) -> float:
    """The objective a calibration with a prior minimises: the training ``error`` (the mean
    ``|log(simulated / recorded)|``) plus ``prior / runs`` times the mean squared distance from the start
    point ``origin`` to ``u``, both in the unit box of the free parameters (log-scaled ones on their log
    scale).  A maximum a posteriori fit in the spirit of ridge regression / a Gaussian prior centred on
    the start (the workflow system's documented defaults for an installation, the installation's point
    for one of its applications: hierarchical shrinkage, Gelman et al., *Bayesian Data Analysis*, ch. 5):
    with many training runs the data decide, with two or three a parameter moves away from the start
    only as far as the runs pay for.  O(free parameters)."""
    if prior <= 0.0 or not u.size:
        return error
    return error + prior / runs * float(np.mean((u - origin) ** 2))


POPSIZE = 5
"""Differential evolution's population per free parameter (scipy's ``popsize``)."""
GLOBAL_SHARE = 0.5
"""The share of an installation's budget spent by the global search before Nelder-Mead refines."""


def _to_params(x: np.ndarray, free: list[str], bounds: Mapping[str, Bound], base: Parameters) -> Parameters:
    values: dict[str, float | int] = {}
    for name, v in zip(free, x.tolist()):
        b = bounds[name]
        v = 10.0 ** v if b.log else v
        values[name] = int(round(v)) if b.integer else float(min(max(v, b.low), b.high))
    return replace(base, **values)


def _to_x(params: Parameters, free: list[str], bounds: Mapping[str, Bound]) -> list[float]:
    """``params``' free parameters as a point of the search box (log-scaled ones as logarithms), each
    clipped into its bound first; an unset ``slots`` (every core) or ``bandwidth`` (no storage
    bottleneck) is the top of its range."""
    x = []
    for n in free:
        v = getattr(params, n)
        if v is None:
            v = bounds[n].high
        v = min(max(float(v), bounds[n].low), bounds[n].high)  # into the box first (0 has no logarithm)
        x.append(math.log10(v) if bounds[n].log else v)
    return x


def calibrate_installation(label: str, train: Sequence[Execution], *, budget_s: float, seed: int,
                           bounds: Mapping[str, Bound], start: Parameters, popsize: int = POPSIZE,
                           global_share: float = GLOBAL_SHARE, scheduler: str = "recorded",
                           prior: float = 0.0, search: str = SEARCH, regression: bool = True,
                           max_evaluations: int | None = None) -> Calibration:
    """Fit the free parameters (``bounds``) on ``train`` within ``budget_s`` CPU seconds (see the module
    docstring), starting from ``start`` (clipped into the box; its fixed parameters are kept where no
    bound names them): the global search ``search`` (:data:`~simsched.fidelity.search.SEARCHES`) for
    ``global_share`` of the budget, then Nelder-Mead from the best point for the rest.  Deterministic
    for ``seed`` when the budget is not what stops it.

    ``prior`` > 0 minimises :func:`shrunk` instead of the training error alone: the fit is pulled towards
    ``start`` the more, the fewer training runs there are (see :data:`PRIOR_WEIGHT`).  The result's
    ``train_error`` and ``start_error`` are the training error alone.

    ``regression``: before the search, the point of the bottleneck regression of ``train``
    (:func:`~simsched.fidelity.bottleneck.regression_start` from ``start``) is simulated once and competes
    with ``start`` as the point the searches begin from.

    ``max_evaluations``: the budget in simulations of ``train`` (the start's included), ``budget_s`` then
    only a ceiling: the same result on any machine, however fast or loaded, unless the CPU runs out
    first."""
    prepare(search)  # the search's imports are not the installation's CPU
    clock = time.process_time
    t0 = clock()
    fixed = {n: (int(b.low) if b.integer else b.low) for n, b in bounds.items() if b.fixed}
    start = replace(start, **{n: v for n, v in fixed.items()})
    free = [n for n in NAMES if n in bounds and not bounds[n].fixed]
    io = [task_io(e.run) for e in train]
    start_error = objective(train, start, scheduler, io)
    box = np.array([(math.log10(bounds[n].low), math.log10(bounds[n].high)) if bounds[n].log
                    else (bounds[n].low, bounds[n].high) for n in free], dtype=np.float64).reshape(-1, 2)
    x0 = _to_x(start, free, bounds)
    best = {"value": start_error, "error": start_error, "params": start, "x": np.array(x0)}
    evaluations = [1]

    def used() -> float:  # the share of the budget spent: of the simulations when counted, else of the CPU
        cpu = (clock() - t0) / budget_s if budget_s > 0 else math.inf
        if max_evaluations is None:
            return cpu
        return evaluations[0] / max_evaluations if cpu < 1.0 else math.inf  # the CPU budget still a ceiling
    deadline = [1.0]
    width = np.where(box[:, 1] > box[:, 0], box[:, 1] - box[:, 0], 1.0)
    origin = (np.array(x0, dtype=np.float64) - box[:, 0]) / width

    def f(x: np.ndarray) -> float:
        if used() >= deadline[0]:
            raise Spent
        params = _to_params(x, free, bounds, start)
        error = objective(train, params, scheduler, io)
        value = shrunk(error, (np.asarray(x, dtype=np.float64) - box[:, 0]) / width, origin, prior, len(train))
        evaluations[0] += 1
        if value < best["value"]:
            best.update(value=value, error=error, params=params, x=np.array(x, dtype=np.float64))
        return value

    stopped = "converged"
    guess = regression_start(train, io, start) if free and regression else None
    if guess is not None:
        try:
            f(np.array(_to_x(guess, free, bounds)))
        except Spent:
            pass
    deadline[0] = global_share
    if free:
        try:
            if global_share <= 0:
                raise Spent
            global_search(search, f, best, box, seed=seed, x0=np.array(x0), popsize=popsize,
                          integrality=[bounds[n].integer for n in free])
        except Spent:
            pass
        deadline[0] = 1.0
        stopped = refine(f, best, box)
    return Calibration(label, best["params"], start, start_error, best["error"], evaluations[0], clock() - t0,
                       stopped, tuple(e.name for e in train))


def training_runs(corpus: Corpus) -> dict[str, list[Execution]]:
    """Each installation's training runs with a recorded makespan > 0, by label.  An installation
    without one is a :class:`SimschedError` naming it, unless every one of its runs belongs to an
    application the split holds out whole (``corpus.hold_out``): that one is left uncalibrated (its runs
    are predicted by no calibrated point).  O(n)."""
    out = {}
    for label, runs in corpus.installations().items():
        usable = [e for e in runs if not e.held_out and e.run.makespan]
        if not usable and all(e.application in corpus.hold_out for e in runs):
            continue
        if not usable:
            raise SimschedError(f"installation {label!r} has no training run with a recorded makespan "
                                f"({len(runs)} runs, {sum(e.held_out for e in runs)} held out): nothing to "
                                f"calibrate on", field="--installation")
        out[label] = usable
    if not out:
        raise SimschedError("every run is held out: nothing to calibrate on", field="--hold-out")
    return out


MIN_APPLICATION_RUNS = 3
"""The fewest training runs of one application for it to get its own refinement
(:func:`calibrate`); fewer, and a point fitted to them says more about those runs than about the
application."""
APPLICATION_WEIGHT = 0.5
"""An application's refinement's claim on the budget per task, relative to its installation's search."""


def calibration_units(runs: Mapping[str, Sequence[Execution]], per_application: bool,
                      min_runs: int) -> list[tuple[str, str | None, list[Execution]]]:
    """The calibration units of ``runs`` (training runs by installation), in the order they are fitted:
    each installation ``(label, None, runs)``, followed, with ``per_application``, by each of its
    applications with at least ``min_runs`` training runs ``(label, application, its runs)`` when the
    installation has more than one application.  O(runs)."""
    out: list[tuple[str, str | None, list[Execution]]] = []
    for label, train in runs.items():
        out.append((label, None, list(train)))
        apps: dict[str, list[Execution]] = {}
        for e in train:
            apps.setdefault(e.application, []).append(e)
        if per_application and len(apps) > 1:
            out.extend((label, app, group) for app, group in apps.items() if len(group) >= min_runs)
    return out


def check_options(*, budget_s: object, min_runs: object, prior: object, search: object,
                  evaluations: object = None) -> None:
    """:class:`SimschedError` naming the option (``--budget``, ``--min-runs``, ``--prior``, ``--search``,
    ``--evaluations``) unless the budget is a finite number of CPU seconds > 0, ``min_runs`` a whole number
    >= 1, ``prior`` a finite number >= 0, ``search`` one of :data:`~simsched.fidelity.search.SEARCHES` and
    ``evaluations`` None or a whole number >= 1: the one check of :func:`calibrate`'s options, for the
    command (before the corpus is read) and the library alike."""
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not budget_s > 0 \
            or not math.isfinite(budget_s):
        raise SimschedError(f"the budget must be a finite number of CPU seconds > 0, got {budget_s!r}",
                            field="--budget")
    if isinstance(min_runs, bool) or not isinstance(min_runs, int) or min_runs < 1:
        raise SimschedError(f"must be a whole number >= 1, got {min_runs!r}", field="--min-runs")
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not 0.0 <= prior < math.inf:
        raise SimschedError(f"must be a finite number >= 0, got {prior!r}", field="--prior")
    if evaluations is not None and (isinstance(evaluations, bool) or not isinstance(evaluations, int)
                                    or evaluations < 1):
        raise SimschedError(f"must be a whole number >= 1 (simulations of an installation's training runs), got "
                            f"{evaluations!r}", field="--evaluations")
    check_search(search)


def calibrate(corpus: Corpus, *, budget_s: float, seed: int = 0,
              bounds: Mapping[str, tuple[float, float]] | None = None,
              start: Callable[[Sequence[Execution]], Parameters] | None = None,
              per_application: bool = True, min_runs: int = MIN_APPLICATION_RUNS, prior: float = 0.0,
              search: str = SEARCH, regression: bool = True, evaluations: int | None = None,
              progress: Callable[[int, int, str], None] | None = None) -> list[Calibration]:
    """Calibrate every installation of ``corpus`` on its training runs (:func:`training_runs`) within
    ``budget_s`` CPU seconds in all, from ``start(train)`` (default: the documented defaults of its
    workflow system, :func:`documented_defaults`), over :func:`bounds_for` with ``bounds`` overriding.

    Hierarchical (``per_application``): after an installation's global search, each of its applications
    with ``min_runs`` training runs or more is refined on its own runs by Nelder-Mead from the
    installation's point (:func:`calibration_units`): the installation's overheads differ from one
    application to the next (the tasks' sizes, their files, how many are ready at once), and a local
    search from the shared point fits that difference without searching the whole box again.  The
    refinement is never worse than the installation's point on those runs (it starts there); a run of an
    application without a refinement is simulated with its installation's point.

    The budget is shared by the units in proportion to their training tasks (an application's
    refinement weighted :data:`APPLICATION_WEIGHT`), what a unit leaves unused passing to the next.
    ``prior``: the weight of the pull towards each unit's start point (:func:`shrunk`; 0: none).
    ``regression``: each unit's bottleneck regression competes with its start
    (:func:`calibrate_installation`).  ``evaluations``: each installation's search gets this many
    simulations of its training runs and each application's refinement :data:`APPLICATION_WEIGHT` of it
    (at least one), the CPU budget then only a ceiling (each unit its share, as without): a calibration
    that a machine's speed or load does not change, for a result to reproduce to the bit.  Checks
    everything (budget, bounds, prior, training runs) before the first simulation.
    ``progress(done, total, label)`` after each unit.  Units in :func:`calibration_units`' order."""
    check_options(budget_s=budget_s, min_runs=min_runs, prior=prior, search=search, evaluations=evaluations)
    runs = training_runs(corpus)
    boxes = {label: bounds_for(train, bounds or {}) for label, train in runs.items()}
    units = calibration_units(runs, per_application, min_runs)
    cost = [sum(e.run.n_tasks + 10 for e in train) * (1.0 if app is None else APPLICATION_WEIGHT)
            for _, app, train in units]
    left_s, left_cost = float(budget_s), sum(cost)
    out: list[Calibration] = []
    fitted: dict[str, Parameters] = {}
    for i, (label, app, train) in enumerate(units):
        share = left_s * cost[i] / left_cost
        count = None if evaluations is None else max(1, int(evaluations * (1.0 if app is None
                                                                           else APPLICATION_WEIGHT)))
        if app is None:
            origin = start(train) if start is not None else documented_defaults(train[0].wms)
            result = calibrate_installation(label, train, budget_s=share, seed=seed, bounds=boxes[label],
                                            start=origin, prior=prior, search=search, regression=regression,
                                            max_evaluations=count)
            fitted[label] = result.parameters
        else:
            result = replace(calibrate_installation(label, train, budget_s=share, seed=seed, bounds=boxes[label],
                                                    start=fitted[label], global_share=0.0, prior=prior,
                                                    search=search, regression=regression, max_evaluations=count),
                             application=app)
        result = replace(result, train_errors=tuple(
            log_error(simulate(e.graph, e.run, result.parameters).makespan, e.run.makespan) for e in train))
        out.append(result)
        left_s, left_cost = max(left_s - result.cpu_s, 0.0), left_cost - cost[i]
        if progress is not None:
            progress(i + 1, len(units), result.label)
    return out
