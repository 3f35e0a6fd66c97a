"""Application task graphs from the heterogeneous-scheduling literature.

* :func:`gaussian_elimination` and :func:`fft`: the two application graphs of Topcuoglu, Hariri & Wu
  (IEEE TPDS 2002, sec. 6), with the paper's random costs (``mean_cost``, ``ccr``,
  ``heterogeneity``, optional explicit matrix for ``processors``).
* :func:`tiled_cholesky`, :func:`tiled_lu`, :func:`tiled_qr`: tile algorithms of dense linear algebra
  (PLASMA / Chameleon / StarPU style, right-looking, flat-tree QR) over a ``tiles x tiles`` grid.
  Task kinds are the BLAS/LAPACK kernels, ``work`` is the kernel's CPU duration and
  :data:`KERNEL_AFFINITY` gives the GPU speed-up factor per kernel, so a scenario's ``affinity:``
  section (or ``Problem(affinity=KERNEL_AFFINITY)``) reproduces the kernel's GPU duration on a
  processor of type ``gpu`` with speed 1.

Kernel durations (:data:`KERNEL_DURATIONS`, CPU / GPU, in the READYS time unit, about a millisecond)
are the tables used by READYS (Grinsztajn, Beaumont, Jeannot & Preux, "READYS: A Reinforcement
Learning Based Strategy for Heterogeneous Dynamic Scheduling", IEEE Cluster 2021), which were
measured with Chameleon on StarPU for 960 x 960 double-precision tiles:

======== ===== ===== ==========================
kernel    CPU   GPU  GPU affinity (CPU/GPU)
======== ===== ===== ==========================
POTRF     18    11   1.6  (latency-bound: CPU-ish)
SYRK      57     2   28.5
TRSM      52     8   6.5
GEMM      95     3   31.7
GETRF     18    11   1.6   (LU: READYS reuses POTRF)
GEQRT      4     3   1.3   (QR)
UNMQR      6     3   2.0
TSQRT      6     1   6.0
TSMQR     10     1   10.0
======== ===== ===== ==========================

The READYS code lists the QR durations as four unnamed kernel types; mapping them to
GEQRT/UNMQR/TSQRT/TSMQR in that order is this module's reading.  The tables are relative; with other
tile sizes only the edge data (``tile_size**2 * 8`` bytes, given in MB) changes.

Complexities: GE O(m^2), FFT O(n log n), tiled factorisations O(T^3) tasks built with one Python
step per task (T rarely exceeds 40, i.e. ~10^4 tasks).
"""

from __future__ import annotations

import numpy as np

from simsched.errors import SimschedError
from simsched.workloads.genutil import check_cost_params, check_size, integer, topcuoglu_costs
from simsched.workloads.taskgraph import TaskGraph

KERNEL_DURATIONS: dict[str, tuple[float, float]] = {
    "potrf": (18.0, 11.0), "syrk": (57.0, 2.0), "trsm": (52.0, 8.0), "gemm": (95.0, 3.0),
    "getrf": (18.0, 11.0),
    "geqrt": (4.0, 3.0), "unmqr": (6.0, 3.0), "tsqrt": (6.0, 1.0), "tsmqr": (10.0, 1.0),
}
"""(CPU, GPU) duration per kernel, READYS tables (see module docstring)."""

KERNEL_AFFINITY: dict[str, dict[str, float]] = {
    k: {"cpu": 1.0, "gpu": cpu / gpu} for k, (cpu, gpu) in KERNEL_DURATIONS.items()
}
"""``affinity[kernel][type]``: speed factor making a speed-1 ``gpu`` run the kernel in its GPU time."""


def _rng(rng: np.random.Generator | None) -> np.random.Generator:
    return rng if rng is not None else np.random.default_rng()


def gaussian_elimination(
    matrix_size: int = 5,
    *,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """Gaussian elimination DAG for an ``m x m`` matrix (Topcuoglu et al. 2002, fig. 9(a)).

    Step k (1..m-1) has a pivot task ``p{k}`` and update tasks ``u{k}_{j}`` for columns j = k+1..m;
    the pivot feeds every update of its step, update ``(k, k+1)`` feeds the next pivot and update
    ``(k, j)`` the update ``(k+1, j)``.  ``(m^2 + m - 2) / 2`` tasks, kinds ``pivot``/``update``.
    O(m^2), vectorised.
    """
    m = integer(matrix_size, "matrix_size", 2)
    check_size((m * m + m - 2) // 2, processors, edges=m * m, field="matrix_size")
    check_cost_params(mean_cost, ccr, heterogeneity)
    ks = np.arange(1, m)                                    # steps 1..m-1
    per = 1 + (m - ks)                                      # pivot + updates per step
    start = np.concatenate([[0], np.cumsum(per)])[:-1]      # index of the pivot of step k
    v = int(per.sum())
    step = np.repeat(ks, per)
    pos = np.arange(v) - start[step - 1]                    # 0 = pivot, >0 = column k + pos
    col = step + pos
    is_pivot = pos == 0
    names = np.where(is_pivot, np.char.add("p", step.astype(str)),
                     np.char.add(np.char.add(np.char.add("u", step.astype(str)), "_"), col.astype(str)))
    upd = np.flatnonzero(~is_pivot)
    src = [start[step[upd] - 1], upd[step[upd] < m - 1]]
    dst = [upd, None]
    u2 = upd[step[upd] < m - 1]
    k2, j2 = step[u2], col[u2]
    nxt_start = start[k2]                                   # pivot of step k + 1
    dst[1] = np.where(j2 == k2 + 1, nxt_start, nxt_start + (j2 - k2 - 1))
    pairs = np.stack([np.concatenate(src), np.concatenate(dst)], axis=1)
    rng = _rng(rng)
    work, data, cost = topcuoglu_costs(rng, v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    kind = np.where(is_pivot, "pivot", "update")
    return TaskGraph(list(names), pairs, data, work=work, kind=list(kind), cost=cost)


def fft(
    points: int = 4,
    *,
    ccr: float = 1.0,
    heterogeneity: float = 0.5,
    mean_cost: float = 20.0,
    processors: int | None = None,
    rng: np.random.Generator | None = None,
) -> TaskGraph:
    """FFT DAG for ``points`` = 2^k input points (Topcuoglu et al. 2002, fig. 9(b); Cormen et al.).

    ``2n - 1`` recursive-call tasks (a binary tree ``r0``.. whose leaves are the input points) and
    ``n log2 n`` butterfly tasks ``b{level}_{i}``; butterfly ``(l, i)`` needs ``(l-1, i)`` and
    ``(l-1, i xor 2^l)`` (level -1 being the tree's leaves).  Kinds ``recursive``/``butterfly``.
    O(n log n), vectorised.
    """
    n = integer(points, "points", 2)
    check_size(2 * n - 1 + n * (n.bit_length() - 1), processors, edges=2 * n * n.bit_length(), field="points")
    if n & (n - 1):
        raise SimschedError(f"points must be a power of two, got {points}")
    check_cost_params(mean_cost, ccr, heterogeneity)
    levels = n.bit_length() - 1
    tree = 2 * n - 1
    inner = np.arange(n - 1)
    src = [inner, inner]
    dst = [2 * inner + 1, 2 * inner + 2]
    leaves = np.arange(n - 1, 2 * n - 1)
    i = np.arange(n)
    prev = leaves
    for lvl in range(levels):
        cur = tree + lvl * n + i
        src += [prev[i], prev[i ^ (1 << lvl)]]
        dst += [cur, cur]
        prev = cur
    pairs = np.stack([np.concatenate(src), np.concatenate(dst)], axis=1)
    v = tree + levels * n
    names = [f"r{t}" for t in range(tree)] + [f"b{lvl}_{k}" for lvl in range(levels) for k in range(n)]
    kind = ["recursive"] * tree + ["butterfly"] * (levels * n)
    work, data, cost = topcuoglu_costs(_rng(rng), v, len(pairs), mean_cost, ccr, heterogeneity, processors)
    return TaskGraph(names, pairs, data, work=work, kind=kind, cost=cost)


class _Builder:
    """Collects named kernel tasks and dependencies for the tile algorithms."""

    def __init__(self) -> None:
        self.index: dict[tuple, int] = {}
        self.names: list[str] = []
        self.kinds: list[str] = []
        self.edges: list[tuple[int, int]] = []

    def task(self, kernel: str, *ij: int) -> int:
        key = (kernel, *ij)
        if key not in self.index:
            self.index[key] = len(self.names)
            self.names.append(kernel.upper() + "_" + "_".join(map(str, ij)))
            self.kinds.append(kernel)
        return self.index[key]

    def dep(self, a: int, b: int) -> None:
        self.edges.append((a, b))

    def graph(self, tile_size: int) -> TaskGraph:
        tile_mb = integer(tile_size, "tile_size") ** 2 * 8 / 1e6
        pairs = np.unique(np.array(self.edges, dtype=np.int64).reshape(-1, 2), axis=0)
        work = np.array([KERNEL_DURATIONS[k][0] for k in self.kinds])
        return TaskGraph(self.names, pairs, np.full(len(pairs), tile_mb), work=work, kind=self.kinds)


def tiled_cholesky(tiles: int = 4, *, tile_size: int = 960, rng: np.random.Generator | None = None) -> TaskGraph:
    """Right-looking tiled Cholesky factorisation (POTRF/TRSM/SYRK/GEMM) of a ``tiles x tiles`` matrix.

    ``T + T(T-1) + T(T-1)(T-2)/6`` tasks; edges carry one tile (MB).  Deterministic (``rng`` unused).
    Kinds ``potrf``, ``trsm``, ``syrk``, ``gemm``; see :data:`KERNEL_AFFINITY`.
    """
    t = integer(tiles, "tiles")
    check_size(t * (t + 1) * (t + 2) // 3, edges=t ** 3, field="tiles")
    b = _Builder()
    for k in range(t):
        p = b.task("potrf", k)
        if k:
            b.dep(b.task("syrk", k - 1, k), p)
        for i in range(k + 1, t):
            tr = b.task("trsm", k, i)
            b.dep(p, tr)
            if k:
                b.dep(b.task("gemm", k - 1, i, k), tr)
        for i in range(k + 1, t):
            s = b.task("syrk", k, i)
            b.dep(b.task("trsm", k, i), s)
            if k:
                b.dep(b.task("syrk", k - 1, i), s)
            for j in range(k + 1, i):
                g = b.task("gemm", k, i, j)
                b.dep(b.task("trsm", k, i), g)
                b.dep(b.task("trsm", k, j), g)
                if k:
                    b.dep(b.task("gemm", k - 1, i, j), g)
    return b.graph(tile_size)


def tiled_lu(tiles: int = 4, *, tile_size: int = 960, rng: np.random.Generator | None = None) -> TaskGraph:
    """Right-looking tiled LU without pivoting (GETRF/TRSM/GEMM), ``tiles x tiles`` tiles.

    ``T + T(T-1) + sum_k (T-k-1)^2`` tasks.  Kinds ``getrf``, ``trsm``, ``gemm``.  Deterministic.
    """
    t = integer(tiles, "tiles")
    check_size(t * (t + 1) * (t + 2) // 3, edges=t ** 3, field="tiles")
    b = _Builder()
    for k in range(t):
        f = b.task("getrf", k)
        if k:
            b.dep(b.task("gemm", k - 1, k, k), f)
        for j in range(k + 1, t):
            for a in ((k, j), (j, k)):                      # row panel U(k, j), column panel L(j, k)
                tr = b.task("trsm", *a)
                b.dep(f, tr)
                if k:
                    b.dep(b.task("gemm", k - 1, *a), tr)
        for i in range(k + 1, t):
            for j in range(k + 1, t):
                g = b.task("gemm", k, i, j)
                b.dep(b.task("trsm", i, k), g)
                b.dep(b.task("trsm", k, j), g)
                if k:
                    b.dep(b.task("gemm", k - 1, i, j), g)
    return b.graph(tile_size)


def tiled_qr(tiles: int = 4, *, tile_size: int = 960, rng: np.random.Generator | None = None) -> TaskGraph:
    """Tiled QR with a flat reduction tree (GEQRT/UNMQR/TSQRT/TSMQR; Buttari et al. 2009).

    Kinds ``geqrt``, ``unmqr``, ``tsqrt``, ``tsmqr``.  Deterministic.
    """
    t = integer(tiles, "tiles")
    check_size(t * (t + 1) * (t + 2) // 3, edges=t ** 3, field="tiles")
    b = _Builder()
    for k in range(t):
        g = b.task("geqrt", k)
        if k:
            b.dep(b.task("tsmqr", k - 1, k, k), g)
        for j in range(k + 1, t):
            u = b.task("unmqr", k, j)
            b.dep(g, u)
            if k:
                b.dep(b.task("tsmqr", k - 1, k, j), u)
        for i in range(k + 1, t):
            ts = b.task("tsqrt", k, i)
            b.dep(g if i == k + 1 else b.task("tsqrt", k, i - 1), ts)
            if k:
                b.dep(b.task("tsmqr", k - 1, i, k), ts)
            for j in range(k + 1, t):
                m = b.task("tsmqr", k, i, j)
                b.dep(ts, m)
                b.dep(b.task("unmqr", k, j) if i == k + 1 else b.task("tsmqr", k, i - 1, j), m)
                if k:
                    b.dep(b.task("tsmqr", k - 1, i, j), m)
    return b.graph(tile_size)
