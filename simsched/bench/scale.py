"""``simsched bench scale``: the whole pipeline at 10k / 100k / 1M tasks, stage by stage, beside floors.

For each size, in a fresh interpreter (so CPU time and peak memory are the measurement's own):

* ``simsched run`` end to end on a generated scenario (random layered DAG, Topcuoglu 2002
  parameters, out-degree 3, CCR 1; ``processors`` identical processors, unit bandwidth) with
  ``--json``: the child's CPU time (user + system) and peak resident memory;
* the same pipeline stage by stage in one process: building the problem, HEFT (as ``simsched run``
  would; then, up to 100k tasks, its numpy loop and its compiled loop side by side), the fast evaluator,
  the SimPy replay, validation and metrics, writing the results JSON (CPU seconds each, and the peak
  memory reached by the end of each stage);
* two floors for the replay: raw SimPy (one process per task that waits for its duration: no
  precedence, no processors) and a plain ``heapq`` event loop over the same durations.

CPU time, not wall time, is reported: the machine may be shared.  Cost: about the sum of what it
measures, twice (run and stages); the 1M-task size needs a few GB of memory.
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (2_000, 10_000)
PROCESSORS = {10_000: 188, 100_000: 188, 1_000_000: 32}
"""Processors per size: the DeepSched paper's 188, and 32 at 1M tasks (a 1M x 188 cost matrix alone
is 1.5 GB; a survey-scale workflow runs on a cluster partition)."""


def scenario_yaml(tasks: int, processors: int, seed: int = 1) -> str:
    """A scenario running HEFT on a ``tasks``-task random DAG over ``processors`` processors."""
    return (f"name: scale_{tasks}\nseed: {seed}\nrepetitions: 1\nplatform:\n  processors:\n"
            f"    - {{name: p, type: cpu, speed: 1.0, count: {processors}}}\n"
            f"  network: {{bandwidth: 1.0, latency: 0.0}}\n"
            f"workload:\n  generator: random\n  tasks: {tasks}\n  shape: 1.0\n  out_degree: 3\n  ccr: 1.0\n"
            f"schedulers: [heft]\n")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure_run(tasks: int, processors: int) -> dict:
    """CPU seconds and peak memory of ``simsched run SCENARIO --json OUT`` in a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.yaml"
        path.write_text(scenario_yaml(tasks, processors))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([sys.executable, "-m", "simsched.cli.main", "run", str(path), "--json",
                               str(Path(tmp) / "out.json")], capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        size = (Path(tmp) / "out.json").stat().st_size if proc.returncode == 0 else 0
    return {"rc": proc.returncode, "error": proc.stderr.strip().splitlines()[-1:] if proc.returncode else [],
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "peak_mb": after.ru_maxrss / 1024.0, "json_mb": size / 2**20}


def _stages(tasks: int, processors: int) -> dict:
    """Each stage's CPU seconds and the peak memory at its end, in this (fresh) process."""
    from simsched.run.results import write_results
    from simsched.run.runner import RunReport, result_row
    from simsched.scenario import build_problem, load_scenario
    from simsched.schedulers.heft import heft_schedule
    from simsched.schedulers.timeline import compiled_available
    from simsched.simulator.bounds import lower_bound
    from simsched.simulator.engine import execute_plan
    from simsched.simulator.evaluate import evaluate_plan
    from simsched.simulator.schedule import validate_schedule

    out: dict = {}

    def stage(name: str, fn):
        t0 = _cpu()
        value = fn()
        out[name] = (_cpu() - t0, _peak_mb())
        return value

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.yaml"
        path.write_text(scenario_yaml(tasks, processors))
        scenario = load_scenario(path)
    problem = stage("build problem", lambda: build_problem(scenario, scenario.seed))
    plan = stage("HEFT", lambda: heft_schedule(problem))
    if tasks <= 100_000:  # both HEFT loops side by side (identical plans), the compiled one once loaded
        stage("HEFT, numpy loop", lambda: heft_schedule(problem, compiled=False))
        if compiled_available():
            heft_schedule(problem, compiled=True)
            stage("HEFT, compiled loop (numba loaded)", lambda: heft_schedule(problem, compiled=True))
    stage("fast evaluator", lambda: evaluate_plan(problem, plan))
    schedule = stage("SimPy replay", lambda: execute_plan(problem, plan))
    bound = lower_bound(problem)

    def rows():
        errors = validate_schedule(schedule, problem)
        if errors:
            raise RuntimeError(errors[0])
        return [result_row(problem, "heft", scenario.seed, schedule, 0.0, bound)]

    report = RunReport(scenario, problem, scenario.seed, 1, ["heft"], bound, stage("validate + metrics", rows))
    with tempfile.TemporaryDirectory() as tmp:
        stage("write results JSON", lambda: write_results(report, Path(tmp) / "out.json"))
    return out


def _floors(tasks: int, seed: int = 0) -> dict:
    """CPU seconds of raw SimPy and a heapq loop running ``tasks`` timed tasks (no precedence)."""
    import heapq

    import numpy as np
    import simpy

    dur = np.random.default_rng(seed).uniform(1, 40, tasks).tolist()
    t0 = _cpu()
    env = simpy.Environment()

    def task(d):
        yield env.timeout(d)

    for d in dur:
        env.process(task(d))
    env.run()
    simpy_s = _cpu() - t0
    t0 = _cpu()
    heap = [(d, i) for i, d in enumerate(dur)]
    heapq.heapify(heap)
    while heap:
        heapq.heappop(heap)
    return {"raw SimPy": simpy_s, "heapq": _cpu() - t0}


def _isolated(fn, *args):
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def bench_scale(quick: bool = False, sizes: tuple[int, ...] | None = None) -> list[dict]:
    """Rows ``{tasks, processors, stage, cpu s, peak MB, target}``: per size the end-to-end run, each
    stage, and the two floors (see the module docstring)."""
    rows = []
    for n in sizes or (QUICK_SIZES if quick else SIZES):
        m = PROCESSORS.get(n, 188)
        run = measure_run(n, m)
        target = {100_000: "<= 4 s, <= 400 MB", 1_000_000: "<= 60 s, <= 4096 MB"}.get(n, "")
        ok = ""
        if target:
            cpu_limit, mb_limit = (4.0, 400.0) if n == 100_000 else (60.0, 4096.0)
            ok = "yes" if run["rc"] == 0 and run["cpu_s"] <= cpu_limit and run["peak_mb"] <= mb_limit else "NO"
        rows.append({"tasks": f"{n:,}", "processors": str(m), "stage": "simsched run --json (end to end)",
                     "cpu s": run["cpu_s"], "peak MB": run["peak_mb"],
                     "note": (f"target {target}: {ok}; " if target else "") + f"JSON {run['json_mb']:.0f} MB"
                     + (f"; failed: {run['error']}" if run["rc"] else "")})
        for name, (cpu, peak) in _isolated(_stages, n, m).items():
            rows.append({"tasks": f"{n:,}", "processors": str(m), "stage": name, "cpu s": cpu, "peak MB": peak,
                         "note": ""})
        for name, cpu in _isolated(_floors, n).items():
            rows.append({"tasks": f"{n:,}", "processors": "-", "stage": f"floor: {name} ({n:,} timeouts)",
                         "cpu s": cpu, "peak MB": float("nan"), "note": ""})
    return rows


if __name__ == "__main__":  # pragma: no cover
    t = time.perf_counter()
    for row in bench_scale(quick="--quick" in sys.argv):
        print(row)
    print(f"{time.perf_counter() - t:.1f} s")
