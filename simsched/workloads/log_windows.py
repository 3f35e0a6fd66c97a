"""Windows of consecutive jobs of a cluster log: RLScheduler's evaluation protocol (Zhang et al.,
SC'20; its ``compare-pick-jobs.py``) as data.

A window is ``jobs`` consecutive jobs of the log, replayed from an empty machine.  Its first job is
drawn uniformly from ``[jobs, N - jobs - 1)``, ``N`` the log's jobs or the first ``within`` of them
(RLScheduler draws SDSC-SP2 and HPC2N windows within the first 10,000 jobs); the range leaves one
window of jobs before every start, the jobs a pre-loaded machine would hold.

Two draws: :func:`seeded_start` (``draw: seed``) takes the start from the day's own seed, so windows
follow simsched's seed spaces (train / select / evaluate / fresh) like the days of a stream;
:func:`rlscheduler_starts` (``draw: rlscheduler``) repeats RLScheduler's own sequence of starts for
a seed: the consecutive ``randint`` draws of the legacy (gym < 0.22) seeding, a numpy ``RandomState``
seeded with the 32-bit limbs of the first 8 bytes of SHA-512 of the seed's decimal text.  O(1) per
start; :func:`cut` is O(jobs).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from simsched.errors import SimschedError
from simsched.workloads.importers.swf import RigidTrace


def start_range(n: int, jobs: int, within: int | None = None) -> tuple[int, int]:
    """``[lo, hi)`` of the first job of a window of ``jobs`` jobs of a log of ``n`` jobs (drawn within
    the first ``within``).  :class:`SimschedError` when no window fits.  O(1)."""
    top = n if within is None else min(n, within)
    lo, hi = jobs, top - jobs - 1
    if hi <= lo:
        where = f"the first {top:,} jobs of the log" if within is not None and within < n else f"a log of {n:,} jobs"
        raise SimschedError(f"windows of {jobs:,} jobs need at least {2 * jobs + 2:,} jobs to draw from (a window's "
                            f"worth before the first start and after the last); {where} is too short")
    return lo, hi


def seeded_start(seed: int, lo: int, hi: int) -> int:
    """The first job of the window of day ``seed``: uniform in ``[lo, hi)`` from the seed's own
    generator (:func:`numpy.random.default_rng`).  O(1)."""
    return lo + int(np.random.default_rng(np.random.SeedSequence(int(seed)).spawn(1)[0]).integers(hi - lo))


def _legacy_limbs(seed: int) -> list[int]:
    """The 32-bit words the legacy gym seeding hands to ``RandomState.seed`` for ``seed``."""
    head = hashlib.sha512(str(int(seed) % (1 << 64)).encode("utf8")).digest()[:8]
    value = int.from_bytes(head, "little")
    limbs = []
    while value > 0:
        value, low = divmod(value, 1 << 32)
        limbs.append(low)
    return limbs or [0]


def rlscheduler_starts(seed: int, count: int, lo: int, hi: int) -> list[int]:
    """The first ``count`` window starts RLScheduler draws with ``--seed seed`` on a range
    ``[lo, hi)`` (its ``reset_for_test``, once per window).  O(count)."""
    rng = np.random.RandomState()
    rng.seed(_legacy_limbs(seed))
    return [int(rng.randint(lo, hi)) for _ in range(count)]


def cut(trace: RigidTrace, start: int, jobs: int) -> RigidTrace:
    """Jobs ``start ... start + jobs - 1`` of ``trace``, their submit times as in the log (a
    priority such as F1 reads absolute submit times); the log's counts of dropped and estimated jobs
    stay with the log (the window's are zero).  O(jobs)."""
    return replace(trace.take(np.arange(start, start + jobs)), dropped={}, perfect_estimates=0)
