"""Refusing, before any run, a scheduler that places every task on one processor when the workload has a
task that needs several at once (a gang: ``procs_min > 1``).

The same check for a single task graph and for a job stream: a stream's days are all looked at (a
gang task may come only in a later day, or in a job that is not the largest), so a policy such as
``mct`` is refused up front with one located line, never mid-run with a message for scheduler authors.
The line is located at the scheduler's entry and names the workload field the gang task comes from
(``workload.stream.jobs[1].procs``, ``workload``).  Schedulers that place gangs declare
``multiprocessor_tasks = True`` (:mod:`simsched.simulator.gang`); moldable tasks that may run on one
processor run under any scheduler, at k = 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.scenario import Scenario, SchedulerChoice
from simsched.scenario.locate import dotted
from simsched.workloads.jobs import JobStream
from simsched.workloads.taskgraph import TaskGraph

GANG_AWARE = "heft, online-heft, srjf-eft, fair-eft"
"""The built-in schedulers that place multi-processor tasks, as the refusal lists them."""


@dataclass(frozen=True)
class GangNeed:
    """The first task of a workload that needs several processors at once: its name, what it needs
    (``"8"``, ``"4 cores (a gang of 4 one-core slots of one host)"``) and the workload field it comes from."""

    task: str
    needs: str
    field: str


def _needs(g: TaskGraph, i: int) -> str:
    k = int(g.procs_min[i])
    return f"{k} cores (a gang of {k} one-core slots of one host)" if g.cores[i] == k and g.same_host[i] else f"{k}"


def _source_field(scenario: Scenario, stream: JobStream, task: int) -> str:
    """The ``workload.stream.jobs[i]`` field of the source whose job holds ``task`` (its ``procs`` when the
    source sets them); ``workload.stream.jobs`` when the job's source cannot be told.  O(sources)."""
    wl = scenario.workload
    sources = getattr(wl.options.get("stream"), "sources", None) or [] if wl is not None else []
    job = int(stream.jobs[task])
    name = stream.job_names[job] if job < len(stream.job_names) else None
    for src in sources:
        if src.name == name:
            loc = tuple(src.loc)
            if loc and loc[-1] == src.spec.form:  # the field that names its file or generator
                loc = loc[:-1]
            if src.procs is not None and src.procs[0] > 1:
                loc = (*loc, "procs")
            return dotted(loc) or "workload.stream.jobs"
    return "workload.stream.jobs"


def first_gang_need(scenario: Scenario, graphs: Iterable[tuple[TaskGraph, JobStream | None]]) -> GangNeed | None:
    """The first task needing more than one processor in ``graphs`` (each a graph and, for a job stream's
    day, its stream), or None.  O(total tasks)."""
    for g, stream in graphs:
        if not g.gang or g.n_tasks == 0 or g.procs_min.max() <= 1:
            continue
        i = int(np.argmax(g.procs_min > 1))
        where = _source_field(scenario, stream, i) if stream is not None else (
            dotted(scenario.workload.loc) if scenario.workload is not None else None) or "workload"
        return GangNeed(g.names[i], _needs(g, i), where)
    return None


def check_gang_support(scenario: Scenario, need: GangNeed | None, spec: SchedulerChoice, scheduler: Any) -> None:
    """:class:`SimschedError` located at the scheduler's entry (or ``--scheduler``) when ``need`` is a gang
    task and ``scheduler`` places every task on one processor; nothing otherwise.  O(1)."""
    if need is None or getattr(scheduler, "multiprocessor_tasks", False):
        return
    error = SimschedError(f"scheduler {spec.label!r} places every task on one processor, but task {need.task!r} "
                          f"({need.field}) needs {need.needs} at once; use a gang-aware scheduler ({GANG_AWARE})")
    if spec.loc and spec.loc[0] == "--scheduler":
        raise error.located(field="--scheduler")
    raise scenario.locate(error, spec.loc)
