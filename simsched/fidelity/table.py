"""The fidelity table: every execution of a corpus simulated under each model, and the errors on the
held-out runs.

Models, in the table's order:

* ``today``: today's model of a recorded run — every recorded core a slot, runtimes as recorded,
  nothing else (``Parameters()``);
* ``defaults``: the workflow system's documented defaults (its overheads profile with each value's
  published source, :func:`~simsched.fidelity.model.documented_defaults`), uncalibrated;
* ``calibrated``: the parameters a profile (:mod:`simsched.fidelity.profile`) holds for the run's
  application within its installation, else for its installation (absent without a profile; NaN for
  an installation the profile does not cover).

Per execution (:class:`Row`): the recorded and simulated makespans, the relative error ``simulated /
recorded - 1`` per model and, where the run recorded task start times, the error of the simulated
starts (median and 95th percentile of ``|simulated - recorded|`` over the tasks, seconds).

Aggregates (:class:`Group`) are over **held-out runs only** — runs no calibration saw — by
installation, by workflow system, by application and over all: the number of runs, the mean, median
and largest ``|relative error|``, and the median signed error (the bias: negative when the model is too
fast).  A run is held out when the corpus's seeded split says so and no profile entry trained on it.

The run-to-run spread (:mod:`simsched.fidelity.repeats`): where an installation ran one workflow several
times, how closely the other runs predict each held-out one, beside the last model's error on those runs —
the floor that the variability of the real system puts under any deterministic model.  And per
installation, an 80% prediction interval for the last model from its errors on the training runs (split
conformal, :mod:`simsched.fidelity.intervals`) with how many held-out runs it covered.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simsched.fidelity.bottleneck import run_features
from simsched.fidelity.corpus import HELD_OUT, TRAIN, Corpus, Execution
from simsched.fidelity.extent import below, beyond, features
from simsched.fidelity.identify import directions, unexercised_share
from simsched.fidelity.intervals import COVERAGE, IntervalGroup, interval_groups
from simsched.fidelity.model import Parameters, Simulated, documented_defaults, simulate, task_io
from simsched.fidelity.profile import Profile, ProfileEntry
from simsched.fidelity.repeats import SpreadGroup, group_deviations, repeat_key, repeat_predictions, spread_groups
from simsched.workloads.recorded import RecordedRun

TODAY, DEFAULTS, CALIBRATED = "today", "defaults", "calibrated"
GROUP_KINDS = ("installation", "wms", "application", "all")


@dataclass(frozen=True)
class Row:
    """One execution: where it belongs, its recorded makespan (None when not recorded) and, per model,
    the simulated makespan (NaN: not simulated under that model) and the start-time error ``(median,
    p95)`` in seconds (None without recorded starts)."""

    name: str
    installation: str
    wms: str
    application: str
    part: str
    tasks: int
    recorded: float | None
    simulated: tuple[float, ...]
    start_error: tuple[tuple[float, float] | None, ...]
    beyond: tuple[str, ...] | None = None
    """The features in which the run lies beyond the training range of its calibration
    (:mod:`~simsched.fidelity.extent`); None without a calibration that recorded its range."""
    below: tuple[str, ...] = ()
    """Those of ``beyond`` in which the run lies below the range rather than above it."""
    unexercised: float | None = None
    """The share of the run's mix outside the directions its calibration's training runs exercised
    (:func:`~simsched.fidelity.identify.unexercised_share`); None without a calibration that recorded
    their mix."""

    def error(self, k: int) -> float:
        """Relative makespan error of model ``k``: ``simulated / recorded - 1`` (NaN when either is
        missing)."""
        if not self.recorded:
            return math.nan
        return self.simulated[k] / self.recorded - 1.0


@dataclass(frozen=True)
class Stats:
    """Errors of one model over one group's held-out runs: ``n`` runs with a value, the mean, median
    and largest ``|relative error|``, the median signed error.  NaN when ``n`` is 0."""

    n: int
    mean: float
    median: float
    max: float
    bias: float

    @classmethod
    def of(cls, errors: np.ndarray) -> Stats:
        e = errors[~np.isnan(errors)]
        if not e.size:
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        a = np.abs(e)
        return cls(int(e.size), float(a.mean()), float(np.median(a)), float(a.max()), float(np.median(e)))


@dataclass(frozen=True)
class Group:
    """The held-out runs of one installation, workflow system or application (``kind``, ``key``), or
    all of them (``kind == "all"``): their number and each model's :class:`Stats`."""

    kind: str
    key: str
    runs: int
    stats: tuple[Stats, ...]


@dataclass(frozen=True)
class FidelityTable:
    """The whole answer: the models' names, a row per execution (corpus order), the groups (by kind,
    then by key), the refused files, the CPU seconds the simulations took, the split's seed, the
    profile's file (None without one), the run-to-run spread (``spread``, against the last model), the
    last model's prediction intervals (``intervals``, :data:`COVERAGE`) and,
    when asked for, each execution's simulation under the last model and its recorded run (for
    pictures)."""

    models: tuple[str, ...]
    rows: tuple[Row, ...]
    groups: tuple[Group, ...]
    refused: tuple[tuple[str, str], ...]
    cpu_s: float
    seed: int
    profile: str | None
    spread: tuple[SpreadGroup, ...] = ()
    intervals: tuple[IntervalGroup, ...] = ()
    simulations: dict[str, Simulated] = field(default_factory=dict)
    runs: dict[str, RecordedRun] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The table as plain data (the ``--json`` document)."""
        return {
            "models": list(self.models), "seed": self.seed, "profile": self.profile, "cpu_s": round(self.cpu_s, 3),
            "refused": [{"file": f, "reason": r} for f, r in self.refused],
            "executions": [{
                "execution": r.name, "installation": r.installation, "wms": r.wms, "application": r.application,
                "part": r.part, "tasks": r.tasks, "recorded_makespan": r.recorded,
                "simulated_makespan": dict(zip(self.models, r.simulated)),
                "relative_error": {m: r.error(k) for k, m in enumerate(self.models)},
                "start_error_s": {m: (None if s is None else {"median": s[0], "p95": s[1]})
                                  for m, s in zip(self.models, r.start_error)},
                "beyond_training_range": None if r.beyond is None else list(r.beyond),
                "below_training_range": None if r.beyond is None else list(r.below),
                "unexercised_share": r.unexercised} for r in self.rows],
            "held_out": [{"group": g.kind, "key": g.key, "runs": g.runs,
                          **{m: vars(s) for m, s in zip(self.models, g.stats)}} for g in self.groups],
            "spread": [{"installation": g.installation, "runs": g.runs,
                        "repeats": {"median": g.repeats_median, "mean": g.repeats_mean},
                        "makespan_spread": g.makespan_spread, "input_spread": g.input_spread,
                        self.models[-1]: {"median": g.model_median, "mean": g.model_mean}} for g in self.spread],
            "intervals": {"model": self.models[-1], "coverage": COVERAGE,
                          "installations": [{"installation": g.installation, "train_runs": g.train_runs,
                                             "log_radius": g.radius if math.isfinite(g.radius) else None,
                                             "held_out": g.held_out, "covered": g.covered}
                                            for g in self.intervals]},
        }


def start_error(run_start: np.ndarray, simulated: Simulated) -> tuple[float, float] | None:
    """``(median, p95)`` of ``|simulated start - recorded start|`` over the tasks with a recorded start
    (None when none has one).  O(n)."""
    known = ~np.isnan(run_start)
    if not known.any():
        return None
    d = np.abs(simulated.schedule.start[known] - run_start[known])
    return float(np.median(d)), float(np.percentile(d, 95))


def _groups(rows: list[Row], n_models: int) -> list[Group]:
    held = [r for r in rows if r.part == HELD_OUT and r.recorded]
    out = []
    for kind in GROUP_KINDS:
        keys = ["all"] if kind == "all" else sorted({getattr(r, kind) for r in held})
        for key in keys:
            members = held if kind == "all" else [r for r in held if getattr(r, kind) == key]
            stats = tuple(Stats.of(np.array([r.error(k) for r in members])) for k in range(n_models))
            out.append(Group(kind, key, len(members), stats))
    return out


def fidelity_table(corpus: Corpus, *, profile: Profile | None = None, scheduler: str = "recorded",
                   keep: bool = False, progress: Callable[[int, int, str], None] | None = None) -> FidelityTable:
    """Simulate every execution of ``corpus`` under each model (see the module docstring) with
    ``scheduler`` (default: the recorded placement) and tabulate.  With ``keep``, the simulations under
    the last model are kept (:attr:`FidelityTable.simulations`).  ``progress(done, total, name)`` after
    each execution.  O(models x simulations)."""
    t0 = time.process_time()
    models = (TODAY, DEFAULTS) if profile is None else (TODAY, DEFAULTS, CALIBRATED)
    machines = {label: sorted({m.name for e in runs for m in e.run.machines})
                for label, runs in corpus.installations().items()}
    entry = {(label, e.application): profile.entry_for(runs[0].wms, machines[label], e.application)
             for label, runs in corpus.installations().items() for e in runs} if profile is not None else {}
    matched = {label: found.installation for (label, _app), found in entry.items() if found is not None}
    trained = _trained(profile, matched) if profile is not None else {}
    rows, kept, runs = [], {}, {}
    directions: dict[tuple[str, str | None], tuple[np.ndarray, np.ndarray, int]] = {}
    for i, e in enumerate(corpus.executions):
        chosen: list[Parameters | None] = [Parameters(), documented_defaults(e.wms)]
        found = entry[(e.installation, e.application)] if profile is not None else None
        if profile is not None:
            chosen.append(found.parameters if found is not None else None)
        span = found.train_range if found is not None else None
        pinned = _directions(found, directions) if found is not None and found.train_mix else None
        io = task_io(e.run) if span is not None or pinned is not None \
            or any(p is not None and p.storage is not None for p in chosen) else None
        row = run_features(e, io) if io is not None and (span is not None or pinned is not None) else None
        values = features(e, io, row) if span is not None else {}
        far = beyond(values, span) if span is not None else None
        under = below(values, span) if span is not None else ()
        # the share is blind to the row's scale: a run to come needs no recorded makespan for it
        off = unexercised_share(row, *pinned) if pinned is not None else None
        simulated, starts = [], []
        for params in chosen:
            if params is None:
                simulated.append(math.nan)
                starts.append(None)
                continue
            sim = simulate(e.graph, e.run, params, scheduler, io)
            simulated.append(sim.makespan)
            starts.append(start_error(e.run.start, sim))
            if keep:
                kept[e.name], runs[e.name] = sim, e.run
        rows.append(_row(e, trained, tuple(simulated), tuple(starts), far, under, off))
        if progress is not None:
            progress(i + 1, len(corpus.executions), e.name)
    source = profile.file if profile is not None else None
    return FidelityTable(models, tuple(rows), tuple(_groups(rows, len(models))), corpus.refused,
                         time.process_time() - t0, corpus.seed, source, _spread(corpus, rows),
                         tuple(interval_groups([r.installation for r in rows], [r.part == TRAIN for r in rows],
                                               [r.recorded for r in rows], [r.simulated[-1] for r in rows],
                                               known=_known_errors(profile, matched) if profile is not None else None)),
                         kept, runs)


def _directions(entry: ProfileEntry, known: dict[tuple[str, str | None], tuple[np.ndarray, np.ndarray, int]]
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """The directions ``entry``'s training runs exercised (:func:`~simsched.fidelity.identify.directions`
    of its ``train_mix``), computed once per entry into ``known``."""
    key = (entry.installation, entry.application)
    if key not in known:
        known[key] = directions(np.array(entry.train_mix, dtype=np.float64))
    return known[key]


def _spread(corpus: Corpus, rows: list[Row]) -> tuple[SpreadGroup, ...]:
    """The run-to-run spread of ``rows`` against their last model (:mod:`simsched.fidelity.repeats`)."""
    keys = [repeat_key(e.name, e.installation, e.run.n_tasks, e.graph.n_edges) for e in corpus.executions]
    recorded = [r.recorded for r in rows]
    today = [r.simulated[0] for r in rows]
    predicted = repeat_predictions(keys, recorded, today)
    model = np.array([r.simulated[-1] for r in rows], dtype=np.float64)
    return tuple(spread_groups([r.installation for r in rows], [r.part == HELD_OUT for r in rows], recorded,
                               predicted, model, group_deviations(keys, recorded), group_deviations(keys, today)))


def _trained(profile: Profile, matched: dict[str, str]) -> dict[str, frozenset[str]]:
    """For each installation of the corpus that ``profile`` calibrated (``matched``: the corpus's label to
    the profile's), what identifies the runs it was trained on: their files' SHA-256 digests, or, for a
    profile that did not record them, their file names without folders.  Either way the profile's own
    split, whatever folder the runs are read from now.  O(runs)."""
    known: dict[str, set[str]] = {}
    for e in profile.entries:
        known.setdefault(e.installation, set()).update(e.train_sha256 or (_by_name(n) for n in e.train))
    return {label: frozenset(known.get(own, ())) for label, own in matched.items()}


def _known_errors(profile: Profile, matched: dict[str, str]) -> dict[str, list[float]]:
    """For each installation of the corpus that ``profile`` calibrated (``matched``, as :func:`_trained`)
    and recorded its training errors for: every training run's error under the entry the table simulates
    it with (its application's refinement where that was trained on it, else the installation's point),
    so that the intervals do not need the training runs in the corpus.  O(entries x runs)."""
    errors: dict[str, list[float]] = {}
    for own in profile.entries:
        if own.application is not None or not own.train_errors:
            continue
        refined = {name: e.train_errors[i] for e in profile.entries
                   if e.installation == own.installation and e.application is not None and e.train_errors
                   for i, name in enumerate(e.train)}
        errors[own.installation] = [refined.get(name, own.train_errors[i]) for i, name in enumerate(own.train)]
    return {label: errors[own] for label, own in matched.items() if own in errors}


def _by_name(name: str) -> str:
    """How a run is known to a profile that recorded no digests: its file name without folders."""
    return "name:" + Path(name).name


def _row(e: Execution, trained: dict[str, frozenset[str]], simulated: tuple[float, ...],
         starts: tuple[tuple[float, float] | None, ...], far: tuple[str, ...] | None, under: tuple[str, ...] = (),
         off: float | None = None) -> Row:
    """An execution's row: its part is the profile's where the profile calibrated its installation (a
    run it was not trained on is held out), else the corpus's seeded split."""
    own = trained.get(e.installation)
    part = e.part if own is None else (TRAIN if e.digest in own or _by_name(e.name) in own else HELD_OUT)
    return Row(e.name, e.installation, e.wms, e.application, part, e.run.n_tasks, e.run.makespan, simulated, starts,
               far, under, off)
