"""``simsched bench deepsched``: DeepSched's planning time side by side with HEFT's, in one run.

Rows in the ``simsched bench`` format (what/size/measured/baseline/ratio/target/ok), all with the
shipped checkpoint already loaded, one warm-up call and torch on one CPU thread (like HEFT):

* **single** instances (the spine benchmark's random DAG on the DeepSched paper's 188 processors,
  up to 10,000 x 188): seconds per plan, DeepSched (features, forward pass, decode) vs HEFT;
* **batched**: B instances of 100 tasks on 16 processors planned together (one padded forward pass,
  one decode vectorised over the batch) against HEFT planning the same B one after another;
  instances per second, ratio = DeepSched's throughput / HEFT's.

* **stages** of the largest single instance (features, forward pass, GRU alone, topological
  sequence, decode; :func:`~simsched.learned.deepsched.diagnose.stage_times`) each beside HEFT's
  whole plan in the same run, and HEFT's compiled placement loop when numba is installed (full run
  only: its JIT compilation takes tens of seconds on a busy machine).

* **direct decode** (:func:`direct_rows`): at 1,000, 10,000 and
  84,654 tasks (the seed paper's largest instance size) on 188 processors, the seconds and the
  makespan of DeepSched with the direct decode (network processor and order, fast-evaluator times)
  and with the EFT decode, of HEFT's numpy loop and of its compiled loop, all in one run; ratio =
  HEFT (numpy) / the row's, for time and for makespan quality (> 1: better than HEFT).

``ok`` says whether DeepSched (or the stage) was the faster one.
"""

from __future__ import annotations

import time

FULL_SIZES = (100, 1_000, 10_000)
QUICK_SIZES = (100, 1_000)
PROCESSORS = 188
FULL_BATCHES = (1, 64, 512)
QUICK_BATCHES = (1, 64)
BATCH_TASKS, BATCH_PROCESSORS = 100, 16


def batch_rows(batches: tuple[int, ...] = FULL_BATCHES, tasks: int = BATCH_TASKS,
               processors: int = BATCH_PROCESSORS, repeat: int = 2) -> list[dict]:
    """Instances per second of HEFT (one after another) and DeepSched (whole batch at once)."""
    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.scheduler import plans
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.instances import bench_problem

    load_checkpoint(None)
    rows = []
    for b in batches:
        problems = [bench_problem(tasks, processors, seed=i) for i in range(b)]
        plans(problems[:1], threads=1)
        heft_schedule(problems[0])
        heft_s = deep_s = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            for p in problems:
                heft_schedule(p)
            heft_s = min(heft_s, time.perf_counter() - t0)
            t0 = time.perf_counter()
            plans(problems, threads=1)
            deep_s = min(deep_s, time.perf_counter() - t0)
        rows.append(dict(what="DeepSched batched vs HEFT (instances/s)",
                         size=f"batch {b} of {tasks} x {processors}",
                         measured=b / deep_s, baseline=b / heft_s, ratio=heft_s / deep_s, unit="inst/s",
                         target="faster than HEFT", ok=bool(deep_s < heft_s)))
    return rows


def bench_deepsched(quick: bool = False) -> list[dict]:
    """Single-instance rows per size, then batched rows per batch size."""
    from simsched.learned.deepsched.evaluate import timing_rows

    rows = []
    for r in timing_rows(None, QUICK_SIZES if quick else FULL_SIZES, PROCESSORS, repeat=2 if quick else 3):
        rows.append(dict(what="DeepSched plan vs HEFT (same run, warm)", size=f"{r['tasks']:,} x {r['processors']}",
                         measured=r["deepsched_s"], baseline=r["heft_s"], ratio=r["ratio"],
                         target="faster than HEFT", ok=bool(r["deepsched_faster"])))
    return rows + stage_rows(max(QUICK_SIZES if quick else FULL_SIZES), PROCESSORS, repeat=1 if quick else 2,
                             compiled=not quick) + batch_rows(QUICK_BATCHES if quick else FULL_BATCHES,
                                                              repeat=1 if quick else 2) + \
        direct_rows(QUICK_DIRECT_SIZES if quick else DIRECT_SIZES)


def stage_rows(n: int, m: int, repeat: int = 2, compiled: bool = True) -> list[dict]:
    """One row per DeepSched stage of one ``n`` x ``m`` plan, each against HEFT's whole plan timed
    in the same run (ratio > 1: the stage alone is faster than HEFT)."""
    from simsched.learned.deepsched.diagnose import stage_times

    times = stage_times(n, m, repeat, compiled=compiled)
    heft = times.pop("HEFT (whole plan)")
    return [dict(what=name if name.startswith(("HEFT", "DeepSched")) else f"DeepSched stage: {name.strip()}",
                 size=f"{n:,} x {m}", measured=s, baseline=heft, ratio=heft / s,
                 target="-", ok=None) for name, s in times.items()]


DIRECT_SIZES = (1_000, 10_000, 84_654)
QUICK_DIRECT_SIZES = (1_000,)


def direct_rows(sizes: tuple[int, ...] = DIRECT_SIZES, m: int = PROCESSORS, eft_up_to: int = 10_000) -> list[dict]:
    """Per size, one warm single plan of each of: HEFT's numpy loop (the baseline), HEFT's compiled
    loop (numba, when installed; JIT excluded), DeepSched with the direct decode and with the EFT
    decode (up to ``eft_up_to`` tasks: its per-task earliest-finish search dominates above).  Two
    rows per planner: seconds, and makespan (every plan's times from the fast evaluator).  Torch on
    one thread, checkpoint loaded beforehand."""
    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.evaluate import timing_problem
    from simsched.learned.deepsched.scheduler import plans
    from simsched.schedulers.heft import heft_schedule
    from simsched.schedulers.timeline import compiled_available
    from simsched.simulator.evaluate import evaluate_plan

    load_checkpoint(None)
    plans([timing_problem(100, m)], threads=1, decoder="direct")  # warm-up: torch, caches
    rows = []
    for n in sizes:
        problem = timing_problem(n, m)
        planners = [("HEFT (numpy loop)", lambda p=problem: heft_schedule(p, compiled=False))]
        if compiled_available():
            heft_schedule(timing_problem(100, m), compiled=True)  # JIT compilation, not timed
            planners.append(("HEFT (compiled loop)", lambda p=problem: heft_schedule(p, compiled=True)))
        planners.append(("DeepSched direct decode", lambda p=problem: plans([p], threads=1, decoder="direct")[0]))
        if n <= eft_up_to:
            planners.append(("DeepSched EFT decode", lambda p=problem: plans([p], threads=1)[0]))
        base_s = base_ms = None
        for name, run in planners:
            t0 = time.perf_counter()
            plan = run()
            seconds = time.perf_counter() - t0
            makespan = float(evaluate_plan(problem, plan).finish.max())
            if base_s is None:
                base_s, base_ms = seconds, makespan
            size = f"{n:,} x {m}"
            rows.append(dict(what=f"{name}: seconds", size=size, measured=seconds, baseline=base_s,
                             ratio=base_s / seconds, target="faster than HEFT (numpy)", ok=bool(seconds < base_s)))
            rows.append(dict(what=f"{name}: makespan", size=size, measured=makespan, baseline=base_ms,
                             ratio=base_ms / makespan, target="-", ok=None))
    return rows
