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
from simsched.workloads.genutil import (
    check_cost_params,
    check_size,
    dedupe_pairs,
    integer,
    positive,
    probability,
    task_names,
    topcuoglu_costs,
)
from simsched.workloads.taskgraph import TaskGraph


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
    check_size(v, processors, edges=v * min(float(out_degree), 2.0 * v))
    for value, what in ((shape, "shape"), (mean_cost, "mean_cost")):
        positive(value, what)
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
    work, data, cost = topcuoglu_costs(rng, v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    return TaskGraph(task_names("t", v), pairs, data, work=work, cost=cost)


def layered_dag(
    tasks: int = 100,
    *,
    layers: int = 10,
    edge_prob: float | None = None,
    out_degree: float = 3.0,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Layer-by-layer random DAG (the "layer-by-layer" method of Tobita & Kasahara 2002, STG).

    ``tasks`` are spread over ``layers`` levels (each at least one task, sizes multinomial); every
    pair of tasks in consecutive layers is joined with probability ``edge_prob`` (each task of a
    layer > 0 keeps at least one parent, so the depth is exactly ``layers``).  Without ``edge_prob``,
    p is ``out_degree`` divided by the mean layer size (so the mean out-degree is ``out_degree``).
    Costs and data as in :func:`random_dag` (``mean_cost``, ``ccr``, ``heterogeneity``, ``processors``).

    O(v + e): per source task the number of children is Binomial(next layer size, p), targets drawn
    with replacement and deduplicated (so the realised edge probability is very slightly below p).
    """
    rng = rng if rng is not None else np.random.default_rng()
    v = integer(tasks, "tasks")
    check_size(v, processors, edges=v * min(float(out_degree), 2.0 * v))
    h = min(integer(layers, "layers"), v)
    if edge_prob is None:
        edge_prob = min(1.0, max(0.0, float(out_degree)) * h / v)
    probability(edge_prob, "edge_prob")
    check_cost_params(mean_cost, ccr, heterogeneity)
    sizes = rng.multinomial(v - h, np.full(h, 1.0 / h)) + 1
    level = np.repeat(np.arange(h), sizes)
    first = np.concatenate([[0], np.cumsum(sizes)])
    sources = np.flatnonzero(level < h - 1)
    nxt = sizes[level[sources] + 1]
    k = rng.binomial(nxt, edge_prob)
    src = np.repeat(sources, k)
    dst = first[level[src] + 1] + (rng.random(src.size) * sizes[level[src] + 1]).astype(np.int64)
    orphans = np.setdiff1d(np.flatnonzero(level > 0), dst)
    parent = first[level[orphans] - 1] + (rng.random(orphans.size) * sizes[level[orphans] - 1]).astype(np.int64)
    pairs = dedupe_pairs(np.concatenate([src, parent]), np.concatenate([dst, orphans]), v)
    work, data, cost = topcuoglu_costs(rng, v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    return TaskGraph(task_names("t", v), pairs, data, work=work, cost=cost)


def fork_join(
    branches: int = 8,
    *,
    stages: int = 3,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Fork-join graph: ``stages`` repetitions of fork -> ``branches`` parallel tasks -> join, the join
    of one stage being the fork of the next (the shape of OpenMP parallel loops and MapReduce rounds;
    used e.g. by Wang & Sinnen's fork-join scheduling work).

    ``stages * (branches + 1) + 1`` tasks; kinds ``fork`` (the fork/join tasks) and ``branch``.
    Costs as in :func:`random_dag`.  O(stages * branches), no Python loop.
    """
    rng = rng if rng is not None else np.random.default_rng()
    b, s = integer(branches, "branches"), integer(stages, "stages")
    check_cost_params(mean_cost, ccr, heterogeneity)
    v = s * (b + 1) + 1
    check_size(v, processors, edges=2 * v, field="branches")
    joins = np.arange(s + 1) * (b + 1)                       # fork/join task of each boundary
    br = (joins[:-1, None] + 1 + np.arange(b)[None, :])      # (s, b) branch tasks
    src = np.concatenate([np.repeat(joins[:-1], b), br.ravel()])
    dst = np.concatenate([br.ravel(), np.repeat(joins[1:], b)])
    pairs = dedupe_pairs(src, dst, v)
    kind = np.full(v, "branch", dtype=object)
    kind[joins] = "fork"
    work, data, cost = topcuoglu_costs(rng, v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    return TaskGraph(task_names("t", v), pairs, data, work=work, kind=list(kind), cost=cost)


def series_parallel(
    tasks: int = 50,
    *,
    parallel_prob: float = 0.5,
    max_branches: int = 4,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Random two-terminal series-parallel DAG (nested fork-join; Valdes, Tarjan & Lawler 1982).

    Built top-down from a budget of ``tasks``: a component of size 1 is a task; a larger one is, with
    probability ``parallel_prob`` (and size >= 4), a fork task, 2..``max_branches`` parallel
    sub-components and a join task; otherwise the series composition of two sub-components (the sink
    of the first feeds the source of the second).  Exactly ``tasks`` tasks, one entry, one exit.
    Kinds ``fork``/``join``/``compute``.  Costs as in :func:`random_dag`.

    O(v) time with one Python step per component (the structure is recursive, so this generator is
    not vectorised; 100,000 tasks take about a second).
    """
    rng = rng if rng is not None else np.random.default_rng()
    v = integer(tasks, "tasks")
    check_size(v, processors, edges=2 * v)
    probability(parallel_prob, "parallel_prob")
    mb = integer(max_branches, "max_branches", 2)
    check_cost_params(mean_cost, ccr, heterogeneity)
    kind = ["compute"] * v
    src: list[int] = []
    dst: list[int] = []
    nxt = 0
    # each work item: (size, slot); the result (source, sink) of the component goes to results[slot]
    results: list[tuple[int, int]] = [(-1, -1)]
    pending: list[tuple[str, int, int, tuple]] = [("build", v, 0, ())]
    coins = iter(rng.random(4 * v + 8))
    while pending:
        op, size, slot, extra = pending.pop()
        if op == "build":
            if size == 1:
                results[slot] = (nxt, nxt)
                nxt += 1
            elif size >= 4 and next(coins) < parallel_prob:
                k = min(mb, size - 2)
                k = 2 + int(next(coins) * (k - 1))
                inner = size - 2
                cuts = np.sort(rng.choice(np.arange(1, inner), size=k - 1, replace=False))
                parts = np.diff(np.concatenate([[0], cuts, [inner]]))
                fork, join = nxt, nxt + 1
                nxt += 2
                kind[fork], kind[join] = "fork", "join"
                slots = list(range(len(results), len(results) + k))
                results.extend([(-1, -1)] * k)
                pending.append(("par", size, slot, (fork, join, slots)))
                pending.extend(("build", int(p), sl, ()) for p, sl in zip(parts, slots))
            else:
                first = 1 + int(next(coins) * (size - 1))
                a, b = len(results), len(results) + 1
                results.extend([(-1, -1), (-1, -1)])
                pending.append(("ser", size, slot, (a, b)))
                pending.append(("build", first, a, ()))
                pending.append(("build", size - first, b, ()))
        elif op == "par":
            fork, join, slots = extra
            for sl in slots:
                s0, s1 = results[sl]
                src += [fork, s1]
                dst += [s0, join]
            results[slot] = (fork, join)
        else:
            a, b = extra
            src.append(results[a][1])
            dst.append(results[b][0])
            results[slot] = (results[a][0], results[b][1])
    pairs = dedupe_pairs(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), v)
    work, data, cost = topcuoglu_costs(rng, v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    return TaskGraph(task_names("t", v), pairs, data, work=work, kind=kind, cost=cost)


def erdos_renyi_dag(
    tasks: int = 100,
    *,
    edge_prob: float | None = None,
    out_degree: float = 2.0,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Erdős–Rényi G(n, p) DAG: every pair ``i < j`` (in a hidden topological order) is an edge with
    probability p (Erdős & Rényi 1959; as a DAG model in Cordeiro et al. 2010, "Random graph
    generation for scheduling simulations").  ``edge_prob`` sets p directly; otherwise
    ``p = out_degree / ((n - 1) / 2)`` so that the mean out-degree is ``out_degree``.

    O(v + e): the edge count is Binomial(n(n-1)/2, p); that many pair indices are drawn and decoded
    from the triangular numbering, duplicates removed.  Costs as in :func:`random_dag`.
    """
    rng = rng if rng is not None else np.random.default_rng()
    v = integer(tasks, "tasks")
    check_cost_params(mean_cost, ccr, heterogeneity)
    pairs_total = v * (v - 1) // 2
    if edge_prob is None:
        if out_degree < 0:
            raise SimschedError(f"out_degree must be >= 0, got {out_degree}")
        p = min(1.0, 2.0 * out_degree / (v - 1)) if v > 1 else 0.0
    else:
        probability(edge_prob, "edge_prob")
        p = float(edge_prob)
    check_size(v, processors, edges=pairs_total * p)
    m = int(rng.binomial(pairs_total, p)) if pairs_total else 0
    if p >= 0.5 and pairs_total <= 5_000_000:
        k = np.flatnonzero(rng.random(pairs_total) < p)
    else:
        k = np.unique(rng.integers(0, max(pairs_total, 1), m)) if m else np.zeros(0, dtype=np.int64)
    j = ((1 + np.sqrt(1 + 8 * k.astype(np.float64))) // 2).astype(np.int64)
    j -= (j * (j - 1) // 2 > k)                  # float rounding guard
    j += ((j + 1) * j // 2 <= k)
    i = k - j * (j - 1) // 2
    pairs = np.stack([i, j], axis=1).astype(np.int64)
    work, data, cost = topcuoglu_costs(rng, v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    return TaskGraph(task_names("t", v), pairs, data, work=work, cost=cost)


def task_list(
    tasks: int = 100,
    *,
    arrival_rate: float = 1.0,
    mean_work: float = 10.0,
    heterogeneity: float = 0.5,
    priorities: int = 3,
    mean_memory: float = 0.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Independent tasks arriving over time: the shape of the CloudSim task data used by DeepSched
    (task length, arrival time, per-VM execution time, priority, memory).

    * arrivals: a Poisson process of rate ``arrival_rate`` (exponential gaps, first task at its gap);
    * work: exponential with mean ``mean_work`` (CloudSim "cloudlet length", heavy-ish tail);
    * with ``processors``: an explicit (tasks, processors) time matrix, ``work_i / s_j * u_ij`` with
      processor speed factors ``s_j ~ U[1 - beta/2, 1 + beta/2]`` (VM MIPS) and per-pair noise
      ``u_ij ~ U[1 - beta/4, 1 + beta/4]``, beta = ``heterogeneity``;
    * priority: integer in ``1..priorities`` (higher = more urgent), uniform;
    * memory: exponential with mean ``mean_memory`` (0: no memory demand).

    No edges.  O(v m), vectorised.
    """
    rng = rng if rng is not None else np.random.default_rng()
    v = integer(tasks, "tasks")
    check_size(v, processors)
    positive(arrival_rate, "arrival_rate")
    positive(mean_work, "mean_work")
    pr = integer(priorities, "priorities")
    if not (0 <= heterogeneity < 2):
        raise SimschedError(f"heterogeneity must be in [0, 2), got {heterogeneity}")
    if not mean_memory >= 0:
        raise SimschedError(f"mean_memory must be >= 0, got {mean_memory}")
    arrival = np.cumsum(rng.exponential(1.0 / arrival_rate, v))
    work = rng.exponential(mean_work, v) + 1e-3 * mean_work
    cost = None
    if processors is not None:
        m = integer(processors, "processors")
        speed = rng.uniform(1 - heterogeneity / 2, 1 + heterogeneity / 2, m)
        noise = rng.uniform(1 - heterogeneity / 4, 1 + heterogeneity / 4, (v, m))
        cost = work[:, None] / speed[None, :] * noise
    priority = rng.integers(1, pr + 1, v).astype(np.float64)
    memory = rng.exponential(mean_memory, v) if mean_memory > 0 else None
    return TaskGraph(task_names("job", v), (), None, work=work, arrival=arrival, priority=priority,
                     memory=memory, cost=cost)


Generator = Callable[..., TaskGraph]


def _registry() -> dict[str, Generator]:
    from simsched.workloads import appgraphs, wfchef

    return {
        "random": random_dag,
        "layered": layered_dag,
        "fork_join": fork_join,
        "series_parallel": series_parallel,
        "erdos_renyi": erdos_renyi_dag,
        "tasklist": task_list,
        "gaussian_elimination": appgraphs.gaussian_elimination,
        "fft": appgraphs.fft,
        "cholesky": appgraphs.tiled_cholesky,
        "lu": appgraphs.tiled_lu,
        "qr": appgraphs.tiled_qr,
        "workflow": wfchef.workflow,
    }


GENERATORS: dict[str, Generator] = _registry()
"""Generators by the name a scenario uses.  Each takes ``rng`` and its own keyword parameters;
one that accepts ``processors`` is given the platform's processor count."""
