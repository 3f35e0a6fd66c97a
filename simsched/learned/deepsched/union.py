"""Many problems' task graphs as one graph, so level-by-level passes run once for a whole batch.

Task ids of instance ``b`` are shifted by ``offsets[b]``; edges never cross instances, and each task
keeps its own level, so every longest-path or key-propagation pass of
:mod:`simsched.workloads.paths` and :func:`~simsched.simulator.evaluate_batch.sequence_from_keys`
gives each instance exactly the values it gets alone (maxima and the same additions, in O(max depth)
numpy passes for the batch instead of O(depth) per instance).  Building it: O(sum n + e).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem


@dataclass(frozen=True)
class UnionGraph:
    """The disjoint union of task graphs; it has the fields of a task graph that the level-by-level
    passes read (``n_tasks``, ``n_edges``, ``edge_src``, ``edge_dst``, ``level``, ``depth``) and
    ``graph`` (itself), so it stands for a problem where only ``problem.graph`` is read."""

    n_tasks: int
    n_edges: int
    edge_src: np.ndarray
    edge_dst: np.ndarray
    level: np.ndarray
    depth: int
    offsets: np.ndarray    # (B + 1,) first task of each instance
    instance: np.ndarray   # (n_tasks,) instance of each task

    @property
    def graph(self) -> UnionGraph:
        return self

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        """Per instance, its slice of a per-task array."""
        return [values[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]

    def per_instance_max(self, values: np.ndarray) -> np.ndarray:
        """(B,) maximum of a per-task array within each instance (every instance has a task)."""
        return np.maximum.reduceat(values, self.offsets[:-1])


def union_graph(problems: list[Problem]) -> UnionGraph:
    """The :class:`UnionGraph` of ``problems`` (each with at least one task).  O(sum n + e)."""
    graphs = [p.graph for p in problems]
    sizes = np.array([g.n_tasks for g in graphs], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    shift = np.repeat(offsets[:-1], [g.n_edges for g in graphs])
    src = np.concatenate([g.edge_src for g in graphs]).astype(np.int64) + shift
    dst = np.concatenate([g.edge_dst for g in graphs]).astype(np.int64) + shift
    return UnionGraph(n_tasks=int(offsets[-1]), n_edges=int(src.size), edge_src=src, edge_dst=dst,
                      level=np.concatenate([g.level for g in graphs]), depth=max(g.depth for g in graphs),
                      offsets=offsets, instance=np.repeat(np.arange(len(graphs)), sizes))
