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
repetition r) and returns a JSON-ready dict; :func:`simsched.report.autotune.print_autotuning_table` prints it;
:func:`find_capacity` answers "how many servers does each policy need".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from simsched.errors import SimschedError
from simsched.scenario.autotuning import AutotuningSection, JobModel, LineOf, check_policy, validate_section  # noqa: F401
from simsched.schedulers.loadaware import TASK_SCHEDULERS
from simsched.schedulers.registry import AUTOTUNE_POLICIES
from simsched.simulator.autotune_engine import AutotuneResult, Interference, ServerSpec, simulate
from simsched.workloads.autotuning import PRESETS, JobPlan, JobSpec, TuningParams, TuningTask, model_tasks, plan_job

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


def run_autotuning(section: AutotuningSection | dict, *, base_dir: str | Path | None = None, seed: int = 0,
                   policies: Sequence[str] | None = None, repetitions: int = 1,
                   line_of: LineOf | None = None) -> dict:
    """Simulate every policy (``policies`` or the section's) on the section's jobs (``section``: the
    typed section a loaded scenario holds, or a raw mapping, validated here).

    Returns ``{"kind": "autotuning", "results": [per policy and seed: metrics, jobs], "summary": [per
    policy: means over repetitions and ratios to sequential]}``.  ``base_dir`` is accepted for the
    runner's uniform signature (the section names no files).  O(repetitions x policies x stages).
    """
    cfg = section if isinstance(section, AutotuningSection) else validate_section(section, line_of=line_of)
    names = list(policies) if policies else list(cfg.policies)
    for n in names:
        try:
            check_policy(n)
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
            row = {**res.summary(), "seed": seed + r, "wall_s": res.wall_s}
            if cfg.power is not None:
                row["energy_j"] = autotune_energy_j(cfg, res, servers)
            results.append(row)
    return {"kind": "autotuning", "policies": names, "results": results, "summary": summarise(results)}


def autotune_energy_j(cfg: AutotuningSection, res: AutotuneResult, servers: Sequence[ServerSpec]) -> float:
    """Joules of one autotuning day under ``cfg.power``: every server and GPU on over the makespan at its
    idle watts, plus the busy GPUs' and busy cores' extra watts over their busy seconds — the integral of
    a power linear in the load (SimGrid's ``Idle + load x (AllCores - Idle)``), from the engine's
    recorded busy times.  O(servers)."""
    pw = cfg.power
    gpus = sum(sum(1 for d in s.devices if d == "gpu") for s in servers)
    return float(res.makespan * (len(servers) * pw.server_idle + gpus * pw.gpu_idle)
                 + res.gpu_busy_s * (pw.gpu_busy - pw.gpu_idle) + res.core_busy_s * pw.core_busy)


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


def result_of(plans: Sequence[JobPlan], cfg: AutotuningSection, policy: str, servers: int) -> AutotuneResult:
    """One simulation of ``policy`` with ``servers`` copies of the first server."""
    return simulate(plans, servers_of(cfg, servers), AUTOTUNE_POLICIES[policy](), _interference(cfg))
