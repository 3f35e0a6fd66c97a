"""The SimPy engine (one package, a module per driver): the ground truth every scheduler is measured by.

Two drivers share one model of execution:

* :func:`execute_plan` replays a static :class:`~simsched.simulator.schedule.Plan` (HEFT, CPOP,
  GA, ...): each processor runs its planned sequence in order.
* :func:`run_online` drives an :class:`~simsched.simulator.policy.OnlinePolicy` (list heuristics,
  RL agents): at every decision point the policy assigns ready tasks to processor queues.

The model: a processor runs one task at a time.  A task starts when it has arrived
(``graph.arrival``), its processor is free and has reached it in its sequence or queue, and the
data of every predecessor has been transferred to its processor.  A transfer of edge ``(u, v)``
takes ``problem.transfer_time`` (zero on the same processor) and is a SimPy timeout.  Durations are
``W[t, p] * factor[t]`` with the per-task factors of a :class:`~simsched.simulator.noise.NoiseModel`
(all 1 when ``factors`` is None).

Implementation: callbacks and countdowns on a ``simpy.Environment`` rather than one SimPy process
per task — a task is a counter of the things it still waits for; every timeout carries the task it
concerns as its value.  Zero-delay transfers (same processor) are counted down at once, since
``t + 0.0 == t``.  That keeps a replay at about one event per task plus one per cross-processor
edge, and the floats identical to :func:`~simsched.simulator.evaluate.evaluate_plan` (every time is
``earlier time + delay``, computed once, as the evaluator does).  The garbage collector is paused
during ``env.run()`` (the engine allocates many small, acyclic objects; ~40% faster at 100k tasks).

Dynamic runs (:func:`run_online` with ``disruptions``, and :class:`OnlineSession`) add processor
failures and slowdowns (:class:`Disruptions`): per processor an on/off Poisson process (MTBF/MTTR)
or a trace of down intervals, drawn lazily from the processor's own seeded ``Generator``.  A failure
kills the running task (its time so far is lost work) and hands it, with the failed processor's
queue, back to the policy, which places it anew (earliest-finish rules pick another processor,
since the failed one is available only after its repair); a task started on a slowed-down
processor takes ``slowdown`` times longer.  :class:`OnlineSession` steps an online run one assignment at a time —
the simulation is paused at each decision point (a callback raises ``simpy``'s
``StopSimulation``) — which is how the gymnasium environment (:mod:`simsched.learned.rl.env`) drives this
engine.

A task that needs several processors at once (:mod:`simsched.simulator.gang`) is replayed as one
node waiting for its turn on every member (plan) or allocated all its members together by
:class:`~simsched.simulator.engine.gangs.GangAllocation` (online), and released with them.

The online engine, by concern (one mixin per module, composed into
:class:`~simsched.simulator.engine.loop.OnlineRun`; each owns its part of the run's state):

=================  ====================================================================================
``loop.py``        :func:`run_online`, the run's graph state (arrivals, ready set, finishes), the driver
``decide.py``      decision points, the policy's :class:`~simsched.simulator.policy.DecisionView`, its answer
``assign.py``      checking and costing an assignment, input transfers, per-processor queues, starts, release
``gangs.py``       tasks that hold several processors at once
``disruptions.py`` :class:`Disruptions`, :func:`~simsched.simulator.engine.disruptions.check_disruptions_end`,
                   failures, repairs and slowdowns during a run
``stats.py``       :class:`OnlineStats` and :class:`DisruptionLog`: what a run counts and records
``overheads.py``   :class:`Overheads`, :data:`PROFILES`: workflow-system overheads (submission, a
                   rate-limited dispatcher, a scheduling cycle, pre/post steps, start-up), off by default
``storage.py``     :class:`Storage`, :class:`TaskIO`: files read and written through one storage service
                   whose bandwidth concurrent flows share fairly, files kept per host; off by default
``hostmem.py``     :class:`~simsched.simulator.engine.hostmem.HostMemory`: memory a host's running tasks
                   share (``host_memory``): a start waits for its host's free memory; off by default
``session.py``     :class:`OnlineSession`: the same run, stepped one assignment at a time
``plan.py``        :func:`execute_plan` (``copies.py``: plans with task duplication)
``compiled*.py``   the numba stream loop (below)
``common.py``      the decision priority, the ``Tick`` event entry, the paused GC, uniform links
=================  ====================================================================================

**Where the model of execution grows.**  A new part of it is a new module beside these holding one
more mixin, placed before the others in a class that
:func:`~simsched.simulator.engine.loop.make_run` composes only for runs that use it (``OverheadRun``,
``StorageRun``, and ``MemoryRun`` and its kin with host memory); today's runs keep
:class:`~simsched.simulator.engine.loop.OnlineRun`, hence today's floats and speed.  The hooks such a
mixin overrides, each the one place where that thing happens:

* ``OnlineRun._becomes_ready(v)``: a task whose predecessors are done enters the ready set —
  overheads delay it by submission, a rate-limited dispatcher and the scheduling cycle.
* ``Assignment._checked_cost(v, p, k)`` (``GangAllocation._gang_cost`` for a multi-processor task): how
  long task ``v`` holds processor ``p`` as the policy is told (``W[v, p]`` x the P-state slowdown) —
  overheads add ``pre`` and storage its I/O estimate here, so ``view.available`` counts them.
* ``Assignment._input_delay(v, p)`` (``_gang_input_delay``): the transfers of ``v``'s inputs to ``p``
  start here and it returns when the last is there — storage makes it zero, since its inputs are
  files read on the slot once the task holds it.
* ``Assignment._start_next(p)``: the head of ``p``'s queue starts (entered only when ``running[p] < 0``,
  the head's data is there and ``p`` is up; from ``_assign``, ``_on_data``, ``_release`` and a repair);
  ``GangAllocation._start_gang(v)`` is the same for a multi-processor task.  With overheads a start
  becomes a finish in one place, ``WorkflowOverheads._hold``, which storage overrides with its phases
  (``pre``, a read flow, the runtime, a write flow).
* ``OnlineRun._on_finish(ev)``: a task's runtime ended — overheads free its processor and count it
  done ``post`` later.  ``Assignment._release(p)``: ``p`` ended what it ran (every finish comes here).
* ``Decisions._decision_point(trigger)``: when the policy is next asked.
* ``OnlineRun.direct_start``: a task assigned to an idle processor gets its finish event at once
  (``Assignment._start_when_data``) only while this is True; a concern that can delay or stop a
  start sets it False (disruptions and overheads do).

Hosts with cores need no hook: a platform entry with ``cores: c`` is ``c`` one-core slots of one host,
and a task's ``cores: k`` a rigid gang of ``k`` slots of one host (``procs: k`` with ``same_host``),
mapped when a scenario's problem is built (:mod:`simsched.scenario.cores`); the engine runs it as any
other gang task (``gangs.py``).

``execute_plan`` (``plan.py``) is a closed loop of closures, for speed, and has none of these hooks: a
plan under a model with these parts is best run through the online loop by a policy replaying the
plan's assignments in order, so that each part is written once.

:mod:`simsched.simulator.engine.compiled` runs the common stream case (MCT, Min-Min, the job-aware
rules or a replay of recorded decisions; failures, repairs and stragglers included; gangs placed by the
job-aware rules, failures included; no arrivals out of index order) in one numba loop that pushes SimPy's
events one for one and gives the same schedules float for float; ``run_online(engine="auto")`` picks
it for large runs when numba is installed, and SimPy stays the ground truth and the fallback.

This module never imports :mod:`simsched.schedulers`; the policy protocols are the contract.

SimPy version: the drivers read ``Event._value``, ``Environment._now`` and ``_eid`` (and set ``_ok``
on a pre-triggered decision event) on their hot path, which saves a property call per event, and the
online driver pushes ``(time, priority, eid, event)`` entries on ``Environment._queue`` itself with
a slotted event holding only what ``Environment.step`` reads.  These are SimPy 4's internals, so
``pyproject.toml`` pins ``simpy>=4.1,<5``; a SimPy 5 port replaces them with ``ev.value``,
``env.now``, ``Timeout`` and a counted event total.
"""

from simsched.simulator.engine.common import DECISION_PRIORITY
from simsched.simulator.engine.disruptions import Disruptions
from simsched.simulator.engine.loop import run_online
from simsched.simulator.engine.overheads import PROFILES, Overheads
from simsched.simulator.engine.plan import _execute, execute_plan
from simsched.simulator.engine.session import OnlineSession
from simsched.simulator.engine.stats import DisruptionLog, OnlineStats
from simsched.simulator.engine.storage import Storage, TaskIO

__all__ = ["DECISION_PRIORITY", "PROFILES", "DisruptionLog", "Disruptions", "OnlineSession", "OnlineStats",
           "Overheads", "Storage", "TaskIO", "_execute", "execute_plan", "run_online"]
