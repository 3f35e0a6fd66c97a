"""Training ``rl-gate`` across worlds: job-stream worlds drawn from the ``train`` seed space, a predictor
of whether waiting pays fitted on both rules' results there, its caution selected on the ``select`` space.

``python -m simsched.learned.rl.worlds train -o DIR [--drawn N] [--bar-like N] [--bar N] [--select-drawn N]
[--select-bar-like N] [--select-bar N] [--seed S]`` writes ``DIR/rl_gate.json`` (loadable with
``{name: rl-gate, checkpoint: DIR/rl_gate.json}``), ``DIR/train_history.json`` and the two rule tables
``DIR/days_train.npz`` and ``DIR/days_select.npz`` (a rerun with the same sizes reuses them).
``python -m simsched.learned.rl.worlds cem -o DIR ...`` runs the earlier black-box search (:func:`train`).

**Worlds** (:func:`draw_world`, one per seed; every draw is a scenario mapping parsed like a scenario
file): 2-10 CPUs and 1-4 fast processors 1.5-6x as fast (log-uniform), bandwidth 1-20; 8-32 jobs a day
from a mix of one to three families with weights 1-4, drawn from random layered DAGs of varied sizes and
CCRs, ``layered``, ``erdos_renyi``, Gaussian elimination and FFT graphs, and the shipped Montage and
Epigenomics workflows; Poisson arrivals or a burst (rate x3 in the middle of the day) at an offered load
of 50-120% (the rate set from the mean job work of the world's own draw); lognormal noise sigma 0.1-0.7;
failures and stragglers each on with probability 1/2, scaled to the mean inter-arrival gap.
:func:`draw_bar_world` draws worlds near ``scenarios/streams/rl_dynamic.yaml`` (its families and burst,
the fast processors' count and speed, the load, the day's length and failures perturbed).  **Held
out** of training, so that they stay unseen for the generalisation matrix: the Kasahara STG and pipeline
DOT workflows and the fork-join and series-parallel generators.

**Training** (:func:`train_predictor`): direct supervision instead of a whole-day black-box search.
Both rules the gate contains (always queue = ``srjf-eft``, never queue = late binding) run on every
train world-day (:func:`collect`); the label is the day's ``log(late binding's mean JCT / srjf-eft's)``,
the inputs the world description (:func:`~simsched.learned.rl.features.world_description`, arrived work
only) at several points of the day.  A Bayesian ridge regression (:func:`fit_predictor`) predicts the
expected log ratio and its standard deviation; the gate late-binds only where ``mean + k sd < -margin``
(waiting pays even at the pessimistic end) and queues as ``srjf-eft`` otherwise, so where it is unsure
it *is* the rule.  ``k`` and ``margin`` are selected on the ``select`` space's world-days and the bar's
select days, beside the two rules.  Cost: two engine runs per train or select world-day, one per select
day and candidate; each run one day of O((n + e) log n) events.
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

from simsched.learned.rl.gate import ALWAYS_QUEUE, N_WEIGHTS, NEVER_QUEUE, save_gate

HELD_OUT = ("kasahara_40.stg", "pipeline_30.dot", "fork_join", "series_parallel")
"""Job families never drawn for training (the generalisation matrix's unseen families)."""

BAR = Path(__file__).resolve().parents[3] / "scenarios" / "streams" / "rl_dynamic.yaml"
DATA = Path(__file__).resolve().parents[3] / "scenarios" / "data"



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


POINTS = (0.15, 0.35, 0.6, 1.0)
"""Where in a day (the share of its arrivals) the world description is recorded for the predictor."""

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


def rule_day(sc, stream, seed: int) -> tuple[float, float, np.ndarray, np.ndarray]:
    """One world-day under both rules: ``srjf-eft``'s mean JCT, late binding's, the world
    descriptions at :data:`POINTS` of the day's arrivals (as the gate saw them, arrived work only;
    (len(POINTS), n_world_features)) and every description met (for the guard's range).  Two engine
    runs."""
    from simsched.learned.rl.gate import GatedBinding
    from simsched.schedulers.jobaware import ShortestJobEFT

    gate = GatedBinding(weights=list(ALWAYS_QUEUE), guard=False)  # srjf-eft's schedule, float for float
    queue = day_jct(sc, stream, seed, gate)
    late = day_jct(sc, stream, seed, ShortestJobEFT(late_binding=True))
    met = np.array(gate.worlds)
    at = np.minimum((np.asarray(POINTS) * len(met)).astype(int), len(met) - 1)
    return queue, late, met[at], met


def _collect_chunk(chunk: tuple[str, str, int, int]) -> list[tuple]:
    """:func:`rule_day` on every world-day of one ``(source, space, count, first)`` chunk, as
    ``(source, space, seed, queue, late, x, lo, hi)`` rows.  O(2 engine runs per day)."""
    source, space, count, first = chunk
    out = []
    for sc, stream, seed in source_days(source, space, first, count):
        q, late, x, met = rule_day(sc, stream, seed)
        out.append((source, space, seed, q, late, x, met.min(axis=0), met.max(axis=0)))
    return out


def collect(path: str | Path, plan: Sequence[tuple[str, str, int, int]],
            progress: Callable[[str], None] | None = print, workers: int = 1) -> dict[str, np.ndarray]:
    """Run both rules on every world-day of ``plan`` (``(source, space, count, first)`` rows) and write the
    table to ``path`` (npz): per day its source, space, seed, both mean JCTs and the world
    descriptions at :data:`POINTS`; plus the span of every description met.  Deterministic, in
    ``workers`` processes or one (the same table).  O(2 engine runs per day)."""
    from simsched.fileio import atomic_path

    t0 = time.process_time()
    chunks = [(src, space, min(SELECT_CHUNK, count - i), first + i)
              for src, space, count, first in plan for i in range(0, count, SELECT_CHUNK)]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_collect_chunk, chunks))
    else:
        parts = []
        for c in chunks:
            parts.append(_collect_chunk(c))
            if progress is not None:
                progress(f"{c[0]} {c[1]}: days {c[3]} to {c[3] + c[2] - 1} ({time.process_time() - t0:.0f} s CPU)")
    rows = [r for part in parts for r in part]
    cols = list(zip(*rows))
    table = {"source": np.array(cols[0]), "space": np.array(cols[1]), "seed": np.array(cols[2], dtype=np.int64),
             "queue": np.array(cols[3]), "late": np.array(cols[4]), "x": np.array(cols[5]),
             "lo": np.min(cols[6], axis=0), "hi": np.max(cols[7], axis=0),
             "plan": np.array(json.dumps([list(r) for r in plan]))}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **table)
    return table


RIDGE = 1.0
"""The predictor's ridge penalty (on every coefficient but the constant), in units of one row."""

LABEL_CLIP = 1.0
"""Per-day log ratios are clipped to +-this before fitting (an overloaded day can double a mean JCT;
one such day should not move the fit more than a 2.7x change)."""


def fit_predictor(table: dict[str, np.ndarray], ridge: float = RIDGE) -> dict[str, Any]:
    """Bayesian ridge regression of the per-day log ratio ``log(late binding's mean JCT / srjf-eft's)``
    on :func:`~simsched.learned.rl.gate.basis` of the world descriptions at :data:`POINTS` of the day
    (each day contributes len(POINTS) rows with its one label).  Returns the predictor's fields
    ``{"mean", "scale", "coef", "cov"}``: ``cov`` is the covariance of the coefficients, the residual
    variance times ``(Phi'Phi + ridge I)^-1`` times len(POINTS) (a day's rows share one label, so they
    count as one observation, not len(POINTS)).  The prediction's standard deviation ``sqrt(phi' cov
    phi)`` is that of the expected log ratio of a world: small inside the training worlds, growing
    away from them.  O(rows x N_BASIS^2 + N_BASIS^3)."""
    from simsched.learned.rl.gate import basis

    x = table["x"].reshape(-1, table["x"].shape[-1])
    y = np.repeat(np.clip(np.log(table["late"] / table["queue"]), -LABEL_CLIP, LABEL_CLIP), table["x"].shape[1])
    mean, scale = x.mean(axis=0), np.maximum(x.std(axis=0), 1e-3)
    phi = basis(x, mean, scale)
    pen = np.full(phi.shape[1], float(ridge))
    pen[0] = 1e-9
    a_inv = np.linalg.inv(phi.T @ phi + np.diag(pen))
    coef = a_inv @ phi.T @ y
    resid = y - phi @ coef
    s2 = float(resid @ resid) / max(len(y) - phi.shape[1], 1)
    cov = s2 * table["x"].shape[1] * a_inv
    cov = 0.5 * (cov + cov.T)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "coef": coef.tolist(), "cov": cov.tolist(),
            "residual_sd": math.sqrt(s2)}


def _load_table(path: Path, plan: Sequence[tuple[str, str, int, int]]) -> dict[str, np.ndarray] | None:
    """The table :func:`collect` wrote at ``path`` if it was collected for this ``plan``."""
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        table = {key: z[key] for key in z.files}
    return table if json.loads(str(table["plan"])) == [list(r) for r in plan] else None


def _groups(table: dict[str, np.ndarray]) -> list[np.ndarray]:
    return [table["source"] == src for src in SOURCES if (table["source"] == src).any()]


def train_predictor(out: str | Path, drawn: int = 200, bar_like: int = 100, bar: int = 60,
                    select_drawn: int = 60, select_bar_like: int = 30, select_bar: int = 60,
                    ks: Sequence[float] = (0.0, 1.0, 2.0), margins: Sequence[float] = (0.0,),
                    seed: int = 0, workers: int = 1, progress: Callable[[str], None] | None = print) -> dict[str, Any]:
    """Train ``rl-gate``'s predictor and select its caution; write ``OUT/rl_gate.json`` and
    ``OUT/train_history.json`` (and the two rule tables ``OUT/days_train.npz``, ``OUT/days_select.npz``,
    reused by a rerun with the same sizes and seed).

    1. Both rules on ``drawn`` :func:`draw_world` world-days, ``bar_like`` :func:`draw_bar_world`
       world-days and ``bar`` days of the bar, all of the ``train`` space (the ``seed``-th block of
       each), and on the ``select`` space's ``select_*`` days of each kind (:func:`collect`).
    2. :func:`fit_predictor` on the train table.
    3. Every ``(k, margin)`` of the grid runs as a gate on every select day; with the two rules
       (read from the select table), the candidate with the lowest mean over the kinds of world of
       their mean log ratio to ``srjf-eft`` wins among those no kind of world finds worse than
       ``srjf-eft`` by more than 0.5% (always queueing, ``srjf-eft`` itself, always qualifies).
    Deterministic in its arguments (``workers``, processes for steps 1 and 3, changes nothing but the time).
    Cost: 2 engine runs per collected day, one per select day and candidate."""

    t0 = time.process_time()
    out = Path(out)
    plans = {"train": [("drawn", "train", drawn, seed * drawn), ("bar-like", "train", bar_like, seed * bar_like),
                       ("bar", "train", bar, seed * bar)],
             "select": [("drawn", "select", select_drawn, 0), ("bar-like", "select", select_bar_like, 0),
                        ("bar", "select", select_bar, 0)]}
    tables = {}
    for space, plan in plans.items():
        plan = [r for r in plan if r[2] > 0]
        plans[space] = plan
        tables[space] = (_load_table(out / f"days_{space}.npz", plan)
                         or collect(out / f"days_{space}.npz", plan, progress, workers))
    model = fit_predictor(tables["train"])
    tr = tables["train"]
    history: dict[str, Any] = {
        "config": {"drawn": drawn, "bar_like": bar_like, "bar": bar, "select_drawn": select_drawn,
                   "select_bar_like": select_bar_like, "select_bar": select_bar, "ks": list(ks),
                   "margins": list(margins), "seed": seed, "points": list(POINTS), "ridge": RIDGE,
                   "label_clip": LABEL_CLIP, "space": "train"},
        "train_days": {src: {"days": int((tr["source"] == src).sum()),
                             "late / srjf-eft": float(np.exp(np.log(tr["late"] / tr["queue"])[tr["source"] == src]
                                                             .mean()))}
                       for src in SOURCES if (tr["source"] == src).any()},
        "model": {"coef": model["coef"], "residual_sd": model["residual_sd"]}}
    if progress is not None:
        progress(f"fit: residual sd {model['residual_sd']:.4f} ({time.process_time() - t0:.0f} s CPU)")
    sel = tables["select"]
    groups = _groups(sel)
    cands: dict[str, np.ndarray] = {"always queue (srjf-eft)": np.zeros(len(sel["seed"])),
                                    "never queue (late binding)": np.log(sel["late"] / sel["queue"])}
    lo, hi = tr["lo"], tr["hi"]
    names, paths = [], []
    for k in ks:
        for margin in margins:
            names.append(f"predictor k={k:g} margin={margin:g}")
            paths.append(str(out / f"candidate-{len(paths)}.json"))
            save_gate(paths[-1], ALWAYS_QUEUE, lo, hi, history["config"], {},
                      {**_fields(model), "k": k, "margin": margin})
    chunks = [(src, space, min(SELECT_CHUNK, count - i), first + i)
              for src, space, count, first in plans["select"] for i in range(0, count, SELECT_CHUNK)]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_select_chunk, chunks, [paths] * len(chunks)))
    else:
        parts = [_select_chunk(chunk, paths) for chunk in chunks]
    jct, waited = np.concatenate([q for q, _ in parts], axis=1), np.concatenate([w for _, w in parts], axis=1)
    for path in paths:
        Path(path).unlink()
    waits: dict[str, float] = {}
    for c, name in enumerate(names):
        cands[name] = np.log(np.maximum(jct[c], 1e-12) / np.maximum(sel["queue"], 1e-12))
        waits[name] = float(waited[c].mean())
        if progress is not None:
            progress(f"select: {name}: {np.exp(cands[name].mean()):.4f} ({time.process_time() - t0:.0f} s CPU here)")
    table = {}
    for name, r in cands.items():
        per = [float(r[g].mean()) for g in groups]
        table[name] = {"score": float(np.mean(per)), "worst_kind": max(per),
                       **{src: float(np.exp(r[sel["source"] == src].mean())) for src in SOURCES
                          if (sel["source"] == src).any()},
                       "days_with_a_wait": waits.get(name)}
    ok = [n for n in table if table[n]["worst_kind"] <= math.log(1.005)]
    chosen = min(ok, key=lambda n: table[n]["score"])
    history["selection"] = table
    history["chosen"] = chosen
    history["cpu_s"] = round(time.process_time() - t0, 1)
    if progress is not None:
        for n, row in table.items():
            kinds = ", ".join(f"{src} {row[src]:.4f}" for src in SOURCES if src in row)
            progress(f"select: {n}: {kinds}; mean over kinds {math.exp(row['score']):.4f}")
        progress(f"chosen: {chosen}")
    if chosen.startswith("predictor"):
        k, margin = (float(part.split("=")[1]) for part in chosen.split()[1:])
        fields: dict | None = {**_fields(model), "k": k, "margin": margin}
        weights = ALWAYS_QUEUE
    else:
        fields, weights = None, ALWAYS_QUEUE if chosen.startswith("always") else NEVER_QUEUE
    save_gate(out / "rl_gate.json", weights, lo, hi, history["config"],
              {"chosen": chosen, "cpu_s": history["cpu_s"]}, fields)
    from simsched.fileio import atomic_path

    with atomic_path(out / "train_history.json") as tmp:
        Path(tmp).write_text(json.dumps(history, indent=1) + "\n", encoding="utf-8")
    return history


SELECT_CHUNK = 25
"""World-days per unit of work (one process's share with ``workers`` > 1)."""


def _select_chunk(chunk: tuple[str, str, int, int], paths: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate gate (checkpoint files ``paths``) on the select days of ``chunk`` (``(source,
    space, count, first)``): their mean JCTs and whether the gate waited at all, (candidates, count)
    each.  O(candidates x count) engine runs."""
    from simsched.learned.rl.gate import GatedBinding

    source, space, count, first = chunk
    days = source_days(source, space, first, count)
    jct, waited = np.zeros((len(paths), len(days))), np.zeros((len(paths), len(days)), dtype=bool)
    for d, (sc, stream, s) in enumerate(days):
        for c, path in enumerate(paths):
            gate = GatedBinding(checkpoint=path)
            jct[c, d] = day_jct(sc, stream, s, gate)
            waited[c, d] = gate.late_decisions > 0
    return jct, waited


def _fields(model: dict[str, Any]) -> dict[str, Any]:
    return {key: model[key] for key in ("mean", "scale", "coef", "cov")}


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


def _bounded(a: argparse.Namespace, bounds: Sequence[tuple[str, int, int]]) -> str | None:
    for name, lo, hi in bounds:
        v = getattr(a, name)
        if not lo <= v <= hi:
            return f"error: --{name.replace('_', '-')}: expected {lo} to {hi}, got {v}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m simsched.learned.rl.worlds", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fit the gate's predictor on both rules' train world-days, select on select days")
    t.add_argument("-o", "--output", required=True)
    for name, default in (("drawn", 200), ("bar-like", 100), ("bar", 60), ("select-drawn", 60),
                          ("select-bar-like", 30), ("select-bar", 60)):
        t.add_argument(f"--{name}", type=int, default=default)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--workers", type=int, default=1, help="processes for collecting and selecting (the same result)")
    c = sub.add_parser("cem", help="the earlier black-box search over the gate's weights (cross-entropy method)")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--iterations", type=int, default=8)
    c.add_argument("--population", type=int, default=8)
    c.add_argument("--days", type=int, default=24)
    c.add_argument("--select-days", type=int, default=32)
    c.add_argument("--budget-min", type=float, default=None)
    c.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    from simsched.errors import SimschedError

    if a.command == "train":
        sizes = ("drawn", "bar_like", "bar", "select_drawn", "select_bar_like", "select_bar")
        bad = _bounded(a, [*((n, 0, 10000) for n in sizes), ("seed", 0, 1000), ("workers", 1, 64)])
        if bad is None and a.drawn + a.bar_like + a.bar < 2:
            bad = f"error: --drawn/--bar-like/--bar: expected at least 2 train days, got {a.drawn + a.bar_like + a.bar}"
        if bad is None and a.select_drawn + a.select_bar_like + a.select_bar < 1:
            bad = "error: --select-drawn/--select-bar-like/--select-bar: expected at least 1 select day, got 0"
        if bad:
            print(bad)
            return 2
        run = lambda: train_predictor(a.output, *(getattr(a, n) for n in sizes), seed=a.seed,  # noqa: E731
                                      workers=a.workers)
    else:
        bad = _bounded(a, (("iterations", 1, 1000), ("population", 2, 1000), ("days", 1, 10000),
                           ("select_days", 1, 10000), ("seed", 0, 2**31 - 1)))
        if bad is None and a.budget_min is not None and not (math.isfinite(a.budget_min) and a.budget_min > 0):
            bad = f"error: --budget-min: expected a positive number of minutes, got {a.budget_min}"
        if bad:
            print(bad)
            return 2
        run = lambda: train(a.output, a.iterations, a.population, a.days, a.select_days,  # noqa: E731
                            a.budget_min, a.seed)
    try:
        run()
    except SimschedError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
