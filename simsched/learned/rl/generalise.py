"""Shifted versions of a job-stream ``rl`` family: where a job-stream checkpoint is taken to break.

:func:`shifted_families` gives the trained family itself, twice the jobs per stream, twice the
processors (arrival rate doubled, so the load stays), load 70% and 110% (arrival rate scaled from the
trained ~90%), and duration noise sigma fixed at 0.2 and at 1.5.
``python -m simsched.learned.generalise_report CHECKPOINT`` runs a job-stream checkpoint on them
against every heuristic (:mod:`simsched.learned.generalise_report`), and its single-DAG shifts use
:func:`_double_processors` too.
"""

from __future__ import annotations

import copy

import numpy as np

TRAINED_LOAD = 0.9
"""The load the shifts take the trained family to run at: the online family's (``job_rate: 0.009`` on 4
processors, offered load 0.90 in ``scenarios/streams/rl_online.yaml``); "load 70%" and "load 110%"
scale the arrival rate by 0.7 / 0.9 and 1.1 / 0.9."""


def _double_processors(platform):  # -> Platform
    """The platform with a twin of every processor (each its own host), the network's largest
    bandwidth-limited link and latency for every pair."""
    import dataclasses

    from simsched.simulator.platform import Platform

    procs = list(platform.processors)
    twins = [dataclasses.replace(q, name=f"{q.name}-twin", host="") for q in procs]
    off = ~np.eye(platform.n_processors, dtype=bool)
    bw = platform.bandwidth[off] if platform.n_processors > 1 else np.array([1.0])
    lat = platform.latency[off] if platform.n_processors > 1 else np.array([0.0])
    return Platform.uniform(procs + twins, bandwidth=float(bw.min()), latency=float(lat.max()))


def shifted_families(cfg) -> dict[str, object]:
    """``{shift name: Family}``: the config's family and its shifts (see the module docstring)."""
    from simsched.learned.rl.ppo import make_family

    base = make_family(cfg)
    out = {"trained family": base}

    def variant(**changes):
        fam = copy.copy(base)
        for k, v in changes.items():
            setattr(fam, k, v)
        return fam

    out["2x jobs per stream"] = variant(n_jobs=2 * base.n_jobs)
    out["2x processors (same load)"] = variant(platform=_double_processors(base.platform), job_rate=2 * base.job_rate)
    out["load 70%"] = variant(job_rate=base.job_rate * 0.7 / TRAINED_LOAD)
    out["load 110%"] = variant(job_rate=base.job_rate * 1.1 / TRAINED_LOAD)
    out["sigma 0.2"] = variant(sigma_range=(0.2, 0.2))
    out["sigma 1.5"] = variant(sigma_range=(1.5, 1.5))
    return out
