"""simsched from Python: ``simsched.run(path_or_dict) -> Results``, for notebooks and scripts.

:func:`run` reads a scenario (a YAML file, or the same fields as a ``dict``), runs it as ``simsched run``
does (a task graph or a job stream under its schedulers, a cluster log under its batch policies, an
autotuning section under its policies) and returns :class:`Results`: the rows as data, the results document
``--json`` writes, ``to_pandas()`` (pandas is the ``notebook`` extra), ``gantt()`` (a matplotlib figure) and
a compact HTML table that Jupyter shows when the result is the cell's last value.  Nothing is printed and
nothing is written; a bad scenario raises the :class:`~simsched.errors.SimschedError` (or
:class:`~simsched.scenario.ScenarioError`) the command line would print as ``error:`` lines.

``simsched.run`` is the package :mod:`simsched.run` made callable (its module class has ``__call__``, which
finds :func:`run` here by name, the door a lower floor has to an upper one), so
``from simsched.run.runner import run_scenario`` keeps working beside it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.extras import require_extra
from simsched.outputs import one_line
from simsched.scenario import Scenario, load_scenario
from simsched.scenario.load import parse_scenario
from simsched.yamlio import YamlDocument

COLUMNS = {
    "graph": ("makespan", "avg_turnaround", "avg_waiting", "utilization", "energy_j", "scheduler_time_s"),
    "batch": ("wait_mean", "wait_p95", "bsld_mean", "bsld_p95", "utilisation", "lost_capacity"),
    "autotuning": ("makespan_h", "mean_completion_h", "device_idle_fraction", "cpu_utilisation", "energy_j"),
}
"""The columns of the compact table of each kind of run (those a row has), after ``scheduler``."""


def load(scenario: str | Path | Mapping[str, Any]) -> Scenario:
    """The validated scenario of a YAML file's path or of a mapping of its fields (file paths in a
    mapping are relative to the current directory).  Raises what ``simsched validate`` reports."""
    if isinstance(scenario, Mapping):
        return parse_scenario(YamlDocument(data=dict(scenario), lines={}, file=None))
    if isinstance(scenario, (str, Path)):
        return load_scenario(scenario)
    raise SimschedError(f"simsched.run takes a scenario file's path or a dict of its fields, not "
                        f"{type(scenario).__name__}")


def run(scenario: str | Path | Mapping[str, Any], *, schedulers: Sequence[str] | None = None,
        seed: int | None = None, repetitions: int | None = None) -> Results:
    """Run ``scenario`` (a path or a dict) as ``simsched run`` does, with the same options (``schedulers``:
    ``-s``, ``seed``: ``--seed``, ``repetitions``: ``-r``), and return its :class:`Results`.  A cluster
    log runs once (its replay is deterministic): ``repetitions`` above 1 is refused there, as by the
    command line."""
    from simsched.limits import check_seed
    from simsched.run.batch import batch_path, run_batch_scenario
    from simsched.run.runner import run_scenario

    check_seed(seed, option="seed")
    if repetitions is not None and repetitions < 1:
        raise SimschedError(f"repetitions must be >= 1, got {repetitions}", field="repetitions")
    loaded = load(scenario)
    chosen = list(schedulers) if schedulers else None
    if not loaded.has_task_graph:
        from simsched.run.autotune import run_autotuning

        result = run_autotuning(loaded.autotuning, seed=loaded.seed if seed is None else seed, policies=chosen,
                                repetitions=loaded.repetitions if repetitions is None else repetitions)
        return Results(loaded.name, "autotuning", result)
    if batch_path(loaded, chosen):
        if repetitions is not None and repetitions > 1:
            raise SimschedError("the batch path runs one day per run: call again with another seed",
                                field="repetitions")
        return Results(loaded.name, "batch", run_batch_scenario(loaded, schedulers=chosen, seed=seed))
    report = run_scenario(loaded, schedulers=chosen, seed=seed, repetitions=repetitions)
    return Results(loaded.name, "graph", report, list(report.warnings))


@dataclass
class Results:
    """What one :func:`run` measured.  ``kind``: ``graph`` (task graphs and job streams), ``batch``
    (cluster logs) or ``autotuning``; ``report``: the run's own object (``RunReport``, ``BatchReport`` or
    the autotuning dict); ``warnings``: the lines ``simsched run`` prints as ``warning:``."""

    scenario: str
    kind: str
    report: Any
    warnings: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One dict per scheduler and repetition (autotuning: per policy and seed) with its scalar
        metrics (the lists of the results document, schedules and jobs, are left out)."""
        raw = self.report["results"] if self.kind == "autotuning" else self.report.rows
        return [{k: v for k, v in r.items() if not isinstance(v, (list, tuple, dict, Sequence)) or isinstance(v, str)}
                for r in raw]

    def document(self) -> dict[str, Any]:
        """The results document ``simsched run --json`` writes, as plain data."""
        if self.kind == "graph":
            from simsched.run.results import results_document

            return results_document(self.report)
        if self.kind == "batch":
            from simsched.run.batch import batch_document

            return batch_document(self.report)
        return {"scenario": self.scenario, **self.report}

    def to_pandas(self, what: str = "results") -> Any:
        """A pandas DataFrame: ``results`` (one row per scheduler and repetition, :attr:`rows`),
        ``schedule`` (every task of each scheduler's first repetition: scheduler, task, processor,
        start, finish; task graphs and streams) or ``jobs`` (every job of each policy: scheduler, job,
        submit, start, end, procs, killed; cluster logs).  Needs the ``notebook`` extra (pandas)."""
        pd = require_extra("pandas", "notebook", "Results.to_pandas")
        if what == "results":
            return pd.DataFrame(self.rows)
        if what == "schedule" and self.kind == "graph":
            records = [{"scheduler": label, **rec} for label in self.report.schedulers
                       for rec in self.report.rows_of(label)[0]["schedule"]]
            return pd.DataFrame(records, columns=["scheduler", "task", "processor", "start", "finish"]
                                if not records else None)
        if what == "jobs" and self.kind == "batch":
            return pd.DataFrame([{"scheduler": r["scheduler"], **job} for r in self.report.rows for job in r["jobs"]])
        known = {"graph": "results, schedule", "batch": "results, jobs", "autotuning": "results"}[self.kind]
        raise SimschedError(f"to_pandas({what!r}): this run ({self.kind}) has {known}", field="what")

    def gantt(self, *, transfers: bool = False) -> Any:
        """The matplotlib figure of every scheduler's first repetition, one panel each (``simsched run
        --gantt`` draws the same); with ``transfers``, data transfers as arrows.  Task graphs and
        streams only: a cluster log's jobs are in ``to_pandas("jobs")``."""
        if self.kind != "graph":
            raise SimschedError("gantt() draws task schedules; a cluster log's or autotuning run's jobs are in "
                                "to_pandas(\"jobs\") or rows", field="gantt")
        from simsched.report.gantt import draw_gantt

        return draw_gantt(self.report, transfers=transfers)

    def summary(self) -> list[dict[str, Any]]:
        """Per scheduler: the mean over its repetitions of each column of :data:`COLUMNS` its rows have.
        O(rows)."""
        rows = self.rows
        key = "policy" if self.kind == "autotuning" else "scheduler"  # an autotuning row names its policy
        labels = list(dict.fromkeys(r.get(key) for r in rows))
        columns = [c for c in COLUMNS[self.kind] if any(c in r for r in rows)]
        out = []
        for label in labels:
            mine = [r for r in rows if r.get(key) == label]
            entry: dict[str, Any] = {"scheduler": label}
            for c in columns:
                values = [float(r[c]) for r in mine if isinstance(r.get(c), (int, float))]
                entry[c] = float(np.mean(values)) if values else float("nan")
            out.append(entry)
        return out

    def _repr_html_(self) -> str:
        """A compact HTML table (scheduler and the main metrics, means over repetitions) for Jupyter."""
        summary = self.summary()
        columns = list(summary[0]) if summary else ["scheduler"]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(r[c]))}</td>" for c in columns) + "</tr>"
                       for r in summary)
        note = "".join(f"<p><small>warning: {html.escape(one_line(w))}</small></p>" for w in self.warnings)
        return (f"<div><b>{html.escape(self.scenario)}</b> ({html.escape(self.kind)}, {len(self.rows)} rows)"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}</div>")

    def __repr__(self) -> str:
        names = ", ".join(str(r["scheduler"]) for r in self.summary())  # one per scheduler or policy
        return f"Results({self.scenario!r}, {self.kind}, {len(self.rows)} rows: {names})"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
