"""The worlds ``rl-gate`` is trained on, and their days: :func:`draw_world` (one world per seed of the
``train`` or ``select`` space: platform, job families, load, noise, failures and stragglers),
:func:`draw_bar_world` (worlds near the bar, ``scenarios/streams/rl_dynamic.yaml``), each parsed like a
scenario file with its day's stream (:func:`world_scenario`, :func:`bar_world_scenario`), world-days of a
space (:func:`world_days`, :func:`bar_days`, :func:`source_days`) and one scheduler's mean JCT on a
world-day (:func:`day_jct`).  The families in :data:`HELD_OUT` are never drawn.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

HELD_OUT = ("kasahara_40.stg", "pipeline_30.dot", "fork_join", "series_parallel")
"""Job families never drawn for training (the generalisation matrix's unseen families)."""

BAR = Path(__file__).resolve().parents[4] / "scenarios" / "streams" / "rl_dynamic.yaml"
"""The bar: the scenario whose days the gate must not lose on, and near which bar-like worlds are drawn."""

DATA = Path(__file__).resolve().parents[4] / "scenarios" / "data"
"""The shipped workflow files some job families replay."""


def _family(rng: np.random.Generator) -> dict[str, Any]:
    """One job family of the training pool (see the package docstring)."""
    ccr = round(float(rng.uniform(0.1, 1.0)), 3)
    het = round(float(rng.uniform(0.2, 1.0)), 3)
    kind = int(rng.integers(7))
    if kind == 0:
        lo = int(rng.integers(3, 11))
        return {"generator": "random", "tasks": [lo, lo + int(rng.integers(5, 31))], "ccr": ccr, "heterogeneity": het}
    if kind == 1:
        return {"generator": "layered", "tasks": int(rng.integers(10, 41)), "layers": int(rng.integers(3, 9)),
                "ccr": ccr, "heterogeneity": het}
    if kind == 2:
        return {"generator": "erdos_renyi", "tasks": int(rng.integers(8, 41)), "ccr": ccr, "heterogeneity": het}
    if kind == 3:
        return {"generator": "gaussian_elimination", "matrix_size": int(rng.integers(4, 9)), "ccr": ccr,
                "heterogeneity": het}
    if kind == 4:
        return {"generator": "fft", "points": int(rng.choice([4, 8])), "ccr": ccr, "heterogeneity": het}
    if kind == 5:
        return {"wfcommons": str(DATA / "montage_60.json")}
    return {"dax": str(DATA / "epigenomics_50.dax")}


def draw_world(seed: int) -> dict[str, Any]:
    """The scenario mapping of the world of ``seed`` (see the package docstring), with Poisson rate 1
    as a placeholder: :func:`world_scenario` sets the rate for the drawn load.  Deterministic in
    ``seed``.  O(1)."""
    rng = np.random.default_rng([int(seed), 7723])
    fast_speed = round(float(np.exp(rng.uniform(math.log(1.5), math.log(6.0)))), 3)
    mix = [{"weight": int(rng.integers(1, 5)), **_family(rng)} for _ in range(int(rng.integers(1, 4)))]
    data: dict[str, Any] = {
        "name": f"train-world-{seed}",
        "seed": int(seed) % (1 << 31),
        "platform": {"processors": [{"name": "cpu", "type": "cpu", "speed": 1.0, "count": int(rng.integers(2, 11))},
                                    {"name": "gpu", "type": "gpu", "speed": fast_speed,
                                     "count": int(rng.integers(1, 5))}],
                     "network": {"bandwidth": round(float(np.exp(rng.uniform(0.0, math.log(20.0)))), 3),
                                 "latency": 0.1}},
        "workload": {"stream": {"jobs": mix, "arrivals": {"poisson": 1.0}, "count": int(rng.integers(8, 33))}},
        "noise": {"model": "lognormal", "sigma": round(float(rng.uniform(0.1, 0.7)), 3)},
        "schedulers": ["srjf-eft"],
    }
    data["_load"] = round(float(rng.uniform(0.5, 1.2)), 3)
    data["_burst"] = bool(rng.random() < 0.5)
    data["_failures"] = bool(rng.random() < 0.5)
    data["_stragglers"] = bool(rng.random() < 0.5)
    data["_f"] = [float(v) for v in rng.uniform(0.0, 1.0, size=5)]
    return data


def _parse(data: dict[str, Any]):  # -> Scenario
    from simsched.scenario import parse_scenario
    from simsched.yamlio import load_yaml

    doc = load_yaml(BAR)  # a located document to carry the mapping (paths in it are absolute)
    return parse_scenario(dataclasses.replace(doc, data={k: v for k, v in data.items() if not k.startswith("_")}))


def world_scenario(seed: int):  # -> (Scenario, JobStream)
    """The world of ``seed`` as a parsed scenario and its day's stream: the arrival rate set so the
    offered load (mean job work over the processors' count per unit of time) is the drawn load,
    measured on the world's own draw; failures and stragglers scaled to the mean gap.  O(one stream)."""
    from simsched.run.streams import stream_of
    from simsched.simulator.problem import Problem

    data = draw_world(seed)
    probe = _parse(data)
    st = stream_of(probe, int(seed))
    prob = Problem(st.graph, probe.platform, probe.affinity)
    mean_work = float(np.nan_to_num(prob.mean_cost, posinf=0.0).sum()) / max(st.job_arrival.size, 1)
    m = prob.n_processors
    rate = data["_load"] * m / max(mean_work, 1e-9)
    stream = data["workload"]["stream"]
    f = data["_f"]
    if data["_burst"]:
        span = stream["count"] / rate
        stream["arrivals"] = {"rates": [[0, 0.6 * rate], [0.25 * span, 1.8 * rate], [0.55 * span, 0.6 * rate]]}
    else:
        stream["arrivals"] = {"poisson": rate}
    gap = 1.0 / rate
    if data["_failures"]:
        data["failures"] = {"mtbf": round(gap * (3 + 17 * f[0]), 3), "mttr": round(gap * (0.05 + 0.25 * f[1]), 3)}
    if data["_stragglers"]:
        data["stragglers"] = {"rate": 1.0 / (gap * (2 + 4 * f[2])), "duration": gap * (0.05 + 0.15 * f[3]),
                              "slowdown": round(2 + 2 * f[4], 3)}
    sc = _parse(data)
    return sc, stream_of(sc, int(seed))


def draw_bar_world(seed: int) -> dict[str, Any]:
    """A world near ``scenarios/streams/rl_dynamic.yaml`` (the bar's job families, platform shape and
    burst), perturbed: the fast processors' count 1-3 and speed 1.5-7x (log-uniform), arrival rates
    x0.6-1.6 (log-uniform; the burst's times divided by the factor), 10-36 jobs a day, the family
    weights 1-4 each, failures and stragglers kept with probability 2/3.  For training worlds drawn
    from the ``train`` space only; the bar's families are not held out (the held-out ones never occur
    here either).  Deterministic in ``seed``.  O(1)."""
    import copy

    from simsched.yamlio import load_yaml

    rng = np.random.default_rng([int(seed), 9151])
    data = copy.deepcopy(load_yaml(BAR).data)
    data["name"] = f"train-bar-world-{seed}"
    data["seed"] = int(seed) % (1 << 31)
    data["repetitions"] = 1
    data["schedulers"] = ["srjf-eft"]
    gpu = data["platform"]["processors"][1]
    gpu["count"] = int(rng.integers(1, 4))
    gpu["speed"] = round(float(np.exp(rng.uniform(math.log(1.5), math.log(7.0)))), 3)
    stream = data["workload"]["stream"]
    f = float(np.exp(rng.uniform(math.log(0.6), math.log(1.6))))
    stream["arrivals"] = {"rates": [[round(t / f, 3), r * f] for t, r in stream["arrivals"]["rates"]]}
    stream["count"] = int(rng.integers(10, 37))
    for job in stream["jobs"]:
        job["weight"] = int(rng.integers(1, 5))
        for key in ("wfcommons", "dax"):
            if key in job:
                job[key] = str(DATA / Path(job[key]).name)
    if rng.random() < 1 / 3:
        data.pop("failures", None)
        data.pop("stragglers", None)
    return data


def bar_world_scenario(seed: int):  # -> (Scenario, JobStream)
    """The world of :func:`draw_bar_world` as a parsed scenario and its day's stream.  O(one stream)."""
    from simsched.run.streams import stream_of

    sc = _parse(draw_bar_world(seed))
    return sc, stream_of(sc, int(seed))


def world_days(space: str, first: int, count: int) -> list[tuple[Any, Any, int]]:
    """``count`` world-days of ``space`` (``train`` or ``select``), the ``first``-th on.  O(count streams)."""
    from simsched.run.seedspace import space_seeds

    seeds = space_seeds(0, space, first + count)[first:]
    return [(*world_scenario(s), s) for s in seeds]


def bar_days(space: str, count: int) -> list[tuple[Any, Any, int]]:
    """``count`` days of ``scenarios/streams/rl_dynamic.yaml`` in its ``space``.  O(count streams)."""
    from simsched.run.seedspace import space_seeds
    from simsched.run.streams import stream_of
    from simsched.scenario import load_scenario

    sc = load_scenario(BAR)
    return [(sc, stream_of(sc, s), s) for s in space_seeds(sc.seed, space, count)]


SOURCES = ("drawn", "bar-like", "bar")
"""The kinds of world-day: :func:`draw_world`'s, :func:`draw_bar_world`'s, the bar's own days."""


def source_days(source: str, space: str, first: int, count: int) -> list[tuple[Any, Any, int]]:
    """``count`` world-days of ``source`` (:data:`SOURCES`) in ``space`` (``train`` or ``select``), the
    ``first``-th on (the bar's days: from its own seed space).  O(count streams)."""
    from simsched.run.seedspace import space_seeds

    if source == "bar":
        return bar_days(space, first + count)[first:]
    seeds = space_seeds(1 if source == "bar-like" else 0, space, first + count)[first:]
    make = bar_world_scenario if source == "bar-like" else world_scenario
    return [(*make(s), s) for s in seeds]


def day_jct(sc, stream, seed: int, scheduler) -> float:
    """Mean JCT of one scheduler instance on one world-day.  One engine run."""
    from simsched.run.streams import simulate_stream

    return float(simulate_stream(sc, "rl-gate", int(seed), stream, scheduler).metrics.summary["jct_mean"])

