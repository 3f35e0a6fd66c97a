"""Memory shared by the tasks running on one host: a task starts on a slot only while its host has the
memory it needs free (docs/execution-model.md, "Host memory").

A host may declare ``host_memory`` (:class:`~simsched.simulator.platform.Processor`; a scenario's
``platform.processors[].host_memory``): the memory of the machine, shared by every task running on any
of its slots at once.  A task needs ``graph.memory[v]`` of it (0: nothing) from the moment it takes its
slot(s) until it leaves them (its ``pre`` step, reads, runtime and writes; a workflow system's ``post``
step runs off the slot and holds none).  The rules:

* **Up front**: a task that needs more than a host's whole memory may not run on any slot of it
  (:attr:`Platform.memory <simsched.simulator.platform.Platform.memory>` is capped by the host's); one
  that fits no host at all is refused when the problem is built (exit 2 in a scenario).
* **At a start**: the head of a free slot's queue (its data there) starts only when the memory of the
  tasks running on its host plus its own need is at most the host's memory (a correctly rounded sum,
  :func:`math.fsum`, so no drift of repeated additions can let a host over-commit or starve); otherwise
  the slot waits, busy, as behind a running task.  A multi-processor task needs its memory once, on the
  host of its members (one host: ``same_host``; for members on several hosts, on its lead's host).
* **At a release**: when a task leaves its slot, the slots of its host that wait for memory are tried
  in the order they began to wait, each started when its head fits (first fit: a smaller task may pass
  a larger one that still does not fit), before the freed slot's own next task.

**What a policy sees.**  Nothing new: the :class:`~simsched.simulator.policy.DecisionView` is today's.
A policy may assign a task to any slot that may run it; the task then waits in that slot's queue until
its host has the memory (the slot is not ``idle`` meanwhile), and ``view.available`` estimates as if
memory were free (refreshed from the actual start, as for every estimate).  No deadlock is possible:
a waiting task fits its host's whole memory, and every memory holder is running and will end.

Composed (:func:`~simsched.simulator.engine.loop.make_run`) only when some host declares memory and some
task needs memory (:attr:`Problem.host_memory_binds
<simsched.simulator.problem.Problem.host_memory_binds>`); other runs keep today's classes and floats.  SimPy
only (the compiled stream loop falls back, ``engine="compiled"`` refuses), not with failures or
stragglers (refused: a killed task's memory is not modelled yet).  ``stats.memory_waits`` counts the
tasks that waited for memory.
"""

from __future__ import annotations

import math

from simsched.errors import SimschedError
from simsched.simulator.problem import Problem

_INF = float("inf")


def check_host_memory_run(problem: Problem, disruptions) -> bool:
    """:attr:`Problem.host_memory_binds`; :class:`SimschedError` when it does and ``disruptions`` are
    active (failures and stragglers are not modelled with host memory yet).  O(n + hosts)."""
    binds = problem.host_memory_binds
    if binds and disruptions is not None and disruptions.active:
        raise SimschedError("memory shared by a host's tasks (host_memory) does not combine with failures or "
                            "stragglers yet; run one or the other")
    return binds


class HostMemory:
    """The online run's host memory: a mixin placed before the other concerns of
    :class:`~simsched.simulator.engine.loop.OnlineRun` (module docstring: the model).

    Owns ``mem_host`` (per processor its host), ``mem_total`` (per host its memory, ``inf`` where
    none), ``mem_need`` (per task), ``mem_held`` (per host: running task -> memory it holds) and
    ``mem_waiting`` (per host: the processors whose queue head waits for memory, in the order they began
    to wait).  Overrides :meth:`_start_next` and :meth:`_start_gang` (take the memory, or wait) and
    :meth:`_release` (give it back, start waiting slots), and sets ``direct_start`` False."""

    def _init_host_memory(self) -> None:
        """Host memory state of a fresh run: every host's memory free, nothing waiting.  O(n + m)."""
        platform = self.problem.platform
        self.mem_host = platform.host_index.tolist()
        self.mem_total = platform.host_memory.tolist()
        self.mem_need = self.problem.graph.memory.astype(float).tolist()
        self.mem_held: list[dict[int, float]] = [{} for _ in self.mem_total]
        self.mem_waiting: list[dict[int, None]] = [{} for _ in self.mem_total]
        self.mem_waited: set[int] = set()
        self.direct_start = False  # a start may wait for memory

    def _take_memory(self, v: int, p: int) -> bool:
        """Task ``v`` is about to start on processor ``p`` (its lead, for a multi-processor task): take its
        memory on ``p``'s host and True, or, when the host has too little free, put ``p`` among the host's
        waiting slots and False.  O(tasks running on the host)."""
        need = self.mem_need[v]
        h = self.mem_host[p]
        total = self.mem_total[h]
        if not need > 0.0 or total == _INF:
            return True
        held = self.mem_held[h]
        if held and math.fsum((*held.values(), need)) > total:
            self.mem_waiting[h][p] = None
            self.mem_waited.add(v)
            return False
        held[v] = need
        self.mem_waiting[h].pop(p, None)
        return True

    def _start_next(self, p: int) -> None:
        """Start the head of ``p``'s queue if its host has the memory it needs, else ``p`` waits for it."""
        v = self.queue[p][0]
        if self.gangs and v in self.gangs:
            self._start_gang(v)
        elif self._take_memory(v, p):
            super()._start_next(p)

    def _start_gang(self, v: int) -> None:
        """Start multi-processor task ``v`` if it may start (:meth:`_gang_can_start`) and its lead's host
        has the memory it needs, else leave it (its lead waits for the memory when that is all it lacks)."""
        if self._gang_can_start(v) and self._take_memory(v, self.gangs[v][0]):
            super()._start_gang(v)

    def _release(self, p: int) -> None:
        """Processor ``p`` ended what it ran: when that task held memory here (``p`` is its lead), give it
        back and start the host's waiting slots whose head now fits (in waiting order), then go on as
        the base engine does (``p``'s next task, or idle).  O(waiting slots x tasks running on the host)."""
        v = self.running[p]
        if v >= 0 and self.proc_of[v] == p:
            h = self.mem_host[p]
            if self.mem_held[h].pop(v, None) is not None and self.mem_waiting[h]:
                running, queue, data_ok, down = self.running, self.queue, self.data_ok, self.down
                for q in list(self.mem_waiting[h]):
                    if q in self.mem_waiting[h] and running[q] < 0 and queue[q] and data_ok[queue[q][0]] \
                            and not down[q]:
                        self._start_next(q)
        super()._release(p)

    def result(self):
        """The base result, with ``stats.memory_waits``: how many tasks waited for memory.  O(1)."""
        out = super().result()
        self.stats.memory_waits = len(self.mem_waited)
        return out
