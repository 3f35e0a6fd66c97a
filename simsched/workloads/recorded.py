"""What a real execution of a workflow recorded: machines, placement, start times, runtimes, I/O, makespan.

A :class:`RecordedRun` is the ground truth a model of execution is held against.  It is
format-free: :mod:`simsched.workloads.importers.wfformat_recorded` fills it from WfFormat 1.3 to 1.6, and
another trace reader may fill it likewise.  It is immutable: the per-task columns are read-only numpy arrays
in the order of the imported :class:`~simsched.workloads.taskgraph.TaskGraph`'s tasks (``names``), so a
calibration or a fidelity report works on whole arrays; :meth:`RecordedRun.task` gives one task's record as
a :class:`RecordedTask`.

Units are the recorded ones, never ``data_unit``: seconds, bytes, MHz, kWh, W.  A value the run did not
record is ``NaN`` in a float column, ``-1`` in :attr:`RecordedRun.machine`, ``None`` in a scalar.

Times: ``start[i]`` is task ``i``'s start in seconds after :attr:`RecordedRun.origin`, the workflow's own
recorded start (its ``executedAt``) when that parses, else the earliest recorded task start; so a
workflow's start-up delay shows as the first task's start.  ``makespan`` is the recorded one
(``makespanInSeconds``), else, when tasks carry start times, the end of the last task after ``origin``
(:attr:`RecordedRun.makespan_source` says which).

Installations: :func:`installations` groups runs into deployments (one workflow system on one pool of
machines), the unit that calibration fits and scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from simsched.workloads.paths import longest_path_from
from simsched.workloads.taskgraph import TaskGraph

MAKESPAN_RECORDED = "makespanInSeconds"
"""``makespan_source`` of a makespan the run recorded as a whole."""
MAKESPAN_FROM_STARTS = "task starts"
"""``makespan_source`` of a makespan derived as the end of the last task after ``origin``."""
MAKESPAN_NONE = ""
"""``makespan_source`` when the run recorded neither a makespan nor task start times."""


@dataclass(frozen=True)
class RecordedMachine:
    """A machine (node) the run used: its name and what the trace says of it (``None`` where it says
    nothing).  ``speed_mhz`` is the clock the tracer read, which may be a frequency-scaled current clock
    rather than the nominal one (the WfInstances Pegasus machines read 1,200 to 3,600 MHz for one model)."""

    name: str
    cores: int | None = None
    speed_mhz: float | None = None
    memory_bytes: float | None = None


@dataclass(frozen=True)
class RecordedTask:
    """One task's record (a view :meth:`RecordedRun.task` builds): where and when it ran, for how long,
    with how many cores, what it read and wrote.  ``inputs``/``outputs`` are ``(file, size in bytes)``
    pairs, ``None`` for a size the trace does not give."""

    name: str
    machines: tuple[str, ...]
    start: float | None
    runtime: float
    cores: float | None
    read_bytes: float | None
    written_bytes: float | None
    memory_bytes: float | None
    energy_kwh: float | None
    avg_power_w: float | None
    inputs: tuple[tuple[str, float | None], ...]
    outputs: tuple[tuple[str, float | None], ...]

    @property
    def end(self) -> float | None:
        """``start + runtime``, or ``None`` without a recorded start."""
        return None if self.start is None else self.start + self.runtime


_COLUMNS = ("runtime", "start", "cores", "read_bytes", "written_bytes", "memory_bytes", "energy_kwh", "avg_power_w")


def _frozen(values: Any, dtype: type) -> np.ndarray:
    a = np.array(values, dtype=dtype)
    a.setflags(write=False)
    return a


def _opt(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


@dataclass(frozen=True, eq=False)
class RecordedRun:
    """A recorded execution of one workflow (see the module docstring for units and times).

    Run-level fields: ``source`` (the file), ``schema_version``, ``wms_name``/``wms_version`` (the workflow
    system, e.g. Pegasus 5.0), ``executed_at_text`` (the workflow's ``executedAt`` as written) and
    ``executed_at`` (parsed, or ``None``), ``origin`` (the instant ``start`` counts from, or ``None`` when
    no task has a start), ``makespan`` and ``makespan_source``, ``machines``.

    Per-task columns, shape ``(n,)``, in the graph's task order: ``names``; ``runtime`` (s); ``start`` (s after
    ``origin``, NaN when not recorded); ``machine`` (index into ``machines`` of the task's first machine, -1
    when not recorded) and ``task_machines`` (all of them, for a task spread over several); ``cores``
    (``coreCount``), ``read_bytes``, ``written_bytes``, ``memory_bytes`` (peak resident set), ``energy_kwh``,
    ``avg_power_w`` (NaN when not recorded); ``inputs``/``outputs`` (indices into ``files``).

    Files: ``files`` (names, first mention first) and ``file_size`` (bytes, NaN when not given).
    """

    source: str | None
    schema_version: str
    wms_name: str | None
    wms_version: str | None
    executed_at_text: str | None
    executed_at: datetime | None
    origin: datetime | None
    makespan: float | None
    makespan_source: str
    machines: tuple[RecordedMachine, ...]
    names: tuple[str, ...]
    runtime: np.ndarray
    start: np.ndarray
    machine: np.ndarray
    task_machines: tuple[tuple[int, ...], ...]
    cores: np.ndarray
    read_bytes: np.ndarray
    written_bytes: np.ndarray
    memory_bytes: np.ndarray
    energy_kwh: np.ndarray
    avg_power_w: np.ndarray
    inputs: tuple[tuple[int, ...], ...]
    outputs: tuple[tuple[int, ...], ...]
    files: tuple[str, ...]
    file_size: np.ndarray
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.names)
        for name in _COLUMNS:
            object.__setattr__(self, name, _frozen(getattr(self, name), np.float64))
        object.__setattr__(self, "machine", _frozen(self.machine, np.int64))
        object.__setattr__(self, "file_size", _frozen(self.file_size, np.float64))
        for name in (*_COLUMNS, "machine"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"RecordedRun.{name} has shape {getattr(self, name).shape} for {n} tasks")
        for name in ("task_machines", "inputs", "outputs"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"RecordedRun.{name} has {len(getattr(self, name))} entries for {n} tasks")
        if self.file_size.shape != (len(self.files),):
            raise ValueError(f"RecordedRun.file_size has shape {self.file_size.shape} for {len(self.files)} files")
        object.__setattr__(self, "_index", dict(zip(self.names, range(n))))

    def __repr__(self) -> str:
        wms = " ".join(x for x in (self.wms_name, self.wms_version) if x) or "unknown system"
        span = f"{self.makespan:g} s" if self.makespan is not None else "no makespan"
        return (f"RecordedRun({self.n_tasks} tasks on {len(self.machines)} machines, {wms}, {span}, "
                f"source={self.source!r})")

    @property
    def n_tasks(self) -> int:
        """Number of tasks."""
        return len(self.names)

    @property
    def has_starts(self) -> bool:
        """True when every task carries a recorded start time."""
        return bool(self.n_tasks) and not np.isnan(self.start).any()

    @property
    def has_placement(self) -> bool:
        """True when every task names the machine it ran on."""
        return bool(self.n_tasks) and bool((self.machine >= 0).all())

    @property
    def end(self) -> np.ndarray:
        """``start + runtime`` per task (NaN where the start is not recorded).  O(n)."""
        return self.start + self.runtime

    @property
    def span(self) -> float | None:
        """Last recorded end minus first recorded start, or ``None`` when no task has a start.  It never
        exceeds ``makespan`` (the importer refuses a run where it would, past its tolerance).  O(n)."""
        known = ~np.isnan(self.start)
        if not known.any():
            return None
        return float(self.end[known].max() - self.start[known].min())

    @property
    def energy_total_kwh(self) -> float | None:
        """The tasks' recorded energy summed, or ``None`` when no task records any.  O(n)."""
        known = ~np.isnan(self.energy_kwh)
        return float(self.energy_kwh[known].sum()) if known.any() else None

    @property
    def workflow_inputs(self) -> tuple[int, ...]:
        """Files some task reads and no task writes (the workflow's inputs, staged in), as indices into
        ``files``, first mention first.  O(file references)."""
        written = {f for outs in self.outputs for f in outs}
        return tuple(dict.fromkeys(f for ins in self.inputs for f in ins if f not in written))

    @property
    def workflow_outputs(self) -> tuple[int, ...]:
        """Files some task writes and no task reads (the workflow's final outputs, staged out), as indices
        into ``files``.  O(file references)."""
        read = {f for ins in self.inputs for f in ins}
        return tuple(dict.fromkeys(f for outs in self.outputs for f in outs if f not in read))

    def bytes_of(self, files: Iterable[int]) -> float:
        """Total size in bytes of the files ``files`` (indices; sizes not given count 0).  O(len(files))."""
        idx = np.fromiter(files, dtype=np.int64)
        return float(np.nansum(self.file_size[idx])) if idx.size else 0.0

    def index(self, name: str) -> int:
        """Position of the task called ``name``; ``KeyError`` when there is none.  O(1)."""
        return self._index[name]

    def task(self, i: int | str) -> RecordedTask:
        """Task ``i``'s record (``i`` a position or a name).  O(the task's machines and files)."""
        k = self._index[i] if isinstance(i, str) else int(i)

        def sized(refs: tuple[int, ...]) -> tuple[tuple[str, float | None], ...]:
            return tuple((self.files[f], _opt(self.file_size[f])) for f in refs)

        return RecordedTask(
            name=self.names[k], machines=tuple(self.machines[m].name for m in self.task_machines[k]),
            start=_opt(self.start[k]), runtime=float(self.runtime[k]), cores=_opt(self.cores[k]),
            read_bytes=_opt(self.read_bytes[k]), written_bytes=_opt(self.written_bytes[k]),
            memory_bytes=_opt(self.memory_bytes[k]), energy_kwh=_opt(self.energy_kwh[k]),
            avg_power_w=_opt(self.avg_power_w[k]), inputs=sized(self.inputs[k]), outputs=sized(self.outputs[k]))

    def critical_path(self, graph: TaskGraph) -> float:
        """Length of the longest chain of recorded runtimes along ``graph``'s dependencies (the graph this
        run was imported with): the makespan of an ideal machine with no overheads and no transfers, a lower
        bound of any real makespan.  O(n + e)."""
        if graph.names != self.names:
            raise ValueError("the graph is not the one this run was recorded for (task names differ)")
        return float(longest_path_from(graph, self.runtime).max())


def installations(runs: Sequence[RecordedRun]) -> list[tuple[str, list[int]]]:
    """Group ``runs`` into installations: one workflow system on one pool of machines.

    Two runs belong to one installation when they ran under the same workflow system (``wms_name``, case
    ignored; versions may differ) and are linked by shared machine names: machines that ever served one
    run form one pool, and pools that share a machine are one (union-find over names; a run that uses
    two of a pool's five nodes is still that pool's).  Runs without machines form one group per system.
    Returns ``(label, run indices)`` pairs, ordered by first run; the label is the system and the pool's first
    machine name, with ``+k`` for k more (``"pegasus@compute-3+4"``).  Machine names are all it has to go
    on: two sites that both call a node ``ubuntu`` would be one installation.
    O(machine mentions · α).
    """
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    keys = []
    for run in runs:
        wms = (run.wms_name or "unknown").lower()
        names = sorted({m.name for m in run.machines})
        nodes = [(wms, name) for name in names] or [(wms, "")]
        root = find(nodes[0])
        for node in nodes[1:]:
            other = find(node)
            if other != root:
                parent[other] = root
        keys.append(nodes[0])
    groups: dict[tuple[str, str], list[int]] = {}
    for i, node in enumerate(keys):
        groups.setdefault(find(node), []).append(i)
    out = []
    for root, members in groups.items():
        pool = sorted(name for (wms, name) in parent if wms == root[0] and name and find((wms, name)) == root)
        label = f"{root[0]}@{pool[0] if pool else '(no machines)'}" + (f"+{len(pool) - 1}" if len(pool) > 1 else "")
        out.append((label, members))
    return out
