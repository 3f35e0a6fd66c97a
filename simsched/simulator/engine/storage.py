"""Storage with fairly shared bandwidth in the online engine: tasks read their input files from, and
write their outputs to, one storage service (a shared file system or the submit host's disk) whose
bandwidth concurrent transfers share.

:class:`Storage` holds the service's parameters, :class:`TaskIO` each task's I/O plan, and
:class:`SharedStorage` is the mixin of the online engine that models them;
:func:`~simsched.simulator.engine.run_online` composes it only into runs given a storage, so a run
without one is today's run, float for float.

The model (bytes, and seconds like every time of an imported workflow; docs/execution-model.md):

* Files live on the storage service and, once a task has read or written them there, on a **host**
  (:attr:`~simsched.simulator.platform.Processor.host`; the slots of one host share its files).
* A task that takes its slot at ``s`` spends ``pre`` (:mod:`~simsched.simulator.engine.overheads`), then
  **reads** every input file not already on its host, plus its extra read bytes (recorded reads not
  explained by files), as one flow; the files are then on the host.  Then it **runs** (its runtime x
  noise), then **writes** its output files plus its extra written bytes as one flow; the outputs are
  then on its host (and on the storage service).  Then its slot is free: the schedule's ``finish``
  is the end of the writes.  A phase with nothing to move takes no time and no latency.
* A **flow** first waits ``latency``, then joins the flows in progress; the service's ``bandwidth`` is
  shared fairly among them (k flows: ``bandwidth / k`` each), recomputed at every flow start and
  end — SimGrid's fluid model on one resource.  k equal flows started together each take k times as
  long as one alone.  Implemented with the cumulative service each flow has received (one counter
  for all flows, since all get the same rate): a flow of ``b`` bytes joining at service ``S`` ends
  when the counter reaches ``S + b``; the earliest end is one pending event, superseded (a version
  number) whenever the set of flows changes.  O(log flows) per flow start or end.
* With storage, edge data moves through files, not over the processor network: input transfers take
  no time (a task's inputs are its files).  :meth:`TaskIO.from_graph` makes one file per edge
  (``edge_data x data_unit`` bytes) when the workload has no file list.
* Not modelled: a file read by two tasks of one host at once is read twice (a file is on a host once a
  read of it there has ended); host disks and the network between hosts have no limit of their
  own; a host's cache never evicts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from heapq import heappop, heappush

import numpy as np
from simpy.events import NORMAL, Event

from simsched.errors import SimschedError
from simsched.simulator.engine.common import Tick, model_number
from simsched.workloads.taskgraph import TaskGraph


def _number(value: object, what: str, *, positive: bool = False) -> float:
    return model_number(value, f"storage: {what}", positive=positive)


@dataclass(frozen=True)
class Storage:
    """The storage service: ``bandwidth`` in bytes per second (finite, > 0), shared fairly among
    concurrent flows, and ``latency`` in seconds per flow (>= 0).  Module docstring: the model."""

    bandwidth: float
    latency: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "bandwidth", _number(self.bandwidth, "bandwidth", positive=True))
        object.__setattr__(self, "latency", _number(self.latency, "latency"))


def _csr(lists: Sequence[Sequence[int]], n_files: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=ptr[1:])
    flat = np.fromiter((int(f) for x in lists for f in x), dtype=np.int64, count=int(ptr[-1]))
    if flat.size and not ((flat >= 0).all() and (flat < n_files).all()):
        raise SimschedError(f"storage: a task's {what} names a file index outside 0..{n_files - 1}")
    return ptr, flat


@dataclass(frozen=True, eq=False)
class TaskIO:
    """The I/O plan of every task: input and output file ids in CSR form (``in_files[in_ptr[v]:
    in_ptr[v + 1]]`` are task ``v``'s inputs), each file's ``size`` in bytes, and per task the
    ``extra_read``/``extra_write`` bytes not explained by files (recorded ``readBytes`` minus its input
    files' bytes, >= 0).  Arrays are read-only; every size finite and >= 0.  Build with
    :meth:`from_lists` or :meth:`from_graph`."""

    in_ptr: np.ndarray
    in_files: np.ndarray
    out_ptr: np.ndarray
    out_files: np.ndarray
    size: np.ndarray
    extra_read: np.ndarray
    extra_write: np.ndarray

    def __post_init__(self) -> None:
        n = self.in_ptr.size - 1
        if n < 0 or self.out_ptr.size != n + 1 or self.extra_read.shape != (n,) or self.extra_write.shape != (n,):
            raise SimschedError("storage: the I/O plan's per-task arrays disagree on the number of tasks")
        for name in ("size", "extra_read", "extra_write"):
            a = getattr(self, name)
            if a.size and not (np.isfinite(a).all() and (a >= 0).all()):
                raise SimschedError(f"storage: every {name.replace('_', ' ')} must be finite bytes >= 0")
        for name in self.__dataclass_fields__:
            getattr(self, name).setflags(write=False)

    @property
    def n_tasks(self) -> int:
        return self.in_ptr.size - 1

    @classmethod
    def from_lists(cls, inputs: Sequence[Sequence[int]], outputs: Sequence[Sequence[int]],
                   size: Sequence[float] | np.ndarray, extra_read: Sequence[float] | np.ndarray | None = None,
                   extra_write: Sequence[float] | np.ndarray | None = None) -> TaskIO:
        """A plan from per-task lists of file indices into ``size`` (bytes).  O(n + uses)."""
        size = np.array(size, dtype=np.float64).reshape(-1)
        n = len(inputs)
        if len(outputs) != n:
            raise SimschedError(f"storage: {n} tasks' inputs but {len(outputs)} tasks' outputs")
        in_ptr, in_files = _csr(inputs, size.size, "inputs")
        out_ptr, out_files = _csr(outputs, size.size, "outputs")
        er = np.zeros(n) if extra_read is None else np.array(extra_read, dtype=np.float64).reshape(-1)
        ew = np.zeros(n) if extra_write is None else np.array(extra_write, dtype=np.float64).reshape(-1)
        return cls(in_ptr, in_files, out_ptr, out_files, size, er, ew)

    @classmethod
    def from_graph(cls, graph: TaskGraph, data_unit: float = 1.0) -> TaskIO:
        """One file per edge, written by its source and read by its destination, of ``edge_data x
        data_unit`` bytes (``data_unit``: bytes per unit of the workload's edge data, 1e6 for the
        WfFormat and DAX importers' megabytes).  O(n + e)."""
        unit = _number(data_unit, "data_unit", positive=True)
        e = graph.n_edges
        size = np.asarray(graph.edge_data, dtype=np.float64) * unit
        if not np.isfinite(size).all():
            raise SimschedError("storage: an edge's data times data_unit overflows")
        # task v's inputs are its in-edges, its outputs its out-edges (file id = edge id)
        return cls(graph.pred_ptr.astype(np.int64), graph.pred_edges.astype(np.int64),
                   graph.succ_ptr.astype(np.int64), graph.succ_edges.astype(np.int64), size,
                   np.zeros(graph.n_tasks), np.zeros(graph.n_tasks)) if e else \
            cls(np.zeros(graph.n_tasks + 1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros(graph.n_tasks + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), size,
                np.zeros(graph.n_tasks), np.zeros(graph.n_tasks))


class SharedStorage:
    """The online run's storage: a mixin placed before
    :class:`~simsched.simulator.engine.overheads.WorkflowOverheads` (whose :meth:`_hold` it replaces
    with phases: pre, read, runtime, write).  Module docstring: the model.

    Owns ``storage``, ``io``, per host the set of files on it, and the flows: ``service`` (bytes each
    flow in progress has received since the run began, all alike), the heap of flow ends (service
    value, sequence, task, continuation), the pending event's version; per task the bytes and
    seconds of its reads and writes (``stats.read_time``, ``write_time``, ``bytes_read``, ``bytes_written``)."""

    def _init_storage(self, storage: Storage, io: TaskIO) -> None:
        """Storage state of a fresh run: every file on the service only.  O(n + m)."""
        n = self.problem.n_tasks
        if io.n_tasks != n:
            raise SimschedError(f"storage: the I/O plan has {io.n_tasks} tasks, the problem {n}")
        self.storage, self.io = storage, io
        self.host_of = self.problem.platform.host_index.tolist()
        self.files_on: list[set[int]] = [set() for _ in range(max(self.host_of) + 1)]
        self.size = io.size.tolist()
        self.in_ptr, self.in_files = io.in_ptr.tolist(), io.in_files.tolist()
        self.out_ptr, self.out_files = io.out_ptr.tolist(), io.out_files.tolist()
        owner = np.repeat(np.arange(n), np.diff(io.out_ptr))
        self.write_bytes = (np.bincount(owner, weights=io.size[io.out_files], minlength=n) + io.extra_write).tolist()
        self.extra_read = io.extra_read.tolist()
        self.missing_of: dict[int, list[int]] = {}  # per task reading: the files it is fetching
        self.service = 0.0  # bytes every flow in progress has received so far (fair share: all alike)
        self.service_at = 0.0  # when ``service`` was last brought up to date
        self.flows: list[tuple[float, int, int, Callable[[int], None]]] = []
        self.flow_seq = 0
        self.flow_version = 0
        self.read_time, self.write_time = [0.0] * n, [0.0] * n
        self.bytes_read = [0.0] * n
        self.phase_start = [0.0] * n
        self.finished_by: list = [None] * n

    # ------------------------------------------------------------------ the phases of a task on its slot
    def _input_delay(self, v: int, p: int) -> float:
        """No network transfer: with storage a task's inputs are its files, read on its slot."""
        return 0.0

    def _gang_input_delay(self, v: int, lead: int) -> float:
        return 0.0

    def _io_estimate(self, v: int, p: int) -> float:
        """What a policy is told the I/O of ``v`` on ``p`` takes: its missing files and its outputs at
        the full bandwidth, a latency per flow (contention is not foreseen).  O(files of v)."""
        b, lat = self.storage.bandwidth, self.storage.latency
        read, missing = self._read_bytes(v, self.host_of[p])
        write = self.write_bytes[v]
        return (read / b + lat if read or missing else 0.0) + \
            (write / b + lat if write or self.out_ptr[v + 1] > self.out_ptr[v] else 0.0)

    def _checked_cost(self, v: int, p: int, k: int) -> float:
        return super()._checked_cost(v, p, k) + self._io_estimate(v, p)

    def _missing(self, v: int, h: int) -> list[int]:
        on = self.files_on[h]
        return [f for f in self.in_files[self.in_ptr[v]:self.in_ptr[v + 1]] if f not in on]

    def _read_bytes(self, v: int, h: int) -> tuple[float, list[int]]:
        missing = self._missing(v, h)
        size = self.size
        return sum(size[f] for f in missing) + self.extra_read[v], missing

    def _hold(self, v: int, now: float, finished) -> None:
        """Task ``v`` took its slot(s) at ``now``: ``pre``, then its reads (:meth:`_read`).  O(1)."""
        self.finished_by[v] = finished
        pre = self.overheads.pre
        if pre:
            heappush(self._events, (now + pre, NORMAL, next(self._eid), Tick(self._after_pre, v)))
        else:
            self._read(v)

    def _after_pre(self, ev: Event) -> None:
        self._read(ev._value)

    def _read(self, v: int) -> None:
        """Read ``v``'s missing inputs and extra bytes as one flow, then run it; nothing to read: run."""
        h = self.host_of[self.proc_of[v]]
        nbytes, missing = self._read_bytes(v, h)
        self.bytes_read[v] = nbytes
        self.phase_start[v] = self.env._now
        if nbytes or missing:
            self.missing_of[v] = missing
            self._start_flow(v, nbytes, self._read_done)
        else:
            self._run(v)

    def _read_done(self, v: int) -> None:
        self.read_time[v] = self.env._now - self.phase_start[v]
        self.files_on[self.host_of[self.proc_of[v]]].update(self.missing_of.pop(v))
        self._run(v)

    def _run(self, v: int) -> None:
        """The runtime (times noise) as one event, then the writes."""
        r = self.runtime[v]
        if self.factors is not None:
            r = r * self.factors[v]
        heappush(self._events, (self.env._now + r, NORMAL, next(self._eid), Tick(self._after_run, v)))

    def _after_run(self, ev: Event) -> None:
        """Write ``v``'s outputs and extra bytes as one flow (then they are on its host), then free the
        slot; nothing to write: free it now."""
        v = ev._value
        lo, hi = self.out_ptr[v], self.out_ptr[v + 1]
        self.files_on[self.host_of[self.proc_of[v]]].update(self.out_files[lo:hi])
        nbytes = self.write_bytes[v]
        self.phase_start[v] = self.env._now
        if nbytes or hi > lo:
            self._start_flow(v, nbytes, self._write_done)
        else:
            self._release_task(v)

    def _write_done(self, v: int) -> None:
        self.write_time[v] = self.env._now - self.phase_start[v]
        self._release_task(v)

    def _release_task(self, v: int) -> None:
        finished, self.finished_by[v] = self.finished_by[v], None
        finished(Tick(None, v))

    # ------------------------------------------------------------------ flows: a fair share of one service
    def _start_flow(self, v: int, nbytes: float, then: Callable[[int], None]) -> None:
        """A flow of ``nbytes`` for task ``v``: ``latency``, then a fair share of the bandwidth until
        done; ``then(v)`` at its end.  O(log flows)."""
        lat = self.storage.latency
        if lat:
            heappush(self._events, (self.env._now + lat, NORMAL, next(self._eid),
                                    Tick(self._join_flow, (v, nbytes, then))))
        else:
            self._join(v, nbytes, then)

    def _join_flow(self, ev: Event) -> None:
        self._join(*ev._value)

    def _join(self, v: int, nbytes: float, then: Callable[[int], None]) -> None:
        if not nbytes:  # nothing to move once the latency is over
            then(v)
            return
        self._advance()
        self.flow_seq += 1
        heappush(self.flows, (self.service + nbytes, self.flow_seq, v, then))
        self._reschedule()

    def _advance(self) -> None:
        """Bring ``service`` up to now: each flow in progress received ``bandwidth / k`` per second."""
        now = self.env._now
        if self.flows and now > self.service_at:
            self.service += (now - self.service_at) * self.storage.bandwidth / len(self.flows)
        self.service_at = now

    def _reschedule(self) -> None:
        """One pending event at the earliest flow end (a new version supersedes the previous one)."""
        self.flow_version += 1
        if self.flows:
            left = self.flows[0][0] - self.service
            t = self.env._now + max(left, 0.0) * len(self.flows) / self.storage.bandwidth
            heappush(self._events, (t, NORMAL, next(self._eid), Tick(self._on_flow_end, self.flow_version)))

    def _on_flow_end(self, ev: Event) -> None:
        """The earliest flow ends (and every flow due at the same service value): their continuations
        run after the remaining flows are rescheduled.  Stale versions are ignored.  O(log flows)."""
        if ev._value != self.flow_version:
            return
        self._advance()
        end = heappop(self.flows)
        done = [end]
        while self.flows and self.flows[0][0] <= end[0]:
            done.append(heappop(self.flows))
        self.service = end[0]  # snap: the float the event was timed for, no drift
        self._reschedule()
        for _, _, v, then in done:
            then(v)

    def result(self):
        """The base result, with the I/O counters in the stats.  O(n)."""
        out = super().result()
        st = self.stats
        st.read_time = np.array(self.read_time)
        st.write_time = np.array(self.write_time)
        st.bytes_read = float(sum(self.bytes_read))
        st.bytes_written = float(sum(self.write_bytes))
        return out


def check_storage_run(storage: Storage | None, io: TaskIO | None, problem, disruptions) -> TaskIO | None:
    """The I/O plan of a run with ``storage`` (``io``, or one file per edge of the problem's graph at
    one byte per unit of edge data), None without storage; :class:`SimschedError` for an I/O plan
    without storage or storage with active disruptions.  O(n + e)."""
    if storage is None:
        if io is not None:
            raise SimschedError("an I/O plan (io) needs a storage service (storage)")
        return None
    if disruptions is not None and disruptions.active:
        raise SimschedError("storage does not combine with failures or stragglers yet; run one or the other")
    return io if io is not None else TaskIO.from_graph(problem.graph)
