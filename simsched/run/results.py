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
``gap_to_lower_bound``; rows of the exact scheduler also ``proven_optimal`` and ``makespan_bound``;
``declined`` (only when a scheduler declined the problem): ``[{"scheduler", "reason"}]``.
Non-finite numbers are written as ``null`` (strict JSON).  The same
scenario and seed give byte-identical documents apart from ``scheduler_time_s``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from simsched import __version__
from simsched.outputs import atomic_write
from simsched.run.document import network_section
from simsched.run.runner import RunReport


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def results_document(report: RunReport) -> dict[str, Any]:
    """The results document for ``report`` as plain JSON-ready data."""
    problem, g = report.problem, report.problem.graph
    doc = {
        "scenario": report.scenario.name,
        "simsched_version": __version__,
        "seed": report.seed,
        "repetitions": report.repetitions,
        "schedulers": list(report.schedulers),
        "problem": {"tasks": problem.n_tasks, "edges": problem.graph.n_edges,
                    "processors": problem.platform.names,
                    "kinds": dict(zip(g.names, map(g.kind_names.__getitem__, g.kind)))},
        "network": network_section(problem),
        "lower_bound": report.lower_bound,
        "results": report.rows,
    }
    if report.declined:
        doc["declined"] = [{"scheduler": label, "reason": reason} for label, reason in report.declined.items()]
    return _finite(doc)


def write_results(report: RunReport, path: str | Path) -> Path:
    """Write the results document of ``report`` to ``path`` atomically (see
    :func:`simsched.outputs.atomic_write`)."""
    return write_document(results_document(report), path)


def write_document(doc: dict[str, Any], path: str | Path) -> Path:
    """Write ``doc`` as strict JSON (non-finite numbers as null) to ``path`` atomically."""
    text = json.dumps(_finite(doc), indent=1, allow_nan=False) + "\n"
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
