"""The generalisation matrix's safety check: a learned stream scheduler against ``srjf-eft`` on worlds wider
than its training (issue 41).

:func:`safety_rows` runs the scheduler and the rule on the same days of each world (the ``evaluate`` or
``fresh`` seeds of :func:`~simsched.run.seedspace.space_seeds` from the world's seed plus ``base``) and
gives one row per world in the generalisation matrix's form
(:func:`simsched.learned.generalise_matrix.matrix`): the paired ratio of mean JCT to the rule's with its 95%
interval (:func:`simsched.stats.paired_ratio`) and the verdict ``better`` / ``tie`` / ``worse``, plus how
many days the scheduler handed to a rule and why (its ``fallback_reason``).  :func:`default_candidate`:
a policy with any ``worse`` world is **not a default candidate**.

Worlds (:func:`worlds_of`): ``wide`` — :func:`~.wide.draw_wide_world`'s worlds of the ``evaluate`` (or ``fresh``) space,
or ``off-training`` — the six named worlds of :data:`~.wide.OFF_TRAINING`.
``python -m simsched.learned.rl.worlds safety -s rl-gate --worlds wide --count 6 --days 3`` prints the rows
and exits 1 when the policy is not a default candidate.  Cost: worlds x days x 2 engine runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

RULE = "srjf-eft"
"""The rule every learned stream scheduler must never be significantly worse than."""


def worlds_of(kind: str, count: int = 6, space: str = "evaluate", base: int = 0) -> dict[str, Callable[[], Any]]:
    """``{world name: a function giving its parsed scenario}``: ``count`` wide worlds (``kind`` ``wide``,
    their seeds the first of ``space``, ``evaluate`` or ``fresh``, from base seed ``base``) or the six
    :data:`~.wide.OFF_TRAINING` worlds (``off-training``)."""
    from simsched.learned.rl.worlds.wide import OFF_TRAINING, wide_world
    from simsched.run.seedspace import space_seeds

    if kind == "off-training":
        return dict(OFF_TRAINING)
    if kind != "wide":
        raise ValueError(f"unknown worlds {kind!r}; choose from wide, off-training")
    return {f"wide world {s}": functools.partial(wide_world, s) for s in space_seeds(base, space, count)}


def safety_rows(scheduler: str, worlds: dict[str, Callable[[], Any]], days: int, space: str = "evaluate",
                base: int = 0, rule: str = RULE, progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One row per world (see the module docstring): ``{cell, world, days, scheduler, jct, best_rule,
    best_jct, ratio, low, high, verdict, wins, fell_back, from_first_job, reasons, per_day}`` (``fell_back``:
    days the scheduler handed to a rule, ``from_first_job`` of them from the day's first job); ``scheduler``
    a registry name with ``:key=value`` parameters.  Deterministic in its arguments.  O(worlds x days x 2)
    engine runs."""
    from simsched.learned.rl.dynamic import parse_spec
    from simsched.run.seedspace import space_seeds
    from simsched.run.streams import simulate_stream, stream_of
    from simsched.schedulers import registry
    from simsched.stats import paired_ratio

    specs = {scheduler: parse_spec(scheduler), rule: parse_spec(rule)}
    rows = []
    for name, make in worlds.items():
        sc = make()
        jct: dict[str, dict[int, float]] = {scheduler: {}, rule: {}}
        reasons: list[str] = []
        for seed in space_seeds(int(sc.seed) + int(base), space, days):
            if progress is not None:
                progress(f"{name}: day {seed}")
            stream = stream_of(sc, seed)
            for label, (n, p) in specs.items():
                instance = registry.create(n, **p)
                run = simulate_stream(sc, n, seed, stream, instance)
                jct[label][seed] = float(run.metrics.summary["jct_mean"])
                if label == scheduler and getattr(instance, "fallback_reason", None):
                    reasons.append(str(instance.fallback_reason))
        pr = paired_ratio(jct[scheduler], jct[rule])
        verdict = "tie" if not pr.significant else ("better" if pr.high < 1.0 else "worse")
        rows.append({"cell": name, "world": sc.name, "days": days, "scheduler": scheduler,
                     "jct": float(np.mean(list(jct[scheduler].values()))), "best_rule": rule,
                     "best_jct": float(np.mean(list(jct[rule].values()))), "ratio": pr.estimate, "low": pr.low,
                     "high": pr.high, "verdict": verdict,
                     "wins": int(sum(jct[scheduler][d] < jct[rule][d] for d in jct[rule])),
                     "fell_back": len(reasons),
                     "from_first_job": sum(r.startswith("srjf-eft from job 1:") for r in reasons),
                     "reasons": sorted(set(r.split(": ", 1)[-1] for r in reasons)),
                     "per_day": {lab: {str(d): v for d, v in vals.items()} for lab, vals in jct.items()}})
    return rows


def default_candidate(rows: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether a policy may be a default candidate: no world significantly worse than the rule; and why
    not (the worse worlds, with their ratios and intervals).  O(rows)."""
    worse = [r for r in rows if r.get("verdict") == "worse"]
    if not worse:
        return True, f"no world of {len(rows)} significantly worse than {RULE}"
    return False, "significantly worse than {} on {}".format(RULE, "; ".join(
        f"{r['cell']} ({r['ratio']:.3f} [{r['low']:.3f}, {r['high']:.3f}])" for r in worse))


def format_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as lines of a markdown table (world, days, ratio [95% interval], verdict, days handed to the
    rule, and why).  O(rows)."""
    out = ["| world | days | / srjf-eft | 95% interval | verdict | days on srjf-eft | why |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['cell']} | {r['days']} | {r['ratio']:.3f} | [{r['low']:.3f}, {r['high']:.3f}] | "
                   f"{r['verdict']} | {r['fell_back']}/{r['days']} | {'; '.join(r['reasons'][:2]) or '-'} |")
    return out
