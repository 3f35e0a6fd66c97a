"""Reading a results document (``simsched run --json``) for reports and traces.

:func:`load_document` checks the shape a report needs and raises :class:`SimschedError` naming the
file and what is missing; :func:`first_runs` picks each scheduler's first run (the one ``run``
draws); :func:`utilisation` computes busy time / makespan per processor from a schedule.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError

_RECORD_KEYS = ("task", "processor", "start", "finish")


def load_document(path: str | Path) -> dict[str, Any]:
    """The results document at ``path``, checked: a ``results`` list whose rows have a scheduler, a
    seed and a ``schedule`` of task records.  O(size of the file)."""
    p = Path(path)
    try:
        doc = json.loads(limits.read_input(p).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SimschedError(f"not UTF-8 text (byte {exc.start}); give the JSON written by `simsched run --json`",
                            file=p) from None
    except RecursionError:
        raise SimschedError("the JSON is nested too deeply", file=p) from None
    except json.JSONDecodeError as exc:
        wanted = ("`simsched report` reads the results of `simsched run SCENARIO --json FILE.json` (or a sweep's "
                  ".csv/.parquet)")
        if p.suffix.lower() in (".yaml", ".yml"):
            raise SimschedError(f"this is a YAML file (a scenario?), not results; {wanted}: run the scenario "
                                f"first, e.g. simsched run {p} --json out/results.json", file=p) from None
        raise SimschedError(f"not valid JSON: {exc.msg}; {wanted}", file=p, line=exc.lineno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise SimschedError("not a results document: expected {\"results\": [...]} as written by "
                            "`simsched run --json`", file=p)
    if not doc["results"]:
        raise SimschedError("the results document has no results", file=p)
    for i, row in enumerate(doc["results"]):
        if not isinstance(row, dict) or "scheduler" not in row:
            raise SimschedError("a result without a scheduler", file=p, field=f"results[{i}]")
        schedule = row.get("schedule")
        if not isinstance(schedule, list):
            raise SimschedError("no schedule: this report draws task schedules (an autotuning result has "
                                "none)", file=p, field=f"results[{i}].schedule")
        for j, rec in enumerate(schedule):
            if not isinstance(rec, dict) or any(k not in rec for k in _RECORD_KEYS):
                raise SimschedError(f"a schedule entry needs {', '.join(_RECORD_KEYS)}", file=p,
                                    field=f"results[{i}].schedule[{j}]")
            if not all(isinstance(rec[k], (int, float)) for k in ("start", "finish")):
                raise SimschedError("start and finish must be numbers", file=p, field=f"results[{i}].schedule[{j}]")
    return doc


def first_runs(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The first row of each scheduler, in document order."""
    seen: dict[str, dict[str, Any]] = {}
    for row in doc["results"]:
        seen.setdefault(str(row["scheduler"]), row)
    return list(seen.values())


def processors_of(doc: Mapping[str, Any]) -> list[str]:
    """The platform's processor names (document order), plus any only found in schedules."""
    names = [str(p) for p in (doc.get("problem") or {}).get("processors") or []]
    for row in doc["results"]:
        for rec in row["schedule"]:
            if rec["processor"] not in names:
                names.append(str(rec["processor"]))
    return names


def utilisation(records: Sequence[Mapping[str, Any]], processors: Sequence[str],
                makespan: float | None = None) -> dict[str, float]:
    """Busy time / makespan per processor (``makespan`` as in the results row; default: last finish
    minus first start).  O(records)."""
    if not records:
        return dict.fromkeys(processors, 0.0)
    span = makespan if makespan else max(r["finish"] for r in records) - min(r["start"] for r in records)
    busy = dict.fromkeys(processors, 0.0)
    for r in records:
        busy[r["processor"]] = busy.get(r["processor"], 0.0) + (r["finish"] - r["start"])
    return {p: (b / span if span > 0 else 0.0) for p, b in busy.items()}


def network_section(problem: Any) -> dict[str, Any]:
    """What a report needs to draw a schedule's data transfers: the edges as ``[producer, consumer,
    data]`` (task names) and the platform's ``latency`` and ``inv_bandwidth`` matrices (processor
    order of ``problem.processors``).  O(e + m²)."""
    g = problem.graph
    names = g.names
    return {"edges": [[names[int(u)], names[int(v)], float(d)] for u, v, d in zip(g.edge_src, g.edge_dst, g.edge_data)],
            "latency": problem.latency.tolist(), "inv_bandwidth": problem.inv_bandwidth.tolist()}


def transfers_of(doc: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """The data transfers between processors of one schedule (``records``) as ``[depart, arrive,
    source processor, destination processor, "producer→consumer"]``: departing when the producer
    finishes, arriving ``latency + data × inv_bandwidth`` later (the engine's model).  Empty when the
    document has no ``network`` section.  O(records + edges)."""
    network = doc.get("network")
    if not isinstance(network, Mapping):
        return []
    procs = [str(p) for p in (doc.get("problem") or {}).get("processors") or []]
    index = {p: i for i, p in enumerate(procs)}
    where = {str(r["task"]): r for r in records}
    out = []
    for u, v, data in network.get("edges", []):
        a, b = where.get(str(u)), where.get(str(v))
        if a is None or b is None or a["processor"] == b["processor"]:
            continue
        p, q = index.get(a["processor"]), index.get(b["processor"])
        if p is None or q is None:
            continue
        latency, inv = network["latency"][p][q], network["inv_bandwidth"][p][q]
        if latency is None or inv is None:
            continue
        delay = latency + data * inv
        if delay > 0:
            out.append([a["finish"], a["finish"] + delay, a["processor"], b["processor"], f"{u}→{v}"])
    return out
