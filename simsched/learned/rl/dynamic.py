"""Paired comparisons of online schedulers on a dynamic stream scenario, for the RL bar (docs/rl.md).

``python -m simsched.learned.rl.dynamic SCENARIO --seed S --seeds N [--shift NAME] [--json OUT] -s LABEL=SPEC ...``
(``--merge A.json B.json``: the table of earlier runs on the same days, reference first; a
``simsched run --json`` document is read too, its ``srjf-eft`` rows as the reference)
runs every scheduler on the same days (seeds ``S .. S+N-1``: the same stream, noise, failures and
stragglers for all, :func:`simsched.run.streams.simulate_stream`) and prints one markdown row per
scheduler: mean JCT, and the per-day JCT ratio to the reference (the first scheduler) and to the
best other one as geometric means with **paired** 95% t intervals
(:func:`simsched.stats.paired_ratio`).  ``SPEC`` is a registry name with ``key=value`` parameters
after colons (``fair-eft:alpha=-1``, ``rl:checkpoint=rl_dynamic:rollout=3``).  ``--shift`` runs a
shifted version of the scenario (:data:`SHIFTS`: twice the jobs, twice the processors at the same
load, load 70% / 110%, noise sigma 0.2 / 1.5, unseen job families), for the generalisation table.
Cost: schedulers x seeds engine runs.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

BAR_LOAD = 0.86
"""Mean offered load of the bar scenario (scenarios/streams/rl_dynamic.yaml) on its selection days."""

SHIFTS = ("2x jobs", "2x processors", "load 70%", "load 110%", "sigma 0.2", "sigma 1.5", "unseen job families")


def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """``name:key=value:...`` -> ``(name, params)``; values parsed as YAML scalars.  O(len)."""
    import yaml

    name, *rest = text.split(":")
    params: dict[str, Any] = {}
    for item in rest:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"scheduler spec {text!r}: expected key=value after ':', got {item!r}")
        params[key] = yaml.safe_load(value)
    return name, params


def shifted(path: str, shift: str | None):  # -> Scenario
    """The stream scenario at ``path`` with one shift applied to its YAML (see :data:`SHIFTS`);
    ``None``: the scenario itself.  Load shifts scale the arrival process (rates times ``f``, rate
    change times divided by ``f``: the same burst, compressed); twice the processors doubles every
    processor count and the arrival process (same load); unseen job families replace the job mix by
    the Kasahara STG graph (40 tasks), the pipeline DOT graph (30 tasks) and fork-join and
    series-parallel DAGs (generators the training never saw).  Errors as ``simsched run``'s.  O(1)."""
    from simsched.scenario import parse_scenario
    from simsched.yamlio import load_yaml

    doc = load_yaml(path)
    if shift is None:
        return parse_scenario(doc)
    if shift not in SHIFTS:
        raise ValueError(f"unknown shift {shift!r}; choose one of {', '.join(SHIFTS)}")
    data = copy.deepcopy(doc.data)
    st = data["workload"]["stream"]

    def scale_rates(f: float) -> None:
        arr = st["arrivals"]
        if "poisson" in arr:
            arr["poisson"] = arr["poisson"] * f
        if "rates" in arr:
            arr["rates"] = [[t / f, r * f] for t, r in arr["rates"]]

    if shift == "2x jobs":
        st["count"] = 2 * st["count"]
    elif shift == "2x processors":
        for proc in data["platform"]["processors"]:
            proc["count"] = 2 * proc.get("count", 1)
        scale_rates(2.0)
    elif shift == "load 70%":
        scale_rates(0.7 / BAR_LOAD)
    elif shift == "load 110%":
        scale_rates(1.1 / BAR_LOAD)
    elif shift in ("sigma 0.2", "sigma 1.5"):
        data["noise"] = {"model": "lognormal", "sigma": float(shift.split()[1])}
    else:
        st["jobs"] = [{"weight": 1, "stg": "../data/kasahara_40.stg"},
                      {"weight": 1, "dot": "../data/pipeline_30.dot"},
                      {"weight": 2, "generator": "fork_join", "branches": 6, "stages": 3, "ccr": 0.3},
                      {"weight": 2, "generator": "series_parallel", "tasks": [10, 30], "ccr": 0.3}]
    import dataclasses

    return parse_scenario(dataclasses.replace(doc, data=data))


def compare(scenario, labels: Sequence[str], specs: Sequence[tuple[str, dict]], seeds: Sequence[int]
            ) -> tuple[dict[str, dict[int, float]], dict[str, float]]:
    """``(jct, wall)``: per label, ``{seed: mean JCT}`` and the seconds its runs took.  Every
    scheduler meets the same stream per seed.  O(len(specs) x len(seeds)) engine runs."""
    from simsched.run.streams import simulate_stream, stream_of
    from simsched.schedulers import registry

    jct: dict[str, dict[int, float]] = {lab: {} for lab in labels}
    wall = dict.fromkeys(labels, 0.0)
    for s in seeds:
        stream = stream_of(scenario, int(s))
        for lab, (name, params) in zip(labels, specs):
            t0 = time.perf_counter()
            run = simulate_stream(scenario, name, int(s), stream=stream, scheduler=registry.create(name, **params))
            wall[lab] += time.perf_counter() - t0
            jct[lab][int(s)] = float(run.metrics.summary["jct_mean"])
    return jct, wall


def table(jct: dict[str, dict[int, float]], wall: dict[str, float] | None = None) -> str:
    """Markdown: per scheduler its mean JCT, its paired difference of mean JCT to the first scheduler
    (as % of the reference's mean JCT), its paired ratio (geometric mean of per-day ratios) to the
    first scheduler and to the best of the others (lowest mean JCT), and days better than the
    reference; 95% t intervals.  O(k^2 seeds)."""
    from simsched.stats import paired_difference, paired_ratio

    labels = list(jct)
    ref = labels[0]
    mean = {lab: float(np.mean(list(v.values()))) for lab, v in jct.items()}
    rows = [f"| scheduler | days | mean JCT | mean JCT - {ref}'s, % of it (paired 95% CI) | / {ref} (paired 95% CI) | "
            f"/ best other (paired 95% CI) | best other | days better than {ref} | wall s |",
            "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for lab in labels:
        r = paired_ratio(jct[lab], jct[ref])
        d = paired_difference(jct[lab], jct[ref])
        pct = 100.0 / mean[ref] if mean[ref] > 0 else float("nan")
        others = [o for o in labels if o != lab]
        best = min(others, key=mean.get) if others else lab
        b = paired_ratio(jct[lab], jct[best])
        better = sum(jct[lab][s] < jct[ref][s] for s in jct[lab])
        rows.append(f"| {lab} | {len(jct[lab])} | {mean[lab]:.1f} | {d.estimate * pct:+.1f}% "
                    f"[{d.low * pct:+.1f}%, {d.high * pct:+.1f}%] | {r.estimate:.3f} [{r.low:.3f}, {r.high:.3f}] | "
                    f"{b.estimate:.3f} [{b.low:.3f}, {b.high:.3f}] | {best} | {better}/{len(jct[lab])} | "
                    f"{(wall or {}).get(lab, float('nan')):.0f} |")
    return "\n".join(rows)


def shift_table(by_shift: dict[str, dict[str, dict[int, float]]], agent: str = "rl") -> str:
    """Markdown, one row per shift: days, the agent's mean JCT, the best heuristic (lowest mean JCT
    of the others), the agent's paired JCT ratio to it and to ``srjf-eft`` (95% t intervals), and
    whether the agent is worse than the best (interval above 1), better (below 1) or tied.
    O(shifts x labels x days)."""
    from simsched.stats import paired_ratio

    rows = [f"| shift | days | {agent} mean JCT | best heuristic | {agent} / best (paired 95% CI) | "
            f"{agent} / srjf-eft (paired 95% CI) | {agent} vs the best |", "|---|---:|---:|---|---:|---:|---|"]
    for shift, jct in by_shift.items():
        mean = {lab: float(np.mean(list(v.values()))) for lab, v in jct.items()}
        best = min((lab for lab in jct if lab != agent), key=mean.get)
        b, r = paired_ratio(jct[agent], jct[best]), paired_ratio(jct[agent], jct["srjf-eft"])
        verdict = "worse" if b.low > 1 else "better" if b.high < 1 else "tie (interval holds 1)"
        rows.append(f"| {shift} | {b.n} | {mean[agent]:.1f} | {best} | {b.estimate:.3f} [{b.low:.3f}, {b.high:.3f}] | "
                    f"{r.estimate:.3f} [{r.low:.3f}, {r.high:.3f}] | {verdict} |")
    return "\n".join(rows)


def run_document_days(doc: dict) -> dict:
    """A ``simsched run --json`` results document as this module's ``--json`` layout: per scheduler
    label its ``{seed: mean JCT}`` and summed scheduler seconds, ``srjf-eft`` first when present (the
    reference of :func:`table`).  O(rows)."""
    jct: dict[str, dict[str, float]] = {}
    wall: dict[str, float] = {}
    for row in doc["results"]:
        if row.get("jct_mean") is None:
            continue
        jct.setdefault(row["scheduler"], {})[str(row["seed"])] = float(row["jct_mean"])
        wall[row["scheduler"]] = wall.get(row["scheduler"], 0.0) + float(row.get("scheduler_time_s") or 0.0)
    order = sorted(jct, key=lambda k: k != "srjf-eft")
    return {"scenario": doc.get("scenario"), "shift": None, "wall_s": {k: wall[k] for k in order},
            "jct_mean": {k: jct[k] for k in order}}


def _number(value: Any, path: str, field: str) -> float:
    """``value`` as a float when it is a finite number (not a boolean); :class:`SimschedError` naming the
    file and ``field`` otherwise."""
    import math

    from simsched.errors import SimschedError, shown

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise SimschedError(f"{shown(value, 40)} is not a finite number", file=path, field=field)
    return float(value)


def read_days_file(path: str) -> dict[str, Any]:
    """A ``--merge`` file as this module's ``--json`` layout (``shift``, ``wall_s``, ``jct_mean``): read by
    the project's bounded readers — a ``simsched run --json`` document by
    :func:`~simsched.run.document.load_document`, this module's own by :func:`simsched.limits.read_json`
    (a regular file within ``max_file_mb``, at most ``max_depth`` deep) and checked: ``jct_mean`` maps each
    label to ``{day: finite number}`` (days whole numbers of at least 0), ``wall_s`` each of those labels to
    a finite number, ``shift`` text or null.  :class:`SimschedError` naming the file and the field
    (``jct_mean.rl.3``) otherwise.  O(size of the file)."""
    from simsched import limits
    from simsched.errors import SimschedError, shown

    doc = limits.read_json(path, what="a --json file of this module or of `simsched run`")
    if isinstance(doc, dict) and "results" in doc:
        from simsched.run.document import load_document

        return run_document_days(load_document(path, schedules=False))
    if not isinstance(doc, dict):
        raise SimschedError("not a --json file of this module: expected an object with jct_mean and wall_s",
                            file=path)
    for key in ("jct_mean", "wall_s"):
        if not isinstance(doc.get(key), dict):
            raise SimschedError(f"{'missing' if key not in doc else shown(doc[key], 40)}: an object by scheduler "
                                f"label is needed (a --json file of this module)", file=path, field=key)
    shift = doc.get("shift")
    if shift is not None and not isinstance(shift, str):
        raise SimschedError(f"{shown(shift, 40)} is not a shift name", file=path, field="shift")
    jct: dict[str, dict[str, float]] = {}
    wall: dict[str, float] = {}
    for label, days in doc["jct_mean"].items():
        if not isinstance(days, dict):
            raise SimschedError(f"{shown(days, 40)}: an object {{day: mean JCT}} is needed", file=path,
                                field=f"jct_mean.{label}")
        for day, value in days.items():
            if not (day.isascii() and day.isdigit() and len(day) <= 19 and int(day) <= limits.MAX_INT):
                raise SimschedError(f"{shown(day, 40)} is not a day (a seed: a whole number from 0 to 2**63 - 1)",
                                    file=path, field=f"jct_mean.{label}")
            jct.setdefault(label, {})[day] = _number(value, path, f"jct_mean.{label}.{day}")
        if label not in doc["wall_s"]:
            raise SimschedError(f"missing: the wall time of {shown(label, 40)} (every label of jct_mean has one)",
                                file=path, field="wall_s")
        wall[label] = _number(doc["wall_s"][label], path, f"wall_s.{label}")
    return {"scenario": doc.get("scenario"), "shift": shift, "wall_s": wall, "jct_mean": jct}


def merge_files(paths: Sequence[str], shift_rows: bool) -> str:
    """The table (``shift_rows``: one row per shift) of the ``--merge`` files ``paths``, each read by
    :func:`read_days_file`; a label's days are the union over the files.  O(total size)."""
    by_shift: dict[str, dict[str, dict[int, float]]] = {}
    wall: dict[str, float] = {}
    for path in paths:
        doc = read_days_file(path)
        jct = by_shift.setdefault(doc.get("shift") or "none (the scenario itself)", {})
        for k, d in doc["jct_mean"].items():  # files on other days of the same label add days
            days = jct.setdefault(k, {})
            if not set(map(int, d)) <= set(days):  # a rerun of the same days adds no wall time
                wall[k] = wall.get(k, 0.0) + doc["wall_s"][k]
            days.update({int(s): v for s, v in d.items()})
    if shift_rows:
        return shift_table(by_shift)
    return "\n".join(table(jct, wall) for jct in by_shift.values())


def main(argv: Sequence[str] | None = None) -> int:
    from simsched.errors import SimschedError

    ap = argparse.ArgumentParser(prog="python -m simsched.learned.rl.dynamic", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario")
    ap.add_argument("--seed", type=int, default=None, help="first day (seed); required unless --merge")
    ap.add_argument("--seeds", type=int, default=30, help="number of days")
    ap.add_argument("--shift", choices=SHIFTS, default=None)
    ap.add_argument("--json", default=None, help="also write the per-day mean JCTs and wall times here")
    ap.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="print the table of earlier --json files instead of running (a label's days are "
                         "the union over the files)")
    ap.add_argument("--shift-table", action="store_true",
                    help="with --merge: one row per shift (the files' shifts) for the scheduler labelled rl")
    ap.add_argument("-s", "--scheduler", action="append", default=[],
                    help="LABEL=SPEC or SPEC (name:key=value:...); the first is the reference")
    args = ap.parse_args(argv)
    if args.merge:
        try:
            print(merge_files(args.merge, args.shift_table))
        except SimschedError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if not args.scheduler or args.seed is None:
        ap.error("give --seed and at least one -s/--scheduler (or --merge)")
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    labels, specs = [], []
    for item in args.scheduler:
        label, eq, spec = item.partition("=") if "=" in item.split(":")[0] else ("", "", item)
        try:
            name, params = parse_spec(spec)
        except ValueError as exc:
            ap.error(str(exc))
        labels.append(label or spec)
        specs.append((name, params))
    try:
        sc = shifted(args.scenario, args.shift)
        seeds = range(args.seed, args.seed + args.seeds)
        jct, wall = compare(sc, labels, specs, seeds)
    except SimschedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    shift = f" shift {args.shift}" if args.shift else ""
    print(f"{args.scenario}{shift}: days {args.seed}-{args.seed + args.seeds - 1}")
    print(table(jct, wall))
    if args.json:
        from simsched.outputs import atomic_write

        doc = {"scenario": args.scenario, "shift": args.shift, "wall_s": wall,
               "jct_mean": {k: {str(s): v for s, v in d.items()} for k, d in jct.items()}}
        atomic_write(args.json, lambda fh: fh.write(json.dumps(doc, indent=1).encode()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
