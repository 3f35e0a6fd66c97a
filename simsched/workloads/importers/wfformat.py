"""WfCommons WfFormat JSON (https://github.com/wfcommons/WfFormat), schema versions 1.3, 1.4, 1.5 and 1.6.

Reading maps a workflow instance to a :class:`TaskGraph`:

* tasks: in 1.3 and 1.4 ``workflow.tasks[]`` refer to each other by **name**; from 1.5 on,
  ``workflow.specification.tasks[]`` refer to each other by **id**, and runtimes, cores and memory
  live in ``workflow.execution.tasks[]`` (matched by id).  Task names in the graph are the 1.4
  names / the 1.5+ ids.  A dependency may be listed on either end (parents or children); both count.
* work = ``runtimeInSeconds`` (1.3: ``runtime``; seconds on the machine that ran it); kind = the task's
  ``category``, else its name without the instance id (:func:`kind_of_name`: ``mProject_ID0000001`` →
  ``mProject``), so a per-kind affinity (``mProject: {gpu: 4}``) applies to every task of that program.
  (1.4's ``type`` is ``compute``/``auxiliary`` for every task, not a kind.)
* negative runtimes and file sizes are repaired by their absolute value with one warning line, or refused
  with ``strict=True`` (:class:`~simsched.workloads.importers._common.NegativeRepairs`).
* edge data = total size of the files the parent writes and the child reads, in units of
  ``data_unit`` bytes (default 1e6: megabytes, so bandwidth is in MB/s); memory likewise.
* 1.3 writes memory in KB (``memory``); it is read as 1,000 bytes per KB, as WfFormat's own migration
  tool (``wfcommons-migrate-instance.py``) converts it; 1.3 file ``size`` is in bytes (the tool copies it).
* 1.6 adds only optional ``metrics`` summaries (a valid 1.5 instance is a valid 1.6 one): they are not read.
* what the run recorded (machines, placement, start times, I/O, makespan): see
  :mod:`simsched.workloads.importers.wfformat_recorded`, which builds on :func:`parse_wfformat_parts`.

Errors (truncated JSON, unknown schema version, a parent that does not exist, a cycle, a negative or
missing runtime) name the file and the line where the offending value is written.  O(tasks + file
references).  Writing (:func:`write_wfformat`) produces schema 1.5 (or 1.4) with one file per edge,
so that edge data survives a round trip.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from itertools import chain, repeat
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from simsched import limits
from simsched.errors import SimschedError
from simsched.workloads.importers._common import (
    Lines,
    NegativeRepairs,
    atomic_write_text,
    load_json,
    located,
    number,
)
from simsched.workloads.taskgraph import TaskGraph

SUPPORTED_VERSIONS = ("1.3", "1.4", "1.5", "1.6")
FLAT_VERSIONS = ("1.3", "1.4")
"""Versions with one ``workflow.tasks`` list (by name); later ones split specification and execution."""


class _Ctx:
    def __init__(self, file: Path | str | None, text: str | None) -> None:
        self.file, self.text = file, text
        self.lines = Lines(text)  # built only if an error needs a line
        self.repairs = NegativeRepairs(file if file is not None else "(WfFormat data)")

    def fail(self, message: str, field: str, needle: str | None = None) -> SimschedError:
        line = self.lines.of(needle) if needle else None
        return SimschedError(message, file=self.file, line=line, field=field)


_ID_SUFFIX = re.compile(r"^(.+?)[_-]+(?:ID)?\d+$")


@functools.lru_cache(maxsize=4096)  # a workflow repeats a few names (or kinds) thousands of times
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
    with limits.fewer_collections():  # ~a million objects without cycles: the collector would re-walk them
        doc, text = load_json(path)
        return parse_wfformat(doc, file=path, text=text, data_unit=data_unit, default_runtime=default_runtime,
                              strict=strict)


def _obj(value: Any, what: str, ctx: _Ctx, field: str, kind: type = dict) -> Any:
    if not isinstance(value, kind):
        want = "an object" if kind is dict else "a list"
        raise ctx.fail(f"{what} must be {want}", field)
    return value


class WfParts(NamedTuple):
    """What :func:`parse_wfformat_parts` read: the graph, the schema version, the ``workflow`` object, one
    record per task in graph order (``raw``: the task's object that holds its execution values, the 1.3/1.4
    task or the 1.5+ execution entry, ``{}`` when there is none; ``ex_field``: that object's field path) and
    the context that locates errors."""

    graph: TaskGraph
    version: str
    workflow: Mapping
    records: list[dict]
    ctx: _Ctx


def parse_wfformat(doc: Any, *, file: str | Path | None = None, text: str | None = None,
                   data_unit: float = 1e6, default_runtime: float | None = None, strict: bool = False) -> TaskGraph:
    """Build the graph from already-parsed WfFormat data (``text`` only serves to find lines)."""
    return parse_wfformat_parts(doc, file=file, text=text, data_unit=data_unit, default_runtime=default_runtime,
                                strict=strict).graph


def parse_wfformat_parts(doc: Any, *, file: str | Path | None = None, text: str | None = None,
                         data_unit: float = 1e6, default_runtime: float | None = None,
                         strict: bool = False) -> WfParts:
    """:func:`parse_wfformat` and what it read on the way (:class:`WfParts`), for readers of the
    execution records.  O(tasks + file references)."""
    ctx = _Ctx(file, text)
    ctx.repairs.strict = strict
    _obj(doc, "the document", ctx, "(top level)")
    version = doc.get("schemaVersion")
    if version is None:
        raise ctx.fail("no schemaVersion: not a WfFormat instance", "schemaVersion")
    version = str(version)
    if version not in SUPPORTED_VERSIONS:
        raise ctx.fail(f"unknown schemaVersion {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)}",
                       "schemaVersion", '"schemaVersion"')
    wf = _obj(doc.get("workflow"), "workflow", ctx, "workflow")
    if version in FLAT_VERSIONS:
        records = _records_14(wf, ctx, kb_memory=version == "1.3")
    else:
        records = _records_15(wf, ctx)
    graph = _build(records, ctx, data_unit, default_runtime)
    ctx.repairs.warn()
    return WfParts(graph, version, wf, records, ctx)


def _records_14(wf: Mapping, ctx: _Ctx, kb_memory: bool = False) -> list[dict]:
    """One record per task of a 1.3/1.4 ``workflow.tasks`` list; ``kb_memory`` (1.3) reads ``memory`` in KB
    as 1,000 bytes each.  O(tasks + file references)."""
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
        memory = t.get("memoryInBytes")
        if kb_memory and memory is None and "memory" in t:
            memory = t["memory"] * 1000 if _is_number(t["memory"]) else t["memory"]
        out.append(dict(name=name, kind=kind, parents=t.get("parents", []) or [],
                        children=t.get("children", []) or [], runtime=t.get("runtimeInSeconds", t.get("runtime")),
                        cores=t.get("cores"), memory=memory, inputs=ins, outputs=outs,
                        sizes=sizes, field=field, raw=t, ex_field=field))
    return out


def _by_id(items: Any, ctx: _Ctx, what: str, field: str, noun: str, where: str = "") -> dict[str, dict]:
    """Objects of the list ``items`` by their ``id`` (as a string).  A second entry for one id would silently
    replace the first (a file's size, a task's runtime), so it is refused, located.  O(len(items))."""
    _obj(items, field, ctx, field, list)
    if set(map(type, items)) <= {dict}:
        out = {str(item.get("id")): item for item in items}
        if len(out) == len(items):
            return out
    out = {}
    for j, item in enumerate(items):
        _obj(item, what, ctx, f"{field}[{j}]")
        key = str(item.get("id"))
        if key in out:
            raise ctx.fail(f"duplicate {noun} id {key!r}{where}; give each {noun} one entry", f"{field}[{j}]",
                           f'"{item.get("id")}"')
        out[key] = item
    return out


def _records_15(wf: Mapping, ctx: _Ctx) -> list[dict]:
    spec = _obj(wf.get("specification"), "workflow.specification", ctx, "workflow.specification")
    tasks = _obj(spec.get("tasks"), "workflow.specification.tasks", ctx, "workflow.specification.tasks", list)
    files = spec.get("files", []) or []
    sizes = _by_id(files, ctx, "a file", "workflow.specification.files", "file")
    sizes = {k: f.get("sizeInBytes", 0) for k, f in sizes.items()}
    execution = _obj(wf.get("execution") or {}, "workflow.execution", ctx, "workflow.execution")
    ex_tasks = _by_id(execution.get("tasks", []) or [], ctx, "an execution task", "workflow.execution.tasks",
                      "task", " in the execution section")
    out = []
    for i, t in enumerate(tasks):
        field = f"workflow.specification.tasks[{i}]"
        _obj(t, "a task", ctx, field)
        if "id" not in t:
            raise ctx.fail("task has no id", field)
        tid = str(t["id"])
        ex = ex_tasks.get(tid, {})
        out.append({"name": tid, "kind": t.get("category") or kind_of_name(str(t.get("name") or tid)),
                    "parents": t.get("parents", []) or [], "children": t.get("children", []) or [],
                    "runtime": ex.get("runtimeInSeconds"), "cores": ex.get("coreCount"),
                    "memory": ex.get("memoryInBytes"), "inputs": t.get("inputFiles", []) or [],
                    "outputs": t.get("outputFiles", []) or [], "sizes": sizes, "field": field,
                    "runtime_field": f"workflow.execution.tasks[id={tid}].runtimeInSeconds", "raw": ex,
                    "ex_field": f"workflow.execution.tasks[id={tid}]"})
    return out


def _build(records: list[dict], ctx: _Ctx, data_unit: float, default_runtime: float | None) -> TaskGraph:
    """The graph of ``records``.  O(tasks + file references) with Python work only in C-level
    ``map``/``dict.update`` calls and numpy: every value is checked at once (:func:`_plain`), and the
    per-value loops that name the offending task, file and line run only when that check fails."""
    if not records:
        raise ctx.fail("the workflow has no tasks", "tasks")
    names = [r["name"] for r in records]
    index = dict(zip(names, range(len(names))))
    if len(index) < len(names):
        seen: set[str] = set()
        for r in records:
            if r["name"] in seen:
                raise ctx.fail(f"duplicate task {r['name']!r}", r["field"], f'"{r["name"]}"')
            seen.add(r["name"])
    raw_work = [r["runtime"] if r["runtime"] is not None else default_runtime for r in records]
    work = _plain(raw_work)
    cores = _plain([r["cores"] if r["cores"] is not None else 1 for r in records])
    memory = _plain([r["memory"] if r["memory"] is not None else 0 for r in records])
    if work is None or cores is None or memory is None or cores.max() > _MAX_CORES:
        work, core_list, memory_list = _task_values(records, ctx, default_runtime)
        cores, memory = core_list, np.asarray(memory_list, dtype=float) / data_unit
    else:
        cores = np.maximum(1, np.ceil(cores)).astype(np.int64)
        memory = memory / data_unit
    src, dst = _edges(records, index, ctx)
    ids, raw_sizes, files = _transfers(records, src, dst)
    size = _plain(raw_sizes)
    if size is None:
        size = np.empty(len(raw_sizes))
        for k, (raw, f) in enumerate(zip(raw_sizes, files())):
            try:
                size[k] = ctx.repairs.value(raw, f"file {f!r}: sizeInBytes", "file sizes")
            except SimschedError as e:  # the line is looked up on this path only
                raise e.located(line=ctx.lines.of(f'"{f}"')) from None
    data = np.zeros(src.size)
    np.add.at(data, ids, size / data_unit)  # in file order, as a running sum
    with located(ctx.file):
        return TaskGraph(names, np.stack([src, dst], axis=1), data, work=work, kind=[str(r["kind"]) for r in records],
                         cores=cores, memory=memory)


def _edges(records: list[dict], index: dict[str, int], ctx: _Ctx) -> tuple[np.ndarray, np.ndarray]:
    """Sources and targets of the dependencies the tasks list (as parents or as children; a pair listed
    twice is one edge), in the order they are first listed: task by task, parents before children.
    O(references log references), the references resolved by C-level ``map`` calls."""
    n = len(records)
    lists = {rel: [r[rel] for r in records] for rel in ("parents", "children")}
    ends = {}
    if all(set(map(type, v)) <= {list} for v in lists.values()):
        ends = {rel: list(map(index.get, map(str, chain.from_iterable(v)))) for rel, v in lists.items()}
    if not ends or any(None in e for e in ends.values()):
        _refs_error(records, index, ctx)
    owner = {rel: np.repeat(np.arange(n), np.fromiter(map(len, v), np.int64, n)) for rel, v in lists.items()}
    src = np.concatenate([np.asarray(ends["parents"], dtype=np.int64), owner["children"]])
    dst = np.concatenate([owner["parents"], np.asarray(ends["children"], dtype=np.int64)])
    listed = np.concatenate([owner["parents"] * 2, owner["children"] * 2 + 1]).argsort(kind="stable")
    src, dst = src[listed], dst[listed]
    first = np.unique(src * n + dst, return_index=True)[1]
    first.sort()
    return src[first], dst[first]


def _refs_error(records: list[dict], index: dict[str, int], ctx: _Ctx) -> None:
    """Raise the first bad dependency list or reference, in file order, with its line."""
    for r in records:
        for rel in ("parents", "children"):
            refs = r[rel]
            if not isinstance(refs, list):
                raise ctx.fail(f"{rel} must be a list", f"{r['field']}.{rel}")
            for ref in refs:
                if str(ref) not in index:
                    what = "parent" if rel == "parents" else "child"
                    raise ctx.fail(f"task {r['name']!r} names {what} {str(ref)!r}, which does not exist",
                                   f"{r['field']}.{rel}", f'"{ref}"')
    raise AssertionError("no bad reference found")  # pragma: no cover


def _transfers(records: list[dict], src: np.ndarray,
               dst: np.ndarray) -> tuple[np.ndarray, list[Any], Callable[[], list[Any]]]:
    """The files that flow along edges: for each input file of each task, in file order, and each task
    that writes it, where that writer is a parent: the edge's index and the file's raw size (missing or
    null: 0), and (a function, for the error path) the file references.  O(file references log edges),
    by C-level ``map`` calls and numpy when each file has one writer (the usual case)."""
    n = len(records)
    edge_keys = src * n + dst
    by_key = edge_keys.argsort()
    sorted_keys = edge_keys[by_key]
    outputs = list(map(str, chain.from_iterable(r["outputs"] for r in records)))
    out_owner = np.repeat(np.arange(n), np.fromiter((len(r["outputs"]) for r in records), np.int64, n))
    writer = dict(zip(outputs, out_owner.tolist()))
    inputs = list(chain.from_iterable(r["inputs"] for r in records))
    reader = np.repeat(np.arange(n), np.fromiter((len(r["inputs"]) for r in records), np.int64, n))
    keys = list(map(str, inputs))
    if len(writer) == len(outputs):  # one writer per file
        wrote = np.fromiter(map(writer.get, keys, repeat(-1)), np.int64, len(keys))
    else:  # a file written by several tasks: one candidate edge per writer
        producers: dict[str, list[int]] = {}
        for f, i in zip(outputs, out_owner.tolist()):
            producers.setdefault(f, []).append(i)
        fan = [producers.get(k, [-1]) for k in keys]
        take = np.repeat(np.arange(len(keys)), np.fromiter(map(len, fan), np.int64, len(fan)))
        inputs, keys, reader = [inputs[k] for k in take.tolist()], [keys[k] for k in take.tolist()], reader[take]
        wrote = np.fromiter(chain.from_iterable(fan), np.int64, take.size)
    cand = np.where(wrote >= 0, wrote * n + reader, -1)
    pos = np.minimum(np.searchsorted(sorted_keys, cand), max(sorted_keys.size - 1, 0))
    hit = (cand >= 0) & (sorted_keys[pos] == cand) if sorted_keys.size else np.zeros(cand.size, dtype=bool)
    kept = np.flatnonzero(hit).tolist()
    sizes = records[0]["sizes"]
    if all(r["sizes"] is sizes for r in records):  # 1.5+: one table of file sizes
        raw = list(map(sizes.get, keys if len(kept) == len(keys) else (keys[k] for k in kept), repeat(0)))
    else:  # 1.4: each task lists its files' sizes
        owner = reader.tolist()
        raw = [records[owner[k]]["sizes"].get(keys[k], 0) for k in kept]
    if None in raw or not all(raw):
        raw = [x or 0 for x in raw]
    return by_key[pos[hit]], raw, lambda: [inputs[k] for k in kept]


_PLAIN_TYPES = frozenset({int, float})


def _is_number(value: Any) -> bool:
    """True for an int or float that is not a bool (a value to convert; anything else is left for the
    value checks to name)."""
    return type(value) in _PLAIN_TYPES
_MAX_CORES = 2**31  # above it the all-at-once path would overflow int64 casts: leave it to the task-by-task one


def _plain(values: list[Any]) -> np.ndarray | None:
    """``values`` as floats when every one is a plain finite number in ``[0, MAX_VALUE]``, else ``None``
    (the caller then goes value by value, to repair negatives and name the bad one).  O(len)."""
    if not set(map(type, values)) <= _PLAIN_TYPES:
        return None
    try:
        a = np.array(values, dtype=float)
    except OverflowError:
        return None
    if a.size and not (np.isfinite(a).all() and a.min() >= 0 and a.max() <= limits.MAX_VALUE):
        return None
    return a


def _task_values(records: list[dict], ctx: _Ctx,
                 default_runtime: float | None) -> tuple[list[float], list[int], list[float]]:
    """Work, cores and memory (in bytes) task by task, in file order: repairs negative runtimes and names the first
    value that is not a number, with its field and line.  The path :func:`_build` takes when its
    all-at-once check fails."""
    work: list[float] = []
    cores: list[int] = []
    memory: list[float] = []
    for r in records:
        rt_field = r.get("runtime_field", r["field"] + ".runtimeInSeconds")
        if r["runtime"] is None:
            if default_runtime is None:
                raise ctx.fail(f"task {r['name']!r} has no runtimeInSeconds", rt_field, f'"{r["name"]}"')
            work.append(float(default_runtime))
        else:
            try:
                work.append(ctx.repairs.value(r["runtime"], f"task {r['name']!r}: runtimeInSeconds", "runtimes",
                                              field=rt_field))
            except SimschedError as e:
                raise e.located(file=ctx.file, line=_runtime_line(ctx.lines, r["name"])) from None
        c = r["cores"]
        cores.append(1 if c is None else max(1, math.ceil(task_number(ctx, r, c, core_key(r)))))
        m = r["memory"]
        memory.append(0.0 if m is None else task_number(ctx, r, m, memory_key(r)))
    return work, cores, memory


def core_key(record: dict) -> str:
    """The key a record's core count is written under: ``coreCount`` (1.5+) or ``cores`` (1.3, 1.4)."""
    return "coreCount" if "runtime_field" in record else "cores"


def memory_key(record: dict) -> str:
    """The key a record's memory is written under: ``memoryInBytes``, or 1.3's ``memory`` (KB)."""
    return "memory" if "memoryInBytes" not in record["raw"] and "memory" in record["raw"] else "memoryInBytes"


def task_number(ctx: _Ctx, record: dict, value: Any, key: str, minimum: float | None = 0.0) -> float:
    """``value`` (the task's ``key``) as a finite number ``>= minimum``; otherwise a :class:`SimschedError`
    naming the task, its field (in the object that holds it) and the line.  O(1); the line is looked up on
    the error path only."""
    try:
        return number(value, f"task {record['name']!r}: {key}", minimum=minimum)
    except SimschedError as e:
        raise e.located(file=ctx.file, line=task_field_line(ctx.lines, record["name"], key),
                        field=f"{record['ex_field']}.{key}") from None


def _runtime_line(lines: Lines, name: str) -> int | None:
    """Line of the ``runtimeInSeconds`` in the last ``"id"``/``"name"`` entry equal to ``name`` (1.5+: the
    execution entry comes after the specification entry).  Only used on the error path."""
    return task_field_line(lines, name, "runtimeInSeconds", stop=_OBJECT_END)


_OBJECT_END = re.compile(r"\}")
_NEXT_ENTRY = re.compile(r'"(?:id|name)"\s*:')


def task_field_line(lines: Lines, name: str, key: str, *, stop: re.Pattern[str] = _NEXT_ENTRY) -> int | None:
    """Line of the ``"key"`` that follows the last ``"id"``/``"name"`` entry equal to ``name``, if it comes
    before the next match of ``stop`` (by default the next ``"id"``/``"name"`` key: the next task's entry);
    else the line of that entry; ``None`` when the text or the entry is missing.  Only used on the error
    path: O(len(text))."""
    text = lines.text
    if not text:
        return None
    hits = list(re.finditer(r'"(?:id|name)"\s*:\s*' + re.escape(json.dumps(name)), text))
    if not hits:
        return None
    start = hits[-1].start()
    k = text.find(f'"{key}"', start)
    bound = stop.search(text, hits[-1].end())
    end = bound.start() if bound else len(text)
    return lines.at(k if 0 <= k < end else start)


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
