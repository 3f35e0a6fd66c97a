"""A hostile-input campaign generated from the scenario schema and the command table (issue #33).

Nothing here is written per field or per option.  The campaign

* walks every pydantic model reachable from the scenario's top level (:class:`ScenarioModel`), from the
  sections the top level keeps as plain mappings (:data:`SECTIONS`: ``workload`` forms, ``workload.stream``,
  ``failures``, ``stragglers``, ``autotuning``), from the ``capacity:`` section's field table and from the
  study file (:class:`StudyModel`), and every option and argument of every command of the Typer app;
* gives each field or option hostile values *of its kind*, the kind read from its annotation
  (:func:`kind_of`; :data:`FIELD_KINDS` overrides only where the type says too little: a ``str`` that
  is a path to a CSV file);
* runs each case in a forked child (the command's real entry point, ``resource.setrlimit`` of
  :data:`MEMORY_MB` more address space than the child starts with, killed after :data:`TIME_S` seconds)
  in a fresh directory, and holds it to the contract of ``docs/robustness.md``: exit 2 with ONE
  ``error:`` line that names the file, field or option, or (only when the value is legal by the
  field's own declared constraints) exit 0; never a traceback, a hang or a memory blow-up; nothing
  written on exit 2; every input byte-identical afterwards;
* counts fields and options and FAILS when one of them got no case (a field added tomorrow is
  attacked tomorrow: a new model reachable from the schema is walked; a new mapping section that the
  walk cannot type is reported as not attacked until it is named in :data:`SECTIONS`).

``python -m simsched.cli.hostile --all`` runs all of it and prints the summary table; ``--sample N``
runs a deterministic sample (the CI sample of ``tests/test_hostile.py``).  Outputs onto a file the
scenario reads indirectly (a stream's down-interval trace) must be refused like the rest: the read set
of :mod:`simsched.fileio`.

Cost: one fork per case (about 0.05-0.5 s each for the small bases used); the whole campaign is about
:func:`count_cases` cases.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import math
import os
import random
import resource
import signal
import sys
import tempfile
import time
import types
import typing
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from simsched import limits

TIME_S = 10.0
"""CPU-time bound of one case (user + system seconds of its child): a slower case is a hang."""

WALL_S = 120.0
"""Wall-clock bound of one case: the child is killed after it (a machine shared with other work may
stretch wall time, so the verdict is on CPU time; this bound catches a child that blocks)."""

MEMORY_MB = 1024
"""Address space a case may add to what its child starts with (``RLIMIT_AS``)."""


NON_UTF8 = "\u2603NONUTF8\u2603"
"""Placeholder replaced by the bytes ``b'\\xff\\xfe'`` after a document is dumped (YAML cannot hold them)."""


# --------------------------------------------------------------------------- the bases
def _platform() -> dict[str, Any]:
    return {"processors": [{"name": "P", "type": "cpu", "speed": 1.0, "cores": 1, "memory": 1000.0, "host": "h",
                            "count": 2},
                           {"name": "G", "type": "gpu", "speed": 2.0}],
            "network": {"bandwidth": 10.0, "latency": 0.1, "host_bandwidth": 100.0, "host_latency": 0.0},
            "links": [{"from": "P0", "to": "G", "bandwidth": 5.0, "latency": 0.0}],
            "affinity": {"conv": {"gpu": 2.0}}}


def _graph() -> dict[str, Any]:
    return {"name": "hostile", "description": "a small valid scenario", "seed": 1, "repetitions": 1,
            "platform": _platform(),
            "workload": {"tasks": [{"name": "a", "work": 2.0, "kind": "conv", "arrival": 0.0,
                                    "priority": 0.0, "memory": 1.0, "cores": 1},
                                   {"name": "b", "work": 1.0}],
                         "edges": [{"from": "a", "to": "b", "data": 1.0}]},
            "noise": {"model": "lognormal", "sigma": 0.1},
            "limits": {"max_tasks": 1000, "max_processors": 100, "max_memory_mb": 100.0},
            "schedulers": ["heft"]}


def _stream() -> dict[str, Any]:
    return {"platform": {**_platform(), "affinity": {}},
            "workload": {"stream": {"jobs": {"generator": "random", "tasks": [2, 4]},
                                    "arrivals": {"poisson": 0.1}, "count": 3, "deadline": {"slack": 2.0}}},
            "failures": {"mtbf": 1000.0, "mttr": 1.0, "types": {"gpu": {"mtbf": 2000.0, "mttr": 1.0}},
                         "processors": {"P0": {"mtbf": 3000.0, "mttr": 2.0}}, "trace": "down.csv"},
            "stragglers": {"rate": 0.001, "duration": 1.0, "slowdown": 2.0},
            "schedulers": ["mct"]}


def _traced() -> dict[str, Any]:
    doc = _stream()
    doc["workload"]["stream"] = {"jobs": {"name": "j", "generator": "random", "tasks": 3},
                                 "arrivals": {"trace": "arrivals.csv"}}
    return doc


def _cluster() -> dict[str, Any]:
    return {"platform": {"processors": [{"name": "node", "type": "cpu", "count": 4}]},
            "workload": {"stream": {"swf": "jobs.swf", "limit": 3, "scale": 1.0}},
            "schedulers": ["easy-backfill"]}


def _autotuning() -> dict[str, Any]:
    params = {"compile_mean_s": 1.0, "compile_sigma": 0.1, "measure_overhead_s": 0.1, "number": 1, "repeat": 1,
              "min_repeat_ms": 0.0, "kernel_time_s": 0.001, "kernel_sigma": 0.1, "update_base_s": 0.1,
              "update_per_sample_s": 0.001, "update_threads": 1, "peak_flops": 1e12}
    job = {"name": "j", "tasks": [{"name": "t", "op": "conv", "flops": 1e9, "weight": 1}], "trials_per_task": 8,
           "batch_size": 4, "target": "gpu", "arrival_h": 0.0, "count": 1, "task_scheduler": "round-robin",
           "params": params}
    return {"seed": 0, "autotuning": {
        "servers": [{"name": "s", "cores": 4, "gpus": 1, "count": 1}], "jobs": [job],
        "arrivals": {"rate_per_hour": 0.5, "duration_h": 1.0, "jobs": [copy.deepcopy(job)]},
        "interference": {"cpu_slowdown": 0.5, "distortion_penalty": 0.1},
        "policies": ["sequential"], "objective": {"quantile": 0.9, "within_h": 10.0},
        "capacity": {"max_servers": 4, "policies": ["sequential"]}}}


def _capacity() -> dict[str, Any]:
    doc = _graph()
    doc["platform"]["links"] = []  # the capacity sets G's count: G becomes G0, G1, ...
    doc["capacity"] = {"objective": "makespan <= 100", "resource": "G", "days": 2, "on_days": 0.5, "max": 4,
                       "schedulers": ["heft"]}
    return doc


def _study() -> dict[str, Any]:
    return {"name": "hostile study", "description": "a small valid study", "scenario": "s.yaml",
            "grid": {"workload.edges[0].data": [1.0, 2.0]}, "points": [{"noise.sigma": 0.2}], "schedulers": ["heft"],
            "seeds": [0]}


DOWN_CSV = "processor,start,end\nP0,5,6\n"
JOBS_SWF = ("; MaxProcs: 4\n"
            "1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
            "2 1 0 5 4 -1 -1 4 5 -1 1 1 1 -1 -1 -1 -1 -1\n"
            "3 2 0 3 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n")
ARRIVALS_CSV = "time,job,deadline,priority\n0,j,100,1\n1,j,,\n"

BASES: dict[str, tuple[Callable[[], dict[str, Any]], list[str]]] = {
    "graph": (_graph, ["run", "s.yaml"]),
    "stream": (_stream, ["run", "s.yaml"]),
    "traced": (_traced, ["run", "s.yaml"]),
    "cluster": (_cluster, ["run", "s.yaml"]),
    "autotuning": (_autotuning, ["validate", "s.yaml"]),
    "capacity": (_capacity, ["capacity", "s.yaml"]),
    "study": (_study, ["sweep", "study.yaml", "--output", "out.csv"]),
}
"""Each base: a valid document and the command that reads it (``s.yaml``, or ``study.yaml`` beside a graph
scenario ``s.yaml``).  Every case directory also holds ``down.csv`` and ``arrivals.csv``."""


# --------------------------------------------------------------------------- the schema walk
@dataclass(frozen=True)
class FieldTarget:
    """One field of one model at one place of one base document."""

    model: str
    name: str
    path: tuple[Any, ...]
    annotation: Any
    base: str
    metadata: tuple[Any, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.model}.{self.name}"

    @property
    def dotted(self) -> str:
        return ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in self.path).replace(".[", "[")


def _sections() -> dict[str, tuple[type[BaseModel], str]]:
    from simsched.scenario.autotuning import AutotuningSection
    from simsched.scenario.schema import InlineWorkload
    from simsched.scenario.stream import BatchTraceSection, FailuresSection, StragglersSection, StreamSection

    return {"workload": (InlineWorkload, "graph"), "workload.stream": (StreamSection, "stream"),
            "workload.stream (cluster log)": (BatchTraceSection, "cluster"),
            "failures": (FailuresSection, "stream"), "stragglers": (StragglersSection, "stream"),
            "autotuning": (AutotuningSection, "autotuning")}


SECTIONS = _sections
"""The override table of the walk: the scenario fields the top-level model keeps as ``dict[str, Any]``
(their shape depends on a registry or on other fields), with the model that types each and its base."""

FIELD_KINDS: dict[str, str] = {
    "ArrivalsSpec.trace": "csv-arrivals",
    "FailuresSection.trace": "csv-down",
    "BatchTraceSection.swf": "csv-swf",
    "BatchTraceSection.gpu_trace": "csv-gpu",
    "CarbonSection.trace": "csv-carbon",
    "StudyModel.scenario": "path",
}
"""Kinds the annotation cannot tell: strings that are paths to files of a given shape."""


def _models(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    """Models inside ``annotation`` and how they are reached: ``"one"``, ``"list"`` or ``"dict"``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "one")]
    if origin is Annotated:
        return _models(args[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in args for m in _models(a)]
    if origin in (list, tuple, Sequence):
        return [(m, "list") for a in args for m, _ in _models(a)]
    if origin is dict and len(args) == 2:
        return [(m, "dict") for m, _ in _models(args[1])]
    return []


def _get(doc: Any, path: Sequence[Any]) -> Any:
    node = doc
    for p in path:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, list) and isinstance(p, int) and p < len(node):
            node = node[p]
        else:
            return None
    return node


def walk_schema(roots: Sequence[tuple[type[BaseModel], str]] = ()) -> list[FieldTarget]:
    """Every field of every model reachable from the scenario file and from ``roots`` (more top-level
    models with their base, e.g. the study file's :class:`~simsched.study.spec.StudyModel` and
    ``"study"``: the caller passes what lives on this floor), each at a place of a base document where
    the rest is valid.  O(fields)."""
    from simsched.capacity.question import SECTION_FIELDS as _SECTION_FIELDS
    from simsched.scenario.schema import ScenarioModel

    sections = SECTIONS()
    out: list[FieldTarget] = []

    def walk(model: type[BaseModel], path: tuple[Any, ...], base: str, seen: tuple[type, ...]) -> None:
        doc = BASES[base][0]()
        for name, info in model.model_fields.items():
            key = info.alias or name
            here = (*path, key)
            out.append(FieldTarget(model.__name__, name, here, info.annotation, base, tuple(info.metadata)))
            for sub, how in _models(info.annotation):
                if sub in seen:
                    continue
                node = _get(doc, here)
                if how == "list":
                    walk(sub, (*here, 0), base, (*seen, sub))
                elif how == "dict":
                    first = next(iter(node), "x") if isinstance(node, dict) else "x"
                    walk(sub, (*here, first), base, (*seen, sub))
                else:
                    walk(sub, here, base, (*seen, sub))
            dotted = ".".join(str(p) for p in here)
            if dotted in sections:
                sub, sub_base = sections[dotted]
                walk(sub, here, sub_base, (*seen, sub))
                if dotted == "workload":  # the stream forms live under workload too
                    for form in ("workload.stream", "workload.stream (cluster log)"):
                        sub, sub_base = sections[form]
                        walk(sub, (*here, "stream"), sub_base, (*seen, sub))

    walk(ScenarioModel, (), "graph", (ScenarioModel,))
    for name, kind in _SECTION_FIELDS.items():
        out.append(FieldTarget("CapacitySection", name, ("capacity", name), kind, "capacity"))
    for model, base in roots:
        walk(model, (), base, (model,))
    # the traced stream's fields are attacked again on a base with a trace
    for t in list(out):
        if t.model == "ArrivalsSpec" and t.name == "trace":
            out.append(dataclasses.replace(t, base="traced"))
    return out


def unreached_models(roots: Sequence[tuple[type[BaseModel], str]] = ()) -> list[str]:
    """Input models (subclasses of :class:`~simsched.scenario.schema.NumbersChecked` imported so far)
    that the walk does not reach: a section added as a plain mapping and not named in :data:`SECTIONS`."""
    import simsched.scenario.autotuning  # noqa: F401  (their models register as subclasses)
    import simsched.scenario.stream  # noqa: F401
    from simsched.scenario.schema import NumbersChecked

    reached = {t.model for t in walk_schema(roots)}
    found: list[str] = []
    stack = list(NumbersChecked.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.model_fields and not cls.__name__.startswith("_") and cls.__name__ not in reached:
            found.append(f"{cls.__module__}.{cls.__name__}")
    return sorted(found)


# --------------------------------------------------------------------------- kinds and values
def kind_of(annotation: Any, key: str = "") -> str:
    """The kind of a field from its annotation: ``float``, ``int``, ``bool``, ``str``, ``choice``,
    ``list``, ``map``, ``model`` or ``any`` (:data:`FIELD_KINDS` first).  O(size of the annotation)."""
    if key in FIELD_KINDS:
        return FIELD_KINDS[key]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return kind_of(args[0])
    if origin in (typing.Union, types.UnionType):
        kinds = [kind_of(a) for a in args if a is not type(None)]
        for k in ("float", "int", "model", "list", "map", "choice", "str", "bool"):
            if k in kinds:
                return k
        return "any"
    if origin is typing.Literal:
        return "choice"
    if annotation is bool:
        return "bool"
    if annotation is float:
        return "float"
    if annotation is int:
        return "int"
    if annotation is str:
        return "str"
    if origin in (list, tuple) or annotation in (list, tuple):
        return "list"
    if origin is dict or annotation is dict:
        return "map"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model"
    return "any"


_NUMBERS: list[tuple[str, Any]] = [("zero", 0), ("minus one", -1), ("NaN", math.nan), ("+inf", math.inf),
                                   ("-inf", -math.inf), ("1e300", 1e300), ("2**63", 2**63), ("bool", True),
                                   ("string", "x"), ("list", [1]), ("1e9", 1e9), ("fraction", 2.5)]
_INTS: list[tuple[str, Any]] = [*[(k, v) for k, v in _NUMBERS if k != "1e9"], ("10**9", 10**9),
                                ("just over max_jobs", limits.Limits().max_jobs + 1),
                                ("just over max_tasks", limits.Limits().max_tasks + 1)]
_STRINGS: list[tuple[str, Any]] = [("empty", ""), ("1 MB", "x" * 1_000_000), ("control characters", "\x00\x07\x1b[31m"),
                                   ("superscript digits", "²x³"), ("300 bytes", "a" * 300), ("non-UTF-8", NON_UTF8),
                                   ("number", 12), ("list", ["a"]), ("mapping", {"a": 1})]
VALUES: dict[str, list[tuple[str, Any]]] = {
    "float": _NUMBERS,
    "int": _INTS,
    "bool": [("string", "yes"), ("number", 2), ("list", [True])],
    "str": _STRINGS,
    "choice": [("unknown", "nope"), ("empty", ""), ("number", 1), ("null", None), ("non-UTF-8", NON_UTF8)],
    "list": [("empty", []), ("string", "x"), ("number", 1), ("nulls", [None, None]),
             ("200k numbers", [0] * 200_000), ("nested", [[[[[]]]]])],
    "map": [("list", []), ("string", "x"), ("number", 1), ("empty", {}), ("deep", {"a": {"b": {"c": {"d": 1}}}})],
    "model": [("null", None), ("string", "x"), ("list", []), ("number", 1), ("empty", {})],
    "any": [("string", "x"), ("number", 1), ("list", []), ("empty map", {}), ("null", None)],
}
"""Hostile values per kind (scenario fields; the option values are :data:`OPTION_VALUES`)."""

PATH_CASES = ["missing", "directory", "fifo", "/dev/zero", "300-byte name", "symlink loop", "binary",
              "non-UTF-8"]
CSV_CASES = {
    "csv-arrivals": {"binary": b"\x00\x01\x02time,job\n\xff\xfe", "non-UTF-8": b"time,job\n0,j\xff\n",
                     "huge field": b"time,job\n0," + b"j" * 200_000 + b"\n",
                     "duplicated header": b"time,job,time\n0,j,0\n", "extra column": b"time,job,colour\n0,j,red\n",
                     "unsorted rows": b"time,job\n5,j\n1,j\n", "1e300 time": b"time,job\n1e300,j\n",
                     "1e300 deadline": b"time,job,deadline\n0,j,1e300\n", "empty": b"",
                     "only header": b"time,job\n", "200k rows": b"time,job\n" + b"0,j\n" * 200_000,
                     "job path 300 bytes": b"time,job\n0," + b"a" * 300 + b".json\n"},
    "csv-down": {"binary": b"\x00\x01processor,start,end\n", "non-UTF-8": b"processor,start,end\nP0,\xff,1\n",
                 "huge field": b"processor,start,end\n" + b"P" * 200_000 + b",0,1\n",
                 "duplicated header": b"processor,start,end,end\nP0,0,1,2\n",
                 "extra column": b"processor,start,end,why\nP0,0,1,x\n",
                 "unsorted rows": b"processor,start,end\nP0,5,6\nP0,1,2\n",
                 "1e300 end": b"processor,start,end\nP0,0,1e300\n",
                 "empty": b"", "inf end": b"processor,start,end\nP0,0,inf\n"},
}
CSV_CASES["csv-swf"] = {
    "binary": b"\x00\x01\x02 1 0 0 10 2\n", "non-UTF-8": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 \xff\n",
    "empty": b"", "only comments": b"; MaxProcs: 4\n",
    "wrong field count": b"1 0 0 10 2\n", "text field": b"1 0 0 ten 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "negative submit": b"1 -5 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "unsorted submits": b"1 9 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n2 1 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "duplicate ids": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n1 1 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "MaxProcs below a request": b"; MaxProcs: 2\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "1e300 run time": b"1 0 0 1e300 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "huge field": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 " + b"9" * 200_000 + b"\n",
    "200k rows": b"".join(b"%d %d 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n" % (i + 1, i) for i in range(200_000)),
    # what editors and other tools write around valid lines: the file must read as without them
    "byte-order mark": b"\xef\xbb\xbf" + JOBS_SWF.encode(), "CRLF and tabs": JOBS_SWF.replace(" ", "\t").replace(
        "\n", "\r\n").encode(),
    "10**6 processors": (b"1 0 0 10 1000000 -1 -1 1000000 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
                         b"2 1 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n"),
    "2**60 job number": b"1152921504606846976 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "comment after fields": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1 ; late\n",
}
CSV_CASES["csv-gpu"] = {
    "binary": b"\x00\x01job,submit,gpus,duration\n", "non-UTF-8": b"job,submit,gpus,duration\n1,0,\xff,1\n",
    "empty": b"", "duplicated header": b"job,submit,gpus,duration,gpus\n1,0,1,1,1\n",
    "extra column": b"job,submit,gpus,duration,colour\n1,0,1,1,red\n",
    "unsorted rows": b"job,submit,gpus,duration\n1,5,1,1\n2,1,1,1\n",
    "1e300 duration": b"job,submit,gpus,duration\n1,0,1,1e300\n", "text gpus": b"job,submit,gpus,duration\n1,0,x,1\n",
    "huge field": b"job,submit,gpus,duration\n" + b"1" * 200_000 + b",0,1,1\n",
    "byte-order mark": b"\xef\xbb\xbfjob,submit,gpus,duration\r\n1,0,1,1\r\n",
    "1e20 gpus": b"job,submit,gpus,duration\n1,0,1e20,1\n",
    "2**53+2 gpus": b"job,submit,gpus,duration\n1,0,9007199254740994,1\n",
    "quoted cells and a row of empty ones": b'"job","submit","gpus","duration","user"\n"a,1",0,1,1,"x ""y"""\n,,,,\n',
    "unterminated quote": b'job,submit,gpus,duration,user\n1,0,1,1,"x\n2,1,1,1,y\n',
    "NUL in a cell": b"job,submit,gpus,duration,user\n1,0,1,1,a\x00b\n",
}
CSV_CASES["csv-carbon"] = {
    "binary": b"\x00\x01time,intensity\n", "non-UTF-8": b"time,intensity\n0,\xff\n", "empty": b"",
    "unsorted rows": b"time,intensity\n5,100\n1,100\n", "negative": b"time,intensity\n0,-1\n",
    "NaN": b"time,intensity\n0,nan\n", "huge field": b"time,intensity\n0," + b"1" * 200_000 + b"\n",
    "duplicated header": b"time,intensity,time\n0,1,0\n",
    "byte-order mark": b"\xef\xbb\xbftime,intensity\r\n0,100\r\n", "1e300 intensity": b"time,intensity\n0,1e300\n",
}
"""CSV contents per CSV kind (each also gets the :data:`PATH_CASES`)."""


_ADAPTERS: dict[str, TypeAdapter[Any]] = {}
"""One pydantic adapter per field (built once: building one costs milliseconds)."""


def expected_refusal(target: FieldTarget, value: Any) -> bool:
    """Whether ``value`` breaks the field's own declared constraints (its annotation and metadata,
    checked by pydantic alone, plus the shared number rule for numeric kinds): then only exit 2 is
    right.  A value the declaration admits may also run (exit 0) if it stays inside the bounds."""
    if value is NON_UTF8:
        return True
    kind = kind_of(target.annotation, target.key)
    if kind in ("float", "int"):
        try:
            limits.not_a_number_check(value, integer=kind == "int", allow_inf=True)
        except ValueError:
            return True
        if isinstance(value, float) and math.isinf(value):
            return False  # some fields take .inf (memory, bandwidth)
    try:
        adapter = _ADAPTERS.get(target.key)
        if adapter is None:
            ann = Annotated[(target.annotation, *target.metadata)] if target.metadata else target.annotation
            adapter = _ADAPTERS[target.key] = TypeAdapter(ann)
        # a huge list or string is judged by its head: no declared constraint here is on a length
        adapter.validate_python(value[:10] if isinstance(value, (list, str)) and len(value) > 1000 else value)
    except ValidationError:
        return True
    except Exception:  # an annotation pydantic cannot adapt alone: decide nothing
        return False
    return False


# --------------------------------------------------------------------------- cases
@dataclass
class Case:
    """One hostile run: the files of its directory, the command line, what is expected."""

    target: str
    what: str
    argv: list[str]
    make: Callable[[], dict[str, bytes]] = dict
    special: dict[str, str] = field(default_factory=dict)
    extra: dict[str, bytes] = field(default_factory=dict)
    expect: str = "either"  # "refuse": only exit 2 is right; "either": exit 0 inside the bounds, or 2;
    # "run": only exit 0 is right (a base)
    expected_failure: str | None = None
    needles: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()  # files the command may replace when it runs (exit 0)

    @property
    def name(self) -> str:
        return f"{self.target} <- {self.what}"

    def files(self) -> dict[str, bytes]:
        """The files of the case's directory, built when the case runs (cases stay small in memory)."""
        return {**self.make(), **self.extra}


def _dump(doc: Any) -> bytes:
    text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False,
                     allow_unicode=True, width=10_000)
    return text.encode("utf-8").replace(NON_UTF8.encode("utf-8"), b"\xff\xfe")


def _set(doc: Any, path: Sequence[Any], value: Any) -> None:
    node = doc
    for p in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(p, {})
        else:
            node = node[p]
    node[path[-1]] = value


def _common_files() -> dict[str, bytes]:
    return {"down.csv": DOWN_CSV.encode(), "arrivals.csv": ARRIVALS_CSV.encode(), "jobs.swf": JOBS_SWF.encode(),
            "graph.s.yaml": _dump(_graph())}


def _base_files(base: str, doc: Any) -> tuple[dict[str, bytes], list[str]]:
    files = _common_files()
    make, argv = BASES[base]
    if base == "study":
        files["s.yaml"] = _dump(_graph())
        files["study.yaml"] = _dump(doc)
    else:
        files["s.yaml"] = _dump(doc)
    return files, list(argv)


def field_cases(target: FieldTarget) -> list[Case]:
    """The hostile cases of one schema field (its kind's values; a path or CSV kind's files)."""
    kind = kind_of(target.annotation, target.key)
    needles = (target.dotted.split(".")[0].split("[")[0], "input.file")
    cases = []
    doc_file = "study.yaml" if target.base == "study" else "s.yaml"
    if kind.startswith("csv") or kind == "path":
        contents = CSV_CASES.get(kind, {})
        for what in [*PATH_CASES, *contents]:
            case = Case(f"{target.base}:{target.dotted}", what, list(BASES[target.base][1]),
                        _maker(target, "input.file"), expect="either", needles=needles)
            _path_case(case, "input.file", what, contents)
            if what in PATH_CASES:
                case.expect = "refuse"
            cases.append(case)
        return cases
    for what, value in VALUES[kind]:
        cases.append(Case(f"{target.base}:{target.dotted}", what, list(BASES[target.base][1]), _maker(target, value),
                          expect="refuse" if expected_refusal(target, value) else "either",
                          needles=(doc_file, *needles)))
    return cases


REPLACES: dict[str, tuple[str, ...]] = {"BatchTraceSection.gpu_trace": ("swf",)}
"""Fields that stand instead of others of the base (exactly one of them is allowed): a case of the field
drops those, or every case would be refused for the pair, not for its own value, and the field's
contents would never be read (a GPU trace's were not, in the cluster base that names an SWF log)."""

NEEDS_POWER = ("carbon", "prices")
"""Platform sections that need a power model beside them: a case of one of their fields gets a valid
``platform.power`` (the graph base has none, so every carbon case was refused for that, and the carbon
trace's contents were never read)."""


def _maker(target: FieldTarget, value: Any) -> Callable[[], dict[str, bytes]]:
    def make() -> dict[str, bytes]:
        doc = BASES[target.base][0]()
        _set(doc, target.path, value)
        parent = _get(doc, target.path[:-1])
        for other in REPLACES.get(target.key, ()):
            if isinstance(parent, dict):
                parent.pop(other, None)
        platform = doc.get("platform") if isinstance(doc, dict) else None
        if (isinstance(platform, dict) and "power" not in platform and target.path[:1] == ("platform",)
                and any(p in NEEDS_POWER for p in target.path[1:2])):
            platform["power"] = {"types": {"cpu": {"idle": 10.0, "busy": 100.0}, "gpu": {"idle": 30.0, "busy": 250.0}}}
        return _base_files(target.base, doc)[0]
    return make


def _path_case(case: Case, name: str, what: str, contents: dict[str, bytes]) -> None:
    """Make ``name`` in the case directory the hostile path ``what``."""
    if what == "missing":
        return
    if what in contents:
        case.extra[name] = contents[what]
    elif what in ("directory", "fifo", "symlink loop"):
        case.special[name] = what
    elif what == "/dev/zero":
        case.special[name] = "link:/dev/zero"
    elif what == "300-byte name":
        case.special[name] = "link:" + "n" * 300
    elif what == "binary":
        case.extra[name] = bytes(range(256)) * 4
    elif what == "non-UTF-8":
        case.extra[name] = b"\xff\xfe\x00bad"


def base_cases() -> list[Case]:
    """Each base as it is: it must run (exit 0).  A base that stopped being valid would make every
    case built on it pass for the wrong reason (the base's own error), so this is checked first."""
    out = []
    for base, (make, argv) in BASES.items():
        out.append(Case(f"base:{base}", "as written", list(argv), lambda b=base, m=make: _base_files(b, m())[0],
                        expect="run"))
    for command, argv in COMMAND_BASES.items():
        if command.split()[0] not in UNCHECKED_BASES:
            out.append(Case(f"base:{command}", "as written", list(argv), _option_files, expect="run"))
    return out


UNCHECKED_BASES = ("bench", "train", "docs", "check", "adversary", "baseline")
"""Commands whose base invocation is not required to run: benchmarks, trainings and searches take
minutes, ``baseline compare`` needs a recorded baseline; their options are attacked all the same."""


def document_cases() -> list[Case]:
    """Hostile scenario documents as a whole: anchors and aliases (a billion laughs), nesting deeper
    than ``max_depth``, a binary file, non-UTF-8 bytes, duplicated keys, a file over ``max_yaml_mb``."""
    files = _common_files()
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8))
    docs = {
        "anchors and aliases (billion laughs)": laughs.encode(),
        "nested 10,000 deep": ("x: " + "[" * 10_000 + "]" * 10_000 + "\n").encode(),
        "binary": bytes(range(256)) * 16,
        "non-UTF-8": _dump(_graph()) + b"\n# \xff\xfe\n",
        "duplicated keys": _dump(_graph()) + b"seed: 2\n",
        "5 MB": _dump(_graph()) + b"#" + b"x" * (5 * 2**20) + b"\n",
        "empty": b"",
    }
    out = []
    for what, data in docs.items():
        for command in ("run", "validate"):
            out.append(Case(f"document:{command}", what, [command, "s.yaml"], lambda d=data: {**files, "s.yaml": d},
                            expect="refuse", needles=("s.yaml",)))
    return out


# --------------------------------------------------------------------------- the command table
@dataclass(frozen=True)
class OptionTarget:
    """One option or argument of one command."""

    command: tuple[str, ...]
    name: str
    opts: tuple[str, ...]
    annotation: Any
    required: bool
    argument: bool
    minimum: Any = None
    maximum: Any = None

    @property
    def key(self) -> str:
        return " ".join(self.command) + " " + (self.opts[0] if self.opts and not self.argument else self.name)


def walk_commands(app: Any) -> list[OptionTarget]:
    """Every parameter of every (sub)command of the Typer ``app``.  O(parameters)."""
    import typer

    out: list[OptionTarget] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
            return
        for p in cmd.params:
            ann = getattr(getattr(p, "type_descriptor", None), "annotation", str)
            argument = type(p).__name__.endswith("Argument")
            out.append(OptionTarget(path, p.name or "", tuple(p.opts or ()), ann, bool(p.required), argument,
                                    getattr(p, "min", None), getattr(p, "max", None)))

    walk(typer.main.get_command(app), ())
    return out


COMMAND_BASES: dict[str, list[str]] = {
    "run": ["run", "s.yaml"], "validate": ["validate", "s.yaml"], "capacity": ["capacity", "c.yaml"],
    "sweep": ["sweep", "study.yaml", "--output", "out.csv"], "summarize": ["summarize", "results.csv"],
    "plot": ["plot", "results.csv", "--x", "seed", "--y", "makespan", "--output", "p.png"],
    "report": ["report", "results.csv", "--output", "r.html"],
    "bench": ["bench", "streams", "--size", "2x2"], "check": ["check", "heft", "--examples", "2"],
    "adversary": ["adversary", "heft", "cpop", "--tasks", "4", "--iterations", "2", "--out", "adv"],
    "baseline record": ["baseline", "record", "s.yaml", "--output", "b.json"],
    "baseline compare": ["baseline", "compare", "b.json"],
    "workload info": ["workload", "info", "w.json"], "workload convert": ["workload", "convert", "w.json", "w2.json"],
    "train deepsched": ["train", "deepsched", "s.yaml"], "train rl": ["train", "rl", "graph.s.yaml"],
    "explain greedy-gap": ["explain", "greedy-gap", "--tasks", "4", "--processors", "2", "--tries", "2"],
    "docs generate": ["docs", "generate", "--check"],
    "generalise": ["generalise", "s.yaml", "-s", "mct", "--cell", "fresh days", "--days", "2"],
    "explain gantt": ["explain", "gantt", "graph.s.yaml", "--out", "g.html"],
    "explain graph": ["explain", "graph", "graph.s.yaml", "--out", "g.png"],
}
"""A valid-looking invocation per command, onto which one hostile option is put (replacing the option
when the base has it).  ``train rl`` on a stream scenario (``s.yaml``) trains for its budget, so its
base is the graph scenario, read as a training config: every option is checked before it is refused.
A command not named here gets its required arguments filled by their kind
(a path: the scenario ``s.yaml``; a string: ``x``)."""


def _command_base(t: OptionTarget, targets: Sequence[OptionTarget]) -> list[str]:
    key = " ".join(t.command)
    if key in COMMAND_BASES:
        return list(COMMAND_BASES[key])
    if t.command and t.command[0] == "explain":
        return ["explain", *t.command[1:], "graph.s.yaml"]
    argv = list(t.command)
    for other in targets:
        if other.command == t.command and other.argument and other.required:
            argv.append("s.yaml" if "Path" in str(other.annotation) else "x")
    return argv


OPTION_VALUES: dict[str, list[tuple[str, str, bool]]] = {
    "int": [("zero", "0", False), ("minus one", "-1", False), ("2**63", str(2**63), True),
            ("10**9", "1000000000", False), ("1e9", "1e9", True), ("superscript", "²", True), ("NaN", "nan", True),
            ("empty", "", True), ("string", "x", True)],
    "float": [("zero", "0", False), ("minus one", "-1", False), ("NaN", "nan", True), ("+inf", "inf", True),
              ("-inf", "-inf", True), ("1e300", "1e300", True), ("string", "x", True), ("empty", "", True),
              ("superscript", "²", True)],
    "str": [("empty", "", False), ("1 MB", "x" * 1_000_000, False), ("control characters", "\x07\x1b[31m", False),
            ("superscript digits", "²x³", False), ("non-UTF-8", "\udcff\udcfe", False),
            ("huge size", "1000000000x10", False), ("300 bytes", "a" * 300, False)],
    "path": [("missing", "nope/missing.yaml", True), ("directory", "adir", True), ("fifo", "afifo", True),
             ("/dev/zero", "/dev/zero", True), ("300-byte name", "n" * 300, True), ("symlink loop", "loop", True),
             ("binary", "binary.bin", True), ("the scenario itself", "s.yaml", True),
             ("a file the scenario reads indirectly", "down.csv", True)],
    "bool": [("given a value", "=x", True)],
}
"""Hostile option values per kind: ``(what, text, refuse)``; ``refuse``: only exit 2 is right."""

OUTPUT_HINTS = ("output", "out", "json", "gantt", "plot", "html", "csv", "trace", "save", "target", "report")


def option_kind(t: OptionTarget) -> str:
    ann = t.annotation
    text = str(ann)
    if ann is bool:
        return "bool"
    if "Path" in text:
        return "path"
    if ann is int or text in ("int | None", "typing.Optional[int]"):
        return "int"
    if ann is float or text in ("float | None", "typing.Optional[float]"):
        return "float"
    return "str"


def option_cases(t: OptionTarget, targets: Sequence[OptionTarget]) -> list[Case]:
    """The hostile cases of one option or argument on its command's base invocation."""
    kind = option_kind(t)
    base = _command_base(t, targets)
    cases = []
    for what, text, refuse in OPTION_VALUES[kind]:
        argv = list(base)
        if t.argument:
            args = [a for a in argv[len(t.command):] if not a.startswith("-")]
            position = [o for o in targets if o.command == t.command and o.argument].index(t)
            if position < len(args):
                argv[argv.index(args[position], len(t.command))] = text
            else:
                argv.append(text)
        elif kind == "bool":
            argv.append(t.opts[0] + text)
        else:
            opt = t.opts[0]
            if opt in argv:
                i = argv.index(opt)
                del argv[i:i + 2]
            argv += [opt, text]
        case = Case(f"option:{t.key}", what, argv, _option_files, expect="refuse" if refuse else "either",
                    needles=(*t.opts, t.name, t.name.replace("_", "-"), repr(text[:20])[1:-1] or "''",
                             *(a + ":" for a in base if a in OPTION_FILES)))
        if kind == "path":
            is_output = any(h in t.name.lower() for h in OUTPUT_HINTS) and not t.argument
            inputs = [a for a in base if a in OPTION_FILES]
            if what == "a file the scenario reads indirectly":
                if not is_output or "s.yaml" not in inputs:
                    continue  # only the stream scenario s.yaml reads down.csv
            if what == "the scenario itself":
                if not is_output or not inputs:
                    continue
                case.argv[-1] = inputs[0]  # the command's own input file, as its output
            if is_output and what in ("missing", "directory", "binary"):
                case.expect = "either"  # an output directory may be created or reused; a file replaced
                case.outputs = (text,)
        cases.append(case)
    return cases


OPTION_FILES = ("s.yaml", "c.yaml", "study.yaml", "graph.s.yaml", "results.csv", "w.json", "b.json")
"""The input files of the option bases: an error located in one of them is located."""

_PREPARED: dict[str, bytes] = {}
"""Files only a run can make (a sweep's results), made once by :func:`prepare` before the cases run."""


def prepare(entry: Callable[[list[str]], Any]) -> None:
    """Make the files the option bases read that only a command can write: ``results.csv`` from a
    sweep of the study base (in a forked child, like every case)."""
    if "results.csv" in _PREPARED:
        return
    with tempfile.TemporaryDirectory(prefix="simsched-hostile-prepare-") as tmp:
        root = Path(tmp) / "case"
        root.mkdir()
        out = Path(tmp) / "out"
        out.mkdir()
        _materialise(Case("prepare", "results", [], lambda: {**_common_files(), "s.yaml": _dump(_graph()),
                                                            "study.yaml": _dump(_study())}), root)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            _child(entry, ["sweep", "study.yaml", "--output", "results.csv"], root, out)
        os.waitpid(pid, 0)
        if (root / "results.csv").is_file():
            _PREPARED["results.csv"] = (root / "results.csv").read_bytes()


def _option_files() -> dict[str, bytes]:
    scenario = _stream()
    files = _common_files()
    files["s.yaml"] = _dump(scenario)
    files["c.yaml"] = _dump(_capacity())
    files["study.yaml"] = _dump({**_study(), "scenario": "graph.s.yaml"})
    files["binary.bin"] = bytes(range(256)) * 4
    files["w.json"] = b'{"tasks": [{"name": "a", "work": 1}], "edges": []}'
    files["results.csv"] = _PREPARED.get("results.csv", b"task_id,point,point_id,scheduler,seed,makespan,error\n")
    files["b.json"] = b"{}"
    return files


# --------------------------------------------------------------------------- all cases
Roots = Sequence[tuple[type[BaseModel], str]]


def all_targets(app: Any, roots: Roots = ()) -> tuple[list[FieldTarget], list[OptionTarget]]:
    return walk_schema(roots), walk_commands(app)


def all_cases(app: Any, roots: Roots = ()) -> list[Case]:
    """Every case of the campaign, in a fixed order."""
    fields, options = all_targets(app, roots)
    cases = base_cases()
    cases += [c for t in fields for c in field_cases(t)]
    cases += document_cases()
    cases += [c for t in options for c in option_cases(t, options)]
    return cases


def coverage(app: Any, cases: Sequence[Case], roots: Roots = ()) -> dict[str, Any]:
    """Fields and options and whether each has a case; models the walk does not reach."""
    fields, options = all_targets(app, roots)
    attacked = {c.target for c in cases}
    field_keys = sorted({t.key for t in fields})
    missing_fields = sorted({t.key for t in fields} - {t.key for t in fields
                                                        if f"{t.base}:{t.dotted}" in attacked})
    missing_options = sorted(t.key for t in options if f"option:{t.key}" not in attacked)
    return {"fields": len(field_keys), "field_places": len(fields), "options": len(options),
            "missing_fields": missing_fields, "missing_options": missing_options,
            "unreached_models": unreached_models(roots)}


def sample(cases: Sequence[Case], n: int, seed: int = 0) -> list[Case]:
    """A deterministic sample of ``n`` cases that takes at least one case of every target first."""
    rng = random.Random(seed)
    bases = [c for c in cases if c.expect == "run"]
    cases = [c for c in cases if c.expect != "run"]
    n = max(0, n - len(bases))
    by_target: dict[str, list[Case]] = {}
    for c in cases:
        by_target.setdefault(c.target, []).append(c)
    firsts = [rng.choice(v) for v in by_target.values()]
    rng.shuffle(firsts)
    if n <= len(firsts):
        return bases + firsts[:n]
    taken = {id(c) for c in firsts}
    rest = [c for c in cases if id(c) not in taken]
    return bases + firsts + rng.sample(rest, min(n - len(firsts), len(rest)))


# --------------------------------------------------------------------------- running one case
@dataclass
class Outcome:
    """What one case did, and the verdict: ``clean`` or the first broken promise."""

    case: Case
    verdict: str
    code: int | None
    seconds: float
    line: str = ""

    @property
    def clean(self) -> bool:
        return self.verdict == "clean"


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for n in filenames:
            p = Path(dirpath) / n
            rel = str(p.relative_to(root))
            if p.is_symlink() or not p.is_file():
                out[rel] = "special"
                continue
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        for d in dirnames:
            out[str((Path(dirpath) / d).relative_to(root)) + "/"] = "dir"
    return out


def _materialise(case: Case, root: Path) -> None:
    for name, data in case.files().items():
        (root / name).write_bytes(data)
    specials = {**case.special, "adir": "directory", "afifo": "fifo", "loop": "symlink loop"}
    for name, what in specials.items():
        p = root / name
        if p.exists() or p.is_symlink():
            p.unlink()
        if what == "directory":
            p.mkdir()
        elif what == "fifo":
            os.mkfifo(p)
        elif what == "symlink loop":
            os.symlink(name, p)
        elif what.startswith("link:"):
            os.symlink(what[5:], p)


def _child(entry: Callable[[list[str]], Any], argv: list[str], root: Path, out: Path) -> None:
    """In the forked child: the case's directory, its limits, its streams; run the entry point."""
    code = 70
    try:
        os.chdir(root)
        fd_out = os.open(out / "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fd_err = os.open(out / "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fd_in = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        # Python's streams onto fds 1 and 2 (now the files), whatever stood in for them (pytest's capture)
        redirect = contextlib.ExitStack()
        redirect.enter_context(contextlib.redirect_stdout(
            open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)))  # noqa: SIM115
        redirect.enter_context(contextlib.redirect_stderr(
            open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)))  # noqa: SIM115
        size = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY_MB * 2**20, resource.RLIM_INFINITY))
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 2**20, resource.RLIM_INFINITY))
        try:
            entry(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _address_space() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 2 * 2**30


@dataclass
class _Running:
    case: Case
    pid: int
    root: Path
    out: Path
    before: dict[str, str]
    start: float


def _start(case: Case, entry: Callable[[list[str]], Any], workdir: Path) -> _Running:
    root = Path(tempfile.mkdtemp(prefix="case-", dir=workdir))
    out = Path(tempfile.mkdtemp(prefix="out-", dir=workdir))
    _materialise(case, root)
    before = _hashes(root)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        _child(entry, case.argv, root, out)
    return _Running(case, pid, root, out, before, time.perf_counter())


def _poll(r: _Running, block: bool = False) -> Outcome | None:
    """The outcome of a running case once its child has ended (killed past :data:`WALL_S`), else None."""
    done, status, usage = os.wait4(r.pid, 0 if block else os.WNOHANG)
    hung = False
    if not done:
        if time.perf_counter() - r.start <= WALL_S:
            return None
        hung = True
        os.kill(r.pid, signal.SIGKILL)
        _, status, usage = os.wait4(r.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    hung = hung or cpu > TIME_S
    out = r.out
    stdout = (out / "stdout").read_text(encoding="utf-8", errors="replace") if (out / "stdout").exists() else ""
    stderr = (out / "stderr").read_text(encoding="utf-8", errors="replace") if (out / "stderr").exists() else ""
    after = _hashes(r.root)
    code = None if hung or os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    verdict, line = _judge(r.case, code, hung, status, stdout, stderr, r.before, after)
    _remove(r.root)
    _remove(r.out)
    return Outcome(r.case, verdict, code, cpu, line)


def run_case(case: Case, entry: Callable[[list[str]], Any], workdir: Path) -> Outcome:
    """Run ``case`` in a forked child under the time and memory bounds and judge it."""
    r = _start(case, entry, workdir)
    while True:
        o = _poll(r)
        if o is not None:
            return o
        time.sleep(0.01)


def _remove(path: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for n in filenames:
            os.unlink(os.path.join(dirpath, n))
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if os.path.islink(p):
                os.unlink(p)
            else:
                os.rmdir(p)
    os.rmdir(path)


def _judge(case: Case, code: int | None, hung: bool, status: int, stdout: str, stderr: str,
           before: dict[str, str], after: dict[str, str]) -> tuple[str, str]:
    lines = [s for s in stderr.splitlines() if s.strip() and not s.startswith("warning: ")]
    line = lines[0] if lines else ""
    if hung:
        return "hang", f"more than {TIME_S:g} s of CPU (or {WALL_S:g} s of wall time)"
    if code is None:
        return "killed", f"signal {os.WTERMSIG(status)}"
    changed = [k for k, h in before.items() if after.get(k) != h
               and not (code == 0 and any(k == o or k.startswith(o.rstrip("/") + "/") for o in case.outputs))]
    if changed:
        return "input modified", f"{changed[0]} changed or removed"
    if "MemoryError" in stderr or "MemoryError" in stdout:
        return "memory blow-up", line
    if "Traceback" in stderr or "Traceback" in stdout or code not in (0, 2):
        last = [s for s in stderr.splitlines() if s.strip()]
        return "traceback", (last[-1] if last else f"exit {code}")[:300]
    if case.expect == "run" and code != 0:
        return "base does not run", line[:300]
    if code == 0:
        if case.expect == "refuse":
            return "exit 0 on bad input", (stdout.strip().splitlines() or [""])[0][:300]
        return "clean", "ran"
    new = sorted(set(after) - set(before))
    if new:
        return "wrote on error", new[0]
    if case.argv[:1] == ["validate"] and lines and all(x.startswith("error: ") for x in lines):
        pass  # validate lists every problem, one line each
    elif len(lines) != 1 or not line.startswith("error: "):
        return "not one line", " | ".join(lines)[:300]
    if case.needles and not any(n and n in line for n in case.needles):
        return "not located", line[:300]
    return "clean", line[:300]


# --------------------------------------------------------------------------- the campaign
def run_campaign(cases: Sequence[Case], entry: Callable[[list[str]], Any], *, jobs: int = 2,
                 progress: Callable[[int, int, Outcome], None] | None = None) -> list[Outcome]:
    """Run ``cases``, each in its own forked child, ``jobs`` at a time; outcomes in the cases' order."""
    outcomes: dict[int, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="simsched-hostile-") as tmp:
        running: dict[int, _Running] = {}
        todo = list(enumerate(cases))
        while todo or running:
            while todo and len(running) < max(1, jobs):
                i, case = todo.pop(0)
                running[i] = _start(case, entry, Path(tmp))
            for i, r in list(running.items()):
                o = _poll(r)
                if o is not None:
                    del running[i]
                    outcomes[i] = o
                    if progress is not None:
                        progress(len(outcomes), len(cases), o)
            time.sleep(0.005)
    return [outcomes[i] for i in range(len(cases))]


def summary(outcomes: Sequence[Outcome], cover: dict[str, Any] | None = None) -> str:
    """The summary table: verdicts by kind of target, the expected failures apart, then coverage."""
    rows: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        group = o.case.target.split(":")[0]
        verdict = o.verdict if o.case.expected_failure is None or o.clean else f"expected: {o.case.expected_failure}"
        rows[(group, verdict)] += 1
    groups = sorted({g for g, _ in rows})
    verdicts = sorted({v for _, v in rows}, key=lambda v: (v != "clean", v))
    width = max(12, *(len(v) for v in verdicts))
    text = [f"{'target':<12} " + " ".join(f"{v:>{width}}" for v in verdicts)]
    for g in groups:
        text.append(f"{g:<12} " + " ".join(f"{rows[(g, v)]:>{width}}" for v in verdicts))
    bad = [o for o in outcomes if not o.clean and o.case.expected_failure is None]
    text.append(f"{len(outcomes)} cases: {sum(o.clean for o in outcomes)} clean, {len(bad)} not clean"
                + (f", {sum(1 for o in outcomes if not o.clean and o.case.expected_failure)} expected to pass "
                   f"(marked expected failures)" if any(o.case.expected_failure for o in outcomes) else ""))
    if cover is not None:
        text.append(f"attacked: {cover['fields']} scenario/study fields ({cover['field_places']} places) and "
                    f"{cover['options']} command options and arguments; not attacked: "
                    f"{len(cover['missing_fields']) + len(cover['missing_options']) + len(cover['unreached_models'])}")
        for k in ("missing_fields", "missing_options", "unreached_models"):
            if cover[k]:
                text.append(f"  {k.replace('_', ' ')}: {', '.join(cover[k])}")
    for o in bad[:200]:
        text.append(f"  {o.verdict}: {o.case.name} [{' '.join(a[:40] for a in o.case.argv)}]: {o.line}")
    return "\n".join(text)


def main(app: Any, entry: Callable[[list[str]], Any], argv: Sequence[str] | None = None, *, roots: Roots = (),
         warm: Callable[[], None] | None = None) -> int:
    """``python -m simsched.cli.hostile [--all | --sample N] [--match TEXT] [--list]``: exit 0 when every case
    is clean (expected failures aside) and every field and option was attacked, else 1."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m simsched.cli.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every case (the default is a sample of 200)")
    parser.add_argument("--sample", type=int, default=200, help="how many cases to sample (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--match", default="", help="only cases whose target or value contains this text")
    parser.add_argument("--list", action="store_true", help="list the cases, run nothing")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    args = parser.parse_args(argv)
    cases = all_cases(app, roots)
    cover = coverage(app, cases, roots)
    chosen = [c for c in cases if args.match in c.name]
    if not args.all:
        chosen = sample(chosen, args.sample, args.seed)
    if args.list:
        for c in chosen:
            print(f"{c.expect:7} {c.name}")
        print(f"{len(chosen)} of {len(cases)} cases")
        return 0

    def show(i: int, n: int, o: Outcome) -> None:
        if not o.clean:
            print(f"[{i}/{n}] {o.verdict}: {o.case.name}: {o.line}", file=sys.stderr, flush=True)
        elif i % 50 == 0:
            print(f"[{i}/{n}] ...", file=sys.stderr, flush=True)

    if warm is not None:
        warm()  # modules the commands import lazily, imported once here instead of in every child
    prepare(entry)
    outcomes = run_campaign(chosen, entry, jobs=args.jobs, progress=show)
    print(summary(outcomes, cover))
    bad = [o for o in outcomes if not o.clean and o.case.expected_failure is None]
    missing = cover["missing_fields"] or cover["missing_options"] or cover["unreached_models"]
    return 1 if bad or missing else 0


def iter_targets(app: Any, roots: Roots = ()) -> Iterator[str]:
    """The names of every field and option the campaign attacks (for listing)."""
    fields, options = all_targets(app, roots)
    yield from (f"field {t.base}:{t.dotted}" for t in fields)
    yield from (f"option {t.key}" for t in options)
