"""Tasks that need several cores, on hosts with cores (docs/model.md, "Hosts with cores").

A platform entry with ``cores: c > 1`` is a host of ``c`` one-core slots (``ProcessorSpec.expand``);
a task with ``cores: k > 1`` (WfFormat ``coreCount``) runs on ``k`` of them at once.  The second is
the existing gang machinery (:mod:`simsched.simulator.gang`): such a task is a **rigid gang of k
slots of one host** (``procs: k`` with ``same_host``).  The mapping is made here, when a scenario's
problem (or a stream's day) is built, so that the :class:`TaskGraph` a workload builds stays what
the file said (``cores`` set, ``procs`` 1) and the :class:`~simsched.simulator.problem.Problem` the
schedulers meet carries the gang; a scheduler that places every task on one processor is then
refused up front, as for any gang task.  A task needing more cores than any host has slots of one
type is refused here, naming the task.
"""

from __future__ import annotations

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.platform import Platform
from simsched.workloads.taskgraph import TaskGraph


class CoresError(SimschedError):
    """A task's cores cannot be honoured; :attr:`task` is its index (to locate its ``cores`` field)."""

    def __init__(self, message: str, task: int) -> None:
        super().__init__(message)
        self.task = task


def core_gangs(graph: TaskGraph) -> TaskGraph:
    """``graph`` with every task of ``cores: k > 1`` a rigid gang of ``k`` processors of one host
    (``procs_min = procs_max = k``, ``same_host``); ``graph`` itself when no task needs more than one
    core or every such task is that gang already (so applying it twice changes nothing).  Raises
    :class:`CoresError` naming the first task that needs ``k > 1`` cores and also asks for another
    number of processors (``procs``): a task's cores are its processors.  O(n) (plus one
    :meth:`TaskGraph.with_` when something changes)."""
    cores = graph.cores
    multi = cores > 1
    if not multi.any():
        return graph
    done = multi & (graph.procs_min == cores) & (graph.procs_max == cores) & graph.same_host
    clash = np.flatnonzero(multi & ~done & (graph.procs_max > 1))
    if clash.size:
        i = int(clash[0])
        lo, hi = int(graph.procs_min[i]), int(graph.procs_max[i])
        procs = f"{lo}" if lo == hi else f"[{lo}, {hi}]"
        raise CoresError(f"task {graph.names[i]!r} needs {int(cores[i])} cores and procs {procs}: its cores make "
                         f"it a gang of {int(cores[i])} one-core slots of one host; give cores or procs, not both", i)
    if done[multi].all():
        return graph
    procs = np.stack([graph.procs_min, graph.procs_max], axis=1)
    procs[multi] = cores[multi, None]
    same_host = graph.same_host.copy()
    same_host[multi] = True
    return graph.with_(procs=procs, same_host=same_host)


def largest_host(platform: Platform) -> tuple[int, str, str]:
    """``(slots, host, type)``: the most processors of one type on one host, and where.  O(m)."""
    hosts, types = platform.host_index, platform.type_index
    key = types * platform.n_hosts + hosts
    counts = np.bincount(key)
    best = int(np.argmax(counts))
    t, h = divmod(best, platform.n_hosts)
    return int(counts[best]), platform.host_names[h], platform.type_names[t]


def check_cores_fit(graph: TaskGraph, platform: Platform) -> None:
    """Raise :class:`CoresError` naming the first task that needs more cores
    at once than any host has slots of one type.  Nothing to check when every task needs one core.
    (Which of those slots may run the task, by affinity and memory, is the problem's own gang check.)
    O(n + m)."""
    need = graph.cores
    if not graph.n_tasks or int(need.max()) <= 1:
        return
    most, host, ptype = largest_host(platform)
    bad = np.flatnonzero(need > most)
    if bad.size:
        i = int(bad[0])
        where = (f"the largest host, {host!r}, has {most} {ptype} slots" if most > 1 else
                 "no host has more than one slot of one type")
        raise CoresError(f"task {graph.names[i]!r} needs {int(need[i])} cores at once, but {where}; give a "
                         f"processor cores: {int(need[i])} or more (platform.processors[].cores: a host of that many "
                         f"one-core slots)", i)


def on_cores(graph: TaskGraph, platform: Platform) -> TaskGraph:
    """:func:`check_cores_fit`, then :func:`core_gangs`: the graph the engine runs.  O(n + m)."""
    check_cores_fit(graph, platform)
    return core_gangs(graph)
