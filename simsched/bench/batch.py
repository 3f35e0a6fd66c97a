"""``simsched bench batch``: a cluster log of rigid jobs replayed end to end (SWF file read, SimPy batch
engine, metrics) under EASY backfilling, conservative backfilling and FCFS, beside a plain ``heapq``
FCFS event loop over the same jobs, all timed in CPU seconds in one fresh interpreter; and the
platform such a log runs on (8,192 cores, the RICC machine) built as the batch path builds it
(network kept as host codes and scalars) beside the same platform with its dense (m, m) network
matrices expanded (what every build did before they became lazy): CPU seconds and tracemalloc peak;
and a task-graph scheduler (``srjf-eft``, ``fair-eft``) on such a log, as the batch path runs it (each job
one rigid task, the online engine), with its per-job tables extended at each arrival beside the same
policy rebuilding them over every arrived task (as it did before), schedules compared.

The trace is synthetic (seeded): ``n`` rigid jobs on ``m`` processors, widths powers of two (30% serial),
log-normal run times, requested times 1-3x the run time, Poisson arrivals at offered load 0.85.  The
issue's target: 100,000 jobs on 1,024 processors with EASY in <= 20 s of CPU.
"""

from __future__ import annotations

import heapq
import multiprocessing as mp
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

DAG_SIZE = {True: (500, 256), False: (2_000, 256)}
"""Jobs and processors of the task-graph scheduler rows (``quick``: the first; else the bundled Lublin
log's size)."""

TARGET = (100_000, 1_024)
"""Jobs and processors of the issue's speed target."""

PLATFORM_SIZE = 8_192
"""Processors of the platform rows (the RICC-2010 machine's cores)."""


def synthetic_trace(n: int, m: int, load: float = 0.85, seed: int = 0):
    """A seeded :class:`~simsched.workloads.importers.swf.RigidTrace` of ``n`` jobs for ``m`` processors
    at offered load about ``load`` (see the module docstring).  O(n)."""
    from simsched.workloads.importers.swf import make_trace

    rng = np.random.default_rng(seed)
    procs = np.minimum(2 ** rng.integers(0, max(int(np.log2(m)), 0) + 1, n), m)
    procs = np.where(rng.random(n) < 0.3, 1, procs)
    run = np.ceil(rng.lognormal(6.0, 1.5, n))
    requested = np.ceil(run * rng.uniform(1.0, 3.0, n))
    rate = load * m / float(np.mean(procs * run))
    submit = np.floor(np.cumsum(rng.exponential(1.0 / rate, n)))
    submit -= submit[0]
    return make_trace(submit, run, procs, requested)


def heapq_fcfs(submit: list[float], run: list[float], procs: list[int], m: int) -> list[float]:
    """FCFS start times by a plain heap of events (the baseline loop): one pass per instant after
    its arrivals and ends, the queue's head blocks the rest.  O(n log n)."""
    n = len(submit)
    heap = [(submit[j], 1, j) for j in range(n)]
    heapq.heapify(heap)
    start = [0.0] * n
    queue: list[int] = []
    head, free = 0, m
    while heap:
        now = heap[0][0]
        while heap and heap[0][0] == now:
            _, kind, j = heapq.heappop(heap)
            if kind:
                queue.append(j)
            else:
                free += procs[j]
        while head < len(queue) and procs[queue[head]] <= free:
            j = queue[head]
            head += 1
            free -= procs[j]
            start[j] = now
            heapq.heappush(heap, (now + run[j], 0, j))
    return start


def measure_batch(n: int, m: int) -> dict:
    """CPU seconds, in this process, for EASY, conservative backfilling and FCFS end to end (the
    trace written to an SWF file, read back, replayed, measured) and for :func:`heapq_fcfs` on the
    same jobs; whether the heap loop's FCFS start times equal the engine's.  Conservative
    backfilling plans in compiled code when numba is installed (``conservative_compiled``): its
    first run in a process loads numba, which is counted."""
    from simsched.schedulers.batch_conservative import ConservativeBackfill
    from simsched.schedulers.batch_easy import EASYBackfill
    from simsched.schedulers.batch_fcfs import FCFS
    from simsched.simulator.batch import simulate_batch
    from simsched.workloads.importers.swf import read_swf, write_swf

    trace = synthetic_trace(n, m)
    out: dict = {"jobs": n, "processors": m, "offered_load": trace.offered_load(m)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.swf"
        write_swf(path, trace)
        for name, policy in (("easy", EASYBackfill), ("conservative", ConservativeBackfill), ("fcfs", FCFS)):
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tr = read_swf(path, max_procs=m)
            result = simulate_batch(tr, m, policy())
            metrics = result.metrics()
            out[f"{name}_s"] = time.process_time() - t0
            out[f"{name}_bsld"] = metrics["bsld_mean"]
            out[f"{name}_start"] = result.start
    t0 = time.process_time()
    start = heapq_fcfs(trace.submit.tolist(), trace.run.tolist(), trace.procs.tolist(), m)
    out["heapq_s"] = time.process_time() - t0
    out["identical"] = bool(np.array_equal(np.asarray(start), out.pop("fcfs_start")))
    out.pop("easy_start")
    out.pop("conservative_start")
    from simsched.schedulers.timeline import compiled_available

    out["conservative_compiled"] = compiled_available()
    return out


def measure_platform(m: int) -> dict:
    """CPU seconds and tracemalloc peak (MB) of ``Platform.uniform`` over ``m`` single-processor
    hosts (as ``{name: core, count: m}`` builds them), then of the same build with its dense latency
    and bandwidth matrices read (expanded: O(m^2)); whether the expansion happened only on the read."""
    import tracemalloc

    from simsched.simulator.platform import Platform, Processor

    procs = [Processor(f"core{i}") for i in range(m)]
    out: dict = {}
    for name, dense in (("lazy", False), ("dense", True)):
        tracemalloc.start()
        t0 = time.process_time()
        plat = Platform.uniform(procs, 1.0, 0.0)
        out["lazy_untouched"] = out.get("lazy_untouched", True) and not plat.expanded
        if dense:
            plat.latency, plat.bandwidth  # noqa: B018 - the read expands them
        out[f"{name}_s"] = time.process_time() - t0
        out[f"{name}_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        del plat
    return out


def measure_dag_tables(n: int, m: int) -> dict:
    """CPU seconds, in this process, of ``srjf-eft`` and ``fair-eft`` on the synthetic log as the batch
    path runs task-graph schedulers (:func:`~simsched.workloads.jobs.trace_stream`: each job one task,
    rigid on its processors, on the online engine), with their per-job tables extended at each arrival
    and, as the baseline, rebuilt over every arrived task at each arrival; whether each pair of
    schedules is equal, float for float."""
    from simsched.schedulers.jobaware import FairShareEFT, ShortestJobEFT
    from simsched.simulator.engine import run_online
    from simsched.simulator.platform import Platform, Processor
    from simsched.simulator.problem import Problem
    from simsched.workloads.jobs import trace_stream

    trace = synthetic_trace(n, m)
    problem = Problem(trace_stream(trace, m).graph, Platform.uniform([Processor(f"node{i}") for i in range(m)]))
    out: dict = {}
    for name, cls in (("srjf-eft", ShortestJobEFT), ("fair-eft", FairShareEFT)):
        rebuilding = type(f"Rebuilding{cls.__name__}", (cls,), {"_new_jobs": lambda self, *args: False})
        schedules = []
        for key, policy in (("extended", cls()), ("rebuilt", rebuilding())):
            t0 = time.process_time()
            schedule, _ = run_online(problem, policy, engine="simpy")
            out[f"{name}_{key}_s"] = time.process_time() - t0
            schedules.append(schedule)
        a, b = schedules
        out[f"{name}_identical"] = bool(np.array_equal(a.start, b.start) and np.array_equal(a.finish, b.finish)
                                        and np.array_equal(a.processor, b.processor))
    return out


def bench_batch(quick: bool = False) -> list[dict]:
    """Rows ``{what, size, measured, baseline, ratio, target, ok}`` for ``simsched bench batch``
    (``quick``: 10,000 jobs; the target is compared only at 100,000 jobs on 1,024 processors)."""
    n, m = (10_000, TARGET[1]) if quick else TARGET
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:  # a fresh interpreter
        r = pool.submit(measure_batch, n, m).result()
        plat = pool.submit(measure_platform, PLATFORM_SIZE).result()
        dag = pool.submit(measure_dag_tables, *DAG_SIZE[quick]).result()
    size = f"{n:,} jobs x {m:,} processors, load {r['offered_load']:.2f}"
    at_target = (n, m) == TARGET
    target = "<= 20 s CPU" + ("" if at_target else " at 100,000 jobs (not compared)")
    return [
        dict(what=f"EASY end to end (read SWF, replay, metrics; bsld {r['easy_bsld']:.1f}) vs heapq FCFS loop",
             size=size, measured=r["easy_s"], baseline=r["heapq_s"], ratio=r["heapq_s"] / r["easy_s"],
             target=target, ok=(r["easy_s"] <= 20.0) if at_target else None),
        dict(what=(f"conservative end to end ({'compiled' if r['conservative_compiled'] else 'numpy'} planning; "
                   f"bsld {r['conservative_bsld']:.1f}) vs heapq FCFS loop"), size=size,
             measured=r["conservative_s"], baseline=r["heapq_s"], ratio=r["heapq_s"] / r["conservative_s"],
             target="-", ok=None),
        dict(what=f"FCFS end to end (bsld {r['fcfs_bsld']:.1f}) vs heapq FCFS loop", size=size,
             measured=r["fcfs_s"], baseline=r["heapq_s"], ratio=r["heapq_s"] / r["fcfs_s"], target="-", ok=None),
        dict(what="plain heapq FCFS loop, same jobs (CPU)", size=size, measured=r["heapq_s"], baseline=None,
             ratio=None, target="start times equal the engine's FCFS", ok=r["identical"]),
        dict(what="platform build: network as host codes + scalars vs dense (m, m) (CPU)",
             size=f"{PLATFORM_SIZE:,} processors", measured=plat["lazy_s"], baseline=plat["dense_s"],
             ratio=plat["dense_s"] / plat["lazy_s"], target="-", ok=None),
        dict(what="platform build, peak memory (tracemalloc), same two", size=f"{PLATFORM_SIZE:,} processors",
             measured=plat["lazy_mb"], baseline=plat["dense_mb"], ratio=plat["dense_mb"] / plat["lazy_mb"],
             unit="MB", target="matrices built only when read", ok=plat["lazy_untouched"]),
    ] + [
        dict(what=f"{name} on a log, one rigid task per job: per-job tables extended vs rebuilt per arrival (CPU)",
             size="{:,} jobs x {:,} processors".format(*DAG_SIZE[quick]), measured=dag[f"{name}_extended_s"],
             baseline=dag[f"{name}_rebuilt_s"], ratio=dag[f"{name}_rebuilt_s"] / dag[f"{name}_extended_s"],
             target="the same schedule", ok=dag[f"{name}_identical"])
        for name in ("srjf-eft", "fair-eft")
    ]
