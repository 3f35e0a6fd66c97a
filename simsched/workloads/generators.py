"""Seeded workload generators.

Every generator is a plain function returning a :class:`~simsched.workloads.taskgraph.TaskGraph`,
takes its randomness from a ``numpy.random.Generator`` (``rng``), and is registered in
:data:`GENERATORS` under the name a scenario uses (``workload: {generator: random, ...}``).  A
generator that can produce an explicit per-processor cost matrix accepts ``processors`` (the number
of processors of the platform, passed in by the scenario loader).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simsched.errors import SimschedError
from simsched.workloads.taskgraph import TaskGraph


def _positive(value: float, what: str) -> None:
    if not (value > 0 and np.isfinite(value)):
        raise SimschedError(f"{what} must be a positive number, got {value}")


def random_dag(
    tasks: int = 100,
    *,
    shape: float = 1.0,
    out_degree: float = 3.0,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Random layered DAG with the parameters of Topcuoglu, Hariri & Wu (IEEE TPDS 2002, sec. 5.1).

    * ``tasks`` (v): number of tasks.
    * ``shape`` (alpha): the graph has about ``sqrt(v) / alpha`` levels of about ``sqrt(v) * alpha``
      tasks each (alpha > 1: wide and parallel; alpha < 1: long and thin).
    * ``out_degree``: mean number of successors of a non-exit task, drawn in the next two levels.
    * ``mean_cost`` (w_DAG): a task's mean cost is uniform in [0, 2 w_DAG] (kept above 1% of it).
    * ``heterogeneity`` (beta): with ``processors`` given, task i's cost on processor j is uniform in
      ``[w_i (1 - beta/2), w_i (1 + beta/2)]`` (an explicit cost matrix); otherwise ``work = w_i``
      and processor speeds decide times.
    * ``ccr``: communication-to-computation ratio: edge data is uniform in [0, 2 ccr w_DAG], so at
      unit bandwidth the mean transfer is ``ccr`` times the mean cost.

    O(v + e) with numpy; 100,000 tasks take well under a second.
    """
    rng = rng if rng is not None else np.random.default_rng()
    v = int(tasks)
    if v < 1:
        raise SimschedError(f"tasks must be >= 1, got {tasks}")
    for value, what in ((shape, "shape"), (mean_cost, "mean_cost")):
        _positive(value, what)
    if out_degree < 0 or ccr < 0 or not (0 <= heterogeneity <= 2):
        raise SimschedError("out_degree and ccr must be >= 0, heterogeneity between 0 and 2")
    height = int(min(v, max(1, round(np.sqrt(v) / shape))))
    sizes = rng.multinomial(v - height, np.full(height, 1.0 / height)) + 1
    level = np.repeat(np.arange(height), sizes)
    first = np.concatenate([[0], np.cumsum(sizes)])  # first task index of each level

    src_list, dst_list = [], []
    if height > 1:
        sources = np.flatnonzero(level < height - 1)
        k = rng.poisson(max(out_degree - 1.0, 0.0), sources.size) + (1 if out_degree >= 1 else 0)
        k = np.minimum(k, v)
        src = np.repeat(sources, k)
        # targets drawn from the next one or two levels
        lo = first[level[src] + 1]
        hi = first[np.minimum(level[src] + 3, height)]
        dst = lo + (rng.random(src.size) * (hi - lo)).astype(np.int64)
        # every non-entry-level task gets at least one predecessor from the level above
        orphans = np.setdiff1d(np.flatnonzero(level > 0), dst)
        parent_lo = first[level[orphans] - 1]
        parent = parent_lo + (rng.random(orphans.size) * sizes[level[orphans] - 1]).astype(np.int64)
        src_list += [src, parent]
        dst_list += [dst, orphans]
    if src_list:
        key = np.unique(np.concatenate(src_list) * v + np.concatenate(dst_list))
        pairs = np.stack([key // v, key % v], axis=1)
    else:
        pairs = np.zeros((0, 2), dtype=np.int64)
    mean_i = rng.uniform(0.01 * mean_cost, 2 * mean_cost, v)
    data = rng.uniform(0, 2 * ccr * mean_cost, len(pairs))
    cost = None
    if processors is not None:
        if processors < 1:
            raise SimschedError(f"processors must be >= 1, got {processors}")
        low = mean_i * (1 - heterogeneity / 2)
        cost = low[:, None] + rng.random((v, int(processors))) * (mean_i * heterogeneity)[:, None]
    names = [f"t{i}" for i in range(v)]
    return TaskGraph(names, pairs, data, work=mean_i, cost=cost)


Generator = Callable[..., TaskGraph]

GENERATORS: dict[str, Generator] = {
    "random": random_dag,
}
"""Generators by the name a scenario uses.  Each takes ``rng`` and its own keyword parameters;
one that accepts ``processors`` is given the platform's processor count."""
