"""What a WfFormat instance recorded of its execution, as a :class:`~simsched.workloads.recorded.RecordedRun`.

:func:`read_recorded` reads an instance (WfFormat 1.3, 1.4, 1.5 or 1.6) into its task graph, bit for bit the
graph :func:`~simsched.workloads.importers.wfformat.read_wfformat` gives, and the run it records:

* the run: the workflow system (``runtimeSystem``; 1.3/1.4 ``wms``) name and version, the workflow's
  ``executedAt`` and ``makespanInSeconds`` (1.3 ``makespan``), the machines (``nodeName``, ``cpu.coreCount``
  (1.3/1.4 ``cpu.count``), ``cpu.speedInMHz`` (``cpu.speed``), ``memoryInBytes`` (1.3 ``memory``, KB));
* per task: the machines it ran on (1.5+ ``machines``, 1.3/1.4 ``machine``), its start (``executedAt``, a
  timestamp; :func:`parse_timestamp`), ``runtimeInSeconds``, ``coreCount`` (1.3/1.4 ``cores``), ``readBytes``
  and ``writtenBytes`` (1.3 ``bytesRead``/``bytesWritten``), ``memoryInBytes``, ``energyInKWh`` and
  ``avgPowerInW`` (1.3/1.4 ``energy``, ``avgPower``), its input and output files with their sizes.

1.3 units follow WfFormat's migration tool (``wfcommons-migrate-instance.py``, 1.3 to 1.4): memory in KB
(x 1,000), bytes read and written in KB (x 1,000) except under Pegasus, whose tracer wrote bytes.

A recorded run must be one that could have happened; anything else is a located :class:`SimschedError`
(exit 2 on the command line) naming the file, the line where it can be found, the task and the field:
a missing, negative or non-finite runtime (no repair, unlike the graph importer's lenient mode), any
negative or non-finite recorded number, a start time that does not parse, a task that starts before one of
its parents ends or before the workflow started, a task on a machine the machine list does not name, two
machines of one name, an execution entry for a task the specification lacks, and a recorded makespan
shorter than the span of the recorded starts and ends or than the critical path of the runtimes.  Times are
compared with a tolerance (``tolerance``, 1 s by default: WfFormat timestamps are whole seconds).

Files without a machine list may still name machines on their tasks: those machines are then taken as
recorded, with nothing known of them.  O(tasks + file references).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from simsched import limits
from simsched.errors import DataRepairWarning, SimschedError, shown
from simsched.workloads.importers._common import load_json, number
from simsched.workloads.importers.wfformat import (
    FLAT_VERSIONS,
    WfParts,
    core_key,
    memory_key,
    parse_wfformat_parts,
    task_field_line,
    task_number,
)
from simsched.workloads.recorded import (
    MAKESPAN_FROM_STARTS,
    MAKESPAN_NONE,
    MAKESPAN_RECORDED,
    RecordedMachine,
    RecordedRun,
)
from simsched.workloads.taskgraph import TaskGraph

TIME_TOLERANCE_S = 1.0
"""Default slack (seconds) when recorded times are compared: WfFormat timestamps are whole seconds."""


class RecordedInstance(NamedTuple):
    """An imported instance: its task graph and the run it recorded (tasks in the same order)."""

    graph: TaskGraph
    run: RecordedRun


def read_recorded(path: str | Path, *, data_unit: float = 1e6, tolerance: float = TIME_TOLERANCE_S) -> RecordedInstance:
    """Read a WfFormat instance with what its execution recorded (see the module docstring).  ``data_unit``
    scales the graph's edge data and memory as in :func:`~simsched.workloads.importers.wfformat.read_wfformat`;
    the recorded run keeps bytes.  O(tasks + file references)."""
    with limits.fewer_collections():
        doc, text = load_json(path)
        return parse_recorded(doc, file=path, text=text, data_unit=data_unit, tolerance=tolerance)


def parse_recorded(doc: Any, *, file: str | Path | None = None, text: str | None = None, data_unit: float = 1e6,
                   tolerance: float = TIME_TOLERANCE_S) -> RecordedInstance:
    """:func:`read_recorded` on already-parsed data (``text`` only serves to find lines)."""
    tol = number(tolerance, "the time tolerance")
    with warnings.catch_warnings():  # a negative runtime or file size is refused below, not repaired
        warnings.simplefilter("ignore", DataRepairWarning)
        parts = parse_wfformat_parts(doc, file=file, text=text, data_unit=data_unit)
    reader = _Reader(parts, doc, tol)
    return RecordedInstance(parts.graph, reader.run())


def machines(path: str | Path) -> list[dict[str, Any]]:
    """The machines an instance lists, as platform hints: dicts with ``name``, ``cores``, ``speed_mhz`` and
    ``memory_bytes`` (``None`` where the file says nothing), checked as :func:`read_recorded` checks them.
    Works for 1.3 to 1.6."""
    doc, text = load_json(path)
    header = _Header(parse_wfformat_parts(doc, file=path, text=text), doc)
    return [asdict(m) for m in header.machines()]


_ISO = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})[T ](\d{2}):?(\d{2}):?(\d{2})(\.\d+)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?")
_MDY = re.compile(r"(\d{2})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?")


def parse_timestamp(value: Any) -> datetime | None:
    """A WfFormat timestamp as an aware :class:`datetime`, or ``None`` when it is not one.

    Accepted: ISO 8601 / RFC 3339 in extended or basic form (``2020-12-25T20:10:08+00:00``,
    ``20200401T054215+0000``, ``2024-01-02 03:04:05.5Z``); the ``MM-DD-YYTHH:MM:SSZ`` form some WfCommons
    tracers wrote (``05-10-23T16:23:32Z`` is 10 May 2023); a number, read as POSIX seconds.  A time without an
    offset is read as UTC (only differences between a run's times are used).  O(len(value)).

    >>> parse_timestamp("05-10-23T16:23:32Z").isoformat(), parse_timestamp("20200401T054215+0000").isoformat()
    ('2023-05-10T16:23:32+00:00', '2020-04-01T05:42:15+00:00')
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or abs(value) > 1e11:
            return None
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = _ISO.fullmatch(text)
    if m:
        year, month, day = int(m[1]), int(m[2]), int(m[3])
    else:
        m = _MDY.fullmatch(text)
        if not m:
            return None
        month, day, year = int(m[1]), int(m[2]), 2000 + int(m[3])
    try:
        stamp = datetime(year, month, day, int(m[4]), int(m[5]), int(m[6]), tzinfo=_zone(m[8]))
    except ValueError:
        return None
    return stamp + timedelta(seconds=float(m[7])) if m[7] else stamp


def _zone(text: str | None) -> timezone:
    if not text or text == "Z":
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


class _Header:
    """The run-level parts of an instance: version, workflow system, machines, makespan, ``executedAt``."""

    def __init__(self, parts: WfParts, doc: Mapping) -> None:
        version, wf, self.ctx = parts.version, parts.workflow, parts.ctx
        self.version, self.doc = version, doc
        self.flat = version in FLAT_VERSIONS
        if self.flat:
            self.section, self.where = wf, "workflow"
        else:  # the graph reader checked that it is an object
            self.section, self.where = wf.get("execution") or {}, "workflow.execution"
        system = doc.get("runtimeSystem", doc.get("wms"))
        system = system if isinstance(system, dict) else {}
        self.wms_name = _text(system.get("name"))
        self.wms_version = _text(system.get("version"))

    def fail(self, message: str, field: str, needle: str | None = None) -> SimschedError:
        return self.ctx.fail(message, field, needle)

    def value(self, raw: Any, what: str, field: str, needle: str | None, minimum: float | None = 0.0) -> float:
        """``raw`` as a finite number ``>= minimum``, or the located error.  O(1)."""
        try:
            return number(raw, what, field=field, minimum=minimum)
        except SimschedError as e:
            raise e.located(file=self.ctx.file, line=self.ctx.lines.of(needle) if needle else None) from None

    def machines(self) -> list[RecordedMachine]:
        """The machine list, each checked; two machines of one name are refused.  O(machines)."""
        raw, field = self.section.get("machines"), f"{self.where}.machines"
        if raw is None and not self.flat:  # where 1.3 and 1.4 wrote it: a hand-migrated file may keep it there
            raw, field = self.doc["workflow"].get("machines"), "workflow.machines"
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise self.fail("the machine list must be a list", field, '"machines"')
        out: list[RecordedMachine] = []
        seen: set[str] = set()
        for j, m in enumerate(raw):
            f = f"{field}[{j}]"
            if not isinstance(m, dict) or not isinstance(m.get("nodeName"), str) or not m["nodeName"]:
                raise self.fail("a machine must be an object with a nodeName", f, '"nodeName"')
            name = m["nodeName"]
            needle = f'"nodeName": {_quoted(name)}'
            if name in seen:
                raise self.fail(f"machine {name!r} is listed twice; give each machine one entry", f, needle)
            seen.add(name)
            cpu = m.get("cpu") or {}
            if not isinstance(cpu, dict):
                raise self.fail(f"machine {name!r}: cpu must be an object", f"{f}.cpu", needle)
            cores = cpu.get("coreCount", cpu.get("count"))
            speed = cpu.get("speedInMHz", cpu.get("speed"))
            memory, scale = m.get("memoryInBytes"), 1.0
            if memory is None and self.version == "1.3" and "memory" in m:
                memory, scale = m["memory"], 1000.0
            c = None if cores is None else self.value(cores, f"machine {name!r}: cpu.coreCount", f"{f}.cpu.coreCount",
                                                       needle, minimum=1)
            if c is not None and c != int(c):
                raise self.fail(f"machine {name!r}: cpu.coreCount must be a whole number, got {cores!r}",
                                f"{f}.cpu.coreCount", needle)
            out.append(RecordedMachine(
                name=name, cores=None if c is None else int(c),
                speed_mhz=None if speed is None else self.value(speed, f"machine {name!r}: cpu.speedInMHz",
                                                                f"{f}.cpu.speedInMHz", needle),
                memory_bytes=None if memory is None else scale * self.value(
                    memory, f"machine {name!r}: memoryInBytes", f"{f}.memoryInBytes", needle)))
        return out

    @property
    def makespan_key(self) -> str:
        """``makespanInSeconds``, or 1.3's ``makespan`` in a file that writes only that."""
        return "makespan" if "makespanInSeconds" not in self.section and "makespan" in self.section \
            else "makespanInSeconds"

    def makespan(self) -> float | None:
        """The recorded makespan (s), or ``None`` when the file gives none.  O(1)."""
        key = self.makespan_key
        raw = self.section.get(key)
        return None if raw is None else self.value(raw, key, f"{self.where}.{key}", f'"{key}"')


_TASK_KEYS = {  # the execution values of a task, by schema layout: read, written, energy, power
    "1.3": ("bytesRead", "bytesWritten", "energy", "avgPower"),
    "1.4": ("readBytes", "writtenBytes", "energy", "avgPower"),
    "split": ("readBytes", "writtenBytes", "energyInKWh", "avgPowerInW"),
}


class _Reader(_Header):
    """Turns a parsed instance into its :class:`RecordedRun`, checking it (see the module docstring)."""

    def __init__(self, parts: WfParts, doc: Any, tolerance: float) -> None:
        super().__init__(parts, doc)
        self.parts, self.tol = parts, tolerance
        self.records = parts.records
        self.names = parts.graph.names

    def run(self) -> RecordedRun:
        """Read and check everything.  O(tasks + file references)."""
        machines = self.machines()
        self._extra_execution_entries()
        task_machines, machines = self._placement(machines)
        columns = self._columns()
        files, sizes, inputs, outputs = self._files()
        executed_text = self.section.get("executedAt")
        executed_at = parse_timestamp(executed_text)
        origin, start = self._starts(executed_at)
        makespan = self.makespan()
        source = MAKESPAN_RECORDED if makespan is not None else MAKESPAN_NONE
        runtime = columns.pop("runtime")
        if makespan is None and origin is not None:
            makespan, source = float(np.nanmax(start + runtime)), MAKESPAN_FROM_STARTS
        run = RecordedRun(
            source=None if self.ctx.file is None else str(self.ctx.file), schema_version=self.version,
            wms_name=self.wms_name, wms_version=self.wms_version,
            executed_at_text=None if executed_text is None else str(executed_text), executed_at=executed_at,
            origin=origin, makespan=makespan, makespan_source=source, machines=tuple(machines), names=self.names,
            runtime=runtime, start=start,
            machine=np.array([ms[0] if ms else -1 for ms in task_machines], dtype=np.int64),
            task_machines=tuple(task_machines), inputs=inputs, outputs=outputs, files=files, file_size=sizes,
            **columns)
        self._check_times(run)
        return run

    # ------------------------------------------------------------------ per task
    def _task_fail(self, i: int, message: str, key: str) -> SimschedError:
        r = self.records[i]
        return SimschedError(f"task {self.names[i]!r}: {message}", file=self.ctx.file,
                             line=task_field_line(self.ctx.lines, self.names[i], key), field=f"{r['ex_field']}.{key}")

    def _task_value(self, i: int, raw: Any, key: str, minimum: float | None = 0.0) -> float:
        return task_number(self.ctx, self.records[i], raw, key, minimum)

    def _extra_execution_entries(self) -> None:
        """1.5+: an execution entry whose id the specification does not list is refused.  O(entries)."""
        if self.flat:
            return
        entries = self.section.get("tasks") or []
        known = set(self.names)
        for j, entry in enumerate(entries):
            tid = str(entry.get("id"))
            if tid not in known:
                raise self.fail(f"the execution section records task {tid!r}, which the specification does not list",
                                f"{self.where}.tasks[{j}].id", f'"id": {_quoted(tid)}')

    def _placement(self, machines: list[RecordedMachine]) -> tuple[list[tuple[int, ...]], list[RecordedMachine]]:
        """Each task's machines as indices into the machine list (extended by the names tasks give when the
        file has no list); a name the list lacks is refused.  O(tasks)."""
        index = {m.name: k for k, m in enumerate(machines)}
        listed = bool(machines)
        out: list[tuple[int, ...]] = []
        for i, r in enumerate(self.records):
            raw = r["raw"]
            key = "machines" if "machines" in raw else "machine"
            value = raw.get(key)
            names = [value] if isinstance(value, str) else value
            if names is None:
                out.append(())
                continue
            if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
                want = "a list of machine names" if key == "machines" else "a machine name"
                raise self._task_fail(i, f"{key} must be {want}, got {shown(value)}", key)
            ks = []
            for name in names:
                if name not in index:
                    if listed:
                        known = ", ".join(sorted(index)[:8])
                        raise self._task_fail(i, f"ran on machine {name!r}, which the machine list does not name "
                                                 f"(it names {known})", key)
                    index[name] = len(machines)
                    machines.append(RecordedMachine(name=name))
                ks.append(index[name])
            out.append(tuple(dict.fromkeys(ks)))
        return out, machines

    def _columns(self) -> dict[str, np.ndarray]:
        """runtime, cores, bytes read and written, memory, energy and power per task (NaN where not recorded),
        each checked (finite, >= 0; cores > 0).  O(tasks)."""
        read_key, written_key, energy_key, power_key = _TASK_KEYS.get(self.version, _TASK_KEYS["split"])
        kb_io = self.version == "1.3" and "pegasus" not in (self.wms_name or "").lower()
        n = len(self.records)
        cols = {k: np.full(n, np.nan) for k in ("runtime", "cores", "read_bytes", "written_bytes", "memory_bytes",
                                                 "energy_kwh", "avg_power_w")}
        for i, r in enumerate(self.records):
            raw = r["raw"]
            key = "runtime" if "runtimeInSeconds" not in raw and "runtime" in raw else "runtimeInSeconds"
            cols["runtime"][i] = self._task_value(i, r["runtime"], key)  # the graph refused a missing one
            if r["cores"] is not None:
                key = core_key(r)
                cores = self._task_value(i, r["cores"], key, minimum=None)
                if cores <= 0:
                    raise self._task_fail(i, f"{key} must be > 0, got {r['cores']!r}", key)
                cols["cores"][i] = cores
            if r["memory"] is not None:
                cols["memory_bytes"][i] = self._task_value(i, r["memory"], memory_key(r))
            for col, key, scale in (("read_bytes", read_key, 1000.0 if kb_io else 1.0),
                                    ("written_bytes", written_key, 1000.0 if kb_io else 1.0),
                                    ("energy_kwh", energy_key, 1.0), ("avg_power_w", power_key, 1.0)):
                value = raw.get(key)
                if value is not None:
                    cols[col][i] = scale * self._task_value(i, value, key)
        return cols

    def _files(self) -> tuple[tuple[str, ...], np.ndarray, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        """Files by first mention, their sizes (bytes; 1.3/1.4: the writer's size, else the first reader's;
        NaN when not given) and each task's inputs and outputs.  O(file references)."""
        index: dict[str, int] = {}
        sizes: list[float] = []
        ins: list[tuple[int, ...]] = []
        outs: list[tuple[int, ...]] = []

        def ref(name: Any) -> int:
            key = str(name)
            if key not in index:
                index[key] = len(sizes)
                sizes.append(math.nan)
            return index[key]

        for r in self.records:
            ins.append(tuple(dict.fromkeys(map(ref, r["inputs"]))))
            outs.append(tuple(dict.fromkeys(map(ref, r["outputs"]))))
        names = list(index)
        if not self.flat:
            table = self.records[0]["sizes"] if self.records else {}
            for k, name in enumerate(names):
                if table.get(name) is not None:
                    sizes[k] = self._size(name, table[name])
        else:
            for pick in ("outputs", "inputs"):  # the writer's size first
                for r in self.records:
                    for name in r[pick]:
                        k = index[str(name)]
                        if math.isnan(sizes[k]) and r["sizes"].get(str(name)) is not None:
                            sizes[k] = self._size(str(name), r["sizes"][str(name)])
        return tuple(names), np.array(sizes, dtype=float), tuple(ins), tuple(outs)

    def _size(self, name: str, raw: Any) -> float:
        """File ``name``'s size, checked (finite, >= 0), the error located at the file's entry.  O(1)."""
        try:
            return number(raw, f"file {name!r}: sizeInBytes")
        except SimschedError as e:
            key, field = ("name", "workflow.tasks[].files") if self.flat else ("id", "workflow.specification.files")
            lines, quoted = self.ctx.lines, _quoted(name)
            line = lines.of(f'"{key}": {quoted}') or lines.of(quoted)
            raise e.located(file=self.ctx.file, line=line, field=field) from None

    # ------------------------------------------------------------------ times
    def _starts(self, executed_at: datetime | None) -> tuple[datetime | None, np.ndarray]:
        """Each task's start in seconds after the origin (the workflow's ``executedAt``, else the earliest
        task start), NaN where not recorded; a start that does not parse, or that comes before the
        workflow's start by more than the tolerance, is refused.  O(tasks)."""
        n = len(self.records)
        stamps: list[datetime | None] = [None] * n
        for i, r in enumerate(self.records):
            raw = r["raw"].get("executedAt")
            if raw is None:
                continue
            stamp = parse_timestamp(raw)
            if stamp is None:
                raise self._task_fail(i, f"executedAt {shown(raw)} is not a timestamp (ISO 8601, e.g. "
                                         "2024-05-01T12:00:00+00:00)", "executedAt")
            stamps[i] = stamp
        known = [s for s in stamps if s is not None]
        if not known:
            return None, np.full(n, np.nan)
        origin = executed_at if executed_at is not None else min(known)
        start = np.array([np.nan if s is None else (s - origin).total_seconds() for s in stamps])
        first = int(np.nanargmin(start))
        if start[first] < -self.tol:
            raise self._task_fail(first, f"starts {-start[first]:g} s before the workflow's executedAt "
                                         f"({self.section.get('executedAt')}); a time zone missing from one of them?",
                                  "executedAt")
        return origin, start

    def _check_times(self, run: RecordedRun) -> None:
        """Precedence of recorded starts, and the makespan against the span and the critical path.
        O(tasks + edges)."""
        g, tol = self.parts.graph, self.tol
        start, end = run.start, run.end
        src, dst = g.edge_src, g.edge_dst
        early = start[dst] < end[src] - tol  # NaN compares False: edges with an unrecorded start pass
        if early.any():
            e = int(np.flatnonzero(early)[0])
            s, d = int(src[e]), int(dst[e])
            raise self._task_fail(d, f"starts at {start[d]:g} s, before its parent {self.names[s]!r} ends at "
                                     f"{end[s]:g} s ({start[s]:g} s + {run.runtime[s]:g} s)", "executedAt")
        if run.makespan_source != MAKESPAN_RECORDED:
            return
        key = self.makespan_key
        field, needle = f"{self.where}.{key}", f'"{key}"'
        span = run.span
        if span is not None and run.makespan < span - tol:
            raise self.fail(f"the recorded makespan {run.makespan:g} s is shorter than its tasks' span {span:g} s "
                            "(first recorded start to last recorded end)", field, needle)
        chain = run.critical_path(g)
        if run.makespan < chain - tol - 1e-9 * chain:
            hint = (" (a generated instance, not a recorded run? read its graph with the wfcommons form)"
                    if run.makespan == 0 else "")
            raise self.fail(f"the recorded makespan {run.makespan:g} s is shorter than the longest chain of "
                            f"recorded runtimes, {chain:g} s: the tasks could not have run in that time{hint}",
                            field, needle)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _quoted(name: str) -> str:
    """``name`` as JSON writes it (how it appears in the file, for finding its line)."""
    return json.dumps(name)

