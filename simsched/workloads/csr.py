"""Compressed sparse row (CSR) helpers for graphs held as numpy arrays.

These are the vectorised building blocks every graph algorithm in simsched uses: build adjacency in
CSR form, gather the neighbours of many nodes at once, and compute longest-path levels with a
frontier-at-a-time Kahn's algorithm.  No function here loops over nodes or edges in Python; the only
Python loops run once per *level* of the DAG.
"""

from __future__ import annotations

import numpy as np

IntArray = np.ndarray
FloatArray = np.ndarray


def build_csr(n: int, key: IntArray) -> tuple[IntArray, IntArray]:
    """Group edge ids by ``key`` (the source or the target of each edge).

    Returns ``(ptr, edge_ids)`` with ``edge_ids[ptr[v]:ptr[v+1]]`` the edges whose key is ``v``, in
    increasing edge id.  O(n + e log e).
    """
    key = np.asarray(key, dtype=np.int64)
    edge_ids = np.argsort(key, kind="stable").astype(np.int64, copy=False)
    counts = np.bincount(key, minlength=n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, edge_ids


def gather_ranges(ptr: IntArray, rows: IntArray) -> tuple[IntArray, IntArray]:
    """Concatenate the CSR ranges ``ptr[r]:ptr[r+1]`` of every row in ``rows``.

    Returns ``(positions, owner)``: the positions into the CSR value array and, for each, the index
    into ``rows`` it came from.  O(len(rows) + total range length), fully vectorised.
    """
    rows = np.asarray(rows, dtype=np.int64)
    starts = ptr[rows]
    counts = ptr[rows + 1] - starts
    total = int(counts.sum())
    if total == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    owner = np.repeat(np.arange(rows.size, dtype=np.int64), counts)
    offsets = np.cumsum(counts) - counts
    positions = np.arange(total, dtype=np.int64) - offsets[owner] + starts[owner]
    return positions, owner


def kahn_levels(n: int, src: IntArray, dst: IntArray,
                csr: tuple[IntArray, IntArray] | None = None) -> tuple[IntArray, IntArray]:
    """Longest-path level of every node (entry nodes are level 0) by frontier-wise Kahn's algorithm.

    Returns ``(level, order)`` where ``order`` lists the nodes level by level (a topological order)
    and ``level[v] == -1`` for nodes that lie on or behind a cycle.  ``csr``: ``build_csr(n, src)``
    when the caller has it (not built twice).  O(n + e) work in O(depth) numpy passes.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    ptr, by_src = build_csr(n, src) if csr is None else csr
    succ = dst[by_src]
    indeg = np.bincount(dst, minlength=n).astype(np.int64)
    level = np.full(n, -1, dtype=np.int64)
    frontier = np.flatnonzero(indeg == 0)
    parts = []
    depth = 0
    while frontier.size:
        level[frontier] = depth
        parts.append(frontier)
        positions, _ = gather_ranges(ptr, frontier)
        if positions.size == 0:
            break
        targets = succ[positions]
        np.subtract.at(indeg, targets, 1)
        frontier = np.unique(targets[indeg[targets] == 0])
        depth += 1
    order = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return level, order


def find_cycle(n: int, src: IntArray, dst: IntArray, level: IntArray) -> list[int]:
    """Return the nodes of one directed cycle among the nodes Kahn's algorithm could not order.

    ``level`` is the first result of :func:`kahn_levels`; every unordered node keeps an unordered
    predecessor, so walking predecessors from any of them must revisit a node.  O(n + e).
    """
    remaining = level < 0
    if not remaining.any():
        return []
    keep = remaining[src] & remaining[dst]
    ptr, by_dst = build_csr(n, dst[keep])
    preds = src[keep][by_dst]
    node = int(np.flatnonzero(remaining)[0])
    seen: dict[int, int] = {}
    path: list[int] = []
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = int(preds[ptr[node]])
    cycle = path[seen[node]:]
    cycle.reverse()  # walked backwards along predecessors
    return cycle
