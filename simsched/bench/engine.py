"""Engine benchmark: the SimPy engine against the fast evaluator replaying the same static plan.

``bench_engine()`` measures, in a fresh interpreter (so peak memory is the measurement's own):
seconds for :func:`~simsched.simulator.engine.execute_plan` and for
:func:`~simsched.simulator.evaluate.evaluate_plan`, SimPy events per task, whether both give the
same floats, and memory.  The targets: engine < 5 s and peak memory < 1 GB at 100,000 tasks on 188
processors.  Run ``python -m simsched.bench.engine [n_tasks] [n_procs] [seed] [plan]``.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def _rss_mb() -> float:
    """Current resident memory of this process (Linux ``/proc``; the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return _peak_rss_mb()


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024.0


def round_robin_plan(problem):  # -> Plan
    """Tasks in topological order dealt cyclically to processors (skipping none: every processor
    must be eligible, as in the random benchmark problems); order = topological position.  O(n)."""
    from simsched.simulator.schedule import Plan

    g, m = problem.graph, problem.n_processors
    n = g.n_tasks
    order = np.empty(n)
    order[g.topo_order] = np.arange(n)
    proc = np.empty(n, dtype=np.int64)
    proc[g.topo_order] = np.arange(n) % m
    return Plan(proc, order)


def _measure(n_tasks: int, n_procs: int, seed: int, plan_kind: str) -> dict:
    from simsched.simulator.engine import _execute
    from simsched.simulator.evaluate import evaluate_plan
    from simsched.simulator.instances import bench_problem

    t0 = time.perf_counter()
    problem = bench_problem(n_tasks, n_procs, seed)
    if plan_kind == "heft":
        from simsched.schedulers.heft import HEFT

        plan = HEFT().plan(problem, np.random.default_rng(seed))
    else:
        plan = round_robin_plan(problem)
    setup_s = time.perf_counter() - t0
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    sim, events = _execute(problem, plan, None)
    engine_s = time.perf_counter() - t0
    rss_after = _rss_mb()
    evaluator_s = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        fast = evaluate_plan(problem, plan)
        evaluator_s = min(evaluator_s, time.perf_counter() - t0)
    return {
        "n_tasks": problem.n_tasks, "n_procs": problem.n_processors, "n_edges": problem.graph.n_edges,
        "plan": plan_kind, "setup_s": setup_s, "engine_s": engine_s, "evaluator_s": evaluator_s,
        "ratio": engine_s / evaluator_s, "events": events, "events_per_task": events / problem.n_tasks,
        "identical": bool(np.array_equal(sim.start, fast.start) and np.array_equal(sim.finish, fast.finish)),
        "makespan": sim.makespan, "rss_before_engine_mb": rss_before,
        "engine_rss_mb": rss_after - rss_before, "peak_rss_mb": _peak_rss_mb(),
    }


def bench_engine(n_tasks: int = 100_000, n_procs: int = 188, seed: int = 0, plan: str = "round-robin") -> dict:
    """Figures of one engine-vs-evaluator replay, measured in a fresh subprocess.

    ``plan`` is ``"round-robin"`` (tasks in topological order dealt cyclically; cheap to build) or
    ``"heft"``.  Returns ``engine_s``, ``evaluator_s`` (best of 3), ``ratio``, ``events``,
    ``events_per_task``, ``identical`` (engine floats == evaluator floats), ``peak_rss_mb`` (the
    subprocess's peak, problem generation included), ``rss_before_engine_mb`` and
    ``engine_rss_mb`` (memory the engine run added), ``setup_s``, sizes and ``makespan``.
    """
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_measure, n_tasks, n_procs, seed, plan).result()


if __name__ == "__main__":
    args = sys.argv[1:]
    kwargs = dict(zip(("n_tasks", "n_procs", "seed"), (int(a) for a in args[:3])))
    if len(args) > 3:
        kwargs["plan"] = args[3]
    print(json.dumps(bench_engine(**kwargs), indent=2))
