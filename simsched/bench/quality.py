"""``simsched bench quality``: every static scheduler on one bundled benchmark set, gaps side by side.

The set is generated from fixed seeds (nothing to download), three families:

* ``random``: Topcuoglu et al. (2002) random DAGs at CCR 0.1, 1 and 5 and three shapes, explicit
  heterogeneous cost matrices;
* ``app``: application graphs — Gaussian elimination and FFT (Topcuoglu et al. 2002) on
  heterogeneous processors, tiled Cholesky and LU with the READYS kernel durations on 4 CPUs + 2 GPUs;
* ``small``: random DAGs small enough for the CP-SAT ``optimal`` scheduler to prove the optimum;
* ``hard``: Kasahara-style graphs (the STG set's "sameprob" random graphs, 50 tasks, integer costs,
  no communication) on 3-8 identical processors, kept only where HEFT misses the trivial bound
  ``ceil(max(critical path, work / p))`` — where list schedulers and the bound disagree; the
  ``optimal`` scheduler gives the reference (proven or best found within its time limit; on these
  P|prec|Cmax instances its branch and bound, :mod:`simsched.schedulers.bnb`).

For each instance the *best known* makespan is the smallest any scheduler found (the proven optimum
on ``small``); a scheduler's gap is ``makespan / best known - 1``.  Makespans are measured by the
fast evaluator (equal to the SimPy engine for deterministic plans).  Cost: schedulers x instances
runs plus the CP-SAT solves (``time_limit_s`` each); the full set takes a few minutes on 2 cores.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simsched.simulator.problem import Problem

REFERENCE_FAMILIES = ("small", "hard")
"""Families whose reference is the CP-SAT scheduler's (proven or best found) makespan."""

@dataclass(frozen=True)
class Instance:
    family: str
    label: str
    problem: Problem


def _hetero_platform(m: int):
    from simsched.simulator.platform import Platform, Processor

    return Platform.uniform([Processor(f"p{i}") for i in range(m)], bandwidth=1.0)


def _cpu_gpu_problem(graph) -> Problem:
    from simsched.simulator.platform import Platform, Processor
    from simsched.workloads.appgraphs import KERNEL_AFFINITY

    procs = [Processor(f"cpu{i}") for i in range(4)] + [Processor(f"gpu{i}", type="gpu") for i in range(2)]
    return Problem(graph, Platform.uniform(procs, bandwidth=10.0, latency=0.05), affinity=KERNEL_AFFINITY)


def benchmark_set(quick: bool = False) -> list[Instance]:
    """The bundled instances (deterministic).  Full: 18 random, 6 application, 6 small; quick: 3, 2, 2."""
    from simsched.workloads.appgraphs import fft, gaussian_elimination, tiled_cholesky, tiled_lu
    from simsched.workloads.generators import random_dag

    out: list[Instance] = []
    n, m = (20, 4) if quick else (60, 6)
    shapes = (1.0,) if quick else (0.5, 1.0, 2.0)
    seeds = (0,) if quick else (0, 1)
    for ccr in (0.1, 1.0, 5.0):
        for shape in shapes:
            for seed in seeds:
                g = random_dag(n, processors=m, ccr=ccr, shape=shape, rng=np.random.default_rng(seed))
                out.append(Instance("random", f"random n={n} ccr={ccr:g} shape={shape:g} #{seed}",
                                    Problem(g, _hetero_platform(m))))
    apps: list[tuple[str, Callable[[], Problem]]] = [
        ("gauss 5", lambda: Problem(gaussian_elimination(5, processors=m, rng=np.random.default_rng(1)),
                                    _hetero_platform(m))),
        ("cholesky 3x3, 4 cpu + 2 gpu", lambda: _cpu_gpu_problem(tiled_cholesky(3))),
    ]
    if not quick:
        apps += [
            ("gauss 10", lambda: Problem(gaussian_elimination(10, processors=m, rng=np.random.default_rng(2)),
                                         _hetero_platform(m))),
            ("fft 16", lambda: Problem(fft(16, processors=m, rng=np.random.default_rng(3)), _hetero_platform(m))),
            ("cholesky 6x6, 4 cpu + 2 gpu", lambda: _cpu_gpu_problem(tiled_cholesky(6))),
            ("lu 5x5, 4 cpu + 2 gpu", lambda: _cpu_gpu_problem(tiled_lu(5))),
        ]
    out += [Instance("app", label, make()) for label, make in apps]
    small_n, small_count = (6, 2) if quick else (9, 6)
    for seed in range(small_count):
        ccr = (0.5, 2.0)[seed % 2]
        g = random_dag(small_n, processors=3, ccr=ccr, rng=np.random.default_rng(100 + seed))
        out.append(Instance("small", f"small n={small_n} ccr={ccr:g} #{seed}", Problem(g, _hetero_platform(3))))
    out += hard_instances(2 if quick else 8, tasks=30 if quick else 50)
    return out


def hard_instances(count: int, tasks: int = 50, first_seed: int = 0) -> list[Instance]:
    """The first ``count`` Kasahara-style graphs (seeds from ``first_seed``; mean out-degree 1-5,
    3-8 identical processors) on which HEFT's makespan exceeds the integer trivial bound.  O(count x
    tries x HEFT); deterministic."""
    import math

    from simsched.bench.schedulers import kasahara_dag, uniform_platform
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.bounds import lower_bound

    out: list[Instance] = []
    seed = first_seed
    while len(out) < count and seed < first_seed + 10_000:
        rng = np.random.default_rng(seed)
        degree = float(rng.choice([1.0, 2.0, 3.0, 5.0]))
        m = int(rng.choice([3, 4, 6, 8]))
        problem = Problem(kasahara_dag(tasks, rng, out_degree=degree), uniform_platform(m))
        if float(heft_schedule(problem).finish.max()) > math.ceil(lower_bound(problem) - 1e-9):
            out.append(Instance("hard", f"hard stg n={tasks} deg={degree:g} p={m} #{seed}", problem))
        seed += 1
    return out


def static_schedulers() -> list[str]:
    """Every registered static scheduler that loads here, in registration order, minus those whose
    spec has ``quality=None`` (``optimal`` gives the reference on ``small``; ``list``'s named points
    are rows under their own names) — plus static entry-point plug-ins."""
    from simsched.schedulers import registry

    names = []
    for name in registry.names():
        spec = registry.spec(name)
        if spec is not None and spec.quality is None:
            continue
        try:
            cls = registry.load_class(name)
        except Exception:  # an optional dependency is missing: leave it out of the table
            continue
        if registry.kind(cls) == "static":
            names.append(name)
    return names


def _quality_params(name: str, quick: bool) -> dict:
    """The registry spec's quality-benchmark parameters of ``name`` (none for a plug-in)."""
    from simsched.schedulers import registry

    spec = registry.spec(name)
    return spec.quality_params(quick) if spec is not None else {}


def _makespan(name: str, params: dict, problem: Problem) -> tuple[float, float]:
    from simsched.schedulers import registry
    from simsched.simulator.evaluate import evaluate_plan

    scheduler = registry.create(name, **params)
    t0 = time.perf_counter()
    plan = scheduler.plan(problem, np.random.default_rng(0))
    dt = time.perf_counter() - t0
    return evaluate_plan(problem, plan).makespan, dt


def run_quality(quick: bool = False, schedulers: list[str] | None = None,
                progress: Callable[[int, int, str], None] | None = None, time_limit_s: float | None = None,
                families: tuple[str, ...] | None = None) -> dict:
    """Run every scheduler on every instance (of ``families``, default all); returns ``{"instances",
    "makespan", "seconds", "optimum", "failed"}`` (makespans per scheduler as lists in instance order,
    ``nan`` on failure)."""
    from simsched.schedulers.exact import optimal_schedule
    from simsched.simulator.evaluate import evaluate_plan

    instances = benchmark_set(quick)
    if families is not None:
        instances = [inst for inst in instances if inst.family in families]
    names = schedulers or static_schedulers()
    params = {name: _quality_params(name, quick) for name in names}
    limit = time_limit_s or (5.0 if quick else 20.0)
    small = [i for i, inst in enumerate(instances) if inst.family in REFERENCE_FAMILIES]
    total = len(instances) * len(names) + len(small)
    done = 0
    makespan = {name: [np.nan] * len(instances) for name in names}
    seconds = {name: [np.nan] * len(instances) for name in names}
    failed: dict[str, str] = {}
    optimum: dict[int, tuple[float, bool]] = {}
    for i in small:
        if progress:
            progress(done, total, f"CP-SAT optimum: {instances[i].label}")
        plan = optimal_schedule(instances[i].problem, time_limit_s=limit, workers=2, warm_start_s=1.0)
        optimum[i] = (evaluate_plan(instances[i].problem, plan).makespan, bool(plan.info.get("optimal")))
        done += 1
    for name in names:
        for i, inst in enumerate(instances):
            if progress:
                progress(done, total, f"{name}: {inst.label}")
            if name not in failed:
                try:
                    makespan[name][i], seconds[name][i] = _makespan(name, params.get(name, {}), inst.problem)
                except Exception as exc:  # a scheduler that cannot handle an instance is reported, not fatal
                    failed[name] = f"{type(exc).__name__}: {exc}"
            done += 1
    if progress:
        progress(total, total, "done")
    return {"instances": instances, "makespan": makespan, "seconds": seconds, "optimum": optimum, "failed": failed}


def quality_rows(result: dict) -> list[dict]:
    """One row per scheduler, sorted by mean gap to the best known makespan."""
    from simsched.simulator.bounds import lower_bound

    instances = result["instances"]
    ms = {k: np.array(v, dtype=np.float64) for k, v in result["makespan"].items()}
    table = np.stack(list(ms.values()))
    best = np.nanmin(table, axis=0)
    opt_idx = np.array(sorted(result["optimum"]), dtype=np.int64)
    for i, (value, _) in result["optimum"].items():
        best[i] = min(best[i], value)
    lb = np.array([lower_bound(inst.problem) for inst in instances])
    proven = [i for i in opt_idx if result["optimum"][i][1]]
    rows = []
    for name, values in ms.items():
        gap = 100.0 * (values / best - 1.0)
        ok = np.isfinite(values)
        row = {"scheduler": name,
               "gap to best %": float(np.mean(gap[ok])) if ok.any() else np.nan,
               "worst gap %": float(np.max(gap[ok])) if ok.any() else np.nan,
               "best on": f"{int(np.sum(gap[ok] <= 1e-9))}/{len(instances)}",
               "gap to optimum %": float(np.mean(gap[proven])) if proven and ok[proven].all() else np.nan,
               "makespan / LB": float(np.mean(values[ok] / lb[ok])) if ok.any() else np.nan,
               "time ms": float(1000 * np.nanmean(result["seconds"][name])) if ok.any() else np.nan,
               "note": result["failed"].get(name, "")}
        for family in ("random", "app", "hard"):
            idx = [i for i, inst in enumerate(instances) if inst.family == family and ok[i]]
            row[f"{family} gap %"] = float(np.mean(gap[idx])) if idx else np.nan
        rows.append(row)
    order = ["scheduler", "gap to best %", "random gap %", "app gap %", "hard gap %", "gap to optimum %", "worst gap %",
             "best on", "makespan / LB", "time ms", "note"]
    if not result["failed"]:
        order.remove("note")
    rows = [{k: r[k] for k in order} for r in rows]
    return sorted(rows, key=lambda r: (np.isnan(r["gap to best %"]), r["gap to best %"]))


def bench_quality(quick: bool = False, *, progress: Callable[[int, int, str], None] | None = None,
                  say: Callable[[str], None] = print) -> list[dict]:
    """Run the quality benchmark and return the table rows (printed by ``simsched bench``);
    ``progress`` gets the run's progress, ``say`` a caption line with the set's size and the optima
    proven."""
    result = run_quality(quick, progress=progress)
    inst = result["instances"]
    counts = {f: sum(i.family == f for i in inst) for f in ("random", "app", "small", "hard")}
    proven = sum(p for _, p in result["optimum"].values())
    say(f"{len(inst)} instances ({counts['random']} random, {counts['app']} application graphs, "
        f"{counts['small']} small, {counts['hard']} hard); CP-SAT proved {proven}/"
        f"{counts['small'] + counts['hard']} optima; gap = makespan / best known - 1, averaged over instances")
    return quality_rows(result)


def main(argv: list[str] | None = None) -> None:
    """``python -m simsched.bench.quality hard [--quick]``: the hard family only, HEFT, ETF and the
    search scheduler against the ``optimal`` reference, one table (the numbers of docs/experiments.md)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    result = run_quality(quick, schedulers=["heft", "etf", "search"], families=("hard",))
    proven = sum(p for _, p in result["optimum"].values())
    print(f"{len(result['instances'])} hard instances; optimal (time limit {5 if quick else 20} s) proved "
          f"{proven}; reference = its makespan (proven or best found)")
    rows = quality_rows(result)
    keys = ["scheduler", "gap to optimum %", "worst gap %", "best on", "makespan / LB", "time ms"]
    print("hard instances: gap to the reference")
    print(" | ".join(keys))
    for row in rows:
        print(" | ".join(f"{row[k]:.3f}" if isinstance(row[k], float) else str(row[k]) for k in keys))


if __name__ == "__main__":  # pragma: no cover
    main()
