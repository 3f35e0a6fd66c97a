"""The batch world: rigid jobs of ``k`` processors sharing one machine, on SimPy (the ground truth).

A cluster log (:class:`~simsched.workloads.importers.swf.RigidTrace`) is a list of rigid jobs:
job ``j`` is submitted at ``submit[j]``, needs ``procs[j]`` processors at once for ``run[j]``
seconds, and its user asked for ``requested[j]`` seconds.  :func:`simulate_batch` runs it on ``m``
identical processors under a :class:`BatchPolicy` on SimPy's event queue: an arrival event per
distinct submit time puts its jobs in the queue; a job the policy starts takes its processors and
a completion event releases them all together after its run time (cut at its requested time when
``kill=True``, as a resource manager kills a job past its wall-time limit).  The events are SimPy
entries ``(time, priority, eid, event)`` pushed with callbacks, as the online engine's are (one
generator process per job costs twice the time at 100,000 jobs and decides nothing more).

The rooms: :mod:`~simsched.simulator.batch.policy` (what a policy sees and answers:
:class:`BatchView`, :class:`BatchPolicy`), :mod:`~simsched.simulator.batch.profile` (the
availability profile backfilling reserves in: :class:`Profile`),
:mod:`~simsched.simulator.batch.engine` (:func:`simulate_batch`: decision points, failures),
:mod:`~simsched.simulator.batch.checks` (what a run refuses before it starts),
:mod:`~simsched.simulator.batch.result` (:class:`BatchResult` and its metrics).
"""

from simsched.simulator.batch.checks import check_batch_failures, check_trace_fits
from simsched.simulator.batch.engine import simulate_batch
from simsched.simulator.batch.policy import BatchEngineError, BatchPolicy, BatchView
from simsched.simulator.batch.profile import Profile
from simsched.simulator.batch.result import TAU, BatchResult

__all__ = ["TAU", "BatchEngineError", "BatchPolicy", "BatchResult", "BatchView", "Profile", "check_batch_failures",
           "check_trace_fits", "simulate_batch"]
