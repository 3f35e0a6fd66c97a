"""Reproducing the DeepSched paper's evaluation with simsched's simulator as the judge.

* :func:`turnaround_rows` — the paper's Fig. 4: average turnaround of HEFT, the GA (the paper's
  configuration: random initial population, average-waiting-time fitness, default budget) and
  DeepSched, on seen and unseen families at several sizes; every schedule is executed by the fast
  evaluator (equal to the SimPy engine), never read off the network; plus DeepSched's
  processor-choice accuracy against HEFT on the same problems.
* :func:`timing_rows` — the paper's Table I: scheduler execution time at growing sizes, HEFT and
  DeepSched side by side in one run, after a warm-up, with the checkpoint already loaded (file I/O
  excluded) and CUDA synchronised when the network runs there.

Cost: instances x sizes x (HEFT + GA budget + one forward pass).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from simsched.learned.deepsched.config import DeepSchedConfig, Family
from simsched.learned.deepsched.data import make_problem
from simsched.simulator.problem import Problem


def eval_seed(base: int, family: int, size: int, i: int) -> int:
    """Seed of evaluation instance ``i`` (a stream disjoint from the training splits')."""
    return int(np.random.SeedSequence([base, 1000 + family, size, i]).generate_state(1)[0])


def _makespan(problem: Problem, plan) -> float:
    from simsched.simulator.evaluate import evaluate_plan

    return float(evaluate_plan(problem, plan).finish.max())


def _turnaround(problem: Problem, plan) -> float:
    from simsched.simulator.evaluate import evaluate_plan

    return evaluate_plan(problem, plan).metrics(problem).avg_turnaround


def turnaround_rows(cfg: DeepSchedConfig, checkpoint: str | Path | None = None, *, sizes: list[int] | None = None,
                    instances: int | None = None, ga: dict | None = None, device: str = "cpu",
                    progress: Callable[[int, int], None] | None = None, top_k: int | None = None) -> list[dict]:
    """One row per (split, family, size): mean avg-turnaround of HEFT, GA and DeepSched over the
    instances, DeepSched's gap to HEFT (mean of per-instance ratios - 1), its processor accuracy
    against HEFT, and how often it beats the GA."""
    from simsched.learned.deepsched.scheduler import DeepSched
    from simsched.schedulers.ga import GA
    from simsched.schedulers.heft import heft_schedule

    ev = cfg.eval
    sizes = sizes or ev.sizes
    k = instances or ev.instances
    ga_params = dict(ev.ga if ga is None else ga)
    deep = DeepSched(checkpoint=str(checkpoint) if checkpoint else None, device=device, top_k=top_k)
    fams: list[tuple[str, int, Family]] = [("seen", i, f) for i, f in enumerate(cfg.data.seen)]
    fams += [("unseen", len(cfg.data.seen) + i, f) for i, f in enumerate(cfg.data.unseen)]
    rows, done, total = [], 0, len(fams) * len(sizes) * k
    for split, fi, fam in fams:
        for size in sizes:
            h, g, d, acc, beats, span, n_tasks = [], [], [], [], [], [], []
            for i in range(k):
                problem = make_problem(fam, cfg.data.platform, eval_seed(cfg.data.seed, fi, size, i), tasks=size)
                hp = heft_schedule(problem)
                dp = deep.plan(problem)
                gp = GA(**ga_params).plan(problem, np.random.default_rng(i))
                h.append(_turnaround(problem, hp))
                d.append(_turnaround(problem, dp))
                span.append(_makespan(problem, dp) / _makespan(problem, hp))
                n_tasks.append(problem.n_tasks)
                g.append(_turnaround(problem, gp))
                acc.append(float((dp.processor == hp.processor).mean()))
                beats.append(d[-1] <= g[-1])
                done += 1
                if progress:
                    progress(done, total)
            gap = float(np.mean(np.array(d) / np.array(h)) - 1.0)
            rows.append(dict(split=split, family=fam.name, size=size, tasks=float(np.mean(n_tasks)),
                             makespan_gap=float(np.mean(span)) - 1.0, worst_makespan_gap=float(np.max(span)) - 1.0,
                             worst_turnaround_gap=float(np.max(np.array(d) / np.array(h))) - 1.0,
                             instances=k, heft=float(np.mean(h)),
                             ga=float(np.mean(g)), deepsched=float(np.mean(d)), gap_vs_heft=gap,
                             accuracy=float(np.mean(acc)), beats_ga=float(np.mean(beats)),
                             trained_size=fam.tasks[0] <= size <= fam.tasks[1]))
    return rows


def timing_problem(n: int, m: int, seed: int = 0) -> Problem:
    """The timing benchmark's problem: the spine benchmark's random DAG on ``m`` processors."""
    from simsched.simulator.instances import bench_problem

    return bench_problem(n, m, seed)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def time_plan(plan: Callable[[], object], device: str, repeat: int) -> float:
    """Best of ``repeat`` wall times of ``plan()`` after one warm-up call (device synchronised)."""
    plan()
    _sync(device)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        plan()
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return best


def timing_rows(checkpoint: str | Path | None = None, sizes: list[int] | tuple[int, ...] = (100, 1000, 10000),
                m: int = 188, repeat: int = 3, device: str = "cpu", threads: int | None = 1) -> list[dict]:
    """HEFT and DeepSched (features + network + repair + evaluation of the plan) wall time at each
    size on one problem, measured back to back; the checkpoint is loaded before timing starts.
    ``threads``: torch's CPU threads during the measurement (1: like HEFT, and immune to the
    oversubscription of a shared machine; None: torch's default)."""
    import torch

    from simsched.learned.deepsched.scheduler import DeepSched
    from simsched.schedulers.heft import heft_schedule

    deep = DeepSched(checkpoint=str(checkpoint) if checkpoint else None, device=device)  # loads it
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    rows = []
    try:
        for n in sizes:
            problem = timing_problem(n, m)
            r = 1 if n >= 20_000 else repeat
            heft_s = time_plan(lambda p=problem: heft_schedule(p), "cpu", r)
            deep_s = time_plan(lambda p=problem: deep.plan(p), device, r)
            rows.append(dict(tasks=n, processors=m, heft_s=heft_s, deepsched_s=deep_s, ratio=heft_s / deep_s,
                             deepsched_faster=deep_s < heft_s))
    finally:
        torch.set_num_threads(before)
    return rows


def crossover_size(rows: list[dict]) -> int | None:
    """The smallest timed size from which DeepSched stays faster than HEFT (None: never)."""
    for i, r in enumerate(rows):
        if all(x["deepsched_faster"] for x in rows[i:]):
            return int(r["tasks"])
    return None


def summarize(rows: list[dict]) -> dict[str, float]:
    """Headline figures over the unseen families: per size and overall, the mean makespan and
    turnaround gaps to HEFT (means of the rows' per-instance means) and the worst single instance."""
    out: dict[str, float] = {}
    unseen = [r for r in rows if r["split"] == "unseen"]
    for size in sorted({r["size"] for r in unseen}) + ["all"]:
        sel = [r for r in unseen if size == "all" or r["size"] == size]
        out[f"unseen_{size}_makespan_gap"] = float(np.mean([r["makespan_gap"] for r in sel]))
        out[f"unseen_{size}_turnaround_gap"] = float(np.mean([r["gap_vs_heft"] for r in sel]))
        out[f"unseen_{size}_worst_makespan_gap"] = float(np.max([r["worst_makespan_gap"] for r in sel]))
        out[f"unseen_{size}_worst_turnaround_gap"] = float(np.max([r["worst_turnaround_gap"] for r in sel]))
    return out
