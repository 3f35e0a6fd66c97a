"""Training ``rl-gate`` across worlds: a distribution of job-stream worlds drawn from the ``train`` seed
space, the cross-entropy method over the gate's weights, selection on the ``select`` space.

``python -m simsched.learned.rl.worlds train -o DIR [--iterations N] [--population P] [--days D]
[--select-days S] [--budget-min M]`` writes ``DIR/rl_gate.json`` (the selected gate, loadable with
``{name: rl-gate, checkpoint: DIR/rl_gate.json}``) and ``DIR/train_history.json``.

**Worlds** (:func:`draw_world`, one per seed; every draw is a scenario mapping parsed like a scenario
file): 2-10 CPUs and 1-4 fast processors 1.5-6x as fast (log-uniform), bandwidth 1-20; 8-32 jobs a day
from a mix of one to three families with weights 1-4, drawn from random layered DAGs of varied sizes and
CCRs, ``layered``, ``erdos_renyi``, Gaussian elimination and FFT graphs, and the shipped Montage and
Epigenomics workflows; Poisson arrivals or a burst (rate x3 in the middle of the day) at an offered load
of 50-120% (the rate set from the mean job work of the world's own draw); lognormal noise sigma 0.1-0.7;
failures and stragglers each on with probability 1/2, scaled to the mean inter-arrival gap.  **Held
out** of training, so that they stay unseen for the generalisation matrix: the Kasahara STG and pipeline
DOT workflows and the fork-join and series-parallel generators.

**Training** (:func:`train`): the cross-entropy method (Rubinstein 1999; for control policies Szita &
Lorincz 2006): a Gaussian over the gate's weights, ``population`` candidates per iteration all run on the
same ``days`` world-days (common random numbers, fresh world-days every iteration, all from the
``train`` space), scored by the mean over days of ``log(mean JCT / srjf-eft's mean JCT)``, the best
quarter refits the Gaussian.  **Selection**: the final mean, each iteration's best candidate and the two
rules the gate contains (always queue = ``srjf-eft``, never queue = late binding) on ``select-days``
world-days of the ``select`` space and as many days of ``scenarios/streams/rl_dynamic.yaml``'s select
space; the lowest mean log ratio wins (a rule winning is reported as such: the gate then adds nothing).
Cost: ``iterations x (population + 1) x days`` engine runs plus the selection's; each run is one day of
O((n + e) log n) events.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsched.learned.rl.gate import N_WEIGHTS, save_gate

HELD_OUT = ("kasahara_40.stg", "pipeline_30.dot", "fork_join", "series_parallel")
"""Job families never drawn for training (the generalisation matrix's unseen families)."""

BAR = Path(__file__).resolve().parents[3] / "scenarios" / "streams" / "rl_dynamic.yaml"
DATA = Path(__file__).resolve().parents[3] / "scenarios" / "data"

ALWAYS_QUEUE = np.array([-800.0] + [0.0] * (N_WEIGHTS - 1))
"""Weights whose gate always queues: ``srjf-eft``'s schedule."""
NEVER_QUEUE = np.array([800.0] + [0.0] * (N_WEIGHTS - 1))
"""Weights whose gate never queues: ``srjf-eft(late_binding=true)``'s schedule."""


def _family(rng: np.random.Generator) -> dict[str, Any]:
    """One job family of the training pool (see the module docstring)."""
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
    """The scenario mapping of the world of ``seed`` (see the module docstring), with Poisson rate 1
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


def day_jct(sc, stream, seed: int, scheduler) -> float:
    """Mean JCT of one scheduler instance on one world-day.  One engine run."""
    from simsched.run.streams import simulate_stream

    return float(simulate_stream(sc, "rl-gate", int(seed), stream, scheduler).metrics.summary["jct_mean"])


def score(candidates: Sequence[np.ndarray], days: Sequence[tuple[Any, Any, int]],
          worlds: list | None = None) -> np.ndarray:
    """(len(candidates), len(days)) log of each candidate's mean JCT over ``srjf-eft``'s on each day
    (``days``: ``(scenario, stream, seed)``).  ``worlds``: if given, receives every world
    description the first candidate met.  O(days x (candidates + 1)) engine runs."""
    from simsched.learned.rl.gate import GatedBinding
    from simsched.schedulers.jobaware import ShortestJobEFT

    out = np.zeros((len(candidates), len(days)))
    for d, (sc, stream, seed) in enumerate(days):
        ref = day_jct(sc, stream, seed, ShortestJobEFT())
        for c, w in enumerate(candidates):
            gate = GatedBinding(weights=list(map(float, w)))
            out[c, d] = math.log(max(day_jct(sc, stream, seed, gate), 1e-12) / max(ref, 1e-12))
            if c == 0 and worlds is not None:
                worlds.extend(gate.worlds)
    return out


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


def train(out: str | Path, iterations: int = 8, population: int = 8, days: int = 24, select_days: int = 32,
          budget_min: float | None = None, seed: int = 0,
          progress: Callable[[str], None] | None = print) -> dict[str, Any]:
    """Train, select and write ``OUT/rl_gate.json`` and ``OUT/train_history.json`` (see the module
    docstring); returns the history.  ``budget_min``: stop iterating once this much process CPU time
    is spent (the selection still runs).  Deterministic in ``seed`` for a fixed number of iterations."""
    t0 = time.process_time()
    rng = np.random.default_rng([seed, 1848])
    mean, std = np.zeros(N_WEIGHTS), np.full(N_WEIGHTS, 2.0)
    worlds: list[np.ndarray] = []
    history: dict[str, Any] = {"iterations": [], "config": {"iterations": iterations, "population": population,
                                                             "days": days, "select_days": select_days,
                                                             "seed": seed, "space": "train"}}
    bests: list[np.ndarray] = []
    n_elite = max(2, population // 4)
    for it in range(iterations):
        if budget_min is not None and time.process_time() - t0 > 60.0 * budget_min:
            break
        batch = world_days("train", it * days, days)
        cands = [mean] + [mean + std * rng.standard_normal(N_WEIGHTS) for _ in range(population - 1)]
        s = score(cands, batch, worlds).mean(axis=1)
        elite = np.argsort(s)[:n_elite]
        bests.append(cands[int(elite[0])])
        pts = np.array([cands[i] for i in elite])
        mean = 0.7 * pts.mean(axis=0) + 0.3 * mean
        std = np.maximum(0.7 * pts.std(axis=0) + 0.3 * std, 0.05)
        row = {"iteration": it, "mean_score": float(s[0]), "best_score": float(s[elite[0]]),
               "ratio_of_mean": float(np.exp(s[0])), "cpu_s": round(time.process_time() - t0, 1)}
        history["iterations"].append(row)
        if progress is not None:
            progress(f"iteration {it}: mean's ratio to srjf-eft {np.exp(s[0]):.4f}, best {np.exp(s[elite[0]]):.4f}"
                     f" ({row['cpu_s']} s CPU)")
    last = enumerate(bests[-3:], max(len(bests) - 3, 0))
    pool = {"final mean": mean, **{f"best of iteration {i}": b for i, b in last},
            "always queue (srjf-eft)": ALWAYS_QUEUE, "never queue (late binding)": NEVER_QUEUE}
    part_w = score(list(pool.values()), world_days("select", 0, select_days))
    part_b = score(list(pool.values()), bar_days("select", select_days))
    sel_scores = np.concatenate([part_w, part_b], axis=1).mean(axis=1)
    names = list(pool)
    chosen = names[int(np.argmin(sel_scores))]
    history["selection"] = {n: float(np.exp(v)) for n, v in zip(names, sel_scores)}
    history["selection_worlds"] = {n: float(np.exp(v)) for n, v in zip(names, part_w.mean(axis=1))}
    history["selection_bar"] = {n: float(np.exp(v)) for n, v in zip(names, part_b.mean(axis=1))}
    history["weights"] = {n: [float(v) for v in w] for n, w in pool.items()}
    history["chosen"] = chosen
    history["cpu_s"] = round(time.process_time() - t0, 1)
    if progress is not None:
        for n, v in history["selection"].items():
            progress(f"select: {n}: ratio to srjf-eft {v:.4f} (worlds {history['selection_worlds'][n]:.4f}, "
                     f"rl_dynamic {history['selection_bar'][n]:.4f})")
        progress(f"chosen: {chosen}")
    w = np.array([*worlds]) if worlds else np.zeros((1, len(worlds)))
    out = Path(out)
    save_gate(out / "rl_gate.json", pool[chosen], w.min(axis=0), w.max(axis=0), history["config"],
              {"chosen": chosen, "selection": history["selection"], "cpu_s": history["cpu_s"]})
    from simsched.fileio import atomic_path

    with atomic_path(out / "train_history.json") as tmp:
        Path(tmp).write_text(json.dumps(history, indent=1) + "\n", encoding="utf-8")
    return history


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m simsched.learned.rl.worlds", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train and select a gate across worlds")
    t.add_argument("-o", "--output", required=True)
    t.add_argument("--iterations", type=int, default=8)
    t.add_argument("--population", type=int, default=8)
    t.add_argument("--days", type=int, default=24)
    t.add_argument("--select-days", type=int, default=32)
    t.add_argument("--budget-min", type=float, default=None)
    t.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    from simsched.errors import SimschedError

    for name, lo, hi in (("iterations", 1, 1000), ("population", 2, 1000), ("days", 1, 10000),
                         ("select_days", 1, 10000), ("seed", 0, 2**31 - 1)):
        v = getattr(a, name)
        if not lo <= v <= hi:
            print(f"error: --{name.replace('_', '-')}: expected {lo} to {hi}, got {v}")
            return 2
    if a.budget_min is not None and not (math.isfinite(a.budget_min) and a.budget_min > 0):
        print(f"error: --budget-min: expected a positive number of minutes, got {a.budget_min}")
        return 2
    try:
        train(a.output, a.iterations, a.population, a.days, a.select_days, a.budget_min, a.seed)
    except SimschedError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
