"""Days of an autotuning scenario (an ``autotuning:`` section), sized by the number of servers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simsched.run.autotune import job_specs, plan_jobs, result_of
from simsched.scenario.autotuning import validate_section
from simsched.schedulers.registry import AUTOTUNE_POLICIES


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
        counts = [len(job_specs(self.cfg, np.random.default_rng(s))) for s in seeds]
        low, high = min(counts), max(counts)
        span = f"{low}" if low == high else f"{low}–{high}"
        return f"{span} job{'s' if high != 1 else ''} a day (mean {np.mean(counts):.3g})"

    @staticmethod
    def _qname(q: float) -> str:
        return f"jct_p{q:g}".replace(".", "_")

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        if seed not in self._plans:
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
