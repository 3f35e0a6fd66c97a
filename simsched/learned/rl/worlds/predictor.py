"""``rl-gate``'s predictor, the route that trains it today (``python -m simsched.learned.rl.worlds train``):
both rules the gate contains run on every world-day (:func:`rule_day`, :func:`collect`), a Bayesian ridge
regression predicts the day's log ratio of late binding's mean JCT to ``srjf-eft``'s from the world
description (:func:`fit_predictor`), and the gate's caution ``(k, margin)`` is selected on the ``select``
space (:func:`train_predictor`).  Cost: two engine runs per collected world-day, one per select day and
candidate.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsched.learned.rl.gate import ALWAYS_QUEUE, NEVER_QUEUE, save_gate
from simsched.learned.rl.worlds.sampler import SOURCES, day_jct, source_days

POINTS = (0.15, 0.35, 0.6, 1.0)
"""Where in a day (the share of its arrivals) the world description is recorded for the predictor."""


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


def plans_of(config: dict[str, Any]) -> dict[str, list[tuple[str, str, int, int]]]:
    """The ``train`` and ``select`` plans (``(source, space, count, first)`` rows, empty ones left out) of a
    training config (:func:`train_predictor`'s sizes and ``seed``, as a checkpoint's ``config`` holds them).
    O(1)."""
    c, seed = config, int(config.get("seed", 0))
    plans = {"train": [("drawn", "train", c["drawn"], seed * c["drawn"]),
                       ("bar-like", "train", c["bar_like"], seed * c["bar_like"]),
                       ("bar", "train", c["bar"], seed * c["bar"])],
             "select": [("drawn", "select", c["select_drawn"], 0), ("bar-like", "select", c["select_bar_like"], 0),
                        ("bar", "select", c["select_bar"], 0)]}
    return {space: [r for r in plan if r[2] > 0] for space, plan in plans.items()}


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
    3. The gate's envelope (:func:`simsched.learned.rl.envelope.calibrate`) on the same train world-days,
       its threshold on the select ones.
    4. Every ``(k, margin)`` of the grid runs as a gate on every select day; with the two rules
       (read from the select table), the candidate with the lowest mean over the kinds of world of
       their mean log ratio to ``srjf-eft`` wins among those no kind of world finds worse than
       ``srjf-eft`` by more than 0.5% (always queueing, ``srjf-eft`` itself, always qualifies).
    Deterministic in its arguments (``workers``, processes for steps 1 and 3, changes nothing but the time).
    Cost: 2 engine runs per collected day, one per select day and candidate."""

    from simsched.learned.rl.envelope import calibrate

    t0 = time.process_time()
    out = Path(out)
    plans = plans_of({"drawn": drawn, "bar_like": bar_like, "bar": bar, "select_drawn": select_drawn,
                      "select_bar_like": select_bar_like, "select_bar": select_bar, "seed": seed})
    tables = {}
    for space, plan in plans.items():
        tables[space] = (_load_table(out / f"days_{space}.npz", plan)
                         or collect(out / f"days_{space}.npz", plan, progress, workers))
    model = fit_predictor(tables["train"])
    envelope, envelope_info = calibrate(plans["train"], plans["select"])
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
    history["envelope"] = envelope_info
    save_gate(out / "rl_gate.json", weights, lo, hi, history["config"],
              {"chosen": chosen, "cpu_s": history["cpu_s"]}, fields, envelope.to_dict())
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



def add_envelope(checkpoint: str | Path, out: str | Path) -> dict[str, Any]:
    """Write ``out``: the gate checkpoint ``checkpoint`` with the envelope of its own training plan (its
    ``config``, :func:`plans_of`; :func:`simsched.learned.rl.envelope.calibrate`; an envelope it had is
    replaced), every other field as it was.  The summary of the calibration.  O(streams of the plan), no engine run."""
    from simsched.learned.rl.envelope import calibrate
    from simsched.learned.rl.gate import load_gate

    data = load_gate(checkpoint, envelope=False)
    plans = plans_of(data["config"])
    envelope, info = calibrate(plans["train"], plans["select"])
    save_gate(out, np.asarray(data["weights"]), np.asarray(data["range"]["lo"]), np.asarray(data["range"]["hi"]),
              data["config"], {**data.get("meta", {}), "envelope": info}, data.get("model"), envelope.to_dict())
    return info
