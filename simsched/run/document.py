"""Reading a results document (``simsched run --json``) for reports and traces.

:func:`load_document` checks the shape a report needs and raises :class:`SimschedError` naming the
file and what is missing; :func:`first_runs` picks each scheduler's first run (the one ``run``
draws); :func:`utilisation` computes busy time / makespan per processor from a schedule.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from simsched import limits
from simsched.errors import SimschedError
from simsched.run.seedspace import space_of

_RECORD_KEYS = ("task", "processor", "start", "finish")

REQUIRED_METRICS = ("makespan", "avg_turnaround", "avg_waiting", "utilization")
"""Metrics every row of a results document has, never null (``simsched run --json`` writes them for
every run; a report's tables and charts are built on them)."""

SIGNED_METRICS = frozenset({"gap_to_lower_bound"})
"""Metrics that may be negative (a noisy run can beat the deterministic lower bound)."""

_ROW_OTHER = {"scheduler": str, "seed": int, "schedule": list, "jobs": list, "checkpoint": str,
              "proven_optimal": bool, "warning": str, "seed_space": str, "power": dict,
              "engine": str, "fallback": str}
"""Keys of a result row that are not metrics, and their types; every other key is a metric: a
finite number, at least 0 unless in :data:`SIGNED_METRICS`, or null (a metric a run leaves
undefined, written as null)."""

_JOB_NUMBERS = ("arrival", "start", "completion", "jct")
"""Per-job record fields a report draws: finite numbers, at least 0, never null."""

_JOB_OTHER = {"job": int, "tasks": int, "source": str, "missed": bool}


class _Bad(Exception):
    """A value of the document that does not fit: its path (keys and indexes) and what is wrong."""

    def __init__(self, path: tuple[Any, ...], message: str) -> None:
        super().__init__(message)
        self.path, self.message = path, message


def _dotted(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any, path: tuple[Any, ...], *, null: bool = False, signed: bool = False) -> None:
    """``value`` is a finite number (``bool`` is not one), at least 0 unless ``signed``, at most
    :data:`simsched.limits.MAX_VALUE`; or null where ``null`` allows it."""
    if value is None:
        if not null:
            raise _Bad(path, "is null; it must be a number")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(path, f"must be a number, got {_shown(value)}")
    if abs(value) > limits.MAX_VALUE or not math.isfinite(value):  # a 400-digit int: compared, never a float
        raise _Bad(path, f"must be a finite number of at most {limits.MAX_VALUE:g}, got {_shown(value)}")
    if value < 0 and not signed:
        raise _Bad(path, f"must be at least 0, got {_shown(value)}")


def _typed(value: Any, kind: type, path: tuple[Any, ...]) -> None:
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limits.current().max_seed:
            raise _Bad(path, f"must be a whole number from 0 to {limits.current().max_seed}, got {_shown(value)}")
    elif not isinstance(value, kind):
        raise _Bad(path, f"must be {'a ' + kind.__name__ if kind is not list else 'a list'}, got {_shown(value)}")


def _record(record: dict[str, Any], at: tuple[Any, ...], what: str, required: Sequence[str],
            others: dict[str, type], not_null: Sequence[str], signed: Collection[str]) -> None:
    """Keys ``required`` present in ``record``; the keys of ``others`` of their type; every other key
    a number (:func:`_number`), null unless in ``not_null``, negative only if in ``signed``."""
    for key in required:
        if key not in record:
            raise _Bad(at, f"{what} has no {key!r}; give the JSON written by `simsched run --json`")
    for key, value in record.items():
        kind = others.get(key)
        if kind is not None:
            _typed(value, kind, (*at, key))
        else:
            _number(value, (*at, key), null=key not in not_null, signed=key in signed)


def check_row(row: Any, i: int, schedules: bool = True) -> None:
    """One row of ``results``: its scheduler, seed, metrics (:data:`REQUIRED_METRICS` present and
    not null, every other metric a number or null), schedule records (required with ``schedules``) and
    per-job records.  Raises :class:`_Bad` with the path of the first value that does not fit.  O(records)."""
    at = ("results", i)
    if not isinstance(row, dict):
        raise _Bad(at, f"a result must be an object with a scheduler, metrics and a schedule, got {_shown(row)}")
    if "scheduler" not in row:
        raise _Bad(at, "a result without a scheduler")
    schedule = row.get("schedule", None if schedules else [])
    if not isinstance(schedule, list):
        raise _Bad((*at, "schedule") if "schedule" in row else at,
                   "no schedule: this report draws task schedules (an autotuning result has none)")
    _record(row, at, "the result", ("seed", *REQUIRED_METRICS), _ROW_OTHER, REQUIRED_METRICS, SIGNED_METRICS)
    _check_seed_space(row, at)
    limit = limits.MAX_VALUE
    for j, rec in enumerate(schedule):
        if (rec.__class__ is dict and len(rec) >= 4 and rec.get("processor").__class__ is str
                and rec.get("task").__class__ is str and rec.get("start").__class__ is float
                and rec.get("finish").__class__ is float and 0.0 <= rec["start"] <= rec["finish"] <= limit):
            continue  # the record `run --json` writes: checked in a few comparisons
        where = (*at, "schedule", j)
        if not isinstance(rec, dict) or any(k not in rec for k in _RECORD_KEYS):
            raise _Bad(where, f"a schedule entry needs {', '.join(_RECORD_KEYS)}")
        if not isinstance(rec["task"], (str, int)) or isinstance(rec["task"], bool):
            raise _Bad((*where, "task"), f"must be a task name, got {_shown(rec['task'])}")
        if not isinstance(rec["processor"], str):
            raise _Bad((*where, "processor"), f"must be a processor name, got {_shown(rec['processor'])}")
        for k in ("start", "finish"):
            _number(rec[k], (*where, k))
        if rec["finish"] < rec["start"]:
            raise _Bad((*where, "finish"), f"finish {rec['finish']!r} is before start {rec['start']!r}")
    if "power" in row:
        _check_power(row["power"], (*at, "power"))
    for j, job in enumerate(row.get("jobs") or ()):
        where = (*at, "jobs", j)
        if not isinstance(job, dict):
            raise _Bad(where, f"a job record must be an object, got {_shown(job)}")
        _record(job, where, "the job record", ("job", "tasks", *_JOB_NUMBERS), _JOB_OTHER,
                (*_JOB_NUMBERS, "deadline"), ("priority",))


def _check_power(power: dict[str, Any], at: tuple[Any, ...]) -> None:
    """A row's power profile (:func:`~simsched.simulator.power.power_profile`): ``horizon`` a number at
    least 0, ``time_unit_s`` one above 0, ``watts`` an object of processor type -> a list of numbers at
    least 0, every list as long as the first and at most ``limits.MAX_POWER_BINS``; optional ``extra_j`` a
    number at least 0 and ``processors`` an object of processor -> ``{"t": times, "w": watts}`` (times
    not decreasing, one more than watts, watts at least 0).  O(types x bins + steps)."""
    for key in ("horizon", "time_unit_s", "watts"):
        if key not in power:
            raise _Bad(at, f"a power profile needs {key!r}; give the JSON written by `simsched run --json`")
    _number(power["horizon"], (*at, "horizon"))
    _number(power["time_unit_s"], (*at, "time_unit_s"))
    if not power["time_unit_s"] > 0:
        raise _Bad((*at, "time_unit_s"), f"must be above 0, got {_shown(power['time_unit_s'])}")
    watts = power["watts"]
    if not isinstance(watts, dict):
        raise _Bad((*at, "watts"), f"must be an object of processor type -> watts, got {_shown(watts)}")
    if "extra_j" in power:
        _number(power["extra_j"], (*at, "extra_j"))
    steps = power.get("processors", {})
    if not isinstance(steps, dict):
        raise _Bad((*at, "processors"), f"must be an object of processor -> steps, got {_shown(steps)}")
    for name, step in steps.items():
        where = (*at, "processors", name)
        if not (isinstance(step, dict) and isinstance(step.get("t"), list) and isinstance(step.get("w"), list)
                and len(step["t"]) == len(step["w"]) + 1):
            raise _Bad(where, "must be {\"t\": [times..., horizon], \"w\": [watts per step]} with one time more")
        for j, t in enumerate(step["t"]):
            _number(t, (*where, "t", j))
            if j and t < step["t"][j - 1]:
                raise _Bad((*where, "t", j), f"times must not decrease, got {t!r} after {step['t'][j - 1]!r}")
        for j, w in enumerate(step["w"]):
            _number(w, (*where, "w", j))
    size = None
    for kind, series in watts.items():
        where = (*at, "watts", kind)
        if not isinstance(series, list) or not 0 < len(series) <= limits.MAX_POWER_BINS:
            raise _Bad(where, f"must be a list of 1 to {limits.MAX_POWER_BINS} numbers, got {_shown(series)}")
        if size is not None and len(series) != size:
            raise _Bad(where, f"has {len(series)} values where the first type has {size}")
        size = len(series)
        for j, w in enumerate(series):
            _number(w, (*where, j))


BATCH_METRICS = ("wait_mean", "wait_p95", "bsld_mean", "bsld_p95", "utilisation", "lost_capacity")
"""The metrics every row of a cluster log's results document has (null where no job completed)."""
_BATCH_JOB = ("job", "submit", "start", "end", "procs")
_BATCH_JOB_OTHER = {"job": int, "procs": int, "killed": bool, "lost": bool}
_BATCH_ROW_OTHER = {"scheduler": str, "seed": int, "engine": str, "killed_jobs": int, "decisions": int,
                    "failures": int, "requeues": int, "lost_jobs": int, "seed_space": str, "warning": str}
"""Keys of a cluster log's result row that are not metrics, and their types (every other key but ``jobs``,
``timeline`` and ``per_user`` is a metric: a number at least 0, or null)."""
_USER_OTHER = {"jobs": int}
_TIMELINE = ("t", "busy", "queued", "up")
_TRACE_TYPES = {"file": str, "stream": str, "kill": bool, "jobs": int, "notes": list}


def check_batch_row(row: Any, i: int) -> None:
    """One row of a cluster log's results (``"workload": "batch"``): a scheduler, the
    :data:`BATCH_METRICS` (numbers, or null), ``jobs`` records with ``job``, ``submit``, ``start``,
    ``end`` and ``procs`` (numbers >= 0; ``start`` may be null for a job lost to a failure) and an
    optional ``timeline`` (``t``, ``busy``, ``queued`` and optionally ``up``: lists of numbers >= 0 of
    one length, ``t`` not decreasing).  :class:`_Bad` with the path of the first misfit.  O(jobs + points)."""
    at = ("results", i)
    if not isinstance(row, dict) or "scheduler" not in row:
        raise _Bad(at, f"a result must be an object with a scheduler, metrics and jobs, got {_shown(row)}")
    for key in BATCH_METRICS:
        if key not in row:
            raise _Bad(at, f"the result has no {key!r}; give the JSON written by `simsched run --json`")
    jobs = row.get("jobs")
    if not isinstance(jobs, list):
        raise _Bad((*at, "jobs"), f"must be the list of job records, got {_shown(jobs)}")
    for key, value in row.items():  # every metric a number or null; ids, counts and names of their type
        if key in _BATCH_ROW_OTHER:
            _typed(value, _BATCH_ROW_OTHER[key], (*at, key))
        elif key not in ("jobs", "timeline", "per_user"):
            _number(value, (*at, key), null=True)
    _check_seed_space(row, at)
    for j, job in enumerate(jobs):
        where = (*at, "jobs", j)
        if not isinstance(job, dict) or any(k not in job for k in _BATCH_JOB):
            raise _Bad(where, f"a job record needs {', '.join(_BATCH_JOB)}")
        for k, v in job.items():
            if k in _BATCH_JOB_OTHER:
                _typed(v, _BATCH_JOB_OTHER[k], (*where, k))
            else:
                _number(v, (*where, k), null=k in ("start", "end"))
    per_user = row.get("per_user")
    if per_user is not None:
        if not isinstance(per_user, dict):
            raise _Bad((*at, "per_user"), f"must be an object of user -> {{jobs, wait_mean, bsld_mean}}, got "
                                          f"{_shown(per_user)}")
        for user, figures in per_user.items():
            if not isinstance(figures, dict):
                raise _Bad((*at, "per_user", user), f"must be an object {{jobs, wait_mean, bsld_mean}}, got "
                                                    f"{_shown(figures)}")
            _record(figures, (*at, "per_user", user), "the user's figures", ("jobs",), _USER_OTHER, (), ())
    timeline = row.get("timeline")
    if timeline is None:
        return
    if not isinstance(timeline, dict) or not all(isinstance(timeline.get(k), list) for k in _TIMELINE[:3]):
        raise _Bad((*at, "timeline"), "must be an object of lists t, busy and queued (and optionally up)")
    size = len(timeline["t"])
    for k in _TIMELINE:
        values = timeline.get(k)
        if values is None and k == "up":
            continue
        if not isinstance(values, list) or len(values) != size:
            raise _Bad((*at, "timeline", k), f"must be a list of {size} numbers, as long as t")
        for idx, v in enumerate(values):
            _number(v, (*at, "timeline", k, idx))
    if any(b < a for a, b in zip(timeline["t"], timeline["t"][1:])):
        raise _Bad((*at, "timeline", "t"), "times must not decrease")


def _check_seed_space(row: dict[str, Any], at: tuple[Any, ...]) -> None:
    """A row's ``seed_space``, when it has one, is the space its seed lies in (:func:`~simsched.run.
    seedspace.space_of`): a row cannot claim evaluation days it did not run."""
    space = row.get("seed_space")
    if space is not None and isinstance(row.get("seed"), int) and space != space_of(row["seed"]):
        raise _Bad((*at, "seed_space"), f"{_shown(space)} is not the space of seed {row['seed']} "
                                        f"({space_of(row['seed'])}); give the JSON written by `simsched run --json`")


def _check_identity(doc: dict[str, Any]) -> None:
    """Who wrote the document: ``scenario`` and ``simsched_version`` are text where present."""
    for key in ("scenario", "simsched_version"):
        if key in doc and not isinstance(doc[key], str):
            raise _Bad((key,), f"must be text, got {_shown(doc[key])}")


def _check_batch_head(doc: dict[str, Any]) -> None:
    """A cluster log's document: ``processors`` a whole number at least 1 (the machine every utilisation
    is a share of), ``schedulers`` a list of names, ``trace`` an object of its file or stream, kill flag,
    job count and notes (text)."""
    if "processors" in doc:
        n = doc["processors"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= limits.MAX_INT:
            raise _Bad(("processors",), f"must be a whole number of processors of at least 1, got {_shown(n)}")
    names = doc.get("schedulers", [])
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
        raise _Bad(("schedulers",), f"must be a list of scheduler names, got {_shown(names)}")
    trace = doc.get("trace", {})
    if not isinstance(trace, dict):
        raise _Bad(("trace",), f"must be an object (file or stream, kill, jobs, notes), got {_shown(trace)}")
    for key, value in trace.items():
        kind = _TRACE_TYPES.get(key)
        if kind is None:
            raise _Bad(("trace", key), "is not a field of a cluster log's trace (file, stream, kill, jobs, notes)")
        _typed(value, kind, ("trace", key))
    if not all(isinstance(n, str) for n in trace.get("notes", ())):
        raise _Bad(("trace", "notes"), "must be a list of text notes")


def check_document(doc: Any, schedules: bool = True) -> None:
    """The shape and values a report needs (see :func:`check_row`, and :func:`check_batch_row` for a
    cluster log's document; ``schedules``: every task-graph row has its schedule); :class:`_Bad` otherwise."""
    if isinstance(doc, dict) and "rows" in doc and "seed_space" in doc and "results" not in doc:
        raise _Bad((), "this is a generalisation matrix (`simsched generalise --json`), not results of `simsched "
                       "run`: its page is written by `simsched generalise --html`")
    if isinstance(doc, dict) and doc.get("workload") == "batch-windows":
        raise _Bad(("workload",), "windows of a cluster log (`workload: batch-windows`) have no report page: "
                                  "`simsched run` prints their summary, and the rows per window are under results")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise _Bad((), "not a results document: expected {\"results\": [...]} as written by `simsched run --json`")
    if not doc["results"]:
        raise _Bad(("results",), "the results document has no results")
    _check_identity(doc)
    if doc.get("workload") == "batch":
        _check_batch_head(doc)
        for i, row in enumerate(doc["results"]):
            check_batch_row(row, i)
        return
    for key in ("lower_bound",):
        if key in doc:
            _number(doc[key], (key,), null=True)
    problem = doc.get("problem")
    if problem is not None and not (isinstance(problem, dict) and isinstance(problem.get("processors", []), list)
                                    and isinstance(problem.get("kinds", {}), dict)):
        raise _Bad(("problem",), "must be an object with a list of processors and a mapping of kinds")
    _check_network(doc.get("network"), len((problem or {}).get("processors") or ()))
    for i, row in enumerate(doc["results"]):
        check_row(row, i, schedules)


def _check_network(network: Any, m: int) -> None:
    """The optional ``network`` section (:func:`network_section`): ``edges`` as ``[producer,
    consumer, data]`` with data a number at least 0, and ``latency`` and ``inv_bandwidth`` as
    ``m x m`` matrices (``m`` processors) of numbers at least 0 or null.  O(edges + m²)."""
    if network is None:
        return
    if not isinstance(network, dict):
        raise _Bad(("network",), f"must be an object with edges, latency and inv_bandwidth, got {_shown(network)}")
    edges = network.get("edges", [])
    if not isinstance(edges, list):
        raise _Bad(("network", "edges"), f"must be a list, got {_shown(edges)}")
    for k, edge in enumerate(edges):
        if (not isinstance(edge, list) or len(edge) != 3
                or not all(isinstance(t, (str, int)) and not isinstance(t, bool) for t in edge[:2])):
            raise _Bad(("network", "edges", k), f"an edge is [producer, consumer, data], got {_shown(edge)}")
        _number(edge[2], ("network", "edges", k, 2))
    for key in ("latency", "inv_bandwidth"):
        matrix = network.get(key)
        if matrix is None and not edges:
            continue
        if not isinstance(matrix, list) or len(matrix) != m or not all(isinstance(r, list) and len(r) == m
                                                                        for r in matrix):
            raise _Bad(("network", key), f"must be a {m} x {m} matrix (one row and column per processor)")
        for a, row in enumerate(matrix):
            for b, value in enumerate(row):
                _number(value, ("network", key, a, b), null=True)


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


def json_line(text: str, path: Sequence[Any]) -> int | None:
    """The 1-based line where the value at ``path`` (object keys and list indexes) sits in JSON
    ``text`` — the line of its key inside an object — or ``None`` when the path is not there.  One
    linear scan of the tokens, only when an error is reported: O(len(text))."""
    target = tuple(path)
    if not target:
        return 1
    stack: list[list[Any]] = []  # per open container: [is_object, key or index, expecting a key]
    line, last = 1, 0
    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        if tok in ",:":
            if stack:
                top = stack[-1]
                if tok == ",":
                    if top[0]:
                        top[2] = True
                    else:
                        top[1] += 1
                else:
                    top[2] = False
            continue
        if tok in "}]":
            if stack:
                stack.pop()
            continue
        if stack and stack[-1][0] and stack[-1][2]:  # a key
            with contextlib.suppress(ValueError):
                stack[-1][1] = json.loads(tok)
            if len(stack) == len(target) and tuple(e[1] for e in stack) == target:
                return line + text.count("\n", last, pos)
            continue
        if len(stack) == len(target) and stack and not stack[-1][0] and tuple(e[1] for e in stack) == target:
            return line + text.count("\n", last, pos)
        if tok in "{[":
            line += text.count("\n", last, pos)
            last = pos
            stack.append([tok == "{", 0, tok == "{"])
    return None


def load_document(path: str | Path, *, schedules: bool = True) -> dict[str, Any]:
    """The results document at ``path``, checked (:func:`check_document`): at most ``max_file_mb`` and
    ``max_depth`` deep, a ``results`` list whose rows have a scheduler, a seed (in the seed space the row
    names), the :data:`REQUIRED_METRICS` and (with ``schedules``) a ``schedule`` of task records, every
    metric a finite non-negative number (or null where a run may leave it undefined), no ``NaN`` or
    ``Infinity``, the scenario and version text; a cluster log's document with its machine's processors
    and per-user figures typed.  The one reader of results documents: ``report``, the energy table.
    :class:`SimschedError` naming the file, the line and the field.  O(size of the file)."""
    p = Path(path)
    raw = limits.read_input(p)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SimschedError(f"not UTF-8 text (byte {exc.start}); give the JSON written by `simsched run --json`",
                            file=p, line=raw[: exc.start].count(b"\n") + 1) from None

    def no_constant(name: str) -> Any:
        raise SimschedError(f"{name} is not a number JSON allows (`simsched run --json` writes null)", file=p,
                            line=text.count("\n", 0, max(text.find(name), 0)) + 1)

    try:
        doc = json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise SimschedError("the JSON is nested too deeply", file=p) from None
    except json.JSONDecodeError as exc:
        wanted = ("`simsched report` reads the results of `simsched run SCENARIO --json FILE.json` (or a sweep's "
                  ".csv/.parquet)")
        if p.suffix.lower() in (".yaml", ".yml"):
            raise SimschedError(f"this is a YAML file (a scenario?), not results; {wanted}: run the scenario "
                                f"first, e.g. simsched run {p} --json out/results.json", file=p) from None
        raise SimschedError(f"not valid JSON: {exc.msg}; {wanted}", file=p, line=exc.lineno) from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        long = re.search(r"\d{4301,}", text)
        raise SimschedError("a number of more than 4300 digits is not one a run writes", file=p,
                            line=text.count("\n", 0, long.start()) + 1 if long else None) from None
    limits.check_depth(limits.data_depth(doc, limits.current().max_depth), file=p)
    try:
        check_document(doc, schedules)
    except _Bad as bad:
        raise SimschedError(bad.message, file=p, line=json_line(text, bad.path),
                            field=_dotted(bad.path) or None) from None
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
    from simsched.run.lazyjson import EdgeRecords

    return {"edges": EdgeRecords(problem.graph),  # read from the graph's arrays when written: O(1) here
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
