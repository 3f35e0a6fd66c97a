"""What a batch run refuses before it starts: a job wider than the machine
(:func:`check_trace_fits`) and failures under which the engine cannot model or finish the run
(:func:`check_batch_failures`)."""

from __future__ import annotations

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.engine.disruptions import MAX_EXPECTED_ATTEMPTS, Disruptions, per_processor
from simsched.workloads.importers.swf import RigidTrace


def check_trace_fits(trace: RigidTrace, m: int) -> None:
    """:class:`SimschedError` when a job needs more than the ``m`` processors of the machine."""
    if trace.n and int(trace.procs.max()) > m:
        j = int(np.argmax(trace.procs))
        raise SimschedError(f"job {int(trace.ids[j])} needs {int(trace.procs[j])} processors, the machine has {m}; "
                            f"drop wider jobs (too_wide: drop) or give the platform more processors")


def check_batch_failures(trace: RigidTrace, m: int, failures: Disruptions, kill: bool = False) -> None:
    """Refuse, before a run, failures under which the batch engine cannot model or finish it:
    stragglers (not modelled here); a down interval of a processor the machine lacks; a job whose
    ``k`` processors fail so often that a run of its length needs more than
    :data:`~simsched.simulator.engine.disruptions.MAX_EXPECTED_ATTEMPTS` tries on average
    (``e^(length x sum of the k smallest failure rates)``); a job whose ``k`` processors are up at once
    less than once in ``max_events`` failures (a Chernoff bound on the number up, each up a fraction
    ``MTBF / (MTBF + MTTR)`` of the time); more failure episodes than ``max_events``
    (:mod:`simsched.limits`) over the run.  :class:`~simsched.limits.LimitError` or
    :class:`SimschedError` naming ``failures``/``stragglers``.  O(n + m log m)."""
    from simsched import limits

    if failures.slowdown_rate > 0 and failures.slowdown > 1:
        raise SimschedError("stragglers are not modelled by the batch engine (a rigid job's run time comes "
                            "from its log); remove the stragglers section", field="stragglers")
    for p, _a, _b in failures.down_trace:
        if not 0 <= p < m:
            raise SimschedError(f"a down interval names processor {p}; the machine has {m} (0..{m - 1})",
                                field="failures")
    rate = per_processor(failures.failure_rate, m, "failure_rate")
    if trace.n == 0 or not (rate > 0).any():
        return
    dur = np.minimum(trace.run, trace.requested) if kill else trace.run
    best = np.concatenate([[0.0], np.cumsum(np.sort(rate))])  # the k most reliable processors' rate sum
    exposure = dur * best[np.minimum(trace.procs, m)]
    j = int(np.argmax(exposure))
    if exposure[j] > np.log(MAX_EXPECTED_ATTEMPTS):
        raise limits.LimitError(
            f"job {int(trace.ids[j])} ({int(trace.procs[j])} processors for {float(dur[j]):g} s) would need about "
            f"e^{float(exposure[j]):.0f} attempts: the MTBF is far below its length on {int(trace.procs[j])} "
            f"processors (more than {MAX_EXPECTED_ATTEMPTS:,} attempts expected); raise the MTBF", field="failures")
    # a job needs its k processors up at once: with up-fractions a_p = MTBF / (MTBF + MTTR) the number up
    # at a random instant has mean mu = sum a_p, and P(at least k up) <= e^-mu (e mu / k)^k for k > mu
    # (Chernoff); a chance below 1 / max_events means more failures and repairs than the limit pass
    # before the job can start (an MTTR far above the MTBF on a job as wide as the machine never ended)
    up = 1.0 / (1.0 + rate * per_processor(failures.repair_time, m, "repair_time"))
    mu = float(up.sum())
    j = int(np.argmax(trace.procs))
    k = min(int(trace.procs[j]), m)
    if k > mu:
        log_chance = -mu + k * (1.0 + np.log(mu / k)) if mu > 0 else -np.inf
        if log_chance < -np.log(limits.current().max_events):
            raise limits.LimitError(
                f"job {int(trace.ids[j])} needs {k} processors up at once, but with these failures about {mu:.3g} "
                f"of the {m} are up at a time (MTBF / (MTBF + MTTR) each): {k} are up together less than once "
                f"in {limits.current().max_events:,} failures (max_events), so it would wait for ever; lower the "
                f"MTTR or raise the MTBF", field="failures")
    span = max(float(trace.submit.max()), float(np.dot(trace.procs, dur)) / m)
    events = float(rate.sum()) * span
    if events > limits.current().max_events:
        raise limits.LimitError(
            f"about {events:.3g} failures over a run of at least {span:g} s, more than the limit of "
            f"{limits.current().max_events:,} (max_events; to allow more, set SIMSCHED_MAX_EVENTS); raise the MTBF",
            field="failures")
