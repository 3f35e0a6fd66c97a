"""Two diagnostics of DeepSched behind docs/deepsched.md, each one command:

* ``python -m simsched.learned.deepsched.diagnose ablation CONFIG.yaml`` — where the quality comes
  from: on the config's evaluation instances (the same seeds as ``--eval-only``), the makespan gap to
  HEFT of the same earliest-finish decode (all processors, insertion) driven by four task orders:
  the **network**'s predicted starts; the network with its **rank inputs scrambled** (the upward and
  downward rank columns permuted among the instance's tasks, so it must order from the other
  features); HEFT's **upward rank alone** (no network); a **random** topological order.
* ``python -m simsched.learned.deepsched.diagnose stages`` — where a single plan's time goes at
  10,000 tasks x 188 processors, one torch thread: HEFT, then DeepSched's stages (features, the
  network's forward pass and within it the bidirectional GRU alone, topological sequence, decode).

Both print a markdown table.  Cost: ablation, instances x (HEFT + 3 forward passes + 4 decodes);
stages, a few single plans.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ORDERS = ("network", "network, rank inputs scrambled", "upward rank only", "random order")


def _order_keys(net, problem, features, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The start keys of each order (:data:`ORDERS`) for one problem: smaller key, earlier."""
    from dataclasses import replace

    from simsched.learned.deepsched.features import TASK_FEATURES
    from simsched.learned.deepsched.infer import forward
    from simsched.schedulers.heft import upward_rank

    keys = {"network": forward(net, [problem], features=[features])[0][1]}
    task = features.task.copy()
    perm = rng.permutation(task.shape[0])
    for col in (TASK_FEATURES.index("upward_rank"), TASK_FEATURES.index("downward_rank")):
        task[:, col] = task[perm, col]
    keys[ORDERS[1]] = forward(net, [problem], features=[replace(features, task=task)])[0][1]
    rank = upward_rank(problem)
    keys[ORDERS[2]] = rank.max() - rank  # decreasing rank; non-negative, as keys are raised to arrival
    keys[ORDERS[3]] = rng.random(problem.n_tasks)
    return keys


def ablation_rows(config: str | Path, checkpoint: str | None = None, sizes: Sequence[int] | None = None,
                  instances: int | None = None, split: str = "unseen",
                  progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per (order, size): mean and worst makespan ratio - 1 to HEFT over the ``split``
    families' evaluation instances (seeds of :func:`~simsched.learned.deepsched.evaluate.eval_seed`,
    disjoint from training), every plan timed by the fast evaluator.  Deterministic."""
    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.config import load_config
    from simsched.learned.deepsched.data import make_problem
    from simsched.learned.deepsched.evaluate import eval_seed
    from simsched.learned.deepsched.features import extract
    from simsched.learned.deepsched.infer import decode
    from simsched.learned.deepsched.scheduler import to_plan
    from simsched.learned.runtime import torch_threads
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.evaluate import evaluate_plan

    cfg = load_config(config)
    net, _ = load_checkpoint(checkpoint or (str(cfg.path(cfg.checkpoint)) if cfg.checkpoint else None))
    fams = list(enumerate(cfg.data.seen)) if split == "seen" else \
        [(len(cfg.data.seen) + i, f) for i, f in enumerate(cfg.data.unseen)]
    ratios: dict[tuple[str, int], list[float]] = {}
    with torch_threads(1):
        for size in sizes or cfg.eval.sizes:
            for fi, fam in fams:
                for i in range(instances or cfg.eval.instances):
                    seed = eval_seed(cfg.data.seed, fi, size, i)
                    problem = make_problem(fam, cfg.data.platform, seed, tasks=size)
                    heft = float(evaluate_plan(problem, heft_schedule(problem)).finish.max())
                    scores = np.zeros((problem.n_tasks, problem.n_processors))
                    keys = _order_keys(net, problem, extract(problem), np.random.default_rng(seed))
                    for name, key in keys.items():
                        plan = to_plan(problem, decode([problem], [(scores, key)], problem.n_processors)[0])
                        span = float(evaluate_plan(problem, plan).finish.max())
                        ratios.setdefault((name, size), []).append(span / heft if heft > 0 else 1.0)
                if progress:
                    progress(f"{size} tasks: {fam.name}")
    return [dict(order=name, size=size, instances=len(r), mean_gap=float(np.mean(r)) - 1.0,
                 worst_gap=float(np.max(r)) - 1.0, better_or_equal=float(np.mean(np.array(r) <= 1.0 + 1e-9)))
            for (name, size), r in sorted(ratios.items(), key=lambda kv: (ORDERS.index(kv[0][0]), kv[0][1]))]


def ablation_table(rows: list[dict]) -> list[str]:
    """The ablation rows as markdown lines."""
    out = ["| task order | tasks | instances | makespan gap to HEFT (mean) | worst instance "
           "| instances no worse than HEFT |",
           "|---|---|---|---|---|---|"]
    out += [f"| {r['order']} | {r['size']:,} | {r['instances']} | {100 * r['mean_gap']:+.1f}% | "
            f"{100 * r['worst_gap']:+.1f}% | {100 * r['better_or_equal']:.0f}% |" for r in rows]
    return out


def stage_times(n: int = 10_000, m: int = 188, repeat: int = 2, compiled: bool = False) -> dict[str, float]:
    """Best-of-``repeat`` seconds of HEFT and of each DeepSched stage on one ``n`` x ``m`` timing
    problem, torch on one thread, checkpoint loaded beforehand.  ``HEFT (whole plan)`` is
    :func:`~simsched.schedulers.heft.heft_schedule` as called by default (its numpy loop below
    ``COMPILED_MIN_WORK`` pairs); with ``compiled`` (and numba installed) a last entry times HEFT's
    compiled placement loop too, its JIT compilation excluded (the warm-up call)."""
    import torch

    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.data import record_of
    from simsched.learned.deepsched.decode import eft_decode
    from simsched.learned.deepsched.evaluate import time_plan, timing_problem
    from simsched.learned.deepsched.features import extract_many
    from simsched.learned.deepsched.infer import forward, sequences, top_k_mask
    from simsched.learned.deepsched.model import collate
    from simsched.learned.deepsched.scheduler import plans
    from simsched.learned.runtime import torch_threads
    from simsched.schedulers.heft import heft_schedule

    net, _ = load_checkpoint(None)
    problem = timing_problem(n, m)
    out: dict[str, float] = {}
    with torch_threads(1), torch.inference_mode():
        out["HEFT (whole plan)"] = time_plan(lambda: heft_schedule(problem), "cpu", repeat)
        out["DeepSched (whole plan)"] = time_plan(lambda: plans([problem]), "cpu", repeat)
        feats = extract_many([problem])
        out["features"] = time_plan(lambda: extract_many([problem]), "cpu", repeat)
        batch = collate([record_of(feats[0])], labels=False)
        out["network forward pass"] = time_plan(lambda: net(batch), "cpu", repeat)
        x = torch.zeros(1, n, net.gru.input_size)
        out["  of which the bidirectional GRU alone"] = time_plan(lambda: net.gru(x), "cpu", repeat)
        outputs = forward(net, [problem], features=feats)
        out["topological sequence"] = time_plan(lambda: sequences([problem], [outputs[0][1]]), "cpu", repeat)
        seqs = sequences([problem], [outputs[0][1]])
        masks = [top_k_mask(problem, outputs[0][0], m)]
        out["decode (earliest finish, insertion)"] = time_plan(lambda: eft_decode([problem], seqs, masks), "cpu",
                                                               repeat)
    if compiled:
        from simsched.schedulers.timeline import compiled_available

        if compiled_available():
            out["HEFT, compiled placement loop (numba)"] = time_plan(
                lambda: heft_schedule(problem, compiled=True), "cpu", repeat)
    return out


def stage_table(times: dict[str, float]) -> list[str]:
    """The stage times as markdown lines, each also as a multiple of HEFT's time."""
    heft = times["HEFT (whole plan)"]
    return ["| stage | seconds | x HEFT's whole plan |", "|---|---|---|"] + \
        [f"| {k} | {v:.3f} | {v / heft:.2f} |" for k, v in times.items()]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m simsched.learned.deepsched.diagnose", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("ablation", help="makespan gap to HEFT of four task orders")
    a.add_argument("config")
    a.add_argument("--checkpoint", default=None)
    a.add_argument("--sizes", type=int, nargs="*", default=None)
    a.add_argument("--instances", type=int, default=None)
    a.add_argument("--split", choices=("seen", "unseen"), default="unseen")
    s = sub.add_parser("stages", help="where one plan's time goes")
    s.add_argument("--tasks", type=int, default=10_000)
    s.add_argument("--processors", type=int, default=188)
    s.add_argument("--repeat", type=int, default=2)
    s.add_argument("--no-compiled", action="store_true", help="skip timing HEFT's compiled loop (numba JIT)")
    args = parser.parse_args(argv)
    if args.what == "ablation":
        rows = ablation_rows(args.config, args.checkpoint, args.sizes, args.instances, args.split)
        print("\n".join(ablation_table(rows)))
    else:
        print("\n".join(stage_table(stage_times(args.tasks, args.processors, args.repeat,
                                                         compiled=not args.no_compiled))))


if __name__ == "__main__":
    main()
