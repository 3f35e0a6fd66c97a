"""``simsched bench stg``: schedulers against the published optima of Kasahara's Standard Task Graph set.

The set (``scenarios/data/stg``: 180 random graphs of 50 and 180 of 100 tasks, each on 2, 4, 8 and
16 identical processors without communication; Tobita & Kasahara, J. Scheduling 5(5), 2002) comes
with a table of published values per graph and processor count: the optimum where it is proven,
else the best lower and upper bounds.  Most instances are easy — the trivial bound
``max(critical path, ceil(work / p))`` is already the optimum and list schedulers reach it — so the
benchmark keeps the **hard** ones, selected by code (:func:`stg_cases`):

* ``hard`` (default): the published lower bound (the optimum, when proven) is above the trivial
  bound: 35 cases, 17 proven and 18 open (the selection of issue #25);
* ``gap``: the published best makespan (the upper bound of open cases) is above the trivial bound:
  101 cases (17 proven, 84 open; the open cases whose published lower bound is only the trivial one
  are in here, not in ``hard``);
* ``all``: all 1,440 rows.

Per scheduler: the mean gap to the proven optimum on the proven cases and on how many it reaches
it; the mean gap to the best published makespan on all cases (negative where it beats the
published upper bound) and on how many open cases it does; on how many its makespan is *proven*
optimal — it equals the energetic lower bound of :mod:`simsched.schedulers.identical` or the
scheduler's own proven bound; time per instance, mean and max, and the mean time over HEFT's.
Makespans are re-measured by the fast evaluator.  Cost: cases x schedulers plans (the search 0.3 s
and 1 s, ``optimal`` up to 10 s each, by default: about 4 minutes for the 35 hard cases).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.problem import Problem
from simsched.workloads.importers.stg import PublishedValue

STG_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "data" / "stg"
"""The shipped set: ``50/``, ``100/`` and ``optimal/Case{50,100}_{2,4,8,16}_OPT.csv``."""

SELECTIONS = ("hard", "gap", "all")

DEFAULT_SCHEDULERS: dict[str, tuple[str, dict]] = {
    "heft": ("heft", {}), "etf": ("etf", {}), "search 0.3 s": ("search", {"time_limit_s": 0.3}),
    "search 1 s": ("search", {"time_limit_s": 1.0}), "optimal 10 s": ("optimal", {"time_limit_s": 10.0})}
"""Row label -> (registered scheduler, parameters)."""
QUICK_SCHEDULERS: dict[str, tuple[str, dict]] = {
    "heft": ("heft", {}), "etf": ("etf", {}), "search 0.2 s": ("search", {"time_limit_s": 0.2}),
    "optimal 2 s": ("optimal", {"time_limit_s": 2.0})}
QUICK_LIMIT = 6


@dataclass(frozen=True)
class Case(PublishedValue):
    """One graph on ``processors`` identical processors with its published ``lower``/``upper``
    values, the trivial bound and the energetic bound (:func:`~simsched.schedulers.identical.energetic_bound`)."""

    trivial: float
    bound: float
    problem: Problem

    @property
    def label(self) -> str:
        return f"{self.file} p={self.processors}"


def stg_cases(selection: str = "hard", *, directory: str | Path | None = None, limit: int | None = None,
              sizes: tuple[int, ...] = (50, 100)) -> list[Case]:
    """The cases of ``selection`` (module docstring), in table order (50 then 100 tasks; p = 2, 4, 8,
    16; graph number), the first ``limit`` of them if given.  Each graph is read once.  O(rows x
    (n + e)) plus the energetic bound of each selected case (O(n^3) at worst)."""
    from simsched.bench.schedulers import uniform_platform
    from simsched.schedulers.identical import energetic_bound, identical_case
    from simsched.workloads.importers.stg import read_stg, read_stg_optima
    from simsched.workloads.paths import longest_path_from

    if selection not in SELECTIONS:
        raise SimschedError(f"unknown STG selection {selection!r}; choose from {', '.join(SELECTIONS)}")
    root = Path(directory) if directory is not None else STG_DIR
    tables = [root / "optimal" / f"Case{n}_{p}_OPT.csv" for n in sizes for p in (2, 4, 8, 16)]
    missing = [t for t in tables if not t.exists()]
    if missing:
        raise SimschedError(f"the STG optimum table {missing[0]} is missing (see scenarios/data/stg/README.md)")
    graphs: dict[str, tuple] = {}
    out: list[Case] = []
    for table in tables:
        for row in sorted(read_stg_optima(table), key=lambda r: r.file):
            if limit is not None and len(out) >= limit:
                return out
            if row.file not in graphs:
                graph = read_stg(root / row.file)
                graphs[row.file] = (graph, float(longest_path_from(graph, graph.work).max()), float(graph.work.sum()))
            graph, critical_path, work = graphs[row.file]
            trivial = float(math.ceil(max(critical_path, work / row.processors) - 1e-9))  # integer durations
            chosen = {"hard": row.lower > trivial, "gap": row.upper > trivial, "all": True}[selection]
            if chosen:
                problem = Problem(graph, uniform_platform(row.processors))
                inst = identical_case(problem)
                bound = energetic_bound(inst, upper=float(row.upper))
                out.append(Case(row.file, row.processors, row.lower, row.upper, trivial, bound, problem))
    return out


def run_stg(cases: list[Case], schedulers: dict[str, tuple[str, dict]] | None = None,
            progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Plan every case with every scheduler (``{row label: (name, parameters)}``); returns ``{"cases", "makespan",
    "seconds", "bound"}`` with per-scheduler lists in case order (``bound``: the scheduler's own
    proven lower bound where it reports one, else nan).  A scheduler that fails a case is recorded as
    nan with its error under ``"failed"``."""
    from simsched.schedulers import registry
    from simsched.simulator.evaluate import evaluate_plan

    schedulers = schedulers or DEFAULT_SCHEDULERS
    total, done = len(cases) * len(schedulers), 0
    makespan = {s: [math.nan] * len(cases) for s in schedulers}
    seconds = {s: [math.nan] * len(cases) for s in schedulers}
    bound = {s: [math.nan] * len(cases) for s in schedulers}
    failed: dict[str, str] = {}
    for name, (registered, params) in schedulers.items():
        scheduler = registry.create(registered, **params)
        for i, case in enumerate(cases):
            if progress:
                progress(done, total, f"{name}: {case.label}")
            done += 1
            t0 = time.perf_counter()
            try:
                plan = scheduler.plan(case.problem, np.random.default_rng(0))
            except SimschedError as exc:
                failed.setdefault(name, str(exc))
                continue
            seconds[name][i] = time.perf_counter() - t0
            makespan[name][i] = evaluate_plan(case.problem, plan).makespan
            info = plan.info or {}
            if info.get("optimal") or info.get("proven_by_bound"):
                bound[name][i] = makespan[name][i]
            elif "bound" in info:
                bound[name][i] = float(info["bound"])
    if progress:
        progress(total, total, "done")
    return {"cases": cases, "makespan": makespan, "seconds": seconds, "bound": bound, "failed": failed}


def stg_rows(result: dict) -> list[dict]:
    """One row per scheduler (module docstring), in the order run."""
    cases: list[Case] = result["cases"]
    upper = np.array([c.upper for c in cases], dtype=np.float64)
    energetic = np.array([c.bound for c in cases], dtype=np.float64)
    proven = np.array([c.proven for c in cases], dtype=bool)
    heft = np.array(result["seconds"].get("heft", [math.nan] * len(cases)), dtype=np.float64)
    rows = []
    for name, values in result["makespan"].items():
        mk = np.array(values, dtype=np.float64)
        sec = np.array(result["seconds"][name], dtype=np.float64)
        own = np.array(result["bound"][name], dtype=np.float64)
        ok = np.isfinite(mk)
        gap = 100.0 * (mk / upper - 1.0)
        lb = np.fmax(energetic, own)
        rows.append({
            "scheduler": name,
            f"gap to optimum % ({int(proven.sum())} proven)":
                float(np.mean(gap[proven & ok])) if (proven & ok).any() else math.nan,
            "optimal on": f"{int(np.sum(ok & proven & (mk <= upper)))}/{int(proven.sum())}",
            f"gap to best known % ({len(cases)})": float(np.mean(gap[ok])) if ok.any() else math.nan,
            "beats published": f"{int(np.sum(ok & ~proven & (mk < upper)))}/{int((~proven).sum())}",
            "proven optimal": f"{int(np.sum(ok & (mk <= lb + 1e-9)))}/{len(cases)}",
            "time ms": float(1000 * np.nanmean(sec)) if ok.any() else math.nan,
            "max ms": float(1000 * np.nanmax(sec)) if ok.any() else math.nan,
            "x HEFT": float(np.nanmean(sec) / np.nanmean(heft)) if np.isfinite(heft).any() and ok.any() else math.nan,
            "note": result["failed"].get(name, ""),
        })
    if not result["failed"]:
        for row in rows:
            del row["note"]
    return rows


def case_rows(result: dict) -> list[dict]:
    """One row per case: the published value(s), the trivial and energetic bounds, each
    scheduler's makespan, the best makespan found, the best proven lower bound, and the status:
    ``proven`` (published optimum), ``closed`` (open, now proven: best found = proven bound),
    ``improved`` (open, best found below the published upper bound) or ``open``."""
    cases: list[Case] = result["cases"]
    rows = []
    for i, case in enumerate(cases):
        found = {name: result["makespan"][name][i] for name in result["makespan"]}
        best = min((v for v in found.values() if math.isfinite(v)), default=math.nan)
        bound = max([case.bound] + [result["bound"][name][i] for name in found
                                    if math.isfinite(result["bound"][name][i])])
        status = "proven" if case.proven else (
            "closed" if best <= bound + 1e-9 else "improved" if best < case.upper else "open")
        rows.append({"case": case.label, "published": str(case.upper) if case.proven else f"{case.lower}..{case.upper}",
                     "trivial": case.trivial, "energetic": case.bound, **found, "best": best,
                     "bound": min(bound, best), "status": status})
    return rows


def bench_stg(quick: bool = False, *, limit: int | None = None, selection: str = "hard",
              schedulers: dict[str, tuple[str, dict]] | None = None,
              progress: Callable[[int, int, str], None] | None = None,
              say: Callable[[str], None] = print, keep: list | None = None) -> list[dict]:
    """Run the STG benchmark (``--quick``: the first :data:`QUICK_LIMIT` cases, shorter limits) and
    return its rows; ``say`` gets a caption with the selection's size and the energetic bound's
    agreement with the published values; ``keep`` (a list) receives the raw result for
    :func:`case_rows`."""
    if limit is None and quick:
        limit = QUICK_LIMIT
    cases = stg_cases(selection, limit=limit)
    if not cases:
        say("no STG case selected")
        return []
    result = run_stg(cases, schedulers or (QUICK_SCHEDULERS if quick else DEFAULT_SCHEDULERS), progress)
    if keep is not None:
        keep.append(result)
    proven = sum(c.proven for c in cases)
    closes = sum(c.bound >= c.upper for c in cases)
    above = sum(c.bound > c.lower for c in cases if not c.proven)
    say(f"{len(cases)} STG cases ({selection}: {proven} proven, {len(cases) - proven} open), identical processors, "
        f"no communication; gap = makespan / published best - 1; the energetic lower bound meets the published "
        f"best on {closes}/{len(cases)} and is above the published lower bound on {above}/{len(cases) - proven} "
        f"open cases")
    return stg_rows(result)


def main(argv: list[str] | None = None) -> None:
    """``python -m simsched.bench.stg [--selection hard|gap|all] [--limit N] [--quick]
    [--search-s S] [--optimal-s S]``: the table of docs/optimum.md, printed as text."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m simsched.bench.stg")
    parser.add_argument("--selection", default="hard", choices=SELECTIONS)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cases", action="store_true", help="also one line per case")
    parser.add_argument("--search-s", type=float, default=None, help="one search row with this budget")
    parser.add_argument("--optimal-s", type=float, default=None, help="one optimal row with this limit")
    args = parser.parse_args(argv)
    chosen = dict(QUICK_SCHEDULERS if args.quick else DEFAULT_SCHEDULERS)
    for name, value in (("search", args.search_s), ("optimal", args.optimal_s)):
        if value is not None:
            chosen = {k: v for k, v in chosen.items() if v[0] != name}
            chosen[f"{name} {value:g} s"] = (name, {"time_limit_s": value})
    kept: list[dict] = []
    rows = bench_stg(args.quick, limit=args.limit, selection=args.selection, schedulers=chosen, keep=kept)
    tables = [rows] + ([case_rows(kept[0])] if args.cases and kept else [])
    for table in tables:
        if table:
            keys = list(table[0])
            print(" | ".join(keys))
            for row in table:
                print(" | ".join(f"{row[k]:.3f}" if isinstance(row[k], float) and not float(row[k]).is_integer()
                                 else f"{row[k]:g}" if isinstance(row[k], float) else str(row[k]) for k in keys))


if __name__ == "__main__":  # pragma: no cover
    main()
