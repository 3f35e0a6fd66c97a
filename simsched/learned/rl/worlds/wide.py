"""Worlds wider than ``rl-gate``'s training, for its safety check (issue 41).

* :func:`draw_wide_world` — one world per seed from a space **wider** than :func:`~.sampler.draw_world`'s:
  2-12 CPUs, 1-4 fast processors 1.5-8x as fast (log-uniform), with probability 1/2 a third processor
  type (1-4 processors, 1.2-8x), 8-32 jobs a day from the training families plus, with probability 1/2
  each, a heavy-tailed size mix (many 3-8-task jobs, one in nine of 60-200 tasks) and a held-out family
  (the Kasahara STG or pipeline DOT workflow, fork-join or series-parallel graphs); offered load 50-130%;
  noise sigma 0.1-0.9; failures with probability 0.6 and MTBF 0.6-20 mean gaps (down to five times as
  frequent as training's 3); stragglers with probability 1/2.
* :data:`OFF_TRAINING` — six named worlds off the training span, the ones issue 41 describes: three
  streams of real workflows (Montage with 3 GPUs; Montage and Epigenomics on 12 CPUs and 4 GPUs;
  Epigenomics with failures), three processor types with piecewise arrivals and Kasahara STG jobs,
  16 processors with speed ratio 8 and heavy-tailed job sizes, and ``rl_dynamic`` with five times its
  failures.
* :func:`at_load` — a world mapping parsed with its arrival rate set for an offered load, as the training
  sampler does (the rate from the mean job work of the world's own draw).

Every world is a scenario mapping parsed like a scenario file; its days are the ``evaluate`` or ``fresh``
seeds of :func:`~simsched.run.seedspace.space_seeds` from the world's own seed.  O(1) per draw.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from simsched.learned.rl.worlds.sampler import BAR, DATA, _family, _parse


def at_load(data: dict[str, Any], load: float, burst: bool = False):  # -> Scenario
    """``data`` (a scenario mapping with a job stream; keys starting with ``_`` are dropped) parsed with
    its arrival rate set so the offered load (mean job work over the processors' count per unit of
    time, measured on the world's own draw of its ``seed``) is ``load``; ``burst``: the rate x3 over
    the middle 30% of the day.  O(one stream)."""
    from simsched.run.streams import stream_of
    from simsched.simulator.problem import Problem

    data = copy.deepcopy(data)
    stream = data["workload"]["stream"]
    stream["arrivals"] = {"poisson": 1.0}
    probe = _parse(data)
    st = stream_of(probe, int(data["seed"]))
    prob = Problem(st.graph, probe.platform, probe.affinity)
    mean_work = float(np.nan_to_num(prob.mean_cost, posinf=0.0).sum()) / max(st.job_arrival.size, 1)
    rate = load * prob.n_processors / max(mean_work, 1e-9)
    if burst:
        span = stream["count"] / rate
        stream["arrivals"] = {"rates": [[0, 0.6 * rate], [0.25 * span, 1.8 * rate], [0.55 * span, 0.6 * rate]]}
    else:
        stream["arrivals"] = {"poisson": rate}
    gap = 1.0 / rate
    f = data.pop("_failures_in_gaps", None)
    if f is not None:
        data["failures"] = {"mtbf": round(gap * f[0], 3), "mttr": round(gap * f[1], 3)}
    s = data.pop("_stragglers_in_gaps", None)
    if s is not None:
        data["stragglers"] = {"rate": 1.0 / (gap * s[0]), "duration": gap * s[1], "slowdown": s[2]}
    return _parse(data)


HEAVY_TAIL = [{"weight": 8, "generator": "random", "tasks": [3, 8], "ccr": 0.3, "heterogeneity": 0.5},
              {"weight": 1, "generator": "random", "tasks": [60, 200], "ccr": 0.3, "heterogeneity": 0.5}]
"""A heavy-tailed job-size mix: many small jobs, one in nine 8-60x larger."""


def _held_out(rng: np.random.Generator) -> dict[str, Any]:
    kind = int(rng.integers(4))
    if kind == 0:
        return {"stg": str(DATA / "kasahara_40.stg")}
    if kind == 1:
        return {"dot": str(DATA / "pipeline_30.dot")}
    if kind == 2:
        return {"generator": "fork_join", "branches": int(rng.integers(3, 12)), "stages": int(rng.integers(2, 5)),
                "ccr": 0.5}
    return {"generator": "series_parallel", "tasks": int(rng.integers(10, 60)), "ccr": 0.5}


def draw_wide_world(seed: int) -> tuple[dict[str, Any], float, bool]:
    """The scenario mapping of the wide world of ``seed`` (see the module docstring), its offered load
    and whether its arrivals burst (for :func:`at_load`).  Deterministic in ``seed``.  O(1)."""
    rng = np.random.default_rng([int(seed), 4177])
    procs = [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": int(rng.integers(2, 13))},
             {"name": "gpu", "type": "gpu", "speed": round(float(np.exp(rng.uniform(math.log(1.5), math.log(8.0)))), 3),
              "count": int(rng.integers(1, 5))}]
    if rng.random() < 0.5:
        procs.append({"name": "accel", "type": "accel", "count": int(rng.integers(1, 5)),
                      "speed": round(float(np.exp(rng.uniform(math.log(1.2), math.log(8.0)))), 3)})
    mix = [{"weight": int(rng.integers(1, 5)), **_family(rng)} for _ in range(int(rng.integers(1, 3)))]
    if rng.random() < 0.5:
        mix += copy.deepcopy(HEAVY_TAIL)
    if rng.random() < 0.5:
        mix.append({"weight": int(rng.integers(1, 4)), **_held_out(rng)})
    data: dict[str, Any] = {
        "name": f"wide-world-{seed}", "seed": int(seed) % (1 << 31),
        "platform": {"processors": procs,
                     "network": {"bandwidth": round(float(np.exp(rng.uniform(0.0, math.log(20.0)))), 3),
                                 "latency": 0.1}},
        "workload": {"stream": {"jobs": mix, "arrivals": {"poisson": 1.0}, "count": int(rng.integers(8, 33))}},
        "noise": {"model": "lognormal", "sigma": round(float(rng.uniform(0.1, 0.9)), 3)},
        "schedulers": ["srjf-eft"]}
    load, burst = round(float(rng.uniform(0.5, 1.3)), 3), bool(rng.random() < 0.5)
    if rng.random() < 0.6:
        data["_failures_in_gaps"] = [float(np.exp(rng.uniform(math.log(0.6), math.log(20.0)))),
                                     float(rng.uniform(0.05, 0.3))]
    if rng.random() < 0.5:
        data["_stragglers_in_gaps"] = [float(rng.uniform(2, 6)), float(rng.uniform(0.05, 0.2)),
                                       round(float(rng.uniform(2, 4)), 3)]
    return data, load, burst


def wide_world(seed: int):  # -> Scenario
    """:func:`draw_wide_world`'s world of ``seed``, parsed at its load.  O(one stream)."""
    data, load, burst = draw_wide_world(seed)
    return at_load(data, load, burst)


def _bar() -> dict[str, Any]:
    from simsched.yamlio import load_yaml

    data = copy.deepcopy(load_yaml(BAR).data)
    for job in data["workload"]["stream"]["jobs"]:
        for key in ("wfcommons", "dax"):
            if key in job:
                job[key] = str(DATA / job[key].split("/")[-1])
    data["schedulers"], data["repetitions"] = ["srjf-eft"], 1
    return data


def _world(name: str, seed: int, procs: list[dict], jobs: list[dict], count: int = 16, sigma: float = 0.4,
           bandwidth: float = 5.0) -> dict[str, Any]:
    return {"name": name, "seed": seed, "schedulers": ["srjf-eft"],
            "platform": {"processors": procs, "network": {"bandwidth": bandwidth, "latency": 0.1}},
            "workload": {"stream": {"jobs": jobs, "arrivals": {"poisson": 1.0}, "count": count}},
            "noise": {"model": "lognormal", "sigma": sigma}}


def _montage_3gpu():
    return at_load(_world("montage-3-gpus", 41001, [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": 6},
                                                    {"name": "gpu", "type": "gpu", "speed": 3.0, "count": 3}],
                          [{"weight": 1, "wfcommons": str(DATA / "montage_60.json")}]), 0.9, burst=True)


def _workflows_16():
    return at_load(_world("workflows-12-cpus-4-gpus", 41002,
                          [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": 12},
                           {"name": "gpu", "type": "gpu", "speed": 3.0, "count": 4}],
                          [{"weight": 2, "wfcommons": str(DATA / "montage_60.json")},
                           {"weight": 1, "dax": str(DATA / "epigenomics_50.dax")}], count=24, bandwidth=50.0), 0.85)


def _epigenomics_failures():
    data = _world("epigenomics-failures", 41003, [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": 4},
                                                  {"name": "gpu", "type": "gpu", "speed": 4.0, "count": 2}],
                  [{"weight": 1, "dax": str(DATA / "epigenomics_50.dax")}], count=12)
    data["_failures_in_gaps"] = [4.0, 0.1]
    return at_load(data, 0.8)


def _three_types_stg():
    data = _world("three-types-stg", 41004, [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": 6},
                                             {"name": "gpu", "type": "gpu", "speed": 3.0, "count": 2},
                                             {"name": "fpga", "type": "fpga", "speed": 1.8, "count": 2}],
                  [{"weight": 2, "stg": str(DATA / "kasahara_40.stg")},
                   {"weight": 1, "generator": "random", "tasks": [5, 25], "ccr": 0.3, "heterogeneity": 0.5}], count=20)
    return at_load(data, 0.9, burst=True)


def _ratio8_heavy():
    return at_load(_world("16-processors-ratio-8-heavy-tail", 41005,
                          [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": 12},
                           {"name": "gpu", "type": "gpu", "speed": 8.0, "count": 4}],
                          copy.deepcopy(HEAVY_TAIL), count=30), 0.9)


def _bar_5x_failures():
    data = _bar()
    data["name"] = "rl-dynamic-5x-failures"
    for rates in data["failures"]["types"].values():
        rates["mtbf"] = float(rates["mtbf"]) / 5.0
    return _parse(data)


OFF_TRAINING: dict[str, Callable[[], Any]] = {
    "Montage, 3 GPUs": _montage_3gpu,
    "Montage + Epigenomics, 12 CPUs + 4 GPUs": _workflows_16,
    "Epigenomics, failures every 4 gaps": _epigenomics_failures,
    "3 processor types, STG jobs, burst": _three_types_stg,
    "16 processors, speed ratio 8, heavy tail": _ratio8_heavy,
    "rl_dynamic, 5x failures": _bar_5x_failures,
}
"""The six worlds off the gate's training span (see the module docstring): name -> parsed scenario."""
