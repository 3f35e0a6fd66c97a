"""``simsched bench capacity``: one capacity search in one process and on 1, 2 and 4 worker processes,
wall and CPU side by side in one run, and whether every answer is the one-process answer.

The search (issue 42): the GPUs beside 2 CPUs that a random DAG of 5,000 tasks (1,000 with ``--quick``),
drawn anew each of 20 days, needs so that HEFT finishes it within a deadline on 95% of days.  The
deadline is set so that the walk is 8 levels long (1, 2, 4, 8 fail; 16 passes; then 12, 10, 11), so
the rounds are sequential and only the days of a round (and, on workers, the speculative levels that
follow it: :func:`simsched.capacity.search.lookahead`) can run at once.

Each configuration runs in a fresh interpreter (so each pays its own pool start: processes that import
simsched and rebuild the model), timed from before the pool starts to after it stops.  CPU is that
interpreter's and its worker processes' together (``getrusage`` of itself and of its reaped children):
the ratio of wall times is the speed-up a user sees, the ratio of CPU what the workers cost beyond the
work itself (process start, speculative days the search did not need).  Beside them, the gain a
CPU-bound loop gets from 2 processes on the machine at that moment (:func:`~simsched.bench.sweep.machine_ceiling`):
on a machine whose cores other work shares, no ratio can exceed it.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

SCENARIO = """\
name: bench-capacity
seed: 0
platform:
  processors:
    - {name: cpu, type: cpu, count: 2}
    - {name: gpu, type: gpu, speed: 3.0, count: 1}
  network: {bandwidth: 4.0, latency: 0.1}
workload: {generator: random, tasks: %d, ccr: 0.5}
noise: {model: lognormal, sigma: 0.1}
schedulers: [heft]
capacity: {objective: "makespan <= %g", resource: gpu, days: 20, on_days: 0.95, max: 64}
"""

SIZES = {False: (5_000, 2_700.0), True: (1_000, 580.0)}
"""Tasks and deadline (time units) of the full and the ``--quick`` search: 11 GPUs meet the deadline on
95% of the 20 days, 10 do not (an 8-level walk)."""

WORKERS = (1, 2, 4)


def _cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(path: str, workers: int | None) -> dict[str, Any]:
    """Wall and CPU seconds (this process and its workers) of the search of ``path`` in this process
    (``workers`` None) or on a pool of ``workers`` processes started and stopped inside the time; its
    answer as canonical JSON without wall times, its levels and simulations.  Run it in a fresh
    interpreter (:func:`bench_capacity` does)."""
    from simsched.capacity.days import ExecutorDays
    from simsched.capacity.question import question_from
    from simsched.run.executors import PoolExecutor
    from simsched.yamlio import load_yaml

    question = question_from(load_yaml(Path(path)))
    cpu0, t0 = _cpu_s(), time.perf_counter()
    if workers is None:
        result = question.answer()
    else:
        with ExecutorDays(PoolExecutor(workers)) as runner:
            result = question.answer(runner=runner)
    wall, cpu = time.perf_counter() - t0, _cpu_s() - cpu0
    entries = [{k: v for k, v in e.items() if k != "wall_s"} for e in result["variants"]]
    return {"wall_s": wall, "cpu_s": cpu, "answer": json.dumps(entries, sort_keys=True, default=str),
            "levels": sum(len(e["levels"]) for e in entries), "simulations": sum(e["simulations"] for e in entries),
            "capacity": [e["capacity"] for e in entries]}


def _fresh(path: str, workers: int | None) -> dict[str, Any]:
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(measure, path, workers).result()


def bench_capacity(quick: bool = False) -> list[dict]:
    """Rows ``{what, size, measured, baseline, ratio, target, ok}`` (:mod:`simsched.bench.dispatch`): per
    worker count, the wall seconds of the search on the pool (measured) against one process (baseline),
    then its CPU seconds against one process's; and the machine's 2-process ceiling at that moment."""
    from simsched.bench.sweep import machine_ceiling

    tasks, deadline = SIZES[quick]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "capacity.yaml"
        path.write_text(SCENARIO % (tasks, deadline))
        serial = _fresh(str(path), None)
        pooled = {w: _fresh(str(path), w) for w in WORKERS}
    size = (f"{tasks:,}-task DAGs, 20 days, {serial['levels']} levels, {serial['simulations']} simulations, "
            f"answer {serial['capacity'][0]}")
    rows = []
    for w, m in pooled.items():
        same = m["answer"] == serial["answer"]
        ratio = serial["wall_s"] / m["wall_s"]
        target = {1: "same answer", 2: ">= 1.6x on 2 idle cores", 4: ">= 2.5x on 4 idle cores"}[w]
        rows.append(dict(what=f"capacity, {w} worker{'s' if w > 1 else ''} vs one process, wall "
                              f"({'same' if same else 'DIFFERENT'} answer)", size=size, measured=m["wall_s"],
                         baseline=serial["wall_s"], ratio=ratio, target=target,
                         ok=same if w == 1 else same and ratio >= (1.6 if w == 2 else 2.5)))
    for w, m in pooled.items():
        rows.append(dict(what=f"capacity, {w} worker{'s' if w > 1 else ''} vs one process, CPU (all processes)",
                         size=size, measured=m["cpu_s"], baseline=serial["cpu_s"], ratio=serial["cpu_s"] / m["cpu_s"],
                         target="what the workers cost", ok=None))
    one, two = machine_ceiling()
    rows.append(dict(what="machine ceiling: CPU-bound loop, 2 processes vs 1", size="2 units vs 1", measured=two,
                     baseline=2 * one, ratio=2 * one / two, target="~2x on idle cores", ok=2 * one / two >= 1.7))
    return rows


if __name__ == "__main__":  # pragma: no cover - manual run; `simsched bench capacity` prints the table
    for row in bench_capacity():
        print(row)
