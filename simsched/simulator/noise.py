"""Duration noise: how much actual execution times deviate from the cost model.

A :class:`NoiseModel` draws one multiplicative factor per task, up front, from a seeded numpy
``Generator``: the actual duration of task ``t`` on processor ``p`` is ``W[t, p] * factor[t]``.
Because the factors are drawn before the run and do not depend on the processor, two schedulers
run with the same seed face exactly the same "luck", whatever they decide.

Models (``sigma`` is the spread):

* ``none``: every factor is 1 (deterministic; draws nothing from ``rng``).
* ``lognormal``: ``exp(N(mu, sigma^2))`` with ``mu = -sigma^2 / 2``, so the mean factor is 1 and
  factors are always positive (the usual model of run-time variability, e.g. Canon & Jeannot,
  "Evaluation and optimization of the robustness of DAG schedules in heterogeneous
  environments", IEEE TPDS 2010).
* ``normal``: ``1 + sigma * N(0, 1)``, clipped below at :data:`MIN_FACTOR` (a task never takes
  zero or negative time; for ``sigma`` up to ~0.3 the clip practically never applies).
* ``uniform``: uniform in ``[1 - sigma, 1 + sigma]``; requires ``sigma <= 1``.

``lognormal`` and ``normal`` accept ``sigma`` up to :data:`simsched.limits.MAX_SIGMA`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from simsched.errors import SimschedError
from simsched.limits import MAX_SIGMA

MIN_FACTOR = 1e-3
"""Lower clip of the ``normal`` model's factors: a task takes at least 0.1% of its nominal time."""

MODELS = ("none", "lognormal", "normal", "uniform")

NoiseKind = Literal["none", "lognormal", "normal", "uniform"]


@dataclass(frozen=True)
class NoiseModel:
    """Multiplicative per-task duration noise; see the module docstring for the models."""

    model: NoiseKind = "none"
    sigma: float = 0.1

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise SimschedError(f"unknown noise model {self.model!r}; choose one of {', '.join(MODELS)}")
        try:
            sigma = float(self.sigma)
        except (TypeError, ValueError):
            raise SimschedError(f"noise sigma must be a number, got {self.sigma!r}") from None
        if not (np.isfinite(sigma) and sigma >= 0):
            raise SimschedError(f"noise sigma must be a finite number >= 0, got {self.sigma}")
        if self.model in ("lognormal", "normal") and sigma > MAX_SIGMA:
            raise SimschedError(f"{self.model} noise needs sigma <= {MAX_SIGMA:g} (beyond it every duration is "
                                f"noise), got {sigma:g}")
        if self.model == "uniform" and sigma > 1:
            raise SimschedError(f"uniform noise needs sigma <= 1 (factors in [1-sigma, 1+sigma]), got {sigma}")
        object.__setattr__(self, "sigma", sigma)

    @property
    def deterministic(self) -> bool:
        """True when every factor is exactly 1."""
        return self.model == "none" or self.sigma == 0

    def factors(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """(n,) positive multiplicative factors, one per task, drawn from ``rng``.  O(n)."""
        n = int(n)
        if n < 0:
            raise SimschedError(f"cannot draw noise for {n} tasks")
        s = self.sigma
        if self.model == "none":
            return np.ones(n)
        if self.model == "lognormal":
            return np.exp(rng.normal(-0.5 * s * s, s, n))
        if self.model == "normal":
            return np.maximum(1.0 + s * rng.standard_normal(n), MIN_FACTOR)
        return rng.uniform(1.0 - s, 1.0 + s, n)


def check_factors(factors: np.ndarray, n: int) -> np.ndarray:
    """``factors`` as a float array of shape (n,), finite and >= 0; :class:`SimschedError` otherwise."""
    f = np.asarray(factors, dtype=np.float64)
    if f.shape != (n,):
        raise SimschedError(f"noise factors must have one value per task ({n}), got shape {f.shape}")
    if not (np.isfinite(f).all() and (f >= 0).all()):
        raise SimschedError("noise factors must be finite and >= 0")
    return f
