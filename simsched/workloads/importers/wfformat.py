"""WfCommons WfFormat JSON (https://github.com/wfcommons/WfFormat), schema versions 1.4, 1.5 and 1.6.

Reading maps a workflow instance to a :class:`TaskGraph`:

* tasks: in 1.4 ``workflow.tasks[]`` refer to each other by **name**; from 1.5 on,
  ``workflow.specification.tasks[]`` refer to each other by **id**, and runtimes, cores and memory
  live in ``workflow.execution.tasks[]`` (matched by id).  Task names in the graph are the 1.4
  names / the 1.5+ ids.  A dependency may be listed on either end (parents or children); both count.
* work = ``runtimeInSeconds`` (seconds on the machine that ran it); kind = the task's ``category``, else
  its name without the instance id (:func:`kind_of_name`: ``mProject_ID0000001`` → ``mProject``), so a
  per-kind affinity (``mProject: {gpu: 4}``) applies to every task of that program.  (1.4's ``type`` is
  ``compute``/``auxiliary`` for every task, not a kind.)
* negative runtimes and file sizes are repaired by their absolute value with one warning line, or refused
  with ``strict=True`` (:class:`~simsched.workloads.importers._common.NegativeRepairs`).
* edge data = total size of the files the parent writes and the child reads, in units of
  ``data_unit`` bytes (default 1e6: megabytes, so bandwidth is in MB/s); memory likewise.
* machines: :func:`machines` returns the instance's machines (name, cores, speed in MHz, memory) as
  platform hints.

Errors (truncated JSON, unknown schema version, a parent that does not exist, a cycle, a negative or
missing runtime) name the file and the line where the offending value is written.  O(tasks + file
references).  Writing (:func:`write_wfformat`) produces schema 1.5 (or 1.4) with one file per edge,
so that edge data survives a round trip.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError
from simsched.workloads.importers._common import (
    NegativeRepairs,
    atomic_write_text,
    line_of,
    load_json,
    located,
    number,
)
from simsched.workloads.taskgraph import TaskGraph

SUPPORTED_VERSIONS = ("1.4", "1.5", "1.6")


class _Ctx:
    def __init__(self, file: Path | str | None, text: str | None) -> None:
        self.file, self.text = file, text
        self.repairs = NegativeRepairs(file if file is not None else "(WfFormat data)")

    def fail(self, message: str, field: str, needle: str | None = None) -> SimschedError:
        line = line_of(self.text, needle) if needle else None
        return SimschedError(message, file=self.file, line=line, field=field)


_ID_SUFFIX = re.compile(r"^(.+?)[_-]+(?:ID)?\d+$")


def kind_of_name(name: str) -> str:
    """The program a WfCommons task name stands for: the name without its trailing instance id
    (``mProject_ID0000001`` → ``mProject``, ``split_fasta_00000002`` → ``split_fasta``); a name without an id
    is its own kind.  O(len(name)).

    >>> kind_of_name("mProject_ID0000001"), kind_of_name("split_fasta_00000002"), kind_of_name("merge")
    ('mProject', 'split_fasta', 'merge')
    """
    match = _ID_SUFFIX.match(name)
    return match.group(1) if match else name


def read_wfformat(path: str | Path, *, data_unit: float = 1e6, default_runtime: float | None = None,
                  strict: bool = False) -> TaskGraph:
    """Load a WfFormat instance (see the module docstring).  ``default_runtime`` fills tasks that have
    no runtime (otherwise a missing runtime is an error); ``strict`` refuses negative runtimes and file sizes
    instead of repairing them.  O(tasks + file references)."""
    doc, text = load_json(path)
    return parse_wfformat(doc, file=path, text=text, data_unit=data_unit, default_runtime=default_runtime,
                          strict=strict)


def _obj(value: Any, what: str, ctx: _Ctx, field: str, kind: type = dict) -> Any:
    if not isinstance(value, kind):
        want = "an object" if kind is dict else "a list"
        raise ctx.fail(f"{what} must be {want}", field)
    return value


def parse_wfformat(doc: Any, *, file: str | Path | None = None, text: str | None = None,
                   data_unit: float = 1e6, default_runtime: float | None = None, strict: bool = False) -> TaskGraph:
    """Build the graph from already-parsed WfFormat data (``text`` only serves to find lines)."""
    ctx = _Ctx(file, text)
    ctx.repairs.strict = strict
    _obj(doc, "the document", ctx, "(top level)")
    version = doc.get("schemaVersion")
    if version is None:
        raise ctx.fail("no schemaVersion: not a WfFormat instance", "schemaVersion")
    if str(version) not in SUPPORTED_VERSIONS:
        raise ctx.fail(f"unknown schemaVersion {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)}",
                       "schemaVersion", '"schemaVersion"')
    wf = _obj(doc.get("workflow"), "workflow", ctx, "workflow")
    if str(version) == "1.4":
        records = _records_14(wf, ctx)
    else:
        records = _records_15(wf, ctx)
    graph = _build(records, ctx, data_unit, default_runtime)
    ctx.repairs.warn()
    return graph


def _records_14(wf: Mapping, ctx: _Ctx) -> list[dict]:
    tasks = _obj(wf.get("tasks"), "workflow.tasks", ctx, "workflow.tasks", list)
    out = []
    for i, t in enumerate(tasks):
        field = f"workflow.tasks[{i}]"
        _obj(t, "a task", ctx, field)
        if "name" not in t:
            raise ctx.fail("task has no name", field)
        name = str(t["name"])
        ins, outs, sizes = [], [], {}
        for f in t.get("files", []) or []:
            fid = str(f.get("path", "")) + str(f.get("name", ""))
            sizes[fid] = f.get("sizeInBytes", f.get("size", 0))
            (ins if str(f.get("link", "")).lower() == "input" else outs).append(fid)
        kind = t.get("category") or kind_of_name(name)
        out.append(dict(name=name, kind=kind, parents=t.get("parents", []) or [],
                        children=t.get("children", []) or [], runtime=t.get("runtimeInSeconds", t.get("runtime")),
                        cores=t.get("cores"), memory=t.get("memoryInBytes"), inputs=ins, outputs=outs,
                        sizes=sizes, field=field))
    return out


def _records_15(wf: Mapping, ctx: _Ctx) -> list[dict]:
    spec = _obj(wf.get("specification"), "workflow.specification", ctx, "workflow.specification")
    tasks = _obj(spec.get("tasks"), "workflow.specification.tasks", ctx, "workflow.specification.tasks", list)
    sizes: dict[str, Any] = {}
    for j, f in enumerate(spec.get("files", []) or []):
        _obj(f, "a file", ctx, f"workflow.specification.files[{j}]")
        if str(f.get("id")) in sizes:  # a second size for one file would silently replace the first
            raise ctx.fail(f"duplicate file id {str(f.get('id'))!r}; give each file one entry",
                           f"workflow.specification.files[{j}]", f'"{f.get("id")}"')
        sizes[str(f.get("id"))] = f.get("sizeInBytes", 0)
    execution = wf.get("execution") or {}
    ex_tasks = {}
    for j, e in enumerate(_obj(execution, "workflow.execution", ctx, "workflow.execution").get("tasks", []) or []):
        _obj(e, "an execution task", ctx, f"workflow.execution.tasks[{j}]")
        if str(e.get("id")) in ex_tasks:  # the second runtime would silently replace the first
            raise ctx.fail(f"duplicate task id {str(e.get('id'))!r} in the execution section; give each task one "
                           f"entry", f"workflow.execution.tasks[{j}]", f'"{e.get("id")}"')
        ex_tasks[str(e.get("id"))] = e
    out = []
    for i, t in enumerate(tasks):
        field = f"workflow.specification.tasks[{i}]"
        _obj(t, "a task", ctx, field)
        if "id" not in t:
            raise ctx.fail("task has no id", field)
        tid = str(t["id"])
        ex = ex_tasks.get(tid, {})
        out.append(dict(name=tid, kind=t.get("category") or kind_of_name(str(t.get("name") or tid)),
                        parents=t.get("parents", []) or [], children=t.get("children", []) or [],
                        runtime=ex.get("runtimeInSeconds"), cores=ex.get("coreCount"),
                        memory=ex.get("memoryInBytes"), inputs=t.get("inputFiles", []) or [],
                        outputs=t.get("outputFiles", []) or [], sizes=sizes, field=field,
                        runtime_field=f"workflow.execution.tasks[id={tid}].runtimeInSeconds"))
    return out


def _build(records: list[dict], ctx: _Ctx, data_unit: float, default_runtime: float | None) -> TaskGraph:
    if not records:
        raise ctx.fail("the workflow has no tasks", "tasks")
    index: dict[str, int] = {}
    for i, r in enumerate(records):
        if r["name"] in index:
            raise ctx.fail(f"duplicate task {r['name']!r}", r["field"], f'"{r["name"]}"')
        index[r["name"]] = i
    work, cores, memory = [], [], []
    for r in records:
        rt_field = r.get("runtime_field", r["field"] + ".runtimeInSeconds")
        needle = f'"{r["name"]}"'
        if r["runtime"] is None:
            if default_runtime is None:
                raise ctx.fail(f"task {r['name']!r} has no runtimeInSeconds", rt_field, needle)
            work.append(float(default_runtime))
        else:
            try:
                work.append(ctx.repairs.value(r["runtime"], f"task {r['name']!r}: runtimeInSeconds", "runtimes",
                                              field=rt_field))
            except SimschedError as e:
                raise e.located(file=ctx.file, line=_runtime_line(ctx.text, r["name"])) from None
        c = r["cores"]
        cores.append(1 if c is None else max(1, math.ceil(number(c, "coreCount", file=ctx.file, field=r["field"]))))
        m = r["memory"]
        memory.append(0.0 if m is None else number(m, "memoryInBytes", file=ctx.file, field=r["field"]) / data_unit)
    producers: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        for f in r["outputs"]:
            producers.setdefault(str(f), []).append(i)
    edges: dict[tuple[int, int], float] = {}
    for i, r in enumerate(records):
        for rel, refs in (("parents", r["parents"]), ("children", r["children"])):
            if not isinstance(refs, list):
                raise ctx.fail(f"{rel} must be a list", f"{r['field']}.{rel}")
            for ref in refs:
                j = index.get(str(ref))
                if j is None:
                    what = "parent" if rel == "parents" else "child"
                    raise ctx.fail(f"task {r['name']!r} names {what} {str(ref)!r}, which does not exist",
                                   f"{r['field']}.{rel}", f'"{ref}"')
                edges.setdefault((j, i) if rel == "parents" else (i, j), 0.0)
    for i, r in enumerate(records):
        for f in r["inputs"]:
            for p in producers.get(str(f), ()):
                if (p, i) in edges:
                    raw = r["sizes"].get(str(f), 0) or 0
                    size = ctx.repairs.value(raw, f"file {f!r}: sizeInBytes", "file sizes",
                                             line=line_of(ctx.text, f'"{f}"'))
                    edges[(p, i)] += size / data_unit
    pairs = list(edges)
    with located(ctx.file):
        return TaskGraph([r["name"] for r in records], pairs, list(edges.values()), work=work,
                         kind=[str(r["kind"]) for r in records], cores=cores, memory=memory)


def _runtime_line(text: str | None, name: str) -> int | None:
    """Line of the ``runtimeInSeconds`` that follows the last ``"id"``/``"name"`` entry equal to ``name``
    (1.5+: the execution entry comes after the specification entry).  Only used on the error path."""
    if not text:
        return None
    hits = list(re.finditer(r'"(?:id|name)"\s*:\s*' + re.escape(json.dumps(name)), text))
    if not hits:
        return None
    start = hits[-1].start()
    k = text.find('"runtimeInSeconds"', start)
    nxt = text.find("}", start)
    return text.count("\n", 0, k if 0 <= k < nxt else start) + 1


def machines(path: str | Path) -> list[dict[str, Any]]:
    """The machines an instance was executed on, as platform hints: ``name``, ``cores``,
    ``speed_mhz``, ``memory_bytes`` (missing values are ``None``).  Works for 1.4 to 1.6."""
    doc, _ = load_json(path)
    wf = doc.get("workflow", {}) if isinstance(doc, dict) else {}
    raw = wf.get("machines") or (wf.get("execution") or {}).get("machines") or []
    out = []
    for m in raw:
        cpu = m.get("cpu") or {}
        out.append(dict(name=m.get("nodeName"), cores=cpu.get("coreCount", cpu.get("count")),
                        speed_mhz=cpu.get("speedInMHz", cpu.get("speed")), memory_bytes=m.get("memoryInBytes")))
    return out


def to_wfformat(graph: TaskGraph, *, version: str = "1.5", data_unit: float = 1e6, name: str = "simsched") -> dict:
    """The graph as a WfFormat document (``version`` "1.4" or "1.5").  Each edge becomes one file
    written by its source and read by its target, so data sizes survive a round trip.  O(n + e)."""
    if version not in ("1.4", "1.5"):
        raise SimschedError(f"can write WfFormat 1.4 or 1.5, not {version!r}")
    g = graph
    names = g.names
    parents: list[list[str]] = [[] for _ in names]
    children: list[list[str]] = [[] for _ in names]
    ins: list[list[str]] = [[] for _ in names]
    outs: list[list[str]] = [[] for _ in names]
    files = []
    for e, (s, d) in enumerate(zip(g.edge_src.tolist(), g.edge_dst.tolist())):
        parents[d].append(names[s])
        children[s].append(names[d])
        fid = f"e{e}.dat"
        outs[s].append(fid)
        ins[d].append(fid)
        files.append({"id": fid, "sizeInBytes": int(round(float(g.edge_data[e]) * data_unit))})
    size = {f["id"]: f["sizeInBytes"] for f in files}
    now = datetime.now(timezone.utc).isoformat()
    doc: dict[str, Any] = {"name": name, "description": "written by simsched", "createdAt": now,
                           "schemaVersion": version}
    if version == "1.4":
        tasks = []
        for i, n in enumerate(names):
            t = {"name": n, "type": "compute", "category": g.kind_of(i), "runtimeInSeconds": float(g.work[i]),
                 "parents": parents[i], "children": children[i], "cores": int(g.cores[i]),
                 "files": [{"name": f, "sizeInBytes": size[f], "link": "input"} for f in ins[i]]
                 + [{"name": f, "sizeInBytes": size[f], "link": "output"} for f in outs[i]]}
            if g.memory[i]:
                t["memoryInBytes"] = int(round(float(g.memory[i]) * data_unit))
            tasks.append(t)
        doc["wms"] = {"name": "simsched", "version": "0.1"}
        doc["workflow"] = {"makespanInSeconds": 0.0, "executedAt": now, "tasks": tasks}
        return doc
    spec = [{"name": g.kind_of(i), "id": n, "parents": parents[i], "children": children[i],
             "inputFiles": ins[i], "outputFiles": outs[i]} for i, n in enumerate(names)]
    ex = []
    for i, n in enumerate(names):
        t = {"id": n, "runtimeInSeconds": float(g.work[i]), "coreCount": int(g.cores[i])}
        if g.memory[i]:
            t["memoryInBytes"] = int(round(float(g.memory[i]) * data_unit))
        ex.append(t)
    doc["runtimeSystem"] = {"name": "simsched", "version": "0.1", "url": "https://example.org/simsched"}
    doc["workflow"] = {"specification": {"tasks": spec, "files": files},
                       "execution": {"makespanInSeconds": 0.0, "executedAt": now, "tasks": ex}}
    return doc


def write_wfformat(graph: TaskGraph, path: str | Path, *, version: str = "1.5", data_unit: float = 1e6) -> None:
    """Write :func:`to_wfformat` to ``path`` atomically."""
    doc = to_wfformat(graph, version=version, data_unit=data_unit, name=Path(path).stem)
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")
