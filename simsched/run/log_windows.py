"""Runs of a cluster log under RLScheduler's protocol: one window of consecutive jobs per day
(``workload.stream.windows``, :mod:`simsched.workloads.log_windows`), every chosen policy on the same
windows, each from an empty machine.  The answer per policy is the mean over windows of each window's
mean bounded slowdown, ``max(1, (wait + run) / max(run, 10))``, with its 95% Student t interval
(:func:`simsched.stats.t_interval`), and the per-window rows (metrics only: no per-job records).
Cost: one engine run per window and policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simsched import __version__
from simsched.errors import SimschedError
from simsched.run.batch import kinds_for, log_window, run_batch_scenario
from simsched.run.runner import _select
from simsched.run.seedspace import space_of
from simsched.scenario import Scenario
from simsched.stats import paired_ratio, t_interval

LIGHT = ("jobs", "timeline")
"""Per-run fields left out of a window's row (they would repeat 1,024 jobs per window and policy)."""


@dataclass
class WindowsReport:
    """Every policy on every window: ``starts`` (first job of each window, 0-based in the log),
    ``days`` (their seeds), ``rows`` (one per window and policy) and ``notes``."""

    scenario: Scenario
    processors: int
    days: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def labels(self) -> list[str]:
        """The policies, in run order."""
        return list(dict.fromkeys(r["scheduler"] for r in self.rows))

    def per_window(self, label: str, metric: str = "bsld_mean") -> list[float]:
        """``metric`` of ``label`` on each window, in window order."""
        return [float(r[metric]) for r in self.rows if r["scheduler"] == label]

    def summary(self, metric: str = "bsld_mean") -> list[dict[str, Any]]:
        """Per policy: ``scheduler``, ``windows``, ``mean`` over windows and the 95% interval ``low``,
        ``high`` (NaN for one window), and ``vs_best``: the geometric mean over windows of its ratio to
        the policy of lowest mean, with the paired 95% interval (``ratio``, ``ratio_low``,
        ``ratio_high``; :func:`simsched.stats.paired_ratio`).  O(rows)."""
        out = []
        for label in self.labels():
            mean, half, n = t_interval(self.per_window(label, metric))
            out.append({"scheduler": label, "windows": n, "mean": mean, "low": mean - half, "high": mean + half})
        if out:
            best = min(out, key=lambda r: r["mean"])["scheduler"]
            ref = self.per_window(best, metric)
            for r in out:
                p = paired_ratio(self.per_window(r["scheduler"], metric), ref)
                r.update(vs_best=best, ratio=p.estimate, ratio_low=p.low, ratio_high=p.high)
        return out


def run_windows(scenario: Scenario, *, schedulers: Sequence[str] | None = None, seed: int | None = None,
                repetitions: int = 1) -> WindowsReport:
    """Days ``seed ... seed + repetitions - 1`` (default: from the scenario's seed), one window each,
    every chosen policy on each (see the module docstring).  O(repetitions x policies x engine run)."""
    wl = scenario.workload
    if wl is None or wl.form != "batch" or wl.options["batch"].windows is None:
        raise SimschedError("this scenario's cluster log has no windows (workload.stream.windows)", file=scenario.file)
    base = scenario.seed if seed is None else int(seed)
    report = WindowsReport(scenario, scenario.platform.n_processors, notes=list(wl.options["batch"].trace.notes))
    for choice in _select(scenario, schedulers, kinds_for(scenario)):  # a learned policy says which rule decides
        explain = getattr(choice.create(), "explain", None)
        if callable(explain):
            report.notes.append(f"{choice.label}: {explain()}")
    decided: dict[str, dict[str, Any]] = {}
    for day in range(base, base + int(repetitions)):
        _trace, start = log_window(scenario, day)
        one = run_batch_scenario(scenario, schedulers=schedulers, seed=day)
        report.days.append(day)
        report.starts.append(start)
        for row in one.rows:
            report.rows.append({**{k: v for k, v in row.items() if k not in LIGHT}, "window_start": start,
                                "window_jobs": len(row["jobs"]),
                                "seed_space": space_of(day)})
            if "decided_by" in row:
                add_decisions(decided.setdefault(row["scheduler"], {}), row["decided_by"])
    if decided:
        from simsched.schedulers.batch_learned import describe_decisions

        report.notes += [f"{label}: {describe_decisions(d)}" for label, d in decided.items()]
    return report


def add_decisions(total: dict[str, Any], one: dict[str, Any]) -> None:
    """Sum one run's ``decided_by`` account (:meth:`LearnedPriority.decided_by`: counts and the
    ``fallback_rule`` name) into ``total``.  O(1)."""
    for key, value in one.items():
        total[key] = value if isinstance(value, str) else total.get(key, 0) + int(value)


def windows_document(report: WindowsReport) -> dict[str, Any]:
    """The results document of a windowed run (the ``--json`` file): the summary per policy, the
    windows and the per-window rows."""
    config = report.scenario.workload.options["batch"]
    w = config.windows
    return {"scenario": report.scenario.name, "simsched_version": __version__, "workload": "batch-windows",
            "trace": {"file": Path(config.trace.source).name, "jobs": config.trace.n, "notes": report.notes},
            "windows": {"jobs": w.jobs, "within": w.within, "queue": w.queue, "draw": w.draw,
                        "days": report.days, "starts": report.starts},
            "processors": report.processors, "summary": report.summary(), "results": report.rows}
