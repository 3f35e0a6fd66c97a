"""Autotuning jobs: what tuning a deep-learning model for a target device costs, round by round.

A tuning *job* tunes one DL model for one target device type (TVM/AutoTVM/Ansor style).  Its
*tuning tasks* are the model's distinct conv/dense configurations (layers with the same
``signature`` share one task; ``weight`` counts how often it occurs).  The job has a trial budget
per task and measures ``batch_size`` candidate configurations per *round*; each round loops three
stages:

1. **build** — compile every candidate (CPU, one compile per config, parallel over the host's
   cores; compile time per config is lognormal with mean ``compile_mean_s``);
2. **measure** — run every candidate on the job's target device, which must be used exclusively for
   honest timings: per config ``measure_overhead_s`` + one warm-up run + ``repeat`` repeats of
   ``number`` runs, a repeat lasting at least ``min_repeat_ms`` (so ``1 + number*repeat`` runs);
3. **update** — retrain the cost model and search the next batch (CPU-heavy; its cost grows with
   the data collected: ``update_base_s + update_per_sample_s * samples so far``).

:func:`plan_job` samples every stage's nominal duration (on an otherwise idle host) once per seed,
so that every policy sees the same job.  It also decides which task each round tunes: round-robin by
default, or any :data:`Allocator` (Ansor's gradient task scheduler lives in
:mod:`simsched.schedulers.loadaware`).  Each task's best latency after ``t`` trials follows the curve
``g(t) = base * (1 + gap * exp(-t / tau))`` with seeded per-task ``gap`` and ``tau``; the job's tuned
inference latency is ``sum(weight_i * g_i(trials_i))``.

Calibration (issue 6's targets, in line with the TVM tutorials):

* GPU: about 1 s per trial for ResNet-18 and about 4 hours in all.  The TVM tutorial *Auto-scheduling
  a Neural Network for NVIDIA GPU* (tvm.apache.org, how_to/tune_with_autoscheduler/tune_network_cuda)
  measures with ``repeat=1, min_repeat_ms=300`` and recommends ``900 * len(tasks)`` trials; its
  builder compiles in parallel over all cores (``LocalBuilder(n_parallel=cpu count)``).  The preset
  below gives ~0.5 s measuring, ~0.15 s building (16 cores) and ~0.3 s updating per trial.
* x86 CPU: about 4.8 s per trial (measurement dominates: ``number=1, repeat=10`` with cache
  flushing, as in the TVM tutorial *Auto-tuning a Convolutional Network for x86 CPU*).
* Batch of 64 configs per round: Ansor's ``num_measures_per_round`` (Zheng et al., OSDI 2020) and
  AutoTVM's XGBoost tuner ``plan_size``.

How the split between stages is set is this module's assumption (documented in docs/autotuning.md);
the totals are the published figures.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from simsched.errors import SimschedError

TUNABLE_OPS = ("conv", "dense", "matmul", "linear", "gemm", "batch_matmul")
"""A layer is a tuning task when its ``op`` (lower-cased) contains one of these."""

STAGES = ("build", "measure", "update")
"""Stage kinds of one round, in order."""


class LayerLike(Protocol):
    """What :func:`tuning_tasks` reads from a layer (``simsched.workloads.dlmodels.LayerSpec``)."""

    name: str
    op: str
    flops: float
    signature: Hashable


@dataclass(frozen=True)
class TuningTask:
    """One distinct conv/dense configuration of a model: ``weight`` layers share it."""

    name: str
    op: str
    flops: float
    signature: Hashable
    weight: int = 1


@dataclass(frozen=True)
class TuningParams:
    """Stage cost model of one target type.  Times in seconds on an otherwise idle host/device."""

    compile_mean_s: float = 2.5
    compile_sigma: float = 0.5
    measure_overhead_s: float = 0.2
    number: int = 3
    repeat: int = 1
    min_repeat_ms: float = 300.0
    kernel_time_s: float = 1e-3
    kernel_sigma: float = 0.5
    update_base_s: float = 17.0
    update_per_sample_s: float = 2e-4
    update_threads: int = 4
    peak_flops: float = 14e12

    def __post_init__(self) -> None:
        for name in ("compile_mean_s", "measure_overhead_s", "kernel_time_s", "update_base_s", "peak_flops"):
            if not getattr(self, name) > 0:
                raise SimschedError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("compile_sigma", "kernel_sigma", "update_per_sample_s", "min_repeat_ms"):
            if getattr(self, name) < 0:
                raise SimschedError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("number", "repeat", "update_threads"):
            if getattr(self, name) < 1:
                raise SimschedError(f"{name} must be >= 1, got {getattr(self, name)}")


PRESETS: dict[str, TuningParams] = {
    # ~1.0 s per trial for ResNet-18 on a 16-core GPU server (see module docstring).
    "gpu": TuningParams(),
    # ~4.8 s per trial on x86: LLVM compiles are quicker, measuring (1 + 1*10 runs, cache flush) dominates.
    "cpu": TuningParams(compile_mean_s=1.5, measure_overhead_s=0.5, number=1, repeat=10, min_repeat_ms=0.0,
                        kernel_time_s=0.33, kernel_sigma=0.4, update_base_s=20.0, peak_flops=1.5e12),
}
"""Default stage parameters per target device type."""


def is_tunable(op: str) -> bool:
    """True for the operators a tuner creates tasks for (conv and dense families)."""
    op = op.lower()
    return any(t in op for t in TUNABLE_OPS)


def tuning_tasks(layers: Sequence[LayerLike]) -> tuple[TuningTask, ...]:
    """The distinct tunable configurations of ``layers``, in order of first appearance.  O(n).

    Layers with equal ``signature`` (a hashable config tuple) become one task whose ``weight`` is
    their count — a tuner tunes each distinct configuration once.
    """
    seen: dict[Hashable, list[Any]] = {}
    for layer in layers:
        if not is_tunable(str(layer.op)):
            continue
        key = (str(layer.op), layer.signature)
        if key in seen:
            seen[key][4] += 1
        else:
            seen[key] = [str(layer.name), str(layer.op), float(layer.flops), layer.signature, 1]
    return tuple(TuningTask(*v) for v in seen.values())


def model_tasks(model: str) -> tuple[TuningTask, ...]:
    """Tuning tasks of a named DL model from :mod:`simsched.workloads.dlmodels`.

    Raises :class:`SimschedError` when that module is missing or does not know ``model``.
    """
    try:
        from simsched.workloads import dlmodels
    except ImportError:
        raise SimschedError(f"model {model!r}: DL model graphs (simsched.workloads.dlmodels) are not "
                            "available; give the job's tasks explicitly") from None
    try:
        layers = dlmodels.layers(model)
    except SimschedError:
        raise
    except (KeyError, ValueError) as exc:
        raise SimschedError(f"unknown model {model!r}: {exc}") from None
    tasks = tuning_tasks(layers)
    if not tasks:
        raise SimschedError(f"model {model!r} has no conv/dense layers to tune")
    return tasks


@dataclass(frozen=True)
class JobSpec:
    """An autotuning job: a model's tasks x a trial budget per task, ``batch_size`` trials per round.

    ``target`` is the device type its measurements run on (``gpu`` or ``cpu``: a CPU target is
    measured on the host itself); ``arrival`` is when it is submitted (seconds).
    """

    name: str
    tasks: tuple[TuningTask, ...]
    trials_per_task: int = 1200
    batch_size: int = 64
    target: str = "gpu"
    arrival: float = 0.0
    params: TuningParams = field(default_factory=TuningParams)
    model: str = ""

    def __post_init__(self) -> None:
        if not self.tasks:
            raise SimschedError(f"job {self.name!r}: no tuning tasks")
        if self.trials_per_task < 1 or self.batch_size < 1:
            raise SimschedError(f"job {self.name!r}: trials_per_task and batch_size must be >= 1")
        if not (self.arrival >= 0 and np.isfinite(self.arrival)):
            raise SimschedError(f"job {self.name!r}: arrival must be >= 0, got {self.arrival}")

    @property
    def total_trials(self) -> int:
        return self.trials_per_task * len(self.tasks)

    @property
    def n_rounds(self) -> int:
        return -(-self.total_trials // self.batch_size)

    def with_arrival(self, arrival: float, name: str | None = None) -> JobSpec:
        return replace(self, arrival=float(arrival), name=name or self.name)


@dataclass(frozen=True)
class LatencyCurves:
    """Per task best latency after ``t`` trials: ``base * (1 + gap * exp(-t / tau))`` (seconds)."""

    base: np.ndarray
    gap: np.ndarray
    tau: np.ndarray
    weight: np.ndarray
    flops: np.ndarray
    ops: tuple[str, ...]

    def latency(self, trials: np.ndarray) -> np.ndarray:
        """(k,) best latency of each task after ``trials[i]`` trials.  O(k)."""
        return self.base * (1.0 + self.gap * np.exp(-np.asarray(trials, dtype=np.float64) / self.tau))

    def model_latency(self, trials: np.ndarray) -> float:
        """The tuned model's inference latency: ``sum(weight * g(trials))``."""
        return float(self.weight @ self.latency(trials))


Allocator = Callable[[LatencyCurves, int, int, np.random.Generator], np.ndarray]
"""``allocator(curves, n_rounds, batch_size, rng) -> (n_rounds,) task index per round``."""


def round_robin(curves: LatencyCurves, n_rounds: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """Tasks in turn, one round each (Ansor's ``round-robin`` strategy).  O(R)."""
    return np.arange(n_rounds, dtype=np.int64) % len(curves.base)


def latency_curves(spec: JobSpec, rng: np.random.Generator) -> LatencyCurves:
    """Seeded latency curves of ``spec``'s tasks: an untuned kernel is ~3x slower than the tuned one
    (``gap`` lognormal around 2), convergence constant ``tau`` in [0.15, 0.45] x trial budget, tuned
    efficiency 30-70% of ``peak_flops``.  O(k)."""
    k = len(spec.tasks)
    flops = np.array([max(t.flops, 1.0) for t in spec.tasks])
    eff = rng.uniform(0.3, 0.7, k)
    return LatencyCurves(
        base=flops / (spec.params.peak_flops * eff),
        gap=rng.lognormal(np.log(2.0), 0.3, k),
        tau=rng.uniform(0.15, 0.45, k) * spec.trials_per_task,
        weight=np.array([t.weight for t in spec.tasks], dtype=np.float64),
        flops=flops,
        ops=tuple(t.op for t in spec.tasks),
    )


def lpt_makespan(times: np.ndarray, workers: int) -> np.ndarray:
    """Makespan of each row of ``times`` (R, b) on ``workers`` identical workers, longest first
    (Graham's LPT, within 4/3 of optimal).  Vectorised over rows: O(b (R log b + R w))."""
    t = -np.sort(-np.asarray(times, dtype=np.float64), axis=1)
    r, b = t.shape
    if workers >= b:
        return t[:, 0].copy() if b else np.zeros(r)
    loads = np.zeros((r, workers))
    rows = np.arange(r)
    for j in range(b):
        i = loads.argmin(axis=1)
        loads[rows, i] += t[:, j]
    return loads.max(axis=1)


@dataclass
class JobPlan:
    """A job with every round's task and nominal stage durations sampled (one seed, all policies).

    Attributes:
        spec: the job.
        task_of_round, configs: (R,) task tuned and number of configs measured in each round.
        compile_times: (R, b) compile time of each config (0 for padding).
        measure_work: (R,) measuring time on an idle device.
        update_work: (R,) cost-model update time on an idle host.
        trials: (k,) trials given to each task; tuned_latency: the model latency (seconds) they reach.
    """

    spec: JobSpec
    task_of_round: np.ndarray
    configs: np.ndarray
    compile_times: np.ndarray
    measure_work: np.ndarray
    update_work: np.ndarray
    trials: np.ndarray
    tuned_latency: float
    _build_cache: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def n_rounds(self) -> int:
        return len(self.configs)

    def build_work(self, cores: int) -> np.ndarray:
        """(R,) build time of each round on a host with ``cores`` cores (cached).  O(R b cores)."""
        out = self._build_cache.get(cores)
        if out is None:
            out = lpt_makespan(self.compile_times, max(1, cores))
            self._build_cache[cores] = out
        return out

    def stage_work(self, kind: str, rnd: int, cores: int) -> float:
        """Nominal duration of stage ``kind`` of round ``rnd`` on a host with ``cores`` cores."""
        if kind == "build":
            return float(self.build_work(cores)[rnd])
        if kind == "measure":
            return float(self.measure_work[rnd])
        return float(self.update_work[rnd])

    def stage_demand(self, kind: str, cores: int) -> int:
        """Cores a CPU stage keeps busy: a build uses one per config up to all cores."""
        if kind == "build":
            return int(min(self.spec.batch_size, cores))
        if kind == "update":
            return int(min(self.spec.params.update_threads, cores))
        return 0

    def alone_time(self, cores: int) -> float:
        """Time the job takes alone on an idle host with ``cores`` cores."""
        return float(self.build_work(cores).sum() + self.measure_work.sum() + self.update_work.sum())


def plan_job(spec: JobSpec, rng: np.random.Generator, allocator: Allocator | None = None) -> JobPlan:
    """Sample ``spec``'s rounds: task per round (``allocator``, default :func:`round_robin`),
    compile and kernel times per config, update costs.  Vectorised numpy, O(R b)."""
    p = spec.params
    curves = latency_curves(spec, rng)
    r, b = spec.n_rounds, spec.batch_size
    configs = np.full(r, b, dtype=np.int64)
    configs[-1] = spec.total_trials - b * (r - 1)
    task_of_round = np.asarray((allocator or round_robin)(curves, r, b, rng), dtype=np.int64)
    if task_of_round.shape != (r,) or (task_of_round < 0).any() or (task_of_round >= len(spec.tasks)).any():
        raise ValueError("allocator returned an invalid task per round")
    mask = np.arange(b)[None, :] < configs[:, None]
    # lognormal with the given mean: mu = ln(mean) - sigma^2 / 2
    mu = np.log(p.compile_mean_s) - p.compile_sigma**2 / 2
    compile_times = np.where(mask, rng.lognormal(mu, p.compile_sigma, (r, b)), 0.0)
    # a candidate kernel runs slower than the tuned one; repeats last at least min_repeat_ms
    kmu = np.log(p.kernel_time_s) - p.kernel_sigma**2 / 2
    kernel = rng.lognormal(kmu, p.kernel_sigma, (r, b))
    per_config = p.measure_overhead_s + kernel + p.repeat * np.maximum(p.number * kernel, p.min_repeat_ms / 1e3)
    measure_work = np.where(mask, per_config, 0.0).sum(axis=1)
    samples_before = np.concatenate(([0], np.cumsum(configs)[:-1]))
    update_work = p.update_base_s + p.update_per_sample_s * (samples_before + configs)
    trials = np.bincount(task_of_round, weights=configs, minlength=len(spec.tasks))
    return JobPlan(spec, task_of_round, configs, compile_times, measure_work, update_work, trials,
                   curves.model_latency(trials))

