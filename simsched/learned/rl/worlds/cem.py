"""The earlier route to ``rl-gate``, kept as ``python -m simsched.learned.rl.worlds cem``: a black-box
search (the cross-entropy method) over the gate's per-decision weights, each candidate scored by its
mean JCT over ``srjf-eft``'s on whole world-days (:func:`score`, :func:`train`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simsched.learned.rl.gate import ALWAYS_QUEUE, N_WEIGHTS, NEVER_QUEUE, save_gate
from simsched.learned.rl.worlds.sampler import bar_days, day_jct, world_days


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

