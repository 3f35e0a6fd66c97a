"""The two per-task and per-edge sections of a results document besides the schedule records, read
from the graph's arrays when written instead of held as Python objects: the problem's ``kinds`` (task
-> kind) and the network's ``edges`` (``[producer, consumer, data]``).  At 100k tasks and 300k edges
they held ~40 MB of dicts, lists and strings while the document was written; as views they cost
nothing until read, and :meth:`json_chunks` writes them in pieces of a few thousand items.

Both read like what they replace (a mapping, a list of lists; each equals it) and write the same JSON
text as ``json.dumps`` of it (``", "`` between items, ``": "`` after a key).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from simsched.workloads.taskgraph import TaskGraph

CHUNK = 2_048
"""Items per piece of :meth:`TaskKinds.json_chunks` and :meth:`EdgeRecords.json_chunks`."""


def _pieces(n: int, open_: str, close: str, dump) -> Iterator[str]:
    """``open_`` + the items' JSON, ``dump(lo, hi)`` of each piece of :data:`CHUNK` (one JSON
    container whose brackets are dropped), joined by ``", "`` + ``close``.  O(n)."""
    yield open_
    for lo in range(0, n, CHUNK):
        yield ("" if lo == 0 else ", ") + dump(lo, min(lo + CHUNK, n))[1:-1]
    yield close


def _dumps(value: Any) -> str:
    """Compact strict JSON of ``value`` (non-finite numbers as null), as the document writer's."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        from simsched.outputs import finite

        return json.dumps(finite(value), allow_nan=False)


class TaskKinds(Mapping[str, str]):
    """``task name -> kind name`` of a graph, in task order, from its kind codes.  O(1) to make;
    a lookup is the graph's name lookup."""

    __slots__ = ("_graph",)

    def __init__(self, graph: TaskGraph) -> None:
        self._graph = graph

    def __len__(self) -> int:
        return self._graph.n_tasks

    def __iter__(self) -> Iterator[str]:
        return iter(self._graph.names)

    def __getitem__(self, name: str) -> str:
        g = self._graph
        try:
            return g.kind_names[int(g.kind[g.index(name)])]
        except (KeyError, TypeError):
            raise KeyError(name) from None

    def json_chunks(self) -> Iterator[str]:
        """The mapping as a JSON object, in pieces of :data:`CHUNK` tasks.  O(n)."""
        g = self._graph
        names, kinds = g.names, g.kind_names

        def dump(lo: int, hi: int) -> str:
            return _dumps(dict(zip(names[lo:hi], map(kinds.__getitem__, g.kind[lo:hi].tolist()))))

        return _pieces(g.n_tasks, "{", "}", dump)


class EdgeRecords(Sequence[list]):
    """The graph's edges as ``[producer name, consumer name, data]``, in edge order.  O(1) to make."""

    __slots__ = ("_graph",)

    def __init__(self, graph: TaskGraph) -> None:
        self._graph = graph

    def __len__(self) -> int:
        return self._graph.n_edges

    def _rows(self, lo: int, hi: int) -> list[list]:
        g = self._graph
        names = g.names
        return [[names[u], names[v], d] for u, v, d in zip(g.edge_src[lo:hi].tolist(), g.edge_dst[lo:hi].tolist(),
                                                          g.edge_data[lo:hi].tolist())]

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._rows(i, i + 1)[0] for i in range(*index.indices(len(self)))]
        i = index + len(self) if index < 0 else index
        if not 0 <= i < len(self):
            raise IndexError("edge index out of range")
        return self._rows(i, i + 1)[0]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def json_chunks(self) -> Iterator[str]:
        """The edges as a JSON array, in pieces of :data:`CHUNK` edges.  O(e)."""
        return _pieces(len(self), "[", "]", lambda lo, hi: _dumps(self._rows(lo, hi)))
