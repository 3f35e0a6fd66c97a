"""``simsched bench scale``: the whole pipeline at 10k / 100k / 1M tasks, stage by stage, beside floors.

For each size, in a fresh interpreter (so CPU time and peak memory are the measurement's own):

* ``simsched run`` end to end on a generated scenario with ``--json``: the child's CPU time (user +
  system) and peak resident memory.  The scenario (:func:`scenario_yaml`): a random layered DAG with
  Topcuoglu et al. (2002) parameters (out-degree 3, CCR 1, work ``U[0.2, 40]``) on 188 processors of
  three types (124 cpu at speed 1, 48 at 1.7, 16 at 4; unit bandwidth).  Its heterogeneity is that of
  work + speed (uniformly related machines), the form the cost model computes on demand: the problem
  holds (n,) work and a (kinds, m) rate table, never an (n, m) matrix (``processors: null`` turns
  off the generator's per-pair spread, which would be an explicit matrix);
* up to :data:`DENSE_MAX_TASKS` tasks, the same run with dense costs (``dense=True``: the generator's
  per-pair spread, an explicit (n, m) matrix of times, 150 MB at 100k x 188), the form issue #42 holds
  to 4 s of CPU and 400 MB;
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
PROCESSORS = 188
"""Processors at every size: the DeepSched paper's 188."""

PROCESSOR_TYPES = (("c", "cpu", 1.0, 124 / 188), ("f", "fast", 1.7, 48 / 188), ("g", "gpu", 4.0, 16 / 188))
"""``(name, type, speed, share of the processors)`` of the scale platform."""


def platform_counts(processors: int) -> list[int]:
    """Processors of each of :data:`PROCESSOR_TYPES` for ``processors`` in all (at least one cpu;
    124 / 48 / 16 at 188).  O(1)."""
    counts = [int(round(share * processors)) for *_, share in PROCESSOR_TYPES[1:]]
    while sum(counts) >= processors:  # leave room for the cpus
        counts[counts.index(max(counts))] -= 1
    return [processors - sum(counts), *counts]


DENSE_MAX_TASKS = 100_000
"""Sizes up to this many tasks also run with dense costs (1M x 188 would be a 1.5 GB matrix)."""

TARGETS = {(100_000, False): (4.0, 400.0), (100_000, True): (4.0, 400.0), (1_000_000, False): (60.0, 4096.0)}
"""``(tasks, dense) -> (CPU seconds, peak MB)`` the end-to-end run is held to (#42: dense 100k x 188)."""


def scenario_yaml(tasks: int, processors: int, seed: int = 1, dense: bool = False) -> str:
    """A scenario running HEFT on a ``tasks``-task random DAG over ``processors`` processors of three
    speeds (see the module docstring), costs work / speed, or with ``dense`` the generator's explicit
    (tasks, processors) matrix spread around them."""
    procs = "".join(f"    - {{name: {name}, type: {ptype}, speed: {speed}, count: {count}}}\n"
                    for (name, ptype, speed, _), count in zip(PROCESSOR_TYPES, platform_counts(processors))
                    if count > 0)
    return (f"name: scale_{tasks}\nseed: {seed}\nrepetitions: 1\nplatform:\n  processors:\n{procs}"
            f"  network: {{bandwidth: 1.0, latency: 0.0}}\n"
            f"workload:\n  generator: random\n  tasks: {tasks}\n  shape: 1.0\n  out_degree: 3\n  ccr: 1.0\n"
            + ("" if dense else "  processors: null\n")
            + "schedulers: [heft]\n")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure_run(tasks: int, processors: int, dense: bool = False) -> dict:
    """CPU seconds and peak memory of ``simsched run SCENARIO --json OUT`` in a child process
    (``dense``: :func:`scenario_yaml`'s dense costs)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.yaml"
        path.write_text(scenario_yaml(tasks, processors, dense=dense))
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
    if not problem.structured:
        raise RuntimeError("the scale scenario must have costs on demand (work / speed), not a matrix")
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
    if problem._W is not None:  # the cost model's promise: no stage needs the (n, m) matrix
        raise RuntimeError("a pipeline stage materialised the dense (n, m) cost matrix")
    return out


def _run_row(n: int, m: int, dense: bool) -> dict:
    """The end-to-end row (:func:`measure_run`) against :data:`TARGETS`."""
    run = measure_run(n, m, dense)
    note = ""
    if (n, dense) in TARGETS:
        cpu_limit, mb_limit = TARGETS[n, dense]
        ok = run["rc"] == 0 and run["cpu_s"] <= cpu_limit and run["peak_mb"] <= mb_limit
        note = f"target <= {cpu_limit:g} s, <= {mb_limit:g} MB: {'yes' if ok else 'NO'}; "
    costs = "dense costs" if dense else "costs on demand"
    return {"tasks": f"{n:,}", "processors": str(m), "stage": f"simsched run --json (end to end, {costs})",
            "cpu s": run["cpu_s"], "peak MB": run["peak_mb"],
            "note": note + f"JSON {run['json_mb']:.0f} MB" + (f"; failed: {run['error']}" if run["rc"] else "")}


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
        m = PROCESSORS
        for dense in (False, True) if n <= DENSE_MAX_TASKS else (False,):
            rows.append(_run_row(n, m, dense))
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
