"""Where a job-stream ``rl`` checkpoint breaks: its mean job completion time (JCT) against every
heuristic on shifted versions of the family it was trained on.

``python -m simsched.learned.rl.generalise [--checkpoint rl_online] [--seeds 100]`` prints one
markdown row per shift: the trained family itself, twice the jobs per stream, twice the processors
(arrival rate doubled, so the load stays), load 70% and 110% (arrival rate scaled from the trained
~90%), and duration noise sigma fixed at 0.2 and at 1.5.  Per shift, every policy runs on the same
episodes (seeds after the checkpoint's selection seeds, :func:`~simsched.learned.rl.ppo.final_seeds`),
and ``rl``'s per-seed JCT ratios to the best list heuristic and to ``srjf-eft`` give **paired** 95%
intervals (normal approximation over seeds).  Cost: shifts x seeds x (6 heuristics + one ``rl``
episode).
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

TRAINED_LOAD = 0.9
"""The trained family's load (``job_rate: 0.009`` on 4 processors, docs/rl.md)."""


def _double_processors(platform):  # -> Platform
    """The platform with a twin of every processor (each its own host), the network's largest
    bandwidth-limited link and latency for every pair."""
    import dataclasses

    from simsched.simulator.platform import Platform

    procs = list(platform.processors)
    twins = [dataclasses.replace(q, name=f"{q.name}-twin", host="") for q in procs]
    off = ~np.eye(platform.n_processors, dtype=bool)
    bw = platform.bandwidth[off] if platform.n_processors > 1 else np.array([1.0])
    lat = platform.latency[off] if platform.n_processors > 1 else np.array([0.0])
    return Platform.uniform(procs + twins, bandwidth=float(bw.min()), latency=float(lat.max()))


def shifted_families(cfg) -> dict[str, object]:
    """``{shift name: Family}``: the config's family and its shifts (see the module docstring)."""
    from simsched.learned.rl.ppo import make_family

    base = make_family(cfg)
    out = {"trained family": base}

    def variant(**changes):
        fam = copy.copy(base)
        for k, v in changes.items():
            setattr(fam, k, v)
        return fam

    out["2x jobs per stream"] = variant(n_jobs=2 * base.n_jobs)
    out["2x processors (same load)"] = variant(platform=_double_processors(base.platform), job_rate=2 * base.job_rate)
    out["load 70%"] = variant(job_rate=base.job_rate * 0.7 / TRAINED_LOAD)
    out["load 110%"] = variant(job_rate=base.job_rate * 1.1 / TRAINED_LOAD)
    out["sigma 0.2"] = variant(sigma_range=(0.2, 0.2))
    out["sigma 1.5"] = variant(sigma_range=(1.5, 1.5))
    return out


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from simsched.learned.rl.report import ci95

    r = a / b
    return float(r.mean()), ci95(r)


def generalisation_rows(checkpoint: str | None = None, seeds: int = 100,
                        progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per shift: best list heuristic, ``rl``'s mean JCT ratio to it and to ``srjf-eft``
    (paired 95% half-widths), and whether ``rl`` is no worse than every heuristic (interval's upper
    end at most 1 against the best of all, ``srjf-eft`` included)."""
    from simsched.learned.rl.checkpoint import config_of, load, shipped_path
    from simsched.learned.rl.policy import _load
    from simsched.learned.rl.ppo import final_seeds
    from simsched.learned.rl.report import job_comparison

    path = checkpoint or str(shipped_path("rl").parent / "rl_online.pt")
    cfg = config_of(load(path, "rl"), path, "rl")
    cfg.base = str(Path(__file__).resolve().parents[3] / "scenarios" / "rl")  # where its scenario ships
    cfg.eval.final_seeds = seeds
    net = _load("rl", path)
    rows = []
    for name, fam in shifted_families(cfg).items():
        table = job_comparison(cfg, net, family=fam, seeds=final_seeds(cfg))
        per = {k: np.array(v) for k, v in table["per_seed"].items()}
        best_all = min((k for k in per if k != "rl"), key=lambda k: per[k].mean())
        rl_best, ci_best = _paired(per["rl"], per[table["best_heuristic"]])
        rl_srjf, ci_srjf = _paired(per["rl"], per["srjf-eft"])
        rl_all, ci_all = _paired(per["rl"], per[best_all])
        rows.append(dict(shift=name, seeds=table["seeds"], best_list=table["best_heuristic"], best_all=best_all,
                         rl_jct=float(per["rl"].mean()), ratio_best_list=rl_best, ci_best_list=ci_best,
                         ratio_srjf=rl_srjf, ci_srjf=ci_srjf, ratio_best_all=rl_all, ci_best_all=ci_all,
                         no_worse=bool(rl_all - ci_all <= 1.0)))
        if progress:
            progress(name)
    return rows


def table_lines(rows: list[dict]) -> list[str]:
    """Markdown lines of :func:`generalisation_rows`."""
    out = ["| shift | seeds | rl mean JCT | best list heuristic | rl / it (paired 95% CI) | rl / srjf-eft "
           "(paired 95% CI) | best of all | no worse than the best (within the CI) |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['shift']} | {r['seeds']} | {r['rl_jct']:.1f} | {r['best_list']} | "
            f"{r['ratio_best_list']:.3f} ± {r['ci_best_list']:.3f} | {r['ratio_srjf']:.3f} ± {r['ci_srjf']:.3f} | "
            f"{r['best_all']} | {'yes' if r['no_worse'] else 'no'} |" for r in rows]
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m simsched.learned.rl.generalise", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default=None, help="a job-stream rl checkpoint (default: rl_online)")
    parser.add_argument("--seeds", type=int, default=100)
    args = parser.parse_args(argv)
    from simsched.learned.runtime import inference_threads, torch_threads

    with torch_threads(inference_threads()):
        print("\n".join(table_lines(generalisation_rows(args.checkpoint, args.seeds))))


if __name__ == "__main__":
    main()
