"""Shared parameter checks and cost draws for the workload generators (one place for each)."""

from __future__ import annotations

import numpy as np

from simsched import limits
from simsched.errors import SimschedError


def positive(value: float, what: str) -> None:
    if not (value > 0 and np.isfinite(value)):
        raise SimschedError(f"{what} must be a positive number, got {value}")


def task_names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def check_cost_params(mean_cost: float, ccr: float, heterogeneity: float) -> None:
    positive(mean_cost, "mean_cost")
    if not (ccr >= 0 and np.isfinite(ccr)):
        raise SimschedError(f"ccr must be >= 0, got {ccr}")
    if not (0 <= heterogeneity <= 2):
        raise SimschedError(f"heterogeneity must be between 0 and 2, got {heterogeneity}")


def topcuoglu_costs(
    rng: np.random.Generator, v: int, e: int, mean_cost: float, ccr: float, heterogeneity: float,
    processors: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Task work, edge data and optional (v, processors) cost matrix as in Topcuoglu et al. 2002.

    Work ``w_i ~ U[0.01 w, 2 w]``; edge data ``~ U[0, 2 ccr w]``; with ``processors``, task i's cost
    on processor j is ``~ U[w_i (1 - beta/2), w_i (1 + beta/2)]``.  O(v m + e).
    """
    mean_i = rng.uniform(0.01 * mean_cost, 2 * mean_cost, v)
    data = rng.uniform(0, 2 * ccr * mean_cost, e)
    cost = None
    if processors is not None:
        if processors < 1:
            raise SimschedError(f"processors must be >= 1, got {processors}")
        low = mean_i * (1 - heterogeneity / 2)
        cost = rng.random((v, int(processors)))  # in place below: one (v, m) array, no temporaries
        cost *= (mean_i * heterogeneity)[:, None]
        cost += low[:, None]
        cost.setflags(write=False)  # nothing else holds it: TaskGraph may share it instead of copying
    return mean_i, data, cost


def dedupe_pairs(src: np.ndarray, dst: np.ndarray, v: int) -> np.ndarray:
    """Unique ``(src, dst)`` pairs as an (e, 2) array, sorted by source.  O(e log e)."""
    if src.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    key = np.unique(src.astype(np.int64) * v + dst.astype(np.int64))
    return np.stack([key // v, key % v], axis=1)


def integer(value: int, what: str, minimum: int = 1) -> int:
    n = int(value)
    if n < minimum or n != value:
        raise SimschedError(f"{what} must be an integer >= {minimum}, got {value}")
    return n


def probability(value: float, what: str) -> None:
    if not (0 <= value <= 1):
        raise SimschedError(f"{what} must be between 0 and 1, got {value}")


def check_size(tasks: int, processors: int | None = None, *, edges: float = 0.0, field: str = "tasks") -> None:
    """Refuse, before anything is allocated, a graph of ``tasks`` tasks (about ``edges`` edges, and a
    (tasks, processors) cost matrix when ``processors`` is given) above :mod:`simsched.limits`.
    The error's field is the generator parameter that sets the size."""
    limits.check_tasks(int(tasks), field=field)
    limits.check_matrix(int(tasks), int(processors or 1), field=field, edges=edges)
