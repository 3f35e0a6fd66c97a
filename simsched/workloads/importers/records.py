"""Task records → TaskGraph: the one place that turns a list of plain task dicts (from a task list,
an inline ``{tasks, edges}`` workload, a CSV row) into a graph, with errors that say where.

Record keys (aliases in brackets): ``name`` [``id``, ``task``], ``work`` [``length``, ``runtime``],
``kind`` [``type``], ``arrival`` [``submit``, ``arrival_time``], ``priority``, ``memory``,
``cores``, ``cost`` (list of per-processor times; ``inf`` = may not run there), ``procs`` (k or
``[k_min, k_max]``), ``serial``, ``speedup`` (``{model: downey, A, sigma}`` or ``{model: amdahl,
serial}``; JSON/YAML records only), ``same_host`` (true/false), ``depends`` [``parents``,
``after``] (names of tasks it waits for).  Edges: ``{from, to, data}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError
from simsched.workloads.importers._common import number
from simsched.workloads.taskgraph import TaskGraph

ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("name", "id", "task"),
    "work": ("work", "length", "runtime"),
    "kind": ("kind", "type"),
    "arrival": ("arrival", "submit", "arrival_time"),
    "priority": ("priority",),
    "memory": ("memory",),
    "cores": ("cores",),
    "cost": ("cost",),
    "procs": ("procs",),
    "serial": ("serial",),
    "speedup": ("speedup",),
    "same_host": ("same_host",),
    "depends": ("depends", "parents", "after"),
}
KNOWN = {a for names in ALIASES.values() for a in names}

Locate = Callable[[str, int, str | None], int | None]
"""``locate(section, index, key)`` → line of ``section[index].key`` (``None`` if unknown)."""


def _no_line(section: str, index: int, key: str | None) -> int | None:
    return None


def _get(rec: Mapping, key: str) -> tuple[str | None, Any]:
    for alias in ALIASES[key]:
        if alias in rec and rec[alias] is not None and rec[alias] != "":
            return alias, rec[alias]
    return None, None


def _split(v: Any) -> list[str]:
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    return [p.strip() for p in str(v).replace(",", ";").split(";") if p.strip()]


def records_to_graph(
    tasks: Sequence[Any],
    edges: Sequence[Any] = (),
    *,
    file: str | Path | None = None,
    locate: Locate = _no_line,
    section: str = "tasks",
    strict_keys: bool = True,
) -> TaskGraph:
    """Build a TaskGraph from task records and edge records (see the module docstring)."""

    def err(msg: str, i: int, key: str | None, sec: str = section) -> SimschedError:
        field = f"{sec}[{i}]" + (f".{key}" if key else "")
        return SimschedError(msg, file=file, line=locate(sec, i, key), field=field)

    if not isinstance(tasks, (list, tuple)) or not tasks:
        raise SimschedError("there are no tasks (expected a non-empty list)", file=file, field=section)
    limits.check_tasks(len(tasks), field=section, file=file)
    out: list[dict[str, Any]] = []
    deps: list[tuple[str, str, float, int]] = []
    for i, rec in enumerate(tasks):
        if not isinstance(rec, Mapping):
            raise err(f"a task must be a mapping of fields, got {type(rec).__name__}", i, None)
        if strict_keys:
            unknown = sorted(set(map(str, rec)) - KNOWN - {"cost_"})
            unknown = [k for k in unknown if not k.startswith(("cost_", "time_"))]
            if unknown:
                raise err(f"unknown field {unknown[0]!r}; known: {', '.join(sorted(KNOWN))}", i, unknown[0])
        key, name = _get(rec, "name")
        r: dict[str, Any] = {"name": str(name) if key else f"t{i}"}
        key, w = _get(rec, "work")
        if key:
            try:
                r["work"] = number(w, f"task {r['name']!r}: {key}")
            except SimschedError as e:
                raise err(e.message, i, key) from None
        key, k = _get(rec, "kind")
        if key:
            r["kind"] = str(k)
        for fld in ("arrival", "priority", "memory", "cores"):
            key, v = _get(rec, fld)
            if key:
                try:
                    r[fld] = number(v, f"task {r['name']!r}: {key}", minimum=None if fld == "priority" else 0.0)
                except SimschedError as e:
                    raise err(e.message, i, key) from None
        if "cores" in r:
            r["cores"] = int(r["cores"])
        key, v = _get(rec, "procs")
        if key:  # k (rigid) or [k_min, k_max] (moldable; "2;8" in a table)
            parts = _split(v) if isinstance(v, (list, tuple)) or ";" in str(v) or "," in str(v) else [v]
            try:
                if any(isinstance(x, bool) for x in (parts if isinstance(parts, list) else [parts])):
                    raise SimschedError(f"task {r['name']!r}: procs must be a whole number, not a boolean")
                ks = [number(x, f"task {r['name']!r}: procs", minimum=1.0) for x in parts]
                top = limits.current().max_processors
                if len(ks) not in (1, 2) or any(k != int(k) or k > top for k in ks) or ks[0] > ks[-1]:
                    raise SimschedError(f"task {r['name']!r}: procs is a whole k or [k_min, k_max] with "
                                        f"1 <= k_min <= k_max <= {top:,}, got {v!r}")
            except SimschedError as e:
                raise err(e.message, i, key) from None
            r["procs"] = [int(ks[0]), int(ks[-1])]
        key, v = _get(rec, "serial")
        if key:
            try:
                if isinstance(v, bool):
                    raise SimschedError(f"task {r['name']!r}: serial must be a number, not a boolean")
                r["serial"] = number(v, f"task {r['name']!r}: serial", minimum=0.0)
                if r["serial"] > 1:
                    raise SimschedError(f"task {r['name']!r}: serial is a fraction in [0, 1], got {v!r}")
            except SimschedError as e:
                raise err(e.message, i, key) from None
        key, v = _get(rec, "speedup")
        if key:  # {model: downey, A, sigma} or {model: amdahl, serial}: checked by the graph, located by name
            if not isinstance(v, Mapping):
                raise err(f"task {r['name']!r}: speedup is a mapping {{model: downey, A, sigma}} or {{model: "
                          f"amdahl, serial}} (JSON or YAML task records)", i, key)
            r["speedup"] = dict(v)
        key, v = _get(rec, "same_host")
        if key:
            text = str(v).strip().lower()
            if not isinstance(v, bool) and text not in ("true", "false"):
                raise err(f"task {r['name']!r}: same_host is true or false, got {v!r}", i, key)
            r["same_host"] = v if isinstance(v, bool) else text == "true"
        key, c = _get(rec, "cost")
        cols = sorted((k for k in rec if str(k).startswith(("cost_", "time_")) and rec[k] not in (None, "")),
                      key=_natural)
        if key or cols:
            values = _split(c) if key else [rec[k] for k in cols]
            try:
                r["cost"] = [float("inf") if str(x).strip().lower() in ("inf", "infinity")
                             else number(x, f"task {r['name']!r}: cost") for x in values]
            except SimschedError as e:
                raise err(e.message, i, key or cols[0]) from None
        key, d = _get(rec, "depends")
        if key:
            deps += [(p, r["name"], 0.0, i) for p in _split(d)]
        out.append(r)
    names = {r["name"] for r in out}
    triples: list[tuple[str, str, float]] = []
    for p, c, x, i in deps:
        if p not in names:
            raise err(f"task {c!r} depends on {p!r}, which does not exist", i, "depends")
        triples.append((p, c, x))
    if edges is not None and not isinstance(edges, (list, tuple)):
        raise SimschedError("edges must be a list", file=file, field="edges")
    for j, e in enumerate(edges or ()):
        if not isinstance(e, Mapping):
            raise err("an edge must be a mapping {from, to, data}", j, None, "edges")
        for end in ("from", "to"):
            if end not in e:
                raise err(f"an edge needs {end!r}", j, None, "edges")
            if str(e[end]) not in names:
                raise err(f"edge {e.get('from')!r} -> {e.get('to')!r} refers to unknown task {str(e[end])!r}",
                          j, end, "edges")
        try:
            x = number(e.get("data", 0.0), "edge data")
        except SimschedError as ex:
            raise err(ex.message, j, "data", "edges") from None
        triples.append((str(e["from"]), str(e["to"]), x))
    try:
        return TaskGraph.from_named(out, triples)
    except SimschedError as e:
        where = error_position(e.message, [r["name"] for r in out], [(a, b) for a, b, _ in triples[len(deps):]])
        key = None
        if where is None and deps:  # an edge written as a task's ``depends``
            via = error_position(e.message, [], [(p, c) for p, c, _, _ in deps])
            where, key = (("tasks", deps[via[1]][3]), "depends") if via is not None else (None, None)
        if where is not None:
            sec, i = where
            e.located(line=locate(sec, i, key), field=f"{sec}[{i}]" + (f".{key}" if key else ""))
        raise e.located(file=file) from None


_EDGE_RE = re.compile(r"edge '([^']*)' -> '([^']*)'")
_CYCLE_RE = re.compile(r"cycle: '([^']*)' -> '([^']*)'")
_TASK_RE = re.compile(r"task '([^']*)'")
_DUPLICATE_RE = re.compile(r"duplicate task name '([^']*)'")


def error_position(message: str, tasks: Sequence[str], edges: Sequence[tuple[str, str]]) -> tuple[str, int] | None:
    """Which record a graph error names: ``("edges", j)`` for the edge of a cycle or a bad edge,
    ``("tasks", i)`` for a duplicated or named task, ``None`` when the message names neither.
    O(tasks + edges)."""
    for pattern in (_CYCLE_RE, _EDGE_RE):
        match = pattern.search(message)
        if match and (match.group(1), match.group(2)) in edges:
            return "edges", list(edges).index((match.group(1), match.group(2)))
    match = _DUPLICATE_RE.search(message)
    if match and list(tasks).count(match.group(1)) > 1:
        return "tasks", len(tasks) - 1 - list(tasks)[::-1].index(match.group(1))
    match = _TASK_RE.search(message)
    if match and match.group(1) in tasks:
        return "tasks", list(tasks).index(match.group(1))
    return None


def _natural(key: str) -> tuple:
    tail = str(key).split("_", 1)[1]
    return (0, int(tail), "") if tail.isdigit() else (1, 0, tail)


def graph_to_records(graph: TaskGraph) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The graph as ``(tasks, edges)`` records (inverse of :func:`records_to_graph`), omitting defaults."""
    g = graph
    tasks = []
    for i, n in enumerate(g.names):
        rec: dict[str, Any] = {"name": n}
        if g.cost is not None:
            rec["cost"] = [float(c) for c in g.cost[i]]
        rec["work"] = float(g.work[i])
        if len(g.kind_names) > 1 or g.kind_names[0] != "compute":
            rec["kind"] = g.kind_of(i)
        for k in ("arrival", "priority", "memory"):
            v = float(getattr(g, k)[i])
            if v:
                rec[k] = v
        if g.cores[i] != 1:
            rec["cores"] = int(g.cores[i])
        if g.procs_max[i] > 1:
            lo, hi = int(g.procs_min[i]), int(g.procs_max[i])
            rec["procs"] = lo if lo == hi else [lo, hi]
        if g.serial[i]:
            rec["serial"] = float(g.serial[i])
        if g.downey[i, 0] > 0:
            rec["speedup"] = {"model": "downey", "A": float(g.downey[i, 0]), "sigma": float(g.downey[i, 1])}
        if g.same_host[i]:
            rec["same_host"] = True
        tasks.append(rec)
    edges = [{"from": g.names[s], "to": g.names[d], "data": float(x)}
             for s, d, x in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_data.tolist())]
    return tasks, edges
