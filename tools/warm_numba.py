"""Compile every numba kernel of simsched once, into numba's cache, before a parallel test run.

The kernels are ``@numba.njit(cache=True)``: numba keeps their machine code in ``__pycache__`` beside
each source module and loads it in every later process.  On a fresh clone that cache is empty, so the
first test to touch a kernel paid its compilation (a cold cache cost one test 36 s of CPU), and under
``pytest -n auto`` several workers could compile the same kernel at once.  ``.ci/run`` runs this once
before the suite::

    python tools/warm_numba.py

Each kernel is reached through the code that calls it, on a tiny input, so it is compiled for the
argument types real runs pass: the compiled online loop (MCT, a replayed plan, srjf-eft, fair-eft,
online-heft, minmin, maxmin, ecs-online and rl-gate's gated srjf-eft, a replay of P-state triples; one machine
code with and without failures, stragglers, P-states and gang tasks), HEFT's
compiled placement (with and without insertion), conservative
backfilling's planning (on a kept profile, and the whole rebuild and its profile alone, which its
property test calls), and the learned scheduler's compiled forward pass (where torch is installed, to
build a network).  Prints the CPU seconds each took (near 0 once cached).  Without numba (extra
``fast``) there is nothing to compile: it says so and exits 0.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable


def _engine() -> None:
    from simsched.simulator.engine.compiled import compile_seconds

    compile_seconds()


def _heft() -> None:
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.instances import bench_problem

    problem = bench_problem(30)
    for insertion in (True, False):
        heft_schedule(problem, insertion=insertion, compiled=True)


def _conservative() -> None:
    from simsched.schedulers.batch_conservative import ConservativeBackfill
    from simsched.simulator.batch import simulate_batch
    from simsched.workloads.importers.swf import make_trace

    policy = ConservativeBackfill()
    policy.compiled = True
    trace = make_trace([0, 1, 2, 3], [10, 0, 10, 10], [1, 2, 1, 2], requested=[10, 0, 10, 10])
    simulate_batch(trace, 2, policy)
    import numpy as np

    from simsched.schedulers import conservative_kernel, conservative_plan

    q, requested = np.arange(2, dtype=np.int64), np.array([1.0, 2.0])  # the profile alone, as its property test
    ranks = conservative_plan.instant_ranks(q, requested)
    conservative_kernel.build_profile(0.0, 2, np.zeros(0), np.zeros(0, dtype=np.int64), np.array([0.0, 1.0]),
                                      requested, np.ones(2, dtype=np.int64), ranks)
    conservative_kernel.plan_queue(q, np.array([0.0, np.nan]), requested, np.ones(2, dtype=np.int64), 0.0, 2,
                                   np.zeros(0), np.zeros(0, dtype=np.int64), False)


def _learned() -> None:
    if importlib.util.find_spec("torch") is None:
        print("  (torch is not installed: the learned scheduler's forward pass is not compiled)")
        return
    import torch

    from simsched.learned.rl.fastnet import NumpyActor
    from simsched.learned.rl.features import StaticInfo, observe
    from simsched.learned.rl.nets import ActorCritic
    from simsched.schedulers.jobaware import ShortestJobEFT
    from simsched.simulator.engine import run_online
    from simsched.simulator.instances import bench_problem

    torch.manual_seed(0)
    net = ActorCritic(8, 1)
    net.eval()
    actor = NumpyActor(net.state_dict(), 1, compiled=True)
    seen = []

    class Watch(ShortestJobEFT):
        def decide(self, view):  # type: ignore[no-untyped-def]
            if view.ready.size and not seen:
                seen.append(observe(StaticInfo.of(view.problem, arrived_only=True), view))
            return super().decide(view)

    run_online(bench_problem(12), Watch())
    actor.act(seen[0])


KERNELS: dict[str, Callable[[], None]] = {"compiled online loop": _engine, "HEFT placement": _heft,
                                          "conservative backfilling": _conservative, "learned forward pass": _learned}


def main() -> int:
    if importlib.util.find_spec("numba") is None:
        print("numba is not installed (extra 'fast'): no kernel to compile")
        return 0
    total = 0.0
    for name, warm in KERNELS.items():
        t0 = time.process_time()
        warm()
        spent = time.process_time() - t0
        total += spent
        print(f"  {name}: {spent:.1f} s of CPU")
    print(f"numba kernels compiled into their cache in {total:.1f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
