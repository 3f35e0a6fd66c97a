"""``rl-gate``'s envelope: is a world like the worlds the gate was trained on, judged from its first job.

The gate's predictor (:mod:`simsched.learned.rl.worlds.predictor`) knows only its own fit's
uncertainty: off its training worlds it is confidently wrong (issue 41: it predicts that waiting saves
~10% in worlds where waiting loses 1-14%).  The envelope is the check it lacked, made on what is known
**when the first job arrives** and again at every later arrival:

* :func:`prior_world` — the world's description known then (:data:`PRIOR_FEATURES`): the platform
  (processor count, distinct processor classes, the share of fast processors, the speed ratio), the
  failures the platform *declares* (mean failures per processor per mean task time, the scale of the
  gate's observed failure feature, and the share of time a processor is down) and the shape of the
  jobs arrived so far (tasks per job, job width);
* :class:`Envelope` — per feature, the span met on training worlds (widened by :data:`WIDEN` of the
  span each way), and the Mahalanobis distance of the standardised description from the training
  descriptions (covariance shrunk towards the identity by :data:`SHRINK`), with a threshold at the
  :data:`QUANTILE` quantile of the distances of **held-out** training worlds (the ``select`` space:
  worlds drawn as the training ones, never fitted); besides the day's mean description, every arrived
  job's own shape must lie in the training jobs' span (a few huge jobs among many small ones hide in
  a mean).  :meth:`Envelope.outside` names the first feature
  out of its span, else the distance when it passes the threshold, else ``None``;
* :func:`calibrate` — the envelope of the gate's training plan: every job of every ``train`` world-day
  is one description (its platform, declared failures and that job's shape), and the ``select``
  world-days' set the threshold.

A gate outside its envelope hands every decision to ``srjf-eft`` from that arrival on (from the first
decision when the first job is already outside): the predictor is never asked where it has no data.
Cost: :func:`prior_world` O(n + m + J) per arrival (:func:`prior_of` O(m + J) from the parts ``rl-gate``
keeps); :meth:`Envelope.outside` O(F^2) for F features.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from simsched.simulator.problem import Problem

PRIOR_FEATURES = ("log2 processors", "processor classes", "fast processor share", "log2 speed ratio",
                  "declared failure rate", "declared down share", "log2 tasks per job", "log2 job width")
"""What :func:`prior_world` describes, in this order."""

WIDEN = 0.05
"""A feature outside ``[lo - WIDEN x span, hi + WIDEN x span]`` of its training span is outside the envelope
(the platform's numbers are known exactly: only a sliver of slack)."""

SHRINK = 0.1
"""The standardised training covariance is ``(1 - SHRINK) C + SHRINK I`` before it is inverted."""

QUANTILE = 0.99
"""The Mahalanobis threshold: this quantile of the held-out worlds' distances."""


def declared_failures(disruptions, m: int) -> tuple[float, float]:  # disruptions: Disruptions | None
    """``(rate, down share)`` a scenario's failures declare for ``m`` processors: mean failures per processor
    per unit of time, and the mean over processors of the long-run share of time down, ``rate x MTTR /
    (1 + rate x MTTR)`` (both 0 without failures).  O(m)."""
    if disruptions is None or m == 0:
        return 0.0, 0.0
    rate = np.broadcast_to(np.asarray(disruptions.failure_rate, dtype=np.float64), (m,))
    down = rate * np.broadcast_to(np.asarray(disruptions.repair_time, dtype=np.float64), (m,))
    return float(rate.mean()), float((down / (1.0 + down)).mean())


def prior_world(problem: Problem, jobs: np.ndarray, rank: np.ndarray, failure_rate: float = 0.0,
                down_share: float = 0.0) -> np.ndarray:
    """The world's description known from its arrived jobs (see the module docstring), a
    (len(:data:`PRIOR_FEATURES`),) vector: ``problem`` holds the arrived tasks, ``jobs`` their job ids
    (0..J-1), ``rank`` their upward ranks, ``failure_rate`` and ``down_share`` the declared failures per
    processor per unit of time and share of time down (:func:`declared_failures`).  Processor classes
    count distinct (type, speed) pairs; fast share and speed ratio are the platform's nominal speeds
    (fast: within 80% of the fastest); the failure rate is ``log1p(100 x rate x mean task time)``, the
    scale of the gate's observed failure feature; job shape is the mean over arrived jobs of log2 tasks
    and log2 width (mean work over critical path, at least 1).  O(n + m + J)."""
    cost = np.nan_to_num(problem.mean_cost, posinf=0.0)
    mean_task = float(cost.mean()) if cost.size else 0.0
    shape = job_shape_rows(problem, jobs, rank) if cost.size else None
    return prior_of(problem.platform, mean_task, shape, failure_rate, down_share)


def prior_of(platform, mean_task: float, shape: np.ndarray | None, failure_rate: float = 0.0,
             down_share: float = 0.0) -> np.ndarray:  # platform: simsched.simulator.platform.Platform
    """:func:`prior_world` from its parts: the ``platform``, the arrived tasks' mean task time, their jobs' shapes
    (:func:`job_shape_rows`; None: no task arrived) and the declared failures.  ONE function for the prior from
    scratch and the one ``rl-gate`` keeps arrival by arrival.  O(m + J)."""
    speed = np.asarray(platform.speed, dtype=np.float64)
    m = speed.size
    out = np.zeros(len(PRIOR_FEATURES))
    out[0] = math.log2(max(m, 1))
    types = platform.type_index
    out[1] = float(len({(int(t), round(float(s), 6)) for t, s in zip(types, speed)}))
    top = float(speed.max()) if m else 1.0
    out[2] = float((speed >= 0.8 * top).mean()) if m else 0.0
    out[3] = math.log2(top / float(speed.min())) if m else 0.0
    out[4] = math.log1p(100.0 * max(float(failure_rate), 0.0) * mean_task)
    out[5] = float(down_share)
    if shape is not None:
        out[6], out[7] = shape.mean(axis=0)
    return np.nan_to_num(out, nan=0.0, posinf=50.0, neginf=0.0)


JOB_SHAPE = (6, 7)
"""The entries of :data:`PRIOR_FEATURES` that describe one job (:func:`job_shape_rows`)."""


def job_shape_rows(problem: Problem, jobs: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """(J, 2): each arrived job's log2 tasks and log2 width (mean work over critical path, at least 1), in
    job id order (jobs with no arrived task left out).  O(n + J)."""
    from simsched.learned.rl.description import job_shapes

    cost = np.nan_to_num(problem.mean_cost, posinf=0.0)
    return shape_rows(*job_shapes(np.asarray(jobs, dtype=np.int64), cost, rank))


def shape_rows(size: np.ndarray, work: np.ndarray, path: np.ndarray) -> np.ndarray:
    """:func:`job_shape_rows` from each job id's task count, mean work and critical path (ids with no task left
    out).  O(J)."""
    have = size > 0
    width = np.maximum(work[have] / np.maximum(path[have], 1e-12), 1.0)
    return np.stack([np.log2(size[have]), np.log2(width)], axis=1)


class Envelope:
    """The training worlds' envelope (see the module docstring): ``lo``/``hi`` per feature, the
    standardisation ``mean``/``scale``, the ``precision`` (inverse shrunk covariance of the standardised
    descriptions) and the Mahalanobis ``threshold``."""

    def __init__(self, lo: Sequence[float], hi: Sequence[float], mean: Sequence[float], scale: Sequence[float],
                 precision: Sequence[Sequence[float]], threshold: float) -> None:
        self.lo, self.hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        self.mean, self.scale = np.asarray(mean, dtype=np.float64), np.asarray(scale, dtype=np.float64)
        self.precision = np.asarray(precision, dtype=np.float64)
        self.threshold = float(threshold)

    @classmethod
    def fit(cls, train: np.ndarray, held_out: np.ndarray, widen: float = WIDEN, shrink: float = SHRINK,
            quantile: float = QUANTILE) -> Envelope:
        """The envelope of ``train`` descriptions (rows), its threshold the ``quantile`` of the distances
        of the ``held_out`` ones.  O(rows x F^2 + F^3)."""
        train = np.asarray(train, dtype=np.float64)
        lo, hi = train.min(axis=0), train.max(axis=0)
        span = hi - lo
        mean, scale = train.mean(axis=0), np.maximum(train.std(axis=0), 1e-3)
        z = (train - mean) / scale
        cov = np.cov(z, rowvar=False) if len(z) > 1 else np.eye(z.shape[1])
        precision = np.linalg.inv((1.0 - shrink) * np.atleast_2d(cov) + shrink * np.eye(z.shape[1]))
        env = cls(lo - widen * span, hi + widen * span, mean, scale, 0.5 * (precision + precision.T), math.inf)
        d = env.distance(np.asarray(held_out, dtype=np.float64))
        env.threshold = float(np.quantile(d, quantile)) if np.size(d) else math.inf
        return env

    def distance(self, x: np.ndarray) -> np.ndarray | float:
        """Mahalanobis distance of one description (or rows of them) from the training ones.  O(F^2)."""
        z = (np.asarray(x, dtype=np.float64) - self.mean) / self.scale
        d2 = np.einsum("...i,ij,...j->...", z, self.precision, z)
        d = np.sqrt(np.maximum(d2, 0.0))
        return float(d) if np.ndim(d) == 0 else d

    def outside(self, x: np.ndarray, jobs: np.ndarray | None = None) -> str | None:
        """Why description ``x`` lies outside the envelope — the first feature out of its span, with its
        value and the span, else a job of ``jobs`` (:func:`job_shape_rows`, each job's shape checked
        against the span alone: a heavy tail hides in a mean), else the distance over the threshold — or
        ``None`` inside.  O(F^2 + J)."""
        x = np.asarray(x, dtype=np.float64)
        out = (x < self.lo - 1e-9) | (x > self.hi + 1e-9)
        if out.any():
            i = int(np.argmax(out))
            return (f"{PRIOR_FEATURES[i]} {x[i]:.3g} lies outside the training worlds' "
                    f"{self.lo[i]:.3g} to {self.hi[i]:.3g}")
        if jobs is not None and len(jobs):
            cols = list(JOB_SHAPE)
            bad = (jobs < self.lo[cols] - 1e-9) | (jobs > self.hi[cols] + 1e-9)
            if bad.any():
                j, c = (int(v[0]) for v in np.nonzero(bad))
                i = cols[c]
                return (f"job {j + 1}'s {PRIOR_FEATURES[i]} {jobs[j, c]:.3g} lies outside the training worlds' "
                        f"{self.lo[i]:.3g} to {self.hi[i]:.3g}")
        d = self.distance(x)
        if d > self.threshold:
            z = np.abs((x - self.mean) / self.scale)
            i = int(np.argmax(z))
            return (f"the world lies {d:.3g} from the training worlds (Mahalanobis; held-out training worlds "
                    f"stay within {self.threshold:.3g}), most of all in {PRIOR_FEATURES[i]} {x[i]:.3g}")
        return None

    def to_dict(self) -> dict[str, Any]:
        """Plain lists and numbers (the checkpoint's ``envelope`` field)."""
        return {"features": list(PRIOR_FEATURES), "lo": self.lo.tolist(), "hi": self.hi.tolist(),
                "mean": self.mean.tolist(), "scale": self.scale.tolist(), "precision": self.precision.tolist(),
                "threshold": self.threshold}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Envelope:
        """From :meth:`to_dict`'s mapping (checked by :func:`check_envelope`)."""
        return cls(doc["lo"], doc["hi"], doc["mean"], doc["scale"], doc["precision"], doc["threshold"])


def _numbers(v: Any, n: int) -> bool:
    return (isinstance(v, list) and len(v) == n
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v))


def check_envelope(doc: Any) -> str | None:
    """What is wrong with a checkpoint's ``envelope`` field (the field's name and what was expected), or
    ``None``.  O(F^2)."""
    k = len(PRIOR_FEATURES)
    if not isinstance(doc, dict):
        return "envelope: expected a mapping (features, lo, hi, mean, scale, precision, threshold)"
    if doc.get("features") != list(PRIOR_FEATURES):
        return "envelope.features: made for other features than this version's"
    for key in ("lo", "hi", "mean", "scale"):
        if not _numbers(doc.get(key), k):
            return f"envelope.{key}: expected {k} finite numbers"
    if not all(v > 0 for v in doc["scale"]):
        return "envelope.scale: expected positive numbers"
    p = doc.get("precision")
    if not (isinstance(p, list) and len(p) == k and all(_numbers(r, k) for r in p)):
        return f"envelope.precision: expected {k} rows of {k} finite numbers"
    t = doc.get("threshold")
    if not (isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0):
        return "envelope.threshold: expected a positive number"
    return None


def day_priors(sc, stream) -> np.ndarray:  # sc: Scenario, stream: JobStream
    """One :func:`prior_world` row per job of a world-day: the platform and declared failures of the
    scenario ``sc`` with that job's shape alone.  O(n m + e) for the day."""
    from simsched.run.streams import job_subgraph
    from simsched.schedulers.heft import upward_rank

    problem = Problem(stream.graph, sc.platform, sc.affinity)
    rate, down = declared_failures(sc.disruptions, problem.n_processors)
    rows = []
    for j in range(stream.n_jobs):
        tasks = np.flatnonzero(stream.jobs == j)
        if tasks.size == 0:
            continue
        sub = Problem(job_subgraph(problem, tasks), sc.platform)
        rank = np.nan_to_num(upward_rank(sub), nan=0.0, posinf=0.0)
        rows.append(prior_world(sub, np.zeros(tasks.size, dtype=np.int64), rank, rate, down))
    return np.array(rows)


def calibrate(train_plan: Sequence[tuple[str, str, int, int]],
              select_plan: Sequence[tuple[str, str, int, int]]) -> tuple[Envelope, dict[str, Any]]:
    """The envelope of the world-days of ``train_plan`` (``(source, space, count, first)`` rows, as
    :func:`simsched.learned.rl.worlds.predictor.collect` takes), its threshold set on ``select_plan``'s,
    and a summary ``{"train_rows", "select_rows", "select_outside"}`` (the share of held-out job rows
    outside: about 1 - :data:`QUANTILE` by construction).  No engine run: streams only.  O(streams)."""
    from simsched.learned.rl.worlds.sampler import source_days

    def rows(plan):
        out = [day_priors(sc, stream) for src, space, count, first in plan if count > 0
               for sc, stream, _ in source_days(src, space, first, count)]
        return np.concatenate(out)

    train, held = rows(train_plan), rows(select_plan)
    env = Envelope.fit(train, held)
    outside = float(np.mean([env.outside(x, x[None, list(JOB_SHAPE)]) is not None for x in held]))
    return env, {"train_rows": int(len(train)), "select_rows": int(len(held)), "select_outside": outside}
