"""``python -m simsched.learned.rl.worlds train|cem|envelope|safety``: the command line of the two training
routes, the gate's envelope (:mod:`simsched.learned.rl.envelope`) and its safety check
(:mod:`~.safety`; see the package docstring); bad arguments exit 2 with one ``error:`` line."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

from simsched.learned.rl import worlds as package
from simsched.learned.rl.worlds.cem import train
from simsched.learned.rl.worlds.predictor import train_predictor


def _bounded(a: argparse.Namespace, bounds: Sequence[tuple[str, int, int]]) -> str | None:
    """The error line of the first argument outside its ``(name, lo, hi)`` bounds, or None."""
    for name, lo, hi in bounds:
        v = getattr(a, name)
        if not lo <= v <= hi:
            return f"error: --{name.replace('_', '-')}: expected {lo} to {hi}, got {v}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv``; the exit status (0, or 2 on bad arguments or input)."""
    p = argparse.ArgumentParser(prog="python -m simsched.learned.rl.worlds", description=package.__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fit the gate's predictor on both rules' train world-days, select on select days")
    t.add_argument("-o", "--output", required=True)
    for name, default in (("drawn", 200), ("bar-like", 100), ("bar", 60), ("select-drawn", 60),
                          ("select-bar-like", 30), ("select-bar", 60)):
        t.add_argument(f"--{name}", type=int, default=default)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--workers", type=int, default=1, help="processes for collecting and selecting (the same result)")
    c = sub.add_parser("cem", help="the earlier black-box search over the gate's weights (cross-entropy method)")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--iterations", type=int, default=8)
    c.add_argument("--population", type=int, default=8)
    c.add_argument("--days", type=int, default=24)
    c.add_argument("--select-days", type=int, default=32)
    c.add_argument("--budget-min", type=float, default=None)
    c.add_argument("--seed", type=int, default=0)
    e = sub.add_parser("envelope", help="add the envelope of its own training worlds to a gate checkpoint")
    e.add_argument("checkpoint")
    e.add_argument("-o", "--output", required=True, help="the checkpoint file to write")
    s = sub.add_parser("safety", help="a learned stream scheduler against srjf-eft on worlds wider than training")
    s.add_argument("-s", "--scheduler", default="rl-gate")
    s.add_argument("--worlds", choices=("wide", "off-training"), default="wide")
    s.add_argument("--count", type=int, default=6, help="wide worlds (off-training: always its six)")
    s.add_argument("--days", type=int, default=3)
    s.add_argument("--space", choices=("evaluate", "fresh"), default="evaluate",
                   help="the seed space of the wide worlds and of every world's days")
    s.add_argument("--seed", type=int, default=0,
                   help="the base seed of the wide worlds, and added to each world's seed before its days are drawn")
    s.add_argument("--json", default=None)
    a = p.parse_args(argv)
    from simsched.errors import SimschedError

    if a.command in ("envelope", "safety"):
        return _tools(a)

    if a.command == "train":
        sizes = ("drawn", "bar_like", "bar", "select_drawn", "select_bar_like", "select_bar")
        bad = _bounded(a, [*((n, 0, 10000) for n in sizes), ("seed", 0, 1000), ("workers", 1, 64)])
        if bad is None and a.drawn + a.bar_like + a.bar < 2:
            bad = f"error: --drawn/--bar-like/--bar: expected at least 2 train days, got {a.drawn + a.bar_like + a.bar}"
        if bad is None and a.select_drawn + a.select_bar_like + a.select_bar < 1:
            bad = "error: --select-drawn/--select-bar-like/--select-bar: expected at least 1 select day, got 0"
        if bad:
            print(bad)
            return 2
        run = lambda: train_predictor(a.output, *(getattr(a, n) for n in sizes), seed=a.seed,  # noqa: E731
                                      workers=a.workers)
    else:
        bad = _bounded(a, (("iterations", 1, 1000), ("population", 2, 1000), ("days", 1, 10000),
                           ("select_days", 1, 10000), ("seed", 0, 2**31 - 1)))
        if bad is None and a.budget_min is not None and not (math.isfinite(a.budget_min) and a.budget_min > 0):
            bad = f"error: --budget-min: expected a positive number of minutes, got {a.budget_min}"
        if bad:
            print(bad)
            return 2
        run = lambda: train(a.output, a.iterations, a.population, a.days, a.select_days,  # noqa: E731
                            a.budget_min, a.seed)
    from simsched.outputs import output_files, release_outputs

    try:  # the folder and the files written into it, checked before any work (an existing file: refused)
        output_files(a.output, ("rl_gate.json", "train_history.json"), option="-o")
        run()
    except SimschedError as exc:
        print(f"error: {exc}")
        return 2
    finally:
        release_outputs()
    return 0


def _tools(a: argparse.Namespace) -> int:
    """``envelope`` and ``safety``: 0, 1 when ``safety`` finds the policy is not a default candidate, 2 on bad
    arguments or input."""
    from simsched.errors import SimschedError

    try:
        if a.command == "envelope":
            from simsched.learned.rl.worlds.predictor import add_envelope

            print(add_envelope(a.checkpoint, a.output))
            return 0
        bad = _bounded(a, (("count", 1, 1000), ("days", 2, 1000), ("seed", 0, 2**20)))
        if bad:
            print(bad)
            return 2
        import json

        from simsched.learned.rl.worlds.safety import default_candidate, format_rows, safety_rows, worlds_of

        rows = safety_rows(a.scheduler, worlds_of(a.worlds, a.count, a.space, a.seed), a.days, a.space, a.seed)
        ok, why = default_candidate(rows)
        print("\n".join(format_rows(rows)))
        print(f"{a.scheduler}: {'a default candidate' if ok else 'NOT a default candidate'}: {why}")
        if a.json:
            from simsched.fileio import atomic_path

            with atomic_path(a.json) as tmp:
                open(tmp, "w", encoding="utf-8").write(json.dumps({"rows": rows, "default_candidate": ok,
                                                                   "why": why}, indent=1) + "\n")
        return 0 if ok else 1
    except SimschedError as exc:
        print(f"error: {exc}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
