"""The model of a recorded execution: its machines as hosts of slots, its runtimes, the free parameters.

A recorded run (:class:`~simsched.workloads.recorded.RecordedRun`) becomes a
:class:`~simsched.simulator.problem.Problem` as follows (:func:`build_problem`):

* **hosts**: every machine the run lists is a host of ``slots`` one-core slots (processors named
  ``<machine>/c<i>``, ``host=<machine>``), at most the machine's recorded cores; with ``slots`` unset,
  exactly its cores (one slot when the trace does not say).  A run that names no machine gets one host,
  ``unrecorded``.  Slots of one host share its internal link (transfers between them are free).
* **tasks**: the recorded graph; every task costs its recorded runtime times ``runtime_factor`` on
  every slot.  A task that recorded ``coreCount`` k > 1 needs k slots of one host at once (a rigid
  gang, :mod:`simsched.simulator.gang`), at most the slots of the largest host.
* **network**: free (no transfer takes time); the edges' data is what a storage model moves.

:func:`simulate` runs it in the online engine (the ground truth, :func:`~simsched.simulator.engine.run_online`)
under the ``recorded`` policy (:class:`~simsched.schedulers.recorded.Recorded`: each task on a free slot
of its recorded machine) or any named online policy, and returns the simulated makespan.

:class:`Parameters` holds the free parameters a calibration fits per installation
(:mod:`simsched.fidelity.calibrate`); ``Parameters()`` is today's model: every core a slot, runtimes as
recorded.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from simsched.errors import SimschedError
from simsched.schedulers import registry
from simsched.schedulers.recorded import Recorded
from simsched.simulator.engine import run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule
from simsched.workloads.recorded import RecordedRun
from simsched.workloads.taskgraph import TaskGraph

UNRECORDED_HOST = "unrecorded"
"""The host of a run that names no machine."""


@dataclass(frozen=True)
class Parameters:
    """The free parameters of the model of a recorded run (one set per installation).

    ``slots``: one-core slots per host, at most each machine's recorded cores (``None``: its cores);
    ``runtime_factor``: every task's time is its recorded runtime times this (a per-installation speed
    factor, > 0).
    """

    slots: int | None = None
    runtime_factor: float = 1.0

    def __post_init__(self) -> None:
        if self.slots is not None and (isinstance(self.slots, bool) or not isinstance(self.slots, int)
                                       or self.slots < 1):
            raise SimschedError(f"slots must be an integer >= 1, got {self.slots!r}", field="slots")
        f = self.runtime_factor
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not math.isfinite(f) or f <= 0:
            raise SimschedError(f"runtime_factor must be a finite number > 0, got {f!r}", field="runtime_factor")

    def as_dict(self) -> dict[str, int | float | None]:
        """The parameters by name (the order of :data:`NAMES`)."""
        return asdict(self)


NAMES: tuple[str, ...] = tuple(f.name for f in fields(Parameters))
"""The names of :class:`Parameters`' fields, in order."""


@dataclass(frozen=True, eq=False)
class Simulated:
    """One simulated execution: its makespan (the workflow's end, from time 0), the schedule and the
    problem it was simulated on."""

    makespan: float
    schedule: Schedule
    problem: Problem


def host_slots(run: RecordedRun, slots: int | None) -> list[tuple[str, int]]:
    """``(host name, slots)`` of the model of ``run`` (see the module docstring).  O(machines)."""
    if not run.machines:
        return [(UNRECORDED_HOST, slots or 1)]
    out = []
    for m in run.machines:
        if slots is None:
            n = m.cores or 1
        else:
            n = min(slots, m.cores) if m.cores else slots
        out.append((m.name, n))
    return out


def build_problem(graph: TaskGraph, run: RecordedRun, params: Parameters) -> Problem:
    """The :class:`Problem` of ``run`` (imported with ``graph``) under ``params``: hosts of slots, the
    recorded runtimes times ``runtime_factor``, multi-core tasks as rigid gangs on one host, a free
    network.  O(n + e + slots)."""
    hosts = host_slots(run, params.slots)
    procs = [Processor(f"{name}/c{i}", host=name) for name, n in hosts for i in range(n)]
    widest = max(n for _, n in hosts)
    cores = np.nan_to_num(run.cores, nan=1.0)
    k = np.clip(np.ceil(cores), 1, widest).astype(np.int64)
    changes: dict[str, object] = {"work": run.runtime * params.runtime_factor,
                                  "edge_data": np.zeros(graph.n_edges), "cost": None}
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


def simulate(graph: TaskGraph, run: RecordedRun, params: Parameters, scheduler: str = "recorded") -> Simulated:
    """Simulate ``run`` under ``params`` in the online engine with ``scheduler`` (default: the recorded
    placement).  Deterministic.  O((n + e) log n) plus the policy's decisions."""
    problem = build_problem(graph, run, params)
    schedule, _stats = run_online(problem, policy_for(run, scheduler), engine="simpy")
    return Simulated(schedule.makespan, schedule, problem)
