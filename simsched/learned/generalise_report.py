"""Where each learned checkpoint breaks: one table per checkpoint over shifted versions of the family
it was trained on, against the best heuristic on each shift, with paired 95% intervals.

``python -m simsched.learned.generalise_report CHECKPOINT [--seeds N]`` prints one markdown row per
shift; ``CHECKPOINT`` is ``deepsched-general`` (or a DeepSched checkpoint file), ``rl``, ``rl-world``
(the shipped files of those names) or an ``rl``/``rl-world`` checkpoint file; ``--first N``
runs only the first N shifts (1: the trained family alone).

* **Online agents** (``rl``, ``rl-world``): episodes of the checkpoint's own training family
  (:class:`~simsched.learned.rl.family.Family`), every policy on the same graph, noise factors and
  disruption stream per seed.  Objective: makespan for single-DAG checkpoints, mean job completion
  time (JCT) for job-stream ones (``reward: jobs``).  Heuristics: HEFT's static plan followed
  online, online HEFT, MCT, min-min, shortest-remaining-job-first (:func:`~simsched.learned.rl.
  baselines.heuristics`).  Shifts of a single-DAG family: 2x tasks per graph, 2x processors (a twin
  of every processor), CCR x5, lognormal sigma fixed at 0.2 and 1.5, and unseen DAG families
  (layered and series-parallel generators with the family's CCR and heterogeneity).  Shifts of a
  job-stream family: those of :func:`simsched.learned.rl.generalise.shifted_families` (2x jobs, 2x
  processors at the same load, load 70% / 110%, sigma 0.2 / 1.5).  Seeds: after the checkpoint's
  selection seeds (:func:`~simsched.learned.rl.ppo.final_seeds`), so training and selection never
  saw them.
* **DeepSched** (a static planner): problems of the checkpoint's first seen family (random DAGs,
  its parameter choices) at 200 tasks on 8 processors as the reference, then 2x the trained maximum
  of tasks, 2x the trained maximum of processors, CCR 10 (5x the trained maximum), execution under
  lognormal duration noise sigma 0.2 and 1.5 (every plan executed with the same factors by the fast
  evaluator), and each of the checkpoint's unseen families.  Heuristics: HEFT, PEFT, CPOP, IPEFT
  (static list schedulers).  Seeds: a stream of their own (``SeedSequence([seed, 7000 + shift,
  i])``), disjoint from the training and test splits' streams.

Per shift: the best heuristic is the one with the lowest mean objective on that shift's seeds; the
checkpoint's per-seed ratio to it gives the paired mean and 95% half-width (normal approximation);
"breaks" says the interval lies above 1 (significantly worse than the best heuristic).
Cost: shifts x seeds x (heuristics + one checkpoint episode or plan).
"""

from __future__ import annotations

import argparse
import copy
import inspect
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

RL_NAMES = {"rl": ("rl", "rl.pt"), "rl-world": ("rl-world", "rl_world.pt")}
"""Shipped online checkpoints by name: (kind, file in simsched/learned/rl/data)."""

STATIC_HEURISTICS = ("heft", "peft", "cpop", "ipeft")
SHIFT_SEED = 7000


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width (normal approximation) of the per-seed ratios ``a / b``; the
    half-width is 0 for a single seed.  O(seeds)."""
    from simsched.learned.rl.report import ci95  # the RL reports' interval, so the tables agree

    r = np.asarray(a, dtype=float) / np.asarray(b, dtype=float)
    return float(r.mean()), ci95(r) if r.size > 1 else 0.0


def summarise(shift: str, per_seed: dict[str, np.ndarray], learned: str) -> dict:
    """A table row: the learned policy's mean objective, the best heuristic (lowest mean) and the
    paired ratio to it; ``breaks`` when the interval's lower end is above 1."""
    heur = [k for k in per_seed if k != learned]
    if not heur:
        raise ValueError("no heuristic to compare with")
    best = min(heur, key=lambda k: (float(np.mean(per_seed[k])), k))
    ratio, half = paired(per_seed[learned], per_seed[best])
    return dict(shift=shift, seeds=int(len(per_seed[learned])), learned=float(np.mean(per_seed[learned])),
                best=best, best_value=float(np.mean(per_seed[best])), ratio=ratio, ci95=half,
                wins=int((np.asarray(per_seed[learned]) < np.asarray(per_seed[best])).sum()),
                breaks=bool(ratio - half > 1.0))


# --------------------------------------------------------------------------- online agents
def _accepts(generator: str, options: dict) -> dict:
    from simsched.workloads.generators import GENERATORS

    params = inspect.signature(GENERATORS[generator]).parameters
    return {k: v for k, v in options.items() if k in params}


def single_dag_shifts(base) -> dict[str, object]:
    """``{shift: Family}`` for a single-DAG family ``base`` (see the module docstring)."""
    from simsched.learned.rl.generalise import _double_processors

    def variant(**changes):
        fam = copy.copy(base)
        for k, v in changes.items():
            setattr(fam, k, v)
        return fam

    lo, hi = base.tasks
    ccr = float(base.options.get("ccr", 1.0))
    sigma = base.noise.sigma if base.sigma_range is None else base.sigma_range
    out = {f"trained family ({lo}-{hi} tasks, ccr {ccr:g}, sigma {sigma})": base,
           f"2x tasks ({2 * lo}-{2 * hi})": variant(tasks=(2 * lo, 2 * hi)),
           f"2x processors ({2 * base.platform.n_processors})": variant(platform=_double_processors(base.platform)),
           f"ccr x5 ({5 * ccr:g})": variant(options={**base.options, "ccr": 5 * ccr}),
           "sigma 0.2": variant(sigma_range=(0.2, 0.2)),
           "sigma 1.5": variant(sigma_range=(1.5, 1.5))}
    for gen in ("layered", "series_parallel"):
        if gen != base.generator:
            out[f"unseen DAG family: {gen}"] = variant(generator=gen, options=_accepts(gen, base.options))
    return out


def _rl_checkpoint(name: str) -> tuple[str, str]:
    from simsched.learned.rl.checkpoint import shipped_path

    if name in RL_NAMES:
        kind, file = RL_NAMES[name]
        return kind, str(shipped_path("rl").parent / file)
    from simsched.checkpoints import kind_of, read_checkpoint

    ck = read_checkpoint(name, ("rl", "rl-world"), retrain="give a checkpoint written by `simsched train rl`")
    return str(kind_of(ck)), name


def online_rows(name: str, seeds: int, progress: Callable[[str], None] | None = None,
                first: int | None = None) -> list[dict]:
    """Rows for an ``rl`` / ``rl-world`` checkpoint (see the module docstring); ``first``: only the
    first that many shifts.  Torch runs on one thread (its default oversubscribes a busy machine)."""
    from simsched.learned.runtime import torch_threads

    with torch_threads(1):
        return _online_rows(name, seeds, progress, first)


def _online_rows(name: str, seeds: int, progress: Callable[[str], None] | None, first: int | None) -> list[dict]:
    from simsched.learned.rl.baselines import episode_metrics, heuristics
    from simsched.learned.rl.checkpoint import config_of, load
    from simsched.learned.rl.generalise import shifted_families
    from simsched.learned.rl.policy import _load
    from simsched.learned.rl.ppo import final_seeds, make_env, make_family, run_episode
    from simsched.learned.rl.world import greedy_episode
    from simsched.simulator.jobmetrics import job_metrics

    kind, path = _rl_checkpoint(name)
    cfg = config_of(load(path, kind), path, kind)
    cfg.base = str(Path(__file__).resolve().parents[2] / "scenarios" / "rl")  # where its scenario ships
    cfg.eval.final_seeds = seeds
    agent = _load(kind, path)
    jobs = cfg.reward == "jobs"
    shifts = shifted_families(cfg) if jobs else single_dag_shifts(make_family(cfg))
    label = "rl-world" if kind == "rl-world" else "rl"
    rows = []
    for shift, fam in list(shifts.items())[:first]:
        env = make_env(cfg, fam)
        per: dict[str, list[float]] = {}
        for s in final_seeds(cfg):
            ep = fam.draw(s)
            runs = {k: episode_metrics(ep, pol, fam.disruptions) for k, pol in heuristics(ep).items()}
            if kind == "rl-world":
                greedy_episode(agent, env, ep)
            else:
                run_episode(env, agent, None, True, None, episode=ep)
            runs[label] = job_metrics(env.session.schedule(), ep.jobs, ep.job_arrival)
            for k, m in runs.items():
                per.setdefault(k, []).append(m.mean_flow_time if jobs else m.makespan)
        rows.append(summarise(shift, {k: np.array(v) for k, v in per.items()}, label))
        if progress:
            progress(shift)
    return rows


# --------------------------------------------------------------------------- DeepSched
def deepsched_shifts(cfg) -> dict[str, tuple[object, int | None, float]]:
    """``{shift: (Family, tasks or None, sigma)}`` for a DeepSched config (module docstring)."""
    seen = cfg.data.seen[0]
    ref = seen.model_copy(update={"tasks": (200, 200), "processors": (8, 8), "log_sizes": False})
    t_hi = max(f.tasks[1] for f in cfg.data.seen)
    p_hi = max(f.processors[1] for f in cfg.data.seen)
    ccr_hi = max(max(v) if isinstance(v, list) else v for f in cfg.data.seen for k, v in f.params.items() if k == "ccr")
    out = {f"reference: {seen.name}, 200 tasks, 8 processors": (ref, None, 0.0),
           f"2x tasks ({2 * t_hi})": (ref.model_copy(update={"tasks": (2 * t_hi, 2 * t_hi)}), None, 0.0),
           f"2x processors ({2 * p_hi})": (ref.model_copy(update={"processors": (2 * p_hi, 2 * p_hi)}), None, 0.0),
           f"ccr {5 * ccr_hi:g} (5x the trained max)":
               (ref.model_copy(update={"params": {**ref.params, "ccr": 5 * ccr_hi}}), None, 0.0),
           "noise sigma 0.2": (ref, None, 0.2), "noise sigma 1.5": (ref, None, 1.5)}
    for f in cfg.data.unseen:
        out[f"unseen family: {f.name} ({f.tasks[0]}-{f.tasks[1]} tasks)"] = (f, None, 0.0)
    return out


def deepsched_rows(checkpoint: str | None, seeds: int, progress: Callable[[str], None] | None = None,
                   seed: int = 0, first: int | None = None) -> list[dict]:
    """Rows for a DeepSched checkpoint (module docstring); plans in batches of 16 on one thread;
    ``first``: only the first that many shifts."""
    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.config import config_from_dict
    from simsched.learned.deepsched.data import make_problem
    from simsched.learned.deepsched.scheduler import plans
    from simsched.schedulers.registry import load_class
    from simsched.simulator.evaluate import evaluate_plan, plan_durations
    from simsched.simulator.noise import NoiseModel

    _, meta = load_checkpoint(checkpoint)
    cfg = config_from_dict(meta["config"], source="checkpoint")
    heur = {h: load_class(h)() for h in STATIC_HEURISTICS}
    rows = []
    shifts = deepsched_shifts(cfg)
    ref = next(iter(shifts.values()))[0]
    for i, (shift, (fam, tasks, sigma)) in enumerate(list(shifts.items())[:first]):
        per: dict[str, list[float]] = {}
        stream = 0 if fam is ref else i  # the noise shifts execute the reference's very problems
        problems = [make_problem(fam, cfg.data.platform,
                                 int(np.random.SeedSequence([seed, SHIFT_SEED + stream, j]).generate_state(1)[0]),
                                 tasks)
                    for j in range(seeds)]
        deep = [p for b in range(0, seeds, 16) for p in plans(problems[b:b + 16], checkpoint, threads=1)]
        for j, (problem, dplan) in enumerate(zip(problems, deep)):
            noise_rng = np.random.default_rng([seed, SHIFT_SEED + i, j, 1])  # the same factors for every plan
            factors = NoiseModel("lognormal", sigma).factors(problem.n_tasks, noise_rng) if sigma > 0 else None
            for name, plan in [("deepsched", dplan)] + [(h, s.plan(problem)) for h, s in heur.items()]:
                dur = None if factors is None else plan_durations(problem, plan) * factors
                per.setdefault(name, []).append(float(evaluate_plan(problem, plan, dur).finish.max()))
        rows.append(summarise(shift, {k: np.array(v) for k, v in per.items()}, "deepsched"))
        if progress:
            progress(shift)
    return rows


# --------------------------------------------------------------------------- table and command
def table_lines(rows: list[dict], learned: str, objective: str) -> list[str]:
    """Markdown lines of the rows."""
    out = [f"| shift | seeds | {learned} mean {objective} | best heuristic (mean) | {learned} / best "
           "(paired 95% CI) | seeds better | breaks |", "|---|---|---|---|---|---|---|"]
    out += [f"| {r['shift']} | {r['seeds']} | {r['learned']:.1f} | {r['best']} ({r['best_value']:.1f}) | "
            f"{r['ratio']:.3f} ± {r['ci95']:.3f} | {r['wins']}/{r['seeds']} | {'**yes**' if r['breaks'] else 'no'} |"
            for r in rows]
    return out


def report(checkpoint: str, seeds: int, progress: Callable[[str], None] | None = None,
           first: int | None = None) -> tuple[list[str], float]:
    """The markdown table for ``checkpoint`` and its wall time in seconds; ``first``: only the first
    that many shifts (the trained family is the first)."""
    from simsched.learned.runtime import torch_threads

    if seeds < 2:
        from simsched.errors import SimschedError

        raise SimschedError(f"--seeds must be at least 2 for an interval, got {seeds}", field="seeds")
    t0 = time.perf_counter()
    with torch_threads(1):
        if checkpoint in RL_NAMES or (checkpoint.endswith(".pt") and _is_rl(checkpoint)):
            rows = online_rows(checkpoint, seeds, progress, first)
            kind, path = _rl_checkpoint(checkpoint)
            from simsched.learned.rl.checkpoint import config_of, load

            jobs = config_of(load(path, kind), path, kind).reward == "jobs"
            lines = table_lines(rows, "rl-world" if kind == "rl-world" else "rl", "JCT" if jobs else "makespan")
        else:
            rows = deepsched_rows(None if checkpoint == "deepsched-general" else checkpoint, seeds, progress,
                                  first=first)
            lines = table_lines(rows, "deepsched", "makespan")
    return lines, time.perf_counter() - t0


def _is_rl(path: str) -> bool:
    """Whether ``path`` holds an rl or rl-world checkpoint (anything else goes to the DeepSched loader,
    whose reader refuses it by name)."""
    from simsched.checkpoints import kind_of, read_checkpoint
    from simsched.errors import SimschedError

    try:
        return kind_of(read_checkpoint(path, ("rl", "rl-world", "deepsched"), retrain="")) in ("rl", "rl-world")
    except SimschedError:  # not a checkpoint: the DeepSched loader says why
        return False


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m simsched.learned.generalise_report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="deepsched-general | rl | rl-world | FILE")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first", type=int, default=None, help="only the first N shifts (1: the trained family)")
    args = parser.parse_args(argv)
    from simsched.errors import SimschedError

    try:
        if args.first is not None and args.first < 1:
            raise SimschedError(f"--first must be at least 1, got {args.first}", field="first")
        lines, wall = report(args.checkpoint, args.seeds, lambda s: print(f"  done: {s}", flush=True), args.first)
    except SimschedError as exc:  # bad input: one line, exit code 2, nothing printed before the table
        import sys

        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print("\n".join(lines))
    print(f"\n{args.seeds} seeds per shift; {wall:.0f} s wall time")


if __name__ == "__main__":
    main()


__all__ = ["deepsched_rows", "online_rows", "paired", "report", "summarise", "table_lines"]
