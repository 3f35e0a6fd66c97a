"""What a worker runs: a chunk of study runs -> result rows.

A chunk is plain data (picklable, and cheap to ship to a Dask worker): one study point's raw
scenario data, the file it came from (relative workload paths resolve against it, so on a cluster
those files must exist at the same path on the workers) and a list of ``(task_id, scheduler, seed)``
runs.  Each run is :func:`simsched.run.runner.run_scenario` with that one scheduler, that seed and
one repetition: the seed draws the graph (for a generator workload) and the noise (for a job stream
or a world with failures: the day — arrivals, jobs, failures — and the row also carries
:data:`~simsched.run.columns.STREAM_METRICS`; on a platform with a power model, the
:data:`~simsched.run.columns.ENERGY_METRICS` too).  A run that raises becomes a row with its ``error``
and NaN metrics; it never stops the chunk.  A learned scheduler's row carries its ``checkpoint`` id and any
out-of-range ``warning`` the runner gave.  Every row carries the code ``version`` that ran it and its
``digest`` (:mod:`simsched.run.rowcheck`): readers refuse a row edited afterwards.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simsched.outputs import one_line
from simsched.run.columns import ENERGY_METRICS, GRAPH_METRICS, METRICS, STREAM_METRICS


def check_metric(name: str, option: str) -> str:
    """``name`` if it is a metric column (:data:`~simsched.run.columns.METRICS`); a :class:`SimschedError`
    naming ``option`` and listing them otherwise.  O(metrics)."""
    from simsched.errors import SimschedError

    if name not in METRICS:
        raise SimschedError(f"{option} {name!r} is not a metric; choose from {', '.join(METRICS)}")
    return name

_CACHE: dict[str, Any] = {}
_CACHE_LIMIT = 64


def cell(value: Any) -> Any:
    """An override value as a table cell: scalars as they are, lists and mappings as JSON text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def make_chunk(point: Any, runs: Sequence[tuple[str, str, int]], fields: Sequence[str], run_id: str) -> dict:
    """The plain-data chunk for ``runs`` (task id, scheduler label, seed) of study point ``point``."""
    file = point.scenario.file
    return {"point": point.index, "point_id": point.point_id, "data": dict(point.data),
            "file": str(Path(file).resolve()) if file is not None else None,
            "values": {k: cell(point.overrides.get(k)) for k in fields}, "runs": list(runs), "run_id": run_id}


def _scenario(chunk: Mapping[str, Any]) -> Any:
    """The chunk's validated scenario, parsed once per worker process and point."""
    from simsched.scenario import parse_scenario
    from simsched.yamlio import YamlDocument

    key = chunk["point_id"] + ":" + json.dumps(chunk["data"].get("schedulers"), sort_keys=True, default=str)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        file = Path(chunk["file"]) if chunk["file"] else None
        _CACHE[key] = parse_scenario(YamlDocument(chunk["data"], {}, file))
    return _CACHE[key]


def _describe(exc: BaseException) -> str:
    from simsched.errors import SimschedError

    text = " ".join(str(exc).split())
    return text if isinstance(exc, SimschedError) else f"{type(exc).__name__}: {text}"


def _metric(result: Mapping[str, Any], key: str) -> float:
    """Metric ``key`` of a run's result row as a float: NaN when the run has no such metric (a
    stream metric of a task-graph run); ``jobs`` counts the per-job records a stream row holds."""
    value = result.get(key)
    if isinstance(value, (list, tuple)):
        return float(len(value))
    return math.nan if value is None else float(value)


def run_chunk(chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per run of ``chunk`` (see the module docstring), in the chunk's order."""
    from simsched.run.rowcheck import stamp
    from simsched.run.runner import run_scenario

    rows = []
    try:
        scenario, setup_error = _scenario(chunk), ""
    except Exception as exc:  # e.g. a workload file missing on this worker
        scenario, setup_error = None, _describe(exc)
    stream = bool(getattr(scenario, "is_dynamic", False))  # its rows carry the stream metrics
    for task_id, label, seed in chunk["runs"]:
        row: dict[str, Any] = {"task_id": task_id, "point": chunk["point"], "point_id": chunk["point_id"],
                               **chunk["values"], "scheduler": label, "seed": int(seed), "tasks": None}
        row.update(dict.fromkeys(GRAPH_METRICS, math.nan))
        if stream:
            row.update(dict.fromkeys(STREAM_METRICS, math.nan))
        t0 = time.perf_counter()
        error, checkpoint, warning = setup_error, "", ""
        if scenario is not None:
            try:
                report = run_scenario(scenario, schedulers=[label], seed=int(seed), repetitions=1)
                result = report.rows[0]
                row.update({k: _metric(result, k) for k in (GRAPH_METRICS + STREAM_METRICS if stream
                                                             else GRAPH_METRICS)})
                row.update({k: _metric(result, k) for k in ENERGY_METRICS if k in result})
                row["tasks"] = int(report.problem.n_tasks)
                checkpoint, warning = str(result.get("checkpoint", "")), " | ".join(map(one_line, report.warnings))
            except Exception as exc:
                error = _describe(exc)
        row.update(error=error, checkpoint=checkpoint, warning=warning, run_id=chunk["run_id"],
                   run_s=time.perf_counter() - t0)
        rows.append(stamp(row))
    return rows
