"""The model of a recorded execution: its machines as hosts of slots, its runtimes, the free parameters.

A recorded run (:class:`~simsched.workloads.recorded.RecordedRun`) becomes a
:class:`~simsched.simulator.problem.Problem` as follows (:func:`build_problem`):

* **hosts**: every machine the run lists is a host of ``slots`` one-core slots
  (:func:`~simsched.simulator.platform.host_slots`: ``<machine>/c<i>`` on host ``<machine>``, or the
  machine itself for one slot), at most the machine's recorded cores; with ``slots`` unset,
  exactly its cores (one slot when the trace does not say).  A run that names no machine gets one host,
  ``unrecorded``.  Slots of one host share its internal link (transfers between them are free) and,
  where the trace gives the machine's memory, that memory: a task starts only while its machine has
  its recorded peak memory free (:mod:`simsched.simulator.engine.hostmem`).
* **tasks**: the recorded graph; every task costs its recorded runtime times ``runtime_factor`` on
  every slot.  A task that recorded ``coreCount`` k > 1 needs k slots of one host at once (a rigid
  gang, :mod:`simsched.simulator.gang`), at most the slots of the largest host.
* **network**: free (no transfer takes time); the edges' data is what a storage model moves.
* **the workflow system**: its overheads (submission, a dispatcher's rate, a scheduling cycle, pre- and
  post-execution steps, start-up; :class:`~simsched.simulator.engine.Overheads`) from the parameters;
* **storage**: with a ``bandwidth``, every task reads from one storage service the bytes its tracer
  measured it read (its declared input files where nothing was measured, files kept on the host that
  read or wrote them) and writes likewise, the bandwidth shared fairly by concurrent transfers
  (:class:`~simsched.simulator.engine.Storage`, :func:`task_io`).

:func:`simulate` runs it in the online engine (the ground truth, :func:`~simsched.simulator.engine.run_online`)
under the ``recorded`` policy (:class:`~simsched.schedulers.recorded.Recorded`: each task on a free slot
of its recorded machine) or any named online policy, and returns the simulated makespan: the instant
the last task is done (its post step included) after the workflow's start.

:class:`Parameters` holds the free parameters a calibration fits per installation
(:mod:`simsched.fidelity.calibrate`).  ``Parameters()`` is today's model: every core a slot, runtimes as
recorded, nothing else; :func:`documented_defaults` the workflow system's published overheads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np

from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.schedulers.recorded import Recorded
from simsched.simulator.engine import PROFILES, OnlineStats, Overheads, Storage, TaskIO, run_online
from simsched.simulator.engine.common import model_number
from simsched.simulator.engine.overheads import FIELDS as OVERHEAD_FIELDS
from simsched.simulator.platform import Platform, host_slots
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule
from simsched.workloads.recorded import RecordedMachine, RecordedRun
from simsched.workloads.taskgraph import TaskGraph

UNRECORDED_HOST = "unrecorded"
"""The host of a run that names no machine."""


OVERHEADS: tuple[str, ...] = OVERHEAD_FIELDS
"""The fields of :class:`Parameters` that are workflow-system overheads (:class:`Overheads`' fields)."""


@dataclass(frozen=True)
class Parameters:
    """The free parameters of the model of a recorded run (one set per installation); times in seconds.

    * ``slots``: one-core slots per host, at most each machine's recorded cores (``None``: its cores);
    * ``runtime_factor``: every task's time is its recorded runtime times this (a per-installation
      speed factor, > 0);
    * ``submit``, ``dispatch_interval``, ``dispatch_per_queued``, ``cycle``, ``pre``, ``post``,
      ``startup``: the workflow system's overheads (:class:`~simsched.simulator.engine.Overheads`: the
      delay before the dispatcher sees a ready task, the dispatcher's interval between releases and its
      growth per task waiting in its queue, the scheduling cycle, the time on
      the slot before the runtime, the time after it off the slot, the workflow's start-up), each >= 0;
    * ``bandwidth``: bytes per second of the storage service every task reads its inputs from and
      writes its outputs to, shared fairly by concurrent transfers
      (:class:`~simsched.simulator.engine.Storage`; ``None``: no storage model, I/O takes no time), and
      ``latency`` per transfer.
    """

    slots: int | None = None
    runtime_factor: float = 1.0
    submit: float = 0.0
    dispatch_interval: float = 0.0
    dispatch_per_queued: float = 0.0
    cycle: float = 0.0
    pre: float = 0.0
    post: float = 0.0
    startup: float = 0.0
    bandwidth: float | None = None
    latency: float = 0.0

    def __post_init__(self) -> None:
        if self.slots is not None and (isinstance(self.slots, bool) or not isinstance(self.slots, int)
                                       or self.slots < 1):
            raise SimschedError(f"slots must be an integer >= 1, got {self.slots!r}", field="slots")
        for name in ("runtime_factor", *OVERHEADS, "bandwidth", "latency"):
            v = getattr(self, name)
            if name == "bandwidth" and v is None:
                continue
            try:
                positive = name in ("runtime_factor", "bandwidth")
                object.__setattr__(self, name, model_number(v, "the value", positive=positive))
            except SimschedError as exc:
                raise exc.located(field=name) from None

    def as_dict(self) -> dict[str, int | float | None]:
        """The parameters by name (the order of :data:`NAMES`)."""
        return asdict(self)

    @property
    def overheads(self) -> Overheads | None:
        """The overheads as the engine takes them (None when all are 0: today's engine)."""
        o = Overheads(**{name: getattr(self, name) for name in OVERHEADS})
        return o if o.active else None

    @property
    def storage(self) -> Storage | None:
        """The storage service (None without a bandwidth)."""
        return None if self.bandwidth is None else Storage(self.bandwidth, self.latency)


def documented_defaults(wms: str) -> Parameters:
    """The documented defaults of workflow system ``wms`` (lower case): its overheads profile
    (:data:`~simsched.simulator.engine.PROFILES`, each value with its published source), every core a
    slot, runtimes as recorded, no storage model (no published figure for an installation's storage);
    a system without a profile gets today's model."""
    profile = PROFILES.get(wms)
    return Parameters() if profile is None else Parameters(**{name: getattr(profile, name) for name in OVERHEADS})


NAMES: tuple[str, ...] = tuple(f.name for f in fields(Parameters))
"""The names of :class:`Parameters`' fields, in order."""


@dataclass(frozen=True, eq=False)
class Simulated:
    """One simulated execution: its makespan (the workflow's end, from time 0: the last task done,
    its post step included), the schedule, the engine's counters and the problem it was simulated on."""

    makespan: float
    schedule: Schedule
    stats: OnlineStats
    problem: Problem


def slots_per_host(machines: Sequence[RecordedMachine], slots: int | None) -> list[tuple[str, int]]:
    """``(host name, slots)`` of the model of a run on ``machines`` (see the module docstring).
    O(machines)."""
    if not machines:
        return [(UNRECORDED_HOST, slots or 1)]
    out = []
    for m in machines:
        if slots is None:
            n = m.cores or 1
        else:
            n = min(slots, m.cores) if m.cores else slots
        out.append((m.name, n))
    return out


def scenario_platform(machines: Sequence[RecordedMachine], params: Parameters) -> dict[str, object]:
    """``params`` on ``machines`` as a scenario's ``platform`` section (docs/execution-model.md): each
    machine a processor entry with its slots as ``cores`` and ``1 / runtime_factor`` as ``speed`` (a
    WfFormat workload's work is its recorded runtime), the overheads and the storage service.  What a
    scenario of this installation's workflows pastes in to simulate them as calibrated.  O(machines)."""
    speed = 1.0 / params.runtime_factor
    out: dict[str, object] = {"processors": [{"name": name, "cores": n, **({"speed": speed} if speed != 1.0 else {})}
                                             for name, n in slots_per_host(machines, params.slots)]}
    overheads = params.overheads
    if overheads is not None:
        out["overheads"] = {name: getattr(overheads, name) for name in OVERHEADS}
    if params.bandwidth is not None:
        out["storage"] = {"bandwidth": params.bandwidth, "latency": params.latency}
    return out


def build_problem(graph: TaskGraph, run: RecordedRun, params: Parameters) -> Problem:
    """The :class:`Problem` of ``run`` (imported with ``graph``) under ``params``: hosts of slots (each with
    its machine's recorded memory as ``host_memory``, in bytes, where the file gives it), the recorded
    runtimes times ``runtime_factor``, each task's recorded peak memory in bytes (0 where not recorded),
    multi-core tasks as rigid gangs on one host, a free network.  O(n + e + slots)."""
    hosts = slots_per_host(run.machines, params.slots)
    memory = {m.name: m.memory_bytes for m in run.machines if m.memory_bytes is not None}
    procs = [p for name, n in hosts for p in host_slots(name, n, host_memory=memory.get(name, math.inf))]
    widest = max(n for _, n in hosts)
    cores = np.nan_to_num(run.cores, nan=1.0)
    k = np.clip(np.ceil(cores), 1, widest).astype(np.int64)
    changes: dict[str, object] = {"work": run.runtime * params.runtime_factor,
                                  "edge_data": np.zeros(graph.n_edges), "cost": None,
                                  "memory": np.nan_to_num(run.memory_bytes, nan=0.0).clip(min=0.0)}
    if (k > 1).any():
        changes.update(procs=np.stack([k, k], axis=1), same_host=k > 1)
    platform = Platform.uniform(procs, bandwidth=math.inf, latency=0.0)
    return Problem(graph.with_(**changes), platform)


def check_scheduler(scheduler: str) -> None:
    """:class:`SimschedError` (field ``--scheduler``) unless ``scheduler`` is ``recorded`` or a registered
    online policy."""
    found = registry.spec(scheduler)
    if found is None or found.kind != "online":
        online = ", ".join(s.name for s in registry.specs(("online",)))
        raise SimschedError(f"{scheduler!r} is not an online policy{registry.suggest(scheduler)}; a recorded run "
                            f"is simulated by one of: {online}", field="--scheduler")


def policy_for(run: RecordedRun, scheduler: str = "recorded") -> object:
    """The online policy ``scheduler`` names, for ``run``: ``recorded`` replays its placement
    (:meth:`Recorded.from_run`); any other name is looked up in the registry and must be an online
    policy.  :class:`SimschedError` otherwise."""
    if scheduler == "recorded":
        return Recorded.from_run(run)
    check_scheduler(scheduler)
    return registry.create(scheduler)


def task_io(run: RecordedRun) -> TaskIO:
    """The I/O plan of ``run``, measured bytes first: a task whose tracer measured what it read
    (``readBytes``) moves exactly those bytes from storage, and likewise for ``writtenBytes``; a task
    without a measurement reads its input files and writes its output files at their declared sizes
    (0 where not given), a file already on the host not read again.

    Why measured first: a declared file is what the workflow system *may* stage, a measurement is what
    the task read.  The two disagree by orders of magnitude in real traces (the WfInstances Makeflow
    BLAST runs declare a database of 5 GB as every task's input in some runs and nothing in others,
    while every run measured about 3 MB read per task), and the declared sizes, not the work, then
    decide the simulated makespan.  O(n + file references)."""
    size = np.nan_to_num(run.file_size, nan=0.0)
    measured_read = ~np.isnan(run.read_bytes)
    measured_write = ~np.isnan(run.written_bytes)
    inputs = [() if measured_read[v] else files for v, files in enumerate(run.inputs)]
    outputs = [() if measured_write[v] else files for v, files in enumerate(run.outputs)]
    extra_read = np.where(measured_read, np.nan_to_num(run.read_bytes, nan=0.0), 0.0).clip(min=0.0)
    extra_write = np.where(measured_write, np.nan_to_num(run.written_bytes, nan=0.0), 0.0).clip(min=0.0)
    return TaskIO.from_lists(inputs, outputs, size, extra_read, extra_write)


def simulate(graph: TaskGraph, run: RecordedRun, params: Parameters, scheduler: str = "recorded",
             io: TaskIO | None = None) -> Simulated:
    """Simulate ``run`` under ``params`` in the online engine with ``scheduler`` (default: the recorded
    placement); ``io``: the run's :func:`task_io` when already built (used only with a storage model).
    Deterministic.  O((n + e) log n) plus the policy's decisions and the flows."""
    problem = build_problem(graph, run, params)
    storage = params.storage
    if storage is not None and io is None:
        io = task_io(run)
    schedule, stats = run_online(problem, policy_for(run, scheduler), engine="simpy", overheads=params.overheads,
                                 storage=storage, io=io if storage is not None else None)
    makespan = float(stats.done.max()) if stats.done is not None and stats.done.size else schedule.makespan
    return Simulated(makespan, schedule, stats, problem)
