"""Compact per-task columns of a merged job stream: task names and task kinds without a Python object
per task.

A stream of 10,000 jobs holds a million tasks.  Held as a tuple of ``str`` with a dict from name to
index, its names alone cost ~110 bytes a task (and a transient list as large while merging).
:class:`JobTaskNames` holds them as two integer arrays — the job of each task and its name's index in
a pool of the distinct names inside jobs (``t0`` .. ``t149`` for the generators' jobs) — and makes
each ``j<k>.<name>`` string only when it is read: 12 bytes a task.  It is an immutable
``Sequence[str]`` equal to the tuple it stands for, and :meth:`JobTaskNames.mapping` is the name ->
index map a :class:`~simsched.workloads.taskgraph.TaskGraph` keeps, looked up without a dict.

:class:`KindCodes` hands a graph its task kinds as codes into a table of kind names rather than one
string per task (what :meth:`TaskGraph.with_` and the stream merge give it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple, overload

import numpy as np


class KindCodes(NamedTuple):
    """Task kinds as ``codes[i]``, an index into ``names``, for the :class:`TaskGraph` constructor.  The
    graph keeps the kinds some task has, sorted (as from one string per task), whatever the table's
    order or unused entries."""

    names: Sequence[str]
    codes: np.ndarray


class JobTaskNames(Sequence):
    """The names ``j<job[i]>.<pool[local[i]]>`` of a merged stream's tasks, made on demand.

    ``job`` is non-decreasing (a job's tasks are contiguous) and no two tasks of one job share a pool
    entry, so the names are unique by construction.  Reading name i is O(1); iterating is O(n);
    :meth:`position` (name -> index) is O(log n + tasks of the job).  A slice is a view of the same
    kind (O(1)); equality with any sequence of strings compares name by name (O(n)).  Memory: the two
    arrays (12 bytes a task with int32 pool indices) and the pool.
    """

    __slots__ = ("job", "local", "pool", "_pool_index")

    def __init__(self, job: np.ndarray, local: np.ndarray, pool: Sequence[str]) -> None:
        job, local = np.asarray(job), np.asarray(local)
        if job.ndim != 1 or job.shape != local.shape:
            raise ValueError(f"job and local must be two arrays of one length, got {job.shape} and {local.shape}")
        if job.size and (bool((np.diff(job) < 0).any()) or job[0] < 0):
            raise ValueError("job indices must be >= 0 and non-decreasing (a job's tasks are contiguous)")
        if local.size and (local.min() < 0 or local.max() >= len(pool)):
            raise ValueError("a pool index is outside the pool")
        self._set(job.view(), local.view(), tuple(pool))

    def _set(self, job: np.ndarray, local: np.ndarray, pool: tuple[str, ...]) -> JobTaskNames:
        job.setflags(write=False)
        local.setflags(write=False)
        self.job, self.local, self.pool = job, local, pool
        self._pool_index: dict[str, int] | None = None
        return self

    def __len__(self) -> int:
        return int(self.job.size)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> JobTaskNames: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            if (i.step or 1) < 0:
                return tuple(self)[i]
            return object.__new__(JobTaskNames)._set(self.job[i], self.local[i], self.pool)  # checked already
        return f"j{int(self.job[i])}.{self.pool[int(self.local[i])]}"

    def __iter__(self) -> Iterator[str]:
        pool = self.pool
        return (f"j{k}.{pool[p]}" for k, p in zip(self.job.tolist(), self.local.tolist()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JobTaskNames) and other.pool is self.pool:
            return bool(np.array_equal(self.job, other.job) and np.array_equal(self.local, other.local))
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))  # equal to the tuple of the same names, so hashed alike

    def __repr__(self) -> str:
        head = ", ".join(repr(self[i]) for i in range(min(3, len(self))))
        return f"JobTaskNames({len(self):,} names: {head}{', ...' if len(self) > 3 else ''})"

    def __reduce__(self):
        return JobTaskNames, (self.job, self.local, self.pool)

    def position(self, name: str) -> int:
        """The index of the task called ``name``; KeyError when there is none.  O(log n + tasks of its job)."""
        if not isinstance(name, str):
            raise KeyError(name)
        head, dot, rest = name.partition(".")
        if not dot or len(head) < 2 or head[0] != "j" or not head[1:].isdigit() or not head[1:].isascii():
            raise KeyError(name)
        k = int(head[1:])
        if f"j{k}" != head:  # j007 is not job 7's prefix
            raise KeyError(name)
        if self._pool_index is None:
            self._pool_index = {p: i for i, p in enumerate(self.pool)}
        p = self._pool_index.get(rest)
        if p is None:
            raise KeyError(name)
        lo, hi = (int(x) for x in np.searchsorted(self.job, [k, k + 1]))
        hit = np.flatnonzero(self.local[lo:hi] == p)
        if not hit.size:
            raise KeyError(name)
        return lo + int(hit[0])

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        """``Sequence.index``: the position of ``value`` (ValueError when absent).  O(log n + job)."""
        try:
            i = self.position(value)  # type: ignore[arg-type]
        except KeyError:
            raise ValueError(f"{value!r} is not in the names") from None
        if i < start or (stop is not None and i >= stop):
            raise ValueError(f"{value!r} is not in the names between {start} and {stop}")
        return i

    def __contains__(self, value: object) -> bool:
        try:
            self.position(value)  # type: ignore[arg-type]
        except KeyError:
            return False
        return True

    def mapping(self) -> NameIndex:
        """The name -> index map of these names (what a TaskGraph keeps as its index)."""
        return NameIndex(self)


class NameIndex(Mapping):
    """``name -> index`` over :class:`JobTaskNames` without a dict: lookups by :meth:`JobTaskNames.position`
    (O(log n + tasks of the job)), iteration over the names in order (O(n))."""

    __slots__ = ("names",)

    def __init__(self, names: JobTaskNames) -> None:
        self.names = names

    def __getitem__(self, name: str) -> int:
        return self.names.position(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names
