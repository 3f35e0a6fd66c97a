"""``simsched bench``: speed figures printed side by side with a baseline measured in the same run.

Machines are noisy, so every figure that matters is a ratio between two things timed back to back:
the vectorised HEFT against a plain-Python HEFT from the paper's pseudocode, the SimPy engine
against the fast evaluator on the same plan.  Absolute seconds are shown next to the targets of the
spine issue for orientation.  Each measurement runs in a fresh interpreter so its peak memory is
its own.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import resource
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from simsched.simulator.instances import N_PROCESSORS, bench_problem

__all__ = ["N_PROCESSORS", "bench_problem", "main", "sized_target"]


def _timed(fn: Callable[[], Any], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure_heft(n_tasks: int, with_reference: bool) -> dict:
    """Seconds for the vectorised HEFT (best of 3 below 20k tasks) and, optionally, the
    plain-Python reference HEFT on the same problem; checks that both give the same makespan."""
    from simsched.bench.reference_heft import reference_heft
    from simsched.schedulers.heft import heft_schedule

    problem = bench_problem(n_tasks)
    plan = heft_schedule(problem)
    out = {"n_tasks": n_tasks, "heft_s": _timed(lambda: heft_schedule(problem), 3 if n_tasks < 20_000 else 1),
           "makespan": float(plan.finish.max())}
    if with_reference:
        t0 = time.perf_counter()
        _, _, finish = reference_heft(problem)
        out["reference_s"] = time.perf_counter() - t0
        out["same_makespan"] = bool(np.isclose(finish.max(), out["makespan"]))
    from simsched.schedulers.timeline import compiled_available
    if compiled_available():  # the compiled loop (extra `fast`): warmed once, so JIT time is not counted
        fast = heft_schedule(problem, compiled=True)
        out["compiled_s"] = _timed(lambda: heft_schedule(problem, compiled=True), 3)
        out["compiled_identical"] = bool(np.array_equal(fast.start, plan.start)
                                         and np.array_equal(fast.finish, plan.finish)
                                         and np.array_equal(fast.processor, plan.processor))
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def measure_replay(n_tasks: int) -> dict:
    """Seconds for the SimPy engine and for the fast evaluator replaying the same HEFT plan, the
    largest difference between their times, and this process's peak memory."""
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.engine import execute_plan
    from simsched.simulator.evaluate import evaluate_plan

    problem = bench_problem(n_tasks)
    plan = heft_schedule(problem)
    before = _peak_rss_mb()
    t0 = time.perf_counter()
    sim = execute_plan(problem, plan)
    engine_s = time.perf_counter() - t0
    evaluator_s = _timed(lambda: evaluate_plan(problem, plan), 3)
    fast = evaluate_plan(problem, plan)
    return {"n_tasks": n_tasks, "engine_s": engine_s, "evaluator_s": evaluator_s,
            "max_abs_diff": float(np.abs(sim.finish - fast.finish).max()),
            "rss_before_mb": before, "peak_rss_mb": _peak_rss_mb()}


def _isolated(fn: Callable[..., dict], *args: Any) -> dict:
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def sized_target(limit: str, target_size: int, measured_size: int, ok: bool) -> dict:
    """``target`` and ``ok`` of a row whose target holds at ``target_size``: compared only when the
    measurement was taken at that size, within 10% (``ok`` is None, shown ``-``, otherwise: like with
    like)."""
    target = f"{limit} at {target_size:,}"
    if abs(measured_size - target_size) > 0.1 * target_size:
        return {"target": f"{target} (not compared)", "ok": None}
    return {"target": target, "ok": ok}


def spine_figures(quick: bool = False) -> list[dict]:
    """The spine issue's figures as rows ``{what, size, measured, baseline, ratio, target, ok}``."""
    small = 2_000 if quick else 10_000
    large = 10_000 if quick else 84_654
    replay = 10_000 if quick else 100_000
    rows = []
    h = _isolated(measure_heft, small, True)
    rows.append(dict(what="HEFT vs textbook HEFT (same run)", size=f"{small:,} x {N_PROCESSORS}",
                     measured=h["heft_s"], baseline=h["reference_s"], ratio=h["reference_s"] / h["heft_s"],
                     **sized_target("< 0.3 s", 10_000, small, h["heft_s"] < 0.3 and h["same_makespan"])))
    if "compiled_s" in h:
        rows.append(dict(what="HEFT compiled loop (numba) vs numpy loop, same plan", size=f"{small:,} x {N_PROCESSORS}",
                         measured=h["compiled_s"], baseline=h["heft_s"], ratio=h["heft_s"] / h["compiled_s"],
                         **sized_target("<= 0.1 s, identical", 10_000, small,
                                        h["compiled_s"] <= 0.1 and h["compiled_identical"])))
    h = _isolated(measure_heft, large, False)
    rows.append(dict(what="HEFT vs DeepSched paper's HEFT", size=f"{large:,} x {N_PROCESSORS}",
                     measured=h["heft_s"], baseline=670.0 if large == 84_654 else None,
                     ratio=670.0 / h["heft_s"] if large == 84_654 else None,
                     **sized_target("< 10 s", 84_654, large, h["heft_s"] < 10.0)))
    r = _isolated(measure_replay, replay)
    rows.append(dict(what="SimPy engine replay (transfers included)", size=f"{replay:,} x {N_PROCESSORS}",
                     measured=r["engine_s"], baseline=None, ratio=None, target="< 5 s",
                     ok=r["engine_s"] < 5 and r["max_abs_diff"] < 1e-6))
    rows.append(dict(what="fast evaluator vs SimPy engine, same plan", size=f"{replay:,} x {N_PROCESSORS}",
                     measured=r["evaluator_s"], baseline=r["engine_s"], ratio=r["engine_s"] / r["evaluator_s"],
                     target="< 0.1 s, equal times", ok=r["evaluator_s"] < 0.1 and r["max_abs_diff"] < 1e-6))
    rows.append(dict(what="SimPy replay peak memory", size=f"{replay:,} x {N_PROCESSORS}",
                     measured=r["peak_rss_mb"], baseline=r["rss_before_mb"], ratio=None,
                     target="< 1024 MB", ok=r["peak_rss_mb"] < 1024, unit="MB"))
    return rows


def workload_figures(bench_workloads: Callable[..., dict], quick: bool) -> list[dict]:
    """The workloads figures (WfFormat import beside ``json.load`` of the same file, random DAG
    generation) as bench rows."""
    from simsched.bench.workloads import IMPORT_RATIO_TARGET

    n_random = 20_000 if quick else 100_000
    w = bench_workloads(tasks_wf=20_000, tasks_random=n_random, repeat=5)  # best of 5: a shared machine is noisy
    return [
        dict(what="import a WfCommons (WfFormat JSON) instance vs json.load of it (CPU s)",
             size=f"{w['wfcommons_tasks']:,} tasks, {w['wfcommons_edges']:,} edges, {w['wfcommons_file_mb']} MB",
             measured=w["wfcommons_load_s"], baseline=w["json_load_s"], ratio=1.0 / w["wfcommons_ratio"],
             target=f"ratio >= {1 / IMPORT_RATIO_TARGET:.2f} (within {IMPORT_RATIO_TARGET:g}x json.load)",
             ok=w["wfcommons_ratio"] <= IMPORT_RATIO_TARGET),
        dict(what="generate a random DAG (Topcuoglu 2002)", size=f"{w['random_dag_tasks']:,} tasks, "
             f"{w['random_dag_edges']:,} edges", measured=w["random_dag_s"], baseline=None, ratio=None,
             **sized_target("< 2 s", 100_000, w["random_dag_tasks"], w["random_dag_s"] < 2.0)),
    ]


GROUP_NAMES = ("spine", "schedulers", "workloads", "sweep", "capacity", "deepsched", "quality", "stg", "scale",
               "streams", "world", "batch", "rl")
"""Every benchmark group :func:`main` knows, in its order (``bench --help`` lists the same; a test checks)."""


def main(what: str = "spine", quick: bool = False, *, show: Callable[[list[dict], str], None],
         say: Callable[[str], None] = print, progress: Callable[[int, int, str], None] | None = None,
         limit: int | None = None, size: str | None = None) -> list[dict]:
    """Run one benchmark group and hand each group's rows to ``show(rows, title)``: ``spine`` (HEFT,
    engine, evaluator), ``schedulers`` (every static scheduler across sizes), ``workloads`` (loading
    and generation), ``sweep`` (a study's runs per second), ``capacity`` (a capacity search in one
    process and on 1, 2 and 4 workers, wall and CPU), ``deepsched`` (batched DeepSched inference
    against HEFT), ``quality`` (every static scheduler's gap to the best known makespan on a
    benchmark set; ``say`` gets its caption line, ``progress(done, total, label)`` its progress),
    ``stg`` (gaps to the published optima of Kasahara's STG set on its hard cases; ``limit``: the
    first cases only),
    ``scale`` (the pipeline at 10k / 100k / 1M tasks, stage by stage, beside raw SimPy and heapq),
    ``streams`` (a job stream end to end, events/s beside a raw SimPy floor), ``world`` (rl-world's
    world-model step, numpy and torch, unbatched and batched, beside a real step), ``batch`` (a
    cluster log of rigid jobs under EASY and FCFS beside a plain heapq loop), ``rl`` (the learned agent's
    CPU per decision beside srjf-eft's on the same days), or ``all``.  The
    command line passes :func:`simsched.report.bench.show_rows` with a console.  ``size`` (``--size``)
    sets the streams group's size (:func:`simsched.bench.streams.parse_size`); no other group takes one."""
    def group(module: str, function: str) -> Callable[..., list[dict]]:
        # imported only when chosen: each group's module is loaded by the group that runs
        return getattr(importlib.import_module(f"simsched.bench.{module}"), function)

    groups: dict[str, Callable[[], list[dict]]] = {
        "spine": lambda: spine_figures(quick),
        "schedulers": lambda: group("schedulers", "bench_schedulers")(quick),
        "workloads": lambda: workload_figures(group("workloads", "bench_workloads"), quick),
        "sweep": lambda: group("sweep", "bench_sweep")(quick),
        "capacity": lambda: group("capacity", "bench_capacity")(quick),
        "deepsched": lambda: group("deepsched", "bench_deepsched")(quick),
        "quality": lambda: group("quality", "bench_quality")(quick, progress=progress, say=say),
        "stg": lambda: group("stg", "bench_stg")(quick, limit=limit, progress=progress, say=say),
        "scale": lambda: group("scale", "bench_scale")(quick),
        "streams": lambda: group("streams", "bench_streams")(quick, size),
        "world": lambda: group("world", "bench_world")(quick),
        "batch": lambda: group("batch", "bench_batch")(quick),
        "rl": lambda: group("rl", "bench_rl")(quick),
    }
    assert tuple(groups) == GROUP_NAMES, "GROUP_NAMES lists the groups in their order"
    from simsched.errors import SimschedError

    chosen = list(groups) if what == "all" else [what]
    if size is not None and what != "streams":
        raise SimschedError(f"--size sets the streams benchmark's size; {what!r} takes none")
    if limit is not None and what != "stg":
        raise SimschedError(f"--limit takes the first N cases of the stg benchmark; {what!r} takes none")
    for name in chosen:
        if name not in groups:
            raise SimschedError(f"unknown benchmark {name!r}; choose from {', '.join(groups)} or all")
    all_rows = []
    for name in chosen:
        rows = groups[name]()
        if rows:
            show(rows, f"simsched bench {name}" + (" (quick)" if quick else ""))
        all_rows += rows
    return all_rows
