"""The safety line of learned schedulers: what a checkpoint was trained on, and whether an instance
lies outside it.

A learned scheduler (``deepsched``, ``rl``, ``rl-world``) derives from :class:`RangeChecked` and
implements ``training_range()`` returning a :class:`TrainingRange` derived from what its checkpoint
stores — task and processor counts, CCR and the graph's *shape* (:func:`structure_stats`: edges per
task, depth and widest level as fractions of the tasks) — and a short content hash of the
checkpoint file.  The runner calls it once per scheduler: an instance outside any stored range
gives one warning line naming the range, and every result row records the checkpoint's id.  The
warning is about shape only: the workload family's *label* (``wfcommons``, ``dax``, a generator
name) is never a reason to warn, so an imported Montage trace whose size, CCR and structure lie
inside the trained range gives none.  Cost: one hash of the checkpoint file (cached per path and
modification time) and O(n m + e) for the instance's statistics.  The runner reaches the hooks
(``checkpoint_id``, ``range_warning``) by ``getattr``: it sits on a lower floor and imports nothing
here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simsched.simulator.problem import Problem

_IDS: dict[tuple[str, float], str] = {}


def checkpoint_id(path: str | Path) -> str:
    """First 12 hex digits of the SHA-256 of the checkpoint file's bytes."""
    p = Path(path)
    key = (str(p.resolve()), p.stat().st_mtime)
    if key not in _IDS:
        _IDS[key] = hashlib.sha256(p.read_bytes()).hexdigest()[:12]
    return _IDS[key]


def instance_ccr(problem: Problem) -> float:
    """Communication-to-computation ratio: mean edge transfer time (HEFT's c-bar) over mean
    execution time; 0 without edges.  O(n m + e)."""
    if problem.graph.n_edges == 0:
        return 0.0
    return float(np.mean(problem.mean_transfer) / max(float(np.mean(problem.mean_cost)), 1e-300))


STRUCTURE = ("edges per task", "depth / tasks", "widest level / tasks")
"""Dimensionless shape statistics of a task graph (:func:`structure_stats`), in this order."""
_WIDEN = 1.25  # a structure statistic warns outside [lo / 1.25, hi x 1.25] of the trained span


def structure_stats(graph) -> tuple[float, float, float]:  # graph: simsched.workloads.taskgraph.TaskGraph
    """``(edges / n, levels / n, largest level / n)`` of a task graph: how connected, how deep and
    how wide it is, independent of its size and of its family's name.  O(n + e)."""
    n = graph.n_tasks
    return (graph.n_edges / n, graph.depth / n, float(np.bincount(graph.level).max()) / n)


def structure_span(graphs) -> dict[str, list[float]]:
    """``{statistic: [lo, hi]}`` of :func:`structure_stats` over ``graphs`` (an iterable of task
    graphs; at least one), rounded to 4 significant digits outward.  O(sum of n + e)."""
    stats = np.array([structure_stats(g) for g in graphs])
    return {name: [float(f"{lo:.4g}"), float(f"{hi:.4g}")]
            for name, lo, hi in zip(STRUCTURE, stats.min(axis=0), stats.max(axis=0))}


def _span(v: tuple[float, float], fmt: str = "{:g}") -> str:
    return fmt.format(v[0]) if v[0] == v[1] else f"{fmt.format(v[0])}-{fmt.format(v[1])}"


@dataclass(frozen=True)
class TrainingRange:
    """What a checkpoint was trained on; ``None`` fields are unknown (never checked).  ``families``
    is for the reader only: it is never checked."""

    checkpoint: str
    tasks: tuple[int, int] | None = None
    processors: tuple[int, int] | None = None
    families: tuple[str, ...] | None = None
    ccr: tuple[float, float] | None = None
    structure: tuple[tuple[str, float, float], ...] | None = None
    speed_ratio: tuple[float, float] | None = None
    """Fastest over slowest processor speed of the training platforms."""
    load: tuple[float, float] | None = None
    """Offered load of the training streams (:func:`offered_load`), already widened."""

    @classmethod
    def from_dict(cls, checkpoint: str, doc: object) -> TrainingRange:
        """From a stored ``{"tasks": [lo, hi], "processors": [lo, hi], "families": [...], "ccr":
        [lo, hi], "structure": {statistic: [lo, hi]}}``; missing or malformed entries are unknown."""
        d = doc if isinstance(doc, dict) else {}

        def pair(v: object) -> tuple | None:
            return (v[0], v[1]) if isinstance(v, list | tuple) and len(v) == 2 else None

        fams = d.get("families")
        shape = d.get("structure") if isinstance(d.get("structure"), dict) else {}
        spans = tuple((k, float(v[0]), float(v[1])) for k in STRUCTURE if (v := pair(shape.get(k))))
        return cls(checkpoint, pair(d.get("tasks")), pair(d.get("processors")),
                   tuple(str(f) for f in fams) if isinstance(fams, list | tuple) and fams else None,
                   pair(d.get("ccr")), spans or None)

    def describe(self) -> str:
        parts = []
        if self.tasks:
            parts.append(f"{_span(self.tasks)} tasks")
        if self.processors:
            parts.append(f"{_span(self.processors)} processors")
        if self.ccr:
            parts.append(f"CCR {_span(self.ccr, '{:.3g}')}")
        for name, lo, hi in self.structure or ():
            parts.append(f"{name} {_span((lo, hi), '{:.3g}')}")
        if self.speed_ratio:
            parts.append(f"speed ratio {_span(self.speed_ratio, '{:.3g}')}")
        if self.load:
            parts.append(f"load {_span(self.load, '{:.2f}')}")
        if self.families:
            parts.append("families " + ", ".join(self.families))
        return "; ".join(parts) or "an unrecorded range"

    def outside(self, problem: Problem) -> list[str]:
        """What of ``problem``'s shape lies outside the range: its task count, its CCR, a structure
        statistic beyond the trained span widened by 25% each way, its platform
        (:meth:`outside_platform`).  Never its family's name.  O(n m + e)."""
        out = []
        n = problem.n_tasks
        if self.tasks and not self.tasks[0] <= n <= self.tasks[1]:
            out.append(f"{n} tasks")
        if self.ccr:
            c = instance_ccr(problem)
            if not self.ccr[0] * 0.999 <= c <= self.ccr[1] * 1.001:
                out.append(f"CCR {c:.3g}")
        if self.structure:
            have = dict(zip(STRUCTURE, structure_stats(problem.graph)))
            for name, lo, hi in self.structure:
                if not lo / _WIDEN - 1e-12 <= have[name] <= hi * _WIDEN + 1e-12:
                    out.append(f"{name} {have[name]:.3g}")
        out.extend(self.outside_platform(problem.platform))
        return out

    def outside_platform(self, platform) -> list[str]:  # platform: simsched.simulator.platform.Platform
        """What of a platform lies outside the range: its processor count, or its fastest / slowest
        speed ratio beyond the trained span widened by 25% each way.  O(m)."""
        out = []
        m = platform.n_processors
        if self.processors and not self.processors[0] <= m <= self.processors[1]:
            out.append(f"{m} processors")
        if self.speed_ratio:
            r = speed_ratio(platform)
            if not self.speed_ratio[0] / _WIDEN - 1e-12 <= r <= self.speed_ratio[1] * _WIDEN + 1e-12:
                out.append(f"speed ratio {r:.3g}")
        return out

    def outside_stream(self, problem: Problem, jobs: np.ndarray, job_arrival: np.ndarray) -> list[str]:
        """What of a job stream seen so far (``problem`` holds the arrived tasks, ``jobs`` their job
        ids, ``job_arrival`` each job's arrival) lies outside the range: the platform
        (:meth:`outside_platform`), a job size outside ``tasks`` (widened by 25% each way), the
        offered load (:func:`offered_load`, from :data:`LOAD_MIN_JOBS` arrived jobs on).  O(n + m)."""
        out = self.outside_platform(problem.platform)
        sizes = np.bincount(jobs) if jobs.size else np.zeros(0, dtype=np.int64)
        sizes = sizes[sizes > 0]
        if self.tasks and sizes.size:
            lo, hi = int(sizes.min()), int(sizes.max())
            if lo < self.tasks[0] / _WIDEN or hi > self.tasks[1] * _WIDEN:
                out.append(f"job sizes {lo}-{hi} tasks")
        if self.load:
            load = offered_load(problem, jobs, job_arrival)
            if load is not None and not self.load[0] <= load <= self.load[1]:
                out.append(f"offered load {load:.2f}")
        return out


LOAD_MIN_JOBS = 8
"""Arrived jobs needed before the offered load is estimated (fewer give too noisy a rate)."""


def speed_ratio(platform) -> float:  # platform: simsched.simulator.platform.Platform
    """Fastest over slowest processor speed.  O(m)."""
    speed = platform.speed
    return float(speed.max() / speed.min())


def prefix_loads(problem: Problem, jobs: np.ndarray, job_arrival: np.ndarray) -> np.ndarray:
    """The offered load a policy observes after each arrival, from the :data:`LOAD_MIN_JOBS`-th job
    on: for the first ``J`` jobs in arrival order, their total mean work (HEFT's mean execution
    times) over what the processors can do while ``J`` jobs arrive at the observed rate,
    ``m x (a_J - a_1) x J / (J - 1)``.  Empty with fewer jobs or no time between arrivals.  O(n + J log J)."""
    arrival = np.asarray(job_arrival, dtype=np.float64)
    work = np.bincount(jobs, weights=np.nan_to_num(problem.mean_cost, posinf=0.0), minlength=arrival.size)
    return job_loads(work, arrival, problem.n_processors)


def job_loads(work: np.ndarray, arrival: np.ndarray, m: int) -> np.ndarray:
    """:func:`prefix_loads` from each job's total mean work and arrival (inf: not arrived) on ``m`` processors.
    O(J log J)."""
    ok = np.isfinite(arrival)
    order = np.argsort(arrival[ok], kind="stable")
    a, w = arrival[ok][order], work[ok][order]
    if a.size < LOAD_MIN_JOBS:
        return np.zeros(0)
    j = np.arange(1, a.size + 1)[LOAD_MIN_JOBS - 1:]
    span = (a - a[0])[LOAD_MIN_JOBS - 1:]
    load = np.cumsum(w)[LOAD_MIN_JOBS - 1:] / (m * np.maximum(span, 1e-300) * j / (j - 1))
    return load[span > 0]


def offered_load(problem: Problem, jobs: np.ndarray, job_arrival: np.ndarray) -> float | None:
    """The offered load of a stream so far (:func:`prefix_loads` with every job), or None with fewer
    than :data:`LOAD_MIN_JOBS` jobs or no time between arrivals.  O(n + J log J)."""
    loads = prefix_loads(problem, jobs, job_arrival)
    return float(loads[-1]) if loads.size else None  # spans never shrink: the last one is every job's


def workload_family(options: dict, form: str) -> str:
    """The family name of a scenario workload: the generator (``workflow:RECIPE`` for WfChef
    workflows) or, for an imported file, the importer's name."""
    if form != "generator":
        return form
    gen = str(options.get("generator", ""))
    if gen == "workflow":
        return f"workflow:{str(options.get('recipe', 'montage')).lower()}"
    return gen


def feature_names(reasons: list[str]) -> list[str]:
    """The names of what lies outside a range, without the values: ``"100 tasks"`` -> ``tasks``,
    ``"speed ratio 4"`` -> ``speed ratio``, ``"job sizes 1-9 tasks"`` -> ``job sizes``; a reason
    without a number is its own name.  Each name once, in order.  O(total length)."""
    names: list[str] = []
    for reason in reasons:
        words = reason.split()
        numeric = [i for i, w in enumerate(words) if any(c.isdigit() for c in w)]
        if numeric:
            words = words[:numeric[0]] or words[numeric[-1] + 1:]
        name = " ".join(words) or reason
        if name not in names:
            names.append(name)
    return names


def range_detail(rng: TrainingRange) -> str:
    """The detail line naming a checkpoint and what it was trained on."""
    return f"checkpoint {rng.checkpoint} trained on {rng.describe()}"


def warning_line(label: str, rng: TrainingRange, problem: Problem, family: str | None = None,
                 consequence: str = "may plan poorly") -> str | None:
    """The range warning when ``problem``'s shape lies outside ``rng``, else ``None``: a short first
    line (``label``, the ``consequence``, what lies outside), then the instance's values and the
    checkpoint's range on lines of their own (a results row holds them as one line:
    :func:`simsched.outputs.one_line`); ``family`` (the workload's name, may be ``None``) only names
    the instance."""
    bad = rng.outside(problem)
    if not bad:
        return None
    which = f"this {family} instance" if family else "this instance"
    return (f"{label} {consequence}: {', '.join(feature_names(bad))} outside its training range\n"
            f"{which} has {', '.join(bad)}\n{range_detail(rng)}")


class RangeChecked:
    """The runner's hooks of a learned scheduler, reached by ``getattr`` so the runner (a lower
    floor) never imports this package: :attr:`checkpoint_id` and :meth:`range_warning`.  A subclass
    implements ``training_range() -> TrainingRange``; it is computed once per instance (one
    checkpoint hash and read)."""

    def training_range(self) -> TrainingRange:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _range(self) -> TrainingRange:
        cached = self.__dict__.get("_training_range_cache")
        if cached is None:
            cached = self.training_range()
            self.__dict__["_training_range_cache"] = cached
        return cached

    @property
    def checkpoint_id(self) -> str:
        """The content id of the checkpoint (first 12 hex digits of its SHA-256)."""
        return self._range().checkpoint

    def range_warning(self, problem: Problem, label: str, workload: tuple[dict, str] | None = None,
                      stream: bool = False) -> str | None:
        """One warning line when ``problem`` lies outside the checkpoint's training range, else
        ``None``; ``workload`` is the scenario workload's ``(options, form)`` (its family only
        names the instance in the line, it is never checked); ``stream``: ``problem`` is one job of
        a job stream (an agent with a checkpoint per kind of workload judges it by its stream
        checkpoint).  O(n m + e)."""
        family = workload_family(*workload) if workload is not None else None
        return warning_line(label, self._range(), problem, family, self.range_consequence(problem, stream))

    def range_consequence(self, problem: Problem, stream: bool = False) -> str:
        """What happens outside the range, for the warning's first line: the plans may be poor (an
        agent that hands its decisions to a rule there says so instead).  ``stream`` as for
        :meth:`range_warning`."""
        return "may plan poorly"


def scenario_range(checkpoint: str | Path, scenario: str | Path | None, tasks: tuple[int, int] | None,
                   search: tuple[Path, ...] = ()) -> TrainingRange:
    """The range of a checkpoint trained on a generator scenario's family (the RL agents): ``tasks``
    as stored, the scenario's processor count and generator, and the CCR (widened by 25% each way)
    and structure statistics of 8 instances drawn from it.  A scenario file that cannot be found
    leaves those unknown."""
    from simsched.errors import SimschedError

    ident = checkpoint_id(checkpoint)
    path = None
    if scenario:
        for base in (Path("."), *search):
            if (base / scenario).is_file():
                path = base / scenario
                break
    if path is None:
        return TrainingRange(ident, tasks)
    try:
        from simsched.learned.rl.family import Family

        fam = Family.from_scenario(path)
    except SimschedError:
        return TrainingRange(ident, tasks)
    lo, hi = tasks or fam.tasks
    ccr, graphs = [], []
    for i, size in enumerate((lo, hi) * 4):
        fam.tasks = (size, size)
        problem = fam.draw(i).problem
        ccr.append(instance_ccr(problem))
        graphs.append(problem.graph)
    m = fam.platform.n_processors
    shape = TrainingRange.from_dict(ident, {"structure": structure_span(graphs)}).structure
    return TrainingRange(ident, (lo, hi), (m, m), (workload_family({"generator": fam.generator, **fam.options},
                                                                    "generator"),),
                         (min(ccr) * 0.8, max(ccr) * 1.25), shape, (speed_ratio(fam.platform),) * 2)
