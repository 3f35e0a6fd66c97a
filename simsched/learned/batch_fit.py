"""Fitting :class:`~simsched.schedulers.batch_learned.LearnedPriority` on windows of a cluster log
(``simsched train batch-priority``).

* **Train** (``train`` seed space only): every heuristic of :data:`CANDIDATES` runs on the train
  windows; the best (lowest mean ``log`` of a window's mean bounded slowdown) is the *fallback*.  The
  weights ``theta`` over the chosen features (:mod:`simsched.schedulers.batch_features`) and the
  hold-back ``(long, keep)`` of :class:`~simsched.schedulers.batch_learned.LearnedPriority` are fitted
  together by the cross-entropy method (Rubinstein 1999) with common random windows: every candidate
  is scored on the same train windows; ``population`` Gaussian candidates per iteration around the
  mean (the mean itself is one of them), the best quarter sets the next mean and (floored) spread.
  The start is SJF's order (weight 1 on ``log_requested``) holding back jobs over 1,000 s unless 10%
  of the processors stay free; the objective is the mean ``log`` bsld on the train windows.
* **Select** (``select`` seed space, windows the fit never saw): the fitted weights against the
  fallback, paired per window (geometric mean of the bsld ratio with its 95% t interval).  Only if
  the interval lies below 1 is the fit used (``use: learned``); otherwise the model says
  ``use: fallback`` and the policy is that rule.
* **Range**: the box of the features of every job that waited at a decision point of the fitted
  policy on the train windows; outside it the policy hands the decision to the fallback
  (:class:`~simsched.schedulers.batch_learned.LearnedPriority`).
* Evaluation is left to ``simsched run ... --seed-space fresh`` (the windows' report pairs every
  policy with the best one).

Windows are drawn from each day's seed (``draw: seed``) whatever the scenario's ``draw`` says.  Cost:
``(len(CANDIDATES) + iterations x population + 1) x train + 2 x select`` engine runs of one window
(the model's ``budget`` records them and the CPU minutes spent).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.run.seedspace import space_seeds
from simsched.scenario import Scenario
from simsched.schedulers.batch_features import FEATURES
from simsched.simulator.batch import simulate_batch
from simsched.stats import paired_ratio
from simsched.workloads import log_windows as lw
from simsched.workloads.importers.swf import RigidTrace

CANDIDATES = (("fcfs", True), ("sjf", True), ("wfp3", True), ("uni", True), ("f1", True))
"""The heuristics the fallback is chosen from: every priority rule with greedy backfilling (published
waiting time)."""

HOLD_START, HOLD_SPREAD, HOLD_FLOOR = np.array([3.0, 0.1]), np.array([1.0, 0.15]), np.array([0.1, 0.02])
"""The hold-back's search (``long``: log10 seconds, ``keep``: fraction of the processors): where the
cross-entropy method starts (jobs over 1,000 s keep 10% free), its first spread and its least spread."""

HOLD_LOW, HOLD_HIGH = np.array([0.0, 0.0]), np.array([7.0, 0.9])
"""The hold-back's bounds: a threshold of 1 s to 10^7 s, at most 90% of the processors kept free."""


def windows_of(scenario: Scenario, space: str, count: int) -> list[RigidTrace]:
    """``count`` windows of the scenario's log from days of ``space``, each drawn from its day's seed.
    O(count x jobs)."""
    wl = scenario.workload
    if wl is None or wl.form != "batch" or wl.options["batch"].windows is None:
        raise SimschedError("training a batch priority needs a cluster log with windows (workload.stream.windows)",
                            file=scenario.file)
    config = wl.options["batch"]
    from simsched.schedulers.registry import unmet_requested

    if (why := unmet_requested("learned-priority", config.missing_requested())) is not None:
        raise scenario.locate(SimschedError(why), ("workload", "stream"))
    lo, hi = lw.start_range(config.trace.n, config.windows.jobs, config.windows.within)
    return [lw.cut(config.trace, lw.seeded_start(d, lo, hi), config.windows.jobs)
            for d in space_seeds(scenario.seed, space, count)]


def window_bsld(make: Callable[[], Any], windows: list[RigidTrace], m: int) -> np.ndarray:
    """Each window's mean bounded slowdown under a fresh policy from ``make``.  O(windows x engine run)."""
    return np.array([simulate_batch(w, m, make()).metrics()["bsld_mean"] for w in windows])


def fit_priority(scenario: Scenario, *, train: int = 8, select: int = 10, iterations: int = 4, population: int = 12,
                 seed: int = 0, features: Sequence[str] = FEATURES, hold: bool = True, backfill_order: str = "score",
                 log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """The model document of the module docstring (``features``, ``theta``, ``hold``, ``backfill_order``,
    ``fallback``, ``use``, ``range``, and what the fit saw: ``train`` rule means, ``select`` ratio, the
    ``budget`` spent).  Deterministic for one ``seed``."""
    from simsched.schedulers.batch_learned import LearnedPriority
    from simsched.schedulers.batch_priority import PriorityBatch

    if min(train, select, iterations, population) < 1:
        raise SimschedError("train, select, iterations and population must be >= 1")
    names = tuple(features)
    if not names or len(set(names)) != len(names) or any(n not in FEATURES for n in names):
        raise SimschedError(f"features must be distinct names from {', '.join(FEATURES)}", field="features")
    if backfill_order not in ("submit", "score"):
        raise SimschedError("the backfilling order is 'submit' or 'score'", field="backfill_order")
    cpu0, replays = time.process_time(), 0
    m = scenario.platform.n_processors
    tr = windows_of(scenario, "train", train)
    rules = {f"{r}{'+backfill' if b else ''}": float(np.mean(np.log(window_bsld(lambda r=r, b=b: PriorityBatch(r, b),
                                                                               tr, m)))) for r, b in CANDIDATES}
    replays += len(CANDIDATES) * train
    best = min(rules, key=rules.get)
    fb_rule, fb_backfill = CANDIDATES[list(rules).index(best)]
    log(f"train windows: {train}; mean log bsld per rule: "
        + ", ".join(f"{k} {v:.3f}" for k, v in rules.items()) + f"; fallback {best}")
    k = len(names)

    def policy(x: np.ndarray) -> LearnedPriority:
        return LearnedPriority(theta=tuple(x[:k]), features=names, hold=(x[k], x[k + 1]) if hold else None,
                               backfill_order=backfill_order)

    rng = np.random.default_rng(seed)
    mu = np.concatenate([np.where(np.asarray(names) == "log_requested", 1.0, 0.0), HOLD_START])
    sd = np.concatenate([np.full(k, 0.5), HOLD_SPREAD if hold else np.zeros(2)])
    floor = np.concatenate([np.full(k, 0.05), HOLD_FLOOR if hold else np.zeros(2)])
    top: tuple[float, np.ndarray] = (float("inf"), mu)
    for it in range(iterations):
        cands = np.vstack([mu, mu + sd * rng.standard_normal((population - 1, mu.size))])
        cands[:, k:] = np.clip(cands[:, k:], HOLD_LOW, HOLD_HIGH)
        score = np.array([np.mean(np.log(window_bsld(lambda x=x: policy(x), tr, m))) for x in cands])
        replays += len(cands) * train
        order = np.argsort(score, kind="stable")
        if score[order[0]] < top[0]:
            top = (float(score[order[0]]), cands[order[0]].copy())
        elite = cands[order[:max(2, population // 4)]]
        mu, sd = elite.mean(axis=0), np.maximum(elite.std(axis=0), floor)
        log(f"iteration {it + 1}/{iterations}: best mean log bsld {top[0]:.3f} "
            f"theta {np.round(top[1][:k], 3).tolist()}" + (f" hold {np.round(top[1][k:], 3).tolist()}" if hold else ""))
    x = top[1]
    lo, hi = np.full(k, np.inf), np.full(k, -np.inf)
    for w in tr:  # the training range: every waiting job's features at the fitted policy's decision points
        fitted = policy(x)
        simulate_batch(w, m, fitted)
        lo, hi = np.minimum(lo, fitted.seen[0]), np.maximum(hi, fitted.seen[1])
    sel = windows_of(scenario, "select", select)
    mine = window_bsld(lambda: policy(x), sel, m)
    theirs = window_bsld(lambda: PriorityBatch(fb_rule, fb_backfill), sel, m)
    replays += train + 2 * select
    ratio = paired_ratio(mine, theirs)
    use = "learned" if ratio.n >= 2 and ratio.high < 1 else "fallback"
    log(f"select windows: {select}; fitted / {best}: {ratio.estimate:.3f} [{ratio.low:.3f}, {ratio.high:.3f}] -> "
        f"use {use}")
    cpu = time.process_time() - cpu0
    log(f"budget: {replays:,} window replays, {cpu / 60:.1f} CPU minutes")
    return {"features": list(names), "theta": [float(v) for v in x[:k]], "backfill_order": backfill_order,
            **({"hold": {"long": float(x[k]), "keep": float(x[k + 1])}} if hold else {}),
            "fallback": {"rule": fb_rule, "backfill": fb_backfill}, "use": use,
            "range": {"lo": [float(v) for v in lo], "hi": [float(v) for v in hi]},
            "train": {"windows": train, "mean_log_bsld": rules, "fitted_mean_log_bsld": top[0]},
            "select": {"windows": select, "ratio": ratio.estimate, "low": ratio.low, "high": ratio.high},
            "budget": {"iterations": iterations, "population": population, "seed": seed, "replays": replays,
                       "cpu_minutes": round(cpu / 60, 2)}}
