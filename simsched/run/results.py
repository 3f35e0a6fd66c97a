"""The results document of ``simsched run --json`` (the contract of DESIGN.md).

::

    {"scenario": str, "simsched_version": str,
     "results": [{"scheduler": str, "seed": int, "makespan": float, "avg_turnaround": float,
                  "avg_waiting": float, "utilization": float, "scheduler_time_s": float,
                  "schedule": [{"task": str, "processor": str, "start": float, "finish": float}, ...],
                  ...extra metrics...}, ...],
     ...extra fields...}

Extra fields: top level ``seed``, ``repetitions``, ``schedulers``, ``lower_bound``, ``problem``
(tasks, edges, processors, kinds: task -> kind), ``network`` (edges, latency, inv_bandwidth: what
a report needs to draw transfers); per row ``slr``, ``speedup``, ``efficiency``, ``lower_bound`` and
``gap_to_lower_bound``; rows of the exact scheduler and of ``search`` also ``proven_optimal`` and
``makespan_bound``; ``warning`` (only in the row of a run that did not keep what its scheduler
promises: a learned scheduler outside its checkpoint's training range, a plan's P-states or task copies
lost to a dynamic world; the lines ``run`` prints, joined by `` | ``);
``declined`` (only when a scheduler declined the problem): ``[{"scheduler", "reason"}]``.
Non-finite numbers are written as ``null`` (strict JSON).  The same
scenario and seed give byte-identical documents apart from ``scheduler_time_s``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simsched import __version__
from simsched.outputs import atomic_write, finite
from simsched.run.document import network_section
from simsched.run.lazyjson import EdgeRecords, TaskKinds
from simsched.run.runner import RunReport, ScheduleRecords

STREAMED = (ScheduleRecords, TaskKinds, EdgeRecords)
"""Parts of a document written from arrays by their ``json_chunks`` (never held as text or objects)."""


def results_document(report: RunReport) -> dict[str, Any]:
    """The results document for ``report`` as plain JSON-ready data (every schedule record a dict;
    :func:`write_results` streams them from the arrays instead)."""
    return finite(_document(report))


def _document(report: RunReport) -> dict[str, Any]:
    """The results document with each row's ``schedule`` left as
    :class:`~simsched.run.runner.ScheduleRecords` and non-finite numbers not yet replaced."""
    problem, g = report.problem, report.problem.graph
    doc = {
        "scenario": report.scenario.name,
        "simsched_version": __version__,
        "seed": report.seed,
        "repetitions": report.repetitions,
        "schedulers": list(report.schedulers),
        "problem": {"tasks": problem.n_tasks, "edges": problem.graph.n_edges,
                    "processors": problem.platform.names,
                    "kinds": TaskKinds(g)},
        "network": network_section(problem),
        "lower_bound": report.lower_bound,
        "results": report.rows,
    }
    if report.declined:
        doc["declined"] = [{"scheduler": label, "reason": reason} for label, reason in report.declined.items()]
    return doc


def write_results(report: RunReport, path: str | Path) -> Path:
    """Write the results document of ``report`` to ``path`` atomically (see
    :func:`simsched.outputs.atomic_write`)."""
    return write_document(_document(report), path)


def _has_records(value: Any) -> bool:
    """Whether ``value`` holds parts written lazily (:data:`STREAMED`: schedule records, task kinds,
    edges): is one, or is a dict with one as a value or in a dict value (the problem and network
    sections), or a dict or list whose first dict holds some (the document and its rows).  Looks at
    O(keys) items, never along big lists."""
    if isinstance(value, STREAMED):
        return True
    if isinstance(value, dict):
        return any(isinstance(v, STREAMED) or (isinstance(v, (list, dict)) and v and _has_records(v))
                   for v in value.values())
    if isinstance(value, list):
        return bool(value) and isinstance(value[0], dict) and _has_records(value[0])
    return False


def _plain_json(value: Any) -> str:
    """``value`` as compact strict JSON through the C encoder; non-finite numbers as null."""
    try:
        return json.dumps(value, allow_nan=False)
    except (ValueError, TypeError):  # a NaN or infinity, or records deep inside: clean (slower), retry
        return json.dumps(finite(value), allow_nan=False)


def _chunks(value: Any, indent: str = "") -> Any:
    """JSON text of ``value`` in pieces: containers that hold schedule records one item a line,
    records streamed by :meth:`ScheduleRecords.json_chunks`, everything else compact through the C
    encoder (:func:`_plain_json`).  O(size of the document)."""
    if isinstance(value, STREAMED):
        yield from value.json_chunks()
    elif not _has_records(value):
        yield _plain_json(value)
    elif isinstance(value, dict):
        inner = indent + " "
        for k, (key, item) in enumerate(value.items()):
            yield ("{\n" if k == 0 else ",\n") + inner + json.dumps(str(key)) + ": "
            yield from _chunks(item, inner)
        yield "\n" + indent + "}"
    else:
        inner = indent + " "
        for k, item in enumerate(value):
            yield ("[\n" if k == 0 else ",\n") + inner
            yield from _chunks(item, inner)
        yield "\n" + indent + "]"


def write_document(doc: dict[str, Any], path: str | Path) -> Path:
    """Write ``doc`` as strict JSON (non-finite numbers as null) to ``path`` atomically, streamed:
    schedule records (:class:`~simsched.run.runner.ScheduleRecords`) are written from their arrays
    in chunks, never held as text or dicts all at once.  O(size of the document)."""

    def write(fh: Any) -> None:
        for piece in _chunks(doc):
            fh.write(piece.encode("utf-8"))
        fh.write(b"\n")

    return atomic_write(path, write)
