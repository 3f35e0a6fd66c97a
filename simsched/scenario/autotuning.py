"""The ``autotuning:`` section of a scenario, typed: TVM-style tuning jobs, servers, interference,
policies, and the objective and bounds of a capacity search.  Pydantic v2 models with unknown fields
refused; :func:`validate_section` names the bad field's path and, given a ``line_of``, its line.
Running the section is :mod:`simsched.run.autotune`'s job."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from simsched import limits
from simsched.errors import SimschedError
from simsched.scenario.locate import dotted, validation_message
from simsched.scenario.schema import Amount, NumbersChecked, busy_not_below_idle, exactly_one
from simsched.schedulers.registry import AUTOTUNE_POLICIES
from simsched.workloads.autotuning import model_tasks

LineOf = Callable[[tuple], "int | None"]


class _Strict(NumbersChecked):
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
        exactly_one(self, "model", "tasks", hints={"model": "a DL model name", "tasks": "a list"})
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


class AutotunePowerModel(_Strict):
    """Watts of the autotuning servers: ``server_idle`` per server (on for the whole day),
    ``core_busy`` more per busy core, ``gpu_idle`` per GPU and ``gpu_busy`` (>= ``gpu_idle``) while it
    measures.  Adds ``energy_j`` to every autotuning results row (docs/energy.md)."""

    server_idle: Amount = 0.0
    core_busy: Amount = 0.0
    gpu_idle: Amount = 0.0
    gpu_busy: Amount = 0.0

    @model_validator(mode="after")
    def _busy_over_idle(self) -> AutotunePowerModel:
        busy_not_below_idle(self.gpu_busy, self.gpu_idle, "gpu_busy", "gpu_idle")
        return self


class AutotuningSection(_Strict):
    """The ``autotuning:`` section of a scenario."""

    servers: list[ServerModel] = Field(min_length=1)
    jobs: list[JobModel] = Field(default_factory=list)
    arrivals: ArrivalsModel | None = None
    interference: InterferenceModel = Field(default_factory=InterferenceModel)
    policies: list[str] = Field(default_factory=lambda: list(AUTOTUNE_POLICIES))
    objective: ObjectiveModel | None = None
    capacity: CapacityModel = Field(default_factory=CapacityModel)
    power: AutotunePowerModel | None = None

    @model_validator(mode="after")
    def _has_jobs(self) -> AutotuningSection:
        if not self.jobs and self.arrivals is None:
            raise ValueError("give 'jobs' or 'arrivals' (or both)")
        for name in [*self.policies, *(self.capacity.policies or [])]:
            check_policy(name)
        return self


def check_policy(name: str) -> None:
    if name not in AUTOTUNE_POLICIES:
        raise ValueError(f"unknown autotuning policy {name!r}; known: {', '.join(AUTOTUNE_POLICIES)}")


def check_section_size(cfg: AutotuningSection, *, line_of: LineOf | None = None,
                       prefix: tuple = ("autotuning",)) -> None:
    """Refuse a section whose jobs (fixed ones plus ``rate_per_hour x duration_h`` expected arrivals,
    with a 6-sigma Poisson margin) or trial slots (rounds x batch size per job) exceed
    ``max_jobs``/``max_trials`` of :mod:`simsched.limits`, and servers whose cores and GPUs would
    number more than a million, before anything is sampled.  O(job templates)."""
    def line(*loc: Any) -> int | None:
        return line_of((*prefix, *loc)) if line_of else None

    def slots(m: JobModel) -> float:
        n_tasks = len(m.tasks) if m.tasks is not None else len(model_tasks(m.model or ""))
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
    """Validate the raw section; raise :class:`SimschedError` naming the first bad field's path as the rest
    of the schema writes it (``autotuning.jobs[0].trials_per_task``), worded as every section words it
    (:func:`~simsched.scenario.locate.validation_message`), and, with ``line_of``, its line."""
    if not isinstance(section, dict):
        raise SimschedError(f"must be a mapping, not {type(section).__name__}", field=".".join(prefix), file=file)
    try:
        cfg = AutotuningSection.model_validate(section)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        err = errors[0]
        loc = tuple(prefix) + tuple(err["loc"])
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise SimschedError(validation_message(err, AutotuningSection) + more, field=dotted(loc), file=file,
                            line=line_of(loc) if line_of else None) from None
    try:
        check_section_size(cfg, line_of=line_of, prefix=prefix)
    except SimschedError as exc:
        raise exc.located(file=file) from None
    return cfg
