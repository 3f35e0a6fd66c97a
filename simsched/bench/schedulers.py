"""``simsched bench schedulers``: scheduler wall times, GA evaluation speed-up, GA vs HEFT, exact proofs.

:func:`bench_schedulers` returns rows (dicts with the same keys) for the lead's rich table:

* ``time``: every static scheduler timed at several sizes on one 188-processor platform (the shape
  of the DeepSched paper's Table I: 486, 10,000 and 84,654 tasks), each up to its size cap;
* ``ga-eval``: one GA population evaluated vectorised and chromosome by chromosome, side by side;
* ``ga-vs-heft``: GA seeded with HEFT (makespan objective) against HEFT on 100-task random DAGs with
  8 processors, within a time budget;
* ``optimal``: how many Kasahara-style 50-task graphs on 2-4 identical processors ``optimal``
  proves within its time limit.

Wall times are noisy on a shared machine; compare ratios measured in one run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph

KEYS = ("section", "scheduler", "tasks", "processors", "time_s", "makespan", "value", "note")
TABLE_I_SIZES = (486, 10_000, 84_654)
TABLE_I_PROCESSORS = 188

def _row(section: str, **values: object) -> dict:
    row = dict.fromkeys(KEYS)
    row["section"] = section
    row.update(values)
    return row


def uniform_platform(m: int, bandwidth: float = 1.0) -> Platform:
    """``m`` processors ``p0..`` joined by one uniform network (costs come from the workload)."""
    return Platform.uniform([Processor(f"p{i}") for i in range(m)], bandwidth=bandwidth)


def kasahara_dag(n: int, rng: np.random.Generator, *, out_degree: float = 2.0, max_cost: int = 10) -> TaskGraph:
    """A random graph in the style of Kasahara's Standard Task Graph set ("sameprob"): every pair
    i < j is an edge with the same probability (mean out-degree ``out_degree``), integer costs
    uniform in 1..``max_cost``, no communication.  O(n^2)."""
    i, j = np.triu_indices(n, k=1)
    p = min(1.0, 2.0 * out_degree / max(n - 1, 1))
    keep = rng.random(i.size) < p
    work = rng.integers(1, max_cost + 1, n).astype(np.float64)
    return TaskGraph([f"t{k}" for k in range(n)], np.stack([i[keep], j[keep]], axis=1), work=work)


def _random_problem(n: int, m: int, seed: int) -> Problem:
    from simsched.workloads.generators import random_dag

    return Problem(random_dag(n, processors=m, rng=np.random.default_rng(seed)), uniform_platform(m))


def _timed(fn: Callable[[], object]) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def time_schedulers(sizes: tuple[int, ...], m: int = TABLE_I_PROCESSORS, quick: bool = False) -> list[dict]:
    """Wall time and makespan of every static scheduler whose registry spec has a ``bench`` entry on one
    ``m``-processor platform: a capped one at each of ``sizes`` up to its cap, a slow one (GA, the
    exact solver) at its own fixed sizes with its own parameters (``quick``: the spec's quick ones).
    Cost: one plan per (scheduler, size)."""
    from simsched.schedulers import registry
    from simsched.simulator.evaluate import evaluate_plan

    timed = [s for s in registry.specs(("static",)) if s.bench is not None]
    plan_sizes = sorted(set(sizes) | {n for s in timed for n in s.bench.sizes_for(quick)})
    rows = []
    for n in plan_sizes:
        problem = _random_problem(n, m, seed=n)
        for spec in timed:
            fixed = spec.bench.sizes_for(quick)
            if (n not in fixed) if fixed else (n not in sizes or n > (spec.bench.cap or 0)):
                continue
            params = spec.bench.params_for(quick)
            scheduler = registry.create(spec.name, **params)
            plan, dt = _timed(lambda s=scheduler, p=problem: s.plan(p, np.random.default_rng(0)))
            sched = evaluate_plan(problem, plan)
            note = spec.bench.note.format(**params)
            if "optimal" in plan.info:
                note = "proven optimal" if plan.info.get("optimal") else f"not proven ({plan.info.get('status')})"
            rows.append(_row("time", scheduler=spec.name, tasks=n, processors=m, time_s=round(dt, 4),
                             makespan=round(sched.makespan, 3), note=note))
    return rows


def ga_eval_speedup(n: int = 100, m: int = 8, population: int = 100, seed: int = 0) -> list[dict]:
    """One random GA population evaluated vectorised and one by one (``evaluate_plan`` per
    chromosome), side by side in one run; checks the two agree.  Value = speed-up."""
    from simsched.schedulers.ga import Population

    problem = _random_problem(n, m, seed)
    rng = np.random.default_rng(seed)
    pop = Population(problem, "waiting")
    proc = pop.random_processors(rng, (population, n))
    keys = rng.random((population, n))
    pop.evaluate(proc, keys)  # warm-up
    vec = min(_timed(lambda: pop.evaluate(proc, keys))[1] for _ in range(5))
    one = min(_timed(lambda: pop.evaluate_one_by_one(proc, keys))[1] for _ in range(2))
    a, b = pop.evaluate(proc, keys)[0], pop.evaluate_one_by_one(proc, keys)
    agree = bool(np.allclose(a, b, rtol=1e-12, atol=1e-9))
    note = f"population {population}, n={n}, m={m}; results equal: {agree}"
    return [
        _row("ga-eval", scheduler="ga (vectorised)", tasks=n, processors=m, time_s=round(vec, 5), note=note),
        _row("ga-eval", scheduler="ga (one by one)", tasks=n, processors=m, time_s=round(one, 5),
             value=round(one / vec, 1), note="value = speed-up of the vectorised evaluation"),
    ]


def ga_vs_heft(instances: int = 5, budget_s: float = 10.0, n: int = 100, m: int = 8) -> list[dict]:
    """GA seeded with HEFT (makespan objective, ``budget_s`` per instance) against HEFT on random
    DAGs; value = mean relative makespan improvement over HEFT in percent."""
    from simsched.schedulers.ga import GA
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.evaluate import evaluate_plan

    gains, heft_ms, ga_ms, gens = [], [], [], []
    for seed in range(instances):
        problem = _random_problem(n, m, 1000 + seed)
        h = evaluate_plan(problem, heft_schedule(problem)).makespan
        plan = GA(objective="makespan", time_limit_s=budget_s, generations=10**9).plan(
            problem, np.random.default_rng(seed))
        g = evaluate_plan(problem, plan).makespan
        heft_ms.append(h)
        ga_ms.append(g)
        gens.append(plan.info["generations"])
        gains.append(100.0 * (h - g) / h)
    note = (f"{instances} DAGs, {budget_s:g} s each, ~{np.mean(gens):.0f} generations; "
            f"improved {sum(x > 1e-9 for x in gains)}/{instances}, best {max(gains):.2f}%")
    return [
        _row("ga-vs-heft", scheduler="heft", tasks=n, processors=m, makespan=round(float(np.mean(heft_ms)), 3)),
        _row("ga-vs-heft", scheduler="ga (seeded)", tasks=n, processors=m, time_s=budget_s,
             makespan=round(float(np.mean(ga_ms)), 3), value=round(float(np.mean(gains)), 2),
             note="value = mean makespan improvement over HEFT, %; " + note),
    ]


def optimal_proof_rate(instances: int = 12, n: int = 50, processors: tuple[int, ...] = (2, 3, 4),
                       time_limit_s: float = 10.0, workers: int = 2) -> list[dict]:
    """Share of Kasahara-style ``n``-task graphs on identical processors (cycling through
    ``processors``) for which ``optimal`` proves optimality within ``time_limit_s``."""
    from simsched.schedulers.exact import optimal_schedule

    proven, times = 0, []
    for k in range(instances):
        m = processors[k % len(processors)]
        problem = Problem(kasahara_dag(n, np.random.default_rng(k)), uniform_platform(m))
        plan, dt = _timed(lambda p=problem: optimal_schedule(p, time_limit_s=time_limit_s, workers=workers))
        proven += bool(plan.info["optimal"])
        times.append(dt)
    return [_row("optimal", scheduler="optimal", tasks=n, processors=f"{min(processors)}-{max(processors)}",
                 time_s=round(float(np.median(times)), 3), value=f"{proven}/{instances}",
                 note=f"proven optimal within {time_limit_s:g} s (time_s = median solve time)")]


def bench_schedulers(quick: bool = False) -> list[dict]:
    """All scheduler benchmarks as rows with the keys :data:`KEYS`.  ``quick`` uses small sizes and
    budgets (seconds); the full run (Table I sizes) takes a few minutes."""
    if quick:
        rows = time_schedulers((200, 486), m=32, quick=True)
        rows += ga_eval_speedup()
        rows += ga_vs_heft(instances=2, budget_s=1.0)
        rows += optimal_proof_rate(instances=3, time_limit_s=2.0)
        return rows
    rows = time_schedulers(TABLE_I_SIZES)
    rows += ga_eval_speedup()
    rows += ga_vs_heft()
    rows += optimal_proof_rate()
    return rows


if __name__ == "__main__":  # pragma: no cover - manual run: python -m simsched.bench.schedulers [--quick]
    import sys

    for r in bench_schedulers(quick="--quick" in sys.argv):
        print({k: v for k, v in r.items() if v is not None})
