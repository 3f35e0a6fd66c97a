"""Runs a scenario's ``autotuning:`` section: schema, simulation per policy, table, capacity search.

The section (validated by :class:`AutotuningSection`, pydantic v2, unknown fields refused; errors
name the field path, and the line when a :class:`~simsched.yamlio.YamlDocument` is given)::

    autotuning:
      servers: [{name: gpu-server, cores: 32, gpus: 4, count: 1}]
      interference: {cpu_slowdown: 0.64, distortion_penalty: 0.10}
      jobs:                                   # fixed jobs ...
        - {model: resnet18, count: 4, trials_per_task: 1200, batch_size: 64, target: gpu}
      arrivals:                               # ... and/or a Poisson stream of jobs
        rate_per_hour: 0.5
        duration_h: 24
        jobs: [{model: resnet18, trials_per_task: 300}]   # each arrival picks one template
      policies: [sequential, uncontrolled, dedicated, load-aware, predictive]
      objective: {quantile: 0.95, within_h: 8}          # for `simsched capacity`
      capacity: {max_servers: 64}

:func:`run_autotuning` simulates every policy on the same sampled jobs (seed ``seed + r`` for
repetition r) and returns a JSON-ready dict; :func:`print_autotuning_table` prints it;
:func:`find_capacity` answers "how many servers does each policy need".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simsched.cli.common import console as common_console
from simsched.errors import SimschedError
from simsched.schedulers.loadaware import AUTOTUNE_POLICIES, TASK_SCHEDULERS
from simsched.simulator.autotune_engine import AutotuneResult, Interference, ServerSpec, simulate
from simsched.workloads.autotuning import PRESETS, JobPlan, JobSpec, TuningParams, TuningTask, model_tasks, plan_job

LineOf = Callable[[tuple], "int | None"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerModel(_Strict):
    name: str = "server"
    cores: int = Field(16, ge=1)
    gpus: int = Field(1, ge=0)
    count: int = Field(1, ge=1)


class TaskModel(_Strict):
    name: str
    op: str = "conv"
    flops: float = Field(1e9, gt=0)
    weight: int = Field(1, ge=1)


class ParamsModel(_Strict):
    """Overrides of :class:`~simsched.workloads.autotuning.TuningParams` (all optional)."""

    compile_mean_s: float | None = Field(None, gt=0)
    compile_sigma: float | None = Field(None, ge=0)
    measure_overhead_s: float | None = Field(None, gt=0)
    number: int | None = Field(None, ge=1)
    repeat: int | None = Field(None, ge=1)
    min_repeat_ms: float | None = Field(None, ge=0)
    kernel_time_s: float | None = Field(None, gt=0)
    kernel_sigma: float | None = Field(None, ge=0)
    update_base_s: float | None = Field(None, gt=0)
    update_per_sample_s: float | None = Field(None, ge=0)
    update_threads: int | None = Field(None, ge=1)
    peak_flops: float | None = Field(None, gt=0)


class JobModel(_Strict):
    name: str | None = None
    model: str | None = None
    tasks: list[TaskModel] | None = Field(None, min_length=1)
    trials_per_task: int = Field(1200, ge=1)
    batch_size: int = Field(64, ge=1)
    target: Literal["gpu", "cpu"] = "gpu"
    arrival_h: float = Field(0.0, ge=0)
    count: int = Field(1, ge=1)
    task_scheduler: Literal["round-robin", "gradient"] = "round-robin"
    params: ParamsModel = Field(default_factory=ParamsModel)

    @model_validator(mode="after")
    def _one_source(self) -> JobModel:
        if (self.model is None) == (self.tasks is None):
            raise ValueError("give exactly one of 'model' (a DL model name) or 'tasks' (a list)")
        return self


class ArrivalsModel(_Strict):
    rate_per_hour: float = Field(gt=0)
    duration_h: float = Field(gt=0)
    jobs: list[JobModel] = Field(min_length=1)


class InterferenceModel(_Strict):
    cpu_slowdown: float = Field(0.64, ge=0)
    distortion_penalty: float = Field(0.10, ge=0)


class ObjectiveModel(_Strict):
    quantile: float = Field(0.95, gt=0, le=1)
    within_h: float = Field(gt=0)


class CapacityModel(_Strict):
    max_servers: int = Field(256, ge=1)
    policies: list[str] | None = None


class AutotuningSection(_Strict):
    """The ``autotuning:`` section of a scenario."""

    servers: list[ServerModel] = Field(min_length=1)
    jobs: list[JobModel] = Field(default_factory=list)
    arrivals: ArrivalsModel | None = None
    interference: InterferenceModel = Field(default_factory=InterferenceModel)
    policies: list[str] = Field(default_factory=lambda: list(AUTOTUNE_POLICIES))
    objective: ObjectiveModel | None = None
    capacity: CapacityModel = Field(default_factory=CapacityModel)

    @model_validator(mode="after")
    def _has_jobs(self) -> AutotuningSection:
        if not self.jobs and self.arrivals is None:
            raise ValueError("give 'jobs' or 'arrivals' (or both)")
        for name in [*self.policies, *(self.capacity.policies or [])]:
            _check_policy(name)
        return self


def _check_policy(name: str) -> None:
    if name not in AUTOTUNE_POLICIES:
        raise ValueError(f"unknown autotuning policy {name!r}; known: {', '.join(AUTOTUNE_POLICIES)}")


def check_section_size(cfg: AutotuningSection, *, line_of: LineOf | None = None,
                       prefix: tuple = ("autotuning",)) -> None:
    """Refuse a section whose jobs (fixed ones plus ``rate_per_hour x duration_h`` expected arrivals,
    with a 6-sigma Poisson margin) or trial slots (rounds x batch size per job) exceed
    ``max_jobs``/``max_trials`` of :mod:`simsched.limits`, and servers whose cores and GPUs would
    number more than a million, before anything is sampled.  O(job templates)."""
    from simsched import limits

    def line(*loc: Any) -> int | None:
        return line_of((*prefix, *loc)) if line_of else None

    def slots(m: JobModel) -> float:
        n_tasks = len(m.tasks) if m.tasks is not None else len(model_tasks(m.model))
        trials = float(m.trials_per_task) * n_tasks
        return math.ceil(trials / m.batch_size) * float(m.batch_size)

    jobs = float(sum(m.count for m in cfg.jobs))
    trials = sum(m.count * slots(m) for m in cfg.jobs)
    where = "jobs"
    if cfg.arrivals is not None:
        a = cfg.arrivals
        expected = a.rate_per_hour * a.duration_h
        arrivals = expected + 6 * math.sqrt(expected) + 1
        jobs += arrivals
        trials += arrivals * max(slots(m) for m in a.jobs)
        where = "arrivals"
    limits.check_amount(jobs, "max_jobs", what="the autotuning jobs of one repetition",
                        where=".".join((*prefix, where)), line=line(where))
    limits.check_amount(trials, "max_trials", what="the autotuning trial slots (rounds x batch_size) of one repetition",
                        where=".".join((*prefix, where)), line=line(where))
    units = max(sv.count * (sv.cores + sv.gpus) for sv in cfg.servers)
    units = max(units, cfg.capacity.max_servers * (cfg.servers[0].cores + cfg.servers[0].gpus))
    if units > 1_000_000:
        raise limits.LimitError(f"the servers would have {units:,} cores and GPUs in all, more than a simulation can "
                                f"hold (1,000,000); lower count, cores, gpus or capacity.max_servers",
                                field=".".join((*prefix, "servers")), line=line("servers"))


def validate_section(section: Any, *, line_of: LineOf | None = None, file: str | Path | None = None,
                     prefix: tuple = ("autotuning",)) -> AutotuningSection:
    """Validate the raw section; raise :class:`SimschedError` naming the first bad field's path
    (``autotuning.jobs.0.trials_per_task``) and, with ``line_of``, its line."""
    if not isinstance(section, dict):
        raise SimschedError(f"must be a mapping, not {type(section).__name__}", field=".".join(prefix), file=file)
    try:
        cfg = AutotuningSection.model_validate(section)
    except ValidationError as exc:
        errors = exc.errors()
        err = errors[0]
        loc = tuple(prefix) + tuple(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise SimschedError(msg + more, field=".".join(str(p) for p in loc), file=file,
                            line=line_of(loc) if line_of else None) from None
    try:
        check_section_size(cfg, line_of=line_of, prefix=prefix)
    except SimschedError as exc:
        raise exc.located(file=file) from None
    return cfg


# ------------------------------------------------------------------ building jobs and servers


def servers_of(cfg: AutotuningSection, copies: int | None = None) -> list[ServerSpec]:
    """The servers, each ``count`` times; with ``copies``, that many of the first server only."""
    out = []
    entries = [(cfg.servers[0], copies)] if copies is not None else [(s, s.count) for s in cfg.servers]
    for s, n in entries:
        for i in range(n):
            out.append(ServerSpec(f"{s.name}{i}" if n > 1 else s.name, s.cores, ("gpu",) * s.gpus))
    return out


def _job_spec(m: JobModel, name: str, arrival_s: float) -> JobSpec:
    if m.tasks is not None:
        tasks = tuple(TuningTask(t.name, t.op, t.flops, (t.name,), t.weight) for t in m.tasks)
    else:
        tasks = model_tasks(m.model)
    base = PRESETS[m.target]
    over = {k: v for k, v in m.params.model_dump().items() if v is not None}
    params = TuningParams(**{**base.__dict__, **over})
    return JobSpec(name, tasks, m.trials_per_task, m.batch_size, m.target, arrival_s, params, m.model or "")


def job_specs(cfg: AutotuningSection, rng: np.random.Generator) -> list[tuple[JobSpec, str]]:
    """Fixed jobs plus the Poisson arrivals sampled from ``rng``; (spec, task scheduler) pairs,
    ordered by arrival.  O(jobs)."""
    out: list[tuple[JobSpec, str]] = []
    for i, m in enumerate(cfg.jobs):
        base = m.name or (m.model or f"job{i}")
        for c in range(m.count):
            name = f"{base}-{c}" if m.count > 1 else base
            out.append((_job_spec(m, name, m.arrival_h * 3600), m.task_scheduler))
    if cfg.arrivals is not None:
        a = cfg.arrivals
        t, k = 0.0, 0
        templates = [_job_spec(m, m.name or (m.model or f"job{i}"), 0.0) for i, m in enumerate(a.jobs)]
        while True:
            t += rng.exponential(3600 / a.rate_per_hour)
            if t > a.duration_h * 3600:
                break
            j = int(rng.integers(len(templates)))
            out.append((templates[j].with_arrival(t, f"{templates[j].name}@{t / 3600:.2f}h#{k}"),
                        a.jobs[j].task_scheduler))
            k += 1
    out.sort(key=lambda p: p[0].arrival)
    return out


def plan_jobs(cfg: AutotuningSection, seed: int) -> list[JobPlan]:
    """Sample the jobs (arrivals and stage durations) of one repetition; same for every policy."""
    rng = np.random.default_rng(seed)
    specs = job_specs(cfg, rng)
    if not specs:
        raise SimschedError("no jobs: the arrival process produced none; raise rate_per_hour or duration_h",
                            field="autotuning.arrivals")
    return [plan_job(spec, np.random.default_rng([seed, i]), TASK_SCHEDULERS[ts]())
            for i, (spec, ts) in enumerate(specs)]


def _interference(cfg: AutotuningSection) -> Interference:
    return Interference(cfg.interference.cpu_slowdown, cfg.interference.distortion_penalty)


# ------------------------------------------------------------------ running


def run_autotuning(section: dict, *, base_dir: str | Path | None = None, seed: int = 0,
                   policies: Sequence[str] | None = None, repetitions: int = 1,
                   line_of: LineOf | None = None) -> dict:
    """Simulate every policy (``policies`` or the section's) on the section's jobs.

    Returns ``{"kind": "autotuning", "results": [per policy and seed: metrics, jobs], "summary": [per
    policy: means over repetitions and ratios to sequential]}``.  ``base_dir`` is accepted for the
    runner's uniform signature (the section names no files).  O(repetitions x policies x stages).
    """
    cfg = validate_section(section, line_of=line_of)
    names = list(policies) if policies else list(cfg.policies)
    for n in names:
        try:
            _check_policy(n)
        except ValueError as exc:
            raise SimschedError(str(exc), field="scheduler") from None
    if repetitions < 1:
        raise SimschedError("repetitions must be >= 1", field="repetitions")
    servers = servers_of(cfg)
    results = []
    for r in range(repetitions):
        plans = plan_jobs(cfg, seed + r)
        for n in names:
            res = simulate(plans, servers, AUTOTUNE_POLICIES[n](), _interference(cfg))
            results.append({**res.summary(), "seed": seed + r, "wall_s": res.wall_s})
    return {"kind": "autotuning", "policies": names, "results": results, "summary": summarise(results)}


SUMMARY_KEYS = ("makespan_h", "mean_completion_h", "device_idle_fraction", "cpu_utilisation",
                "distorted_measurements", "mean_latency_penalty", "device_hours", "wall_s")


def summarise(results: list[dict]) -> list[dict]:
    """Mean of each metric per policy over seeds, plus ``makespan_vs_sequential``."""
    out = []
    for name in dict.fromkeys(r["policy"] for r in results):
        rows = [r for r in results if r["policy"] == name]
        means = {k: float(np.mean([r[k] for r in rows])) for k in SUMMARY_KEYS}
        out.append({"policy": name, "runs": len(rows), **means})
    seq = next((s for s in out if s["policy"] == "sequential"), None)
    for s in out:
        s["makespan_vs_sequential"] = s["makespan_h"] / seq["makespan_h"] if seq and seq["makespan_h"] > 0 else None
    return out


def print_autotuning_table(result: dict, console: Any = None) -> None:
    """Print :func:`run_autotuning`'s summary as a rich table (one row per policy)."""
    from rich.table import Table

    table = Table(title="autotuning: policies compared (means over seeds)")
    for col in ("policy", "all done (h)", "vs seq", "job (h)", "dev idle", "CPU", "distorted", "penalty",
                "dev-h"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for s in result["summary"]:
        ratio = s["makespan_vs_sequential"]
        table.add_row(s["policy"], f"{s['makespan_h']:.2f}", "-" if ratio is None else f"{ratio:.2f}x",
                      f"{s['mean_completion_h']:.2f}", f"{s['device_idle_fraction']:.0%}",
                      f"{s['cpu_utilisation']:.0%}", f"{s['distorted_measurements']:.0f}",
                      f"{s['mean_latency_penalty']:.1%}", f"{s['device_hours']:.1f}")
    (console or common_console()).print(table)


def result_of(plans: Sequence[JobPlan], cfg: AutotuningSection, policy: str, servers: int) -> AutotuneResult:
    """One simulation of ``policy`` with ``servers`` copies of the first server."""
    return simulate(plans, servers_of(cfg, servers), AUTOTUNE_POLICIES[policy](), _interference(cfg))
