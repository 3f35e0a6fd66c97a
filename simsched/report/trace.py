"""Chrome / Perfetto traces of simulated runs (Trace Event Format, JSON object form).

One *process* per scheduler (its first repetition), one *thread* per processor, one complete event (``"ph":
"X"``, ``"cat": "task"``) per task with ``ts``/``dur`` in microseconds. Runs traced from a
:class:`~simsched.run.runner.RunReport` also show the **data transfers**: one thread per link used
(``P1→P2``) below the processors, one complete event (``"cat": "transfer"``, named ``producer→consumer``)
per transfer between two processors, from the producer's finish to the data's arrival (the engine's model,
as the Gantt chart's ``--transfers`` arrows), with the data size in ``args``. Runs of a scenario with a
power model add a **power counter track** per processor (``"ph": "C"``, :func:`power_counters`) whose
integral is the processor's energy. Simulated time has no unit of its own; one time unit is written as one
second (``ts = start * 1e6``). Open the file in https://ui.perfetto.dev or chrome://tracing (both work
offline once loaded).

:func:`write_trace` takes a :class:`~simsched.run.runner.RunReport` (``simsched run --trace``);
:func:`write_trace_document` takes a results document (``simsched report --trace``). Both build the same
events with :func:`trace_document`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsched.outputs import atomic_write
from simsched.report.gantt import transfer_spans
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule

if TYPE_CHECKING:
    from simsched.run.runner import RunReport

US_PER_UNIT = 1e6
"""Microseconds written per simulated time unit."""


def power_counters(pid: int, profile: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One Chrome counter track (``"ph": "C"``, named ``power <processor> (W)``, series ``W``) per
    processor of a run's power profile (:func:`simsched.simulator.power.power_profile`): a sample at
    each change of its power and 0 W at the end of the run, so the track's integral (watts x trace
    seconds) times ``time_unit_s`` plus the profile's ``extra_j`` is the run's ``energy_j``.  O(steps)."""
    events: list[dict[str, Any]] = []
    for name, step in (profile.get("processors") or {}).items():
        track = f"power {name} (W)"
        t, w = step["t"], step["w"]
        for ti, wi in zip(t, w):
            events.append({"name": track, "cat": "power", "ph": "C", "pid": pid, "ts": float(ti) * US_PER_UNIT,
                           "args": {"W": float(wi)}})
        events.append({"name": track, "cat": "power", "ph": "C", "pid": pid, "ts": float(t[-1]) * US_PER_UNIT,
                       "args": {"W": 0.0}})
    return events


def trace_document(runs: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], processors: Sequence[str],
                   other: Mapping[str, Any] | None = None,
                   transfers: Sequence[Sequence[Mapping[str, Any]]] | None = None,
                   power: Sequence[Mapping[str, Any] | None] | None = None) -> dict[str, Any]:
    """Trace events for ``runs`` — ``(process name, schedule records)`` with records ``{"task",
    "processor", "start", "finish"}`` — on ``processors`` (thread order).  ``transfers[k]``, when given,
    lists run k's data transfers ``{"edge", "from", "to", "depart", "arrive", "data"}``, drawn on one thread
    per link; ``power[k]``, run k's power profile (or None), adds a power counter track per processor
    (:func:`power_counters`) and, under ``otherData.energy``, its ``time_unit_s`` and ``extra_j``.
    O(total records + transfers + power steps)."""
    events: list[dict[str, Any]] = []
    names = list(processors)
    energy: dict[str, Any] = {}
    for pid, (label, records) in enumerate(runs, start=1):
        profile = power[pid - 1] if power is not None else None
        if profile is not None:
            events.extend(power_counters(pid, profile))
            energy[label] = {"time_unit_s": float(profile["time_unit_s"]),
                             "extra_j": float(profile.get("extra_j", 0.0))}
        moves = list(transfers[pid - 1]) if transfers is not None else []
        for p in {r["processor"] for r in records} - set(names):
            names.append(p)
        tids = {p: tid for tid, p in enumerate(names, start=1)}
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for p, tid in tids.items():
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": p}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        for r in records:
            start, finish = float(r["start"]), float(r["finish"])
            events.append({"name": str(r["task"]), "cat": "task", "ph": "X", "pid": pid, "tid": tids[r["processor"]],
                           "ts": start * US_PER_UNIT, "dur": max(0.0, finish - start) * US_PER_UNIT,
                           "args": {"task": str(r["task"]), "processor": r["processor"], "start": start,
                                    "finish": finish}})
        links: dict[str, int] = {}
        for t in moves:
            link = f"{t['from']}→{t['to']}"
            if link not in links:
                links[link] = len(names) + len(links) + 1
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": links[link],
                               "args": {"name": link}})
                events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": links[link],
                               "args": {"sort_index": links[link]}})
            depart, arrive = float(t["depart"]), float(t["arrive"])
            events.append({"name": str(t["edge"]), "cat": "transfer", "ph": "X", "pid": pid, "tid": links[link],
                           "ts": depart * US_PER_UNIT, "dur": max(0.0, arrive - depart) * US_PER_UNIT,
                           "args": {"edge": str(t["edge"]), "from": t["from"], "to": t["to"], "depart": depart,
                                    "arrive": arrive, "data": float(t["data"])}})
    extra = {"energy": energy} if energy else {}
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"time_unit": "1 simulated time unit = 1 s", **dict(other or {}), **extra}}


def _write(doc: dict[str, Any], path: str | Path) -> Path:
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def write_trace(report: RunReport, path: str | Path) -> Path:
    """The first repetition of every scheduler in ``report`` as a trace at ``path`` (atomic)."""
    problem = report.problem
    labels = [label for label in report.schedulers if label in report.schedules]
    runs = [(f"{label} (seed {report.seed})", report.schedules[label].to_records(problem)) for label in labels]
    moves = [transfer_records(report.schedules[label], problem) for label in labels]
    power = [next((row.get("power") for row in report.rows if row["scheduler"] == label), None) for label in labels]
    return _write(trace_document(runs, problem.platform.names,
                                 {"scenario": report.scenario.name, "seed": report.seed}, moves, power), path)


def transfer_records(schedule: Schedule, problem: Problem) -> list[dict[str, Any]]:
    """The transfers of ``schedule`` between two processors that take time (:func:`transfer_spans`), as
    ``{"edge": "producer→consumer", "from", "to", "depart", "arrive", "data"}``.  O(e)."""
    g, procs = problem.graph, problem.platform.names
    edges, depart, arrive = transfer_spans(schedule, problem)
    src, dst = g.edge_src[edges], g.edge_dst[edges]
    return [{"edge": f"{g.names[a]}→{g.names[b]}", "from": procs[int(schedule.processor[a])],
             "to": procs[int(schedule.processor[b])], "depart": float(d), "arrive": float(r),
             "data": float(g.edge_data[e])}
            for e, a, b, d, r in zip(edges.tolist(), src.tolist(), dst.tolist(), depart.tolist(), arrive.tolist())]


def write_trace_document(doc: Mapping[str, Any], path: str | Path) -> Path:
    """The first run of every scheduler in a results document as a trace at ``path`` (atomic)."""
    from simsched.run.document import first_runs, processors_of

    rows = first_runs(doc)
    runs = [(f"{row['scheduler']} (seed {row['seed']})", row["schedule"]) for row in rows]
    return _write(trace_document(runs, processors_of(doc), {"scenario": doc.get("scenario")}, None,
                                 [row.get("power") for row in rows]), path)
