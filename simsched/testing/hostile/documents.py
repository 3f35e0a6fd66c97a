"""The valid documents every hostile case starts from, the files beside them, and :class:`Case`.

Each base (:data:`BASES`) is a small valid scenario (or study) and the command that reads it; a case
changes one place of a fresh copy, so a refusal is for that place alone.  O(size of a base) per copy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

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


def graph_doc() -> dict[str, Any]:
    return {"name": "hostile", "description": "a small valid scenario", "seed": 1, "repetitions": 1,
            "platform": _platform(),
            "workload": {"tasks": [{"name": "a", "work": 2.0, "kind": "conv", "arrival": 0.0,
                                    "priority": 0.0, "memory": 1.0, "cores": 1},
                                   {"name": "b", "work": 1.0}],
                         "edges": [{"from": "a", "to": "b", "data": 1.0}]},
            "noise": {"model": "lognormal", "sigma": 0.1},
            "limits": {"max_tasks": 1000, "max_processors": 100, "max_memory_mb": 100.0},
            "schedulers": ["heft"]}


def stream_doc() -> dict[str, Any]:
    return {"platform": {**_platform(), "affinity": {}},
            "workload": {"stream": {"jobs": {"generator": "random", "tasks": [2, 4]},
                                    "arrivals": {"poisson": 0.1}, "count": 3, "deadline": {"slack": 2.0}}},
            "failures": {"mtbf": 1000.0, "mttr": 1.0, "types": {"gpu": {"mtbf": 2000.0, "mttr": 1.0}},
                         "processors": {"P0": {"mtbf": 3000.0, "mttr": 2.0}}, "trace": "down.csv"},
            "stragglers": {"rate": 0.001, "duration": 1.0, "slowdown": 2.0},
            "schedulers": ["mct"]}


def traced_doc() -> dict[str, Any]:
    doc = stream_doc()
    doc["workload"]["stream"] = {"jobs": {"name": "j", "generator": "random", "tasks": 3},
                                 "arrivals": {"trace": "arrivals.csv"}}
    return doc


def cluster_doc() -> dict[str, Any]:
    return {"platform": {"processors": [{"name": "node", "type": "cpu", "count": 4}]},
            "workload": {"stream": {"swf": "jobs.swf", "limit": 3, "scale": 1.0}},
            "schedulers": ["easy-backfill"]}


def autotuning_doc() -> dict[str, Any]:
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


def capacity_doc() -> dict[str, Any]:
    doc = graph_doc()
    doc["platform"]["links"] = []  # the capacity sets G's count: G becomes G0, G1, ...
    doc["capacity"] = {"objective": "makespan <= 100", "resource": "G", "days": 2, "on_days": 0.5, "max": 4,
                       "schedulers": ["heft"]}
    return doc


def study_doc() -> dict[str, Any]:
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
    "graph": (graph_doc, ["run", "s.yaml"]),
    "stream": (stream_doc, ["run", "s.yaml"]),
    "traced": (traced_doc, ["run", "s.yaml"]),
    "cluster": (cluster_doc, ["run", "s.yaml"]),
    "autotuning": (autotuning_doc, ["validate", "s.yaml"]),
    "capacity": (capacity_doc, ["capacity", "s.yaml"]),
    "study": (study_doc, ["sweep", "study.yaml", "--output", "out.csv"]),
}
"""Each base: a valid document and the command that reads it (``s.yaml``, or ``study.yaml`` beside a graph
scenario ``s.yaml``).  Every case directory also holds ``down.csv`` and ``arrivals.csv``."""


# --------------------------------------------------------------------------- a case and its files
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
    # "run": only exit 0 is right (a base); "refuse-or-warn": exit 2, or exit 0 with a "warning:" line
    expected_failure: str | None = None
    needles: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()  # files the command may replace when it runs (exit 0)
    setup: list[str] = field(default_factory=list)  # a command run in the case's folder first (its files: inputs)
    transform: Callable[[Any], None] | None = None  # then applied to the folder (a Path): the attack on what it wrote
    named_in: str = ""  # the scenario that names the file attacked (its refusal must chain from its line)

    @property
    def name(self) -> str:
        return f"{self.target} <- {self.what}"

    def files(self) -> dict[str, bytes]:
        """The files of the case's directory, built when the case runs (cases stay small in memory)."""
        return {**self.make(), **self.extra}


def dump(doc: Any) -> bytes:
    """``doc`` as YAML bytes, the :data:`NON_UTF8` placeholder turned into bytes that are not UTF-8."""
    text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False,
                     allow_unicode=True, width=10_000)
    return text.encode("utf-8").replace(NON_UTF8.encode("utf-8"), b"\xff\xfe")


def set_at(doc: Any, path: Sequence[Any], value: Any) -> None:
    """Put ``value`` at ``path`` of ``doc``, making the mappings on the way."""
    node = doc
    for p in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(p, {})
        else:
            node = node[p]
    node[path[-1]] = value


def common_files() -> dict[str, bytes]:
    """The files every case directory holds beside its document."""
    return {"down.csv": DOWN_CSV.encode(), "arrivals.csv": ARRIVALS_CSV.encode(), "jobs.swf": JOBS_SWF.encode(),
            "graph.s.yaml": dump(graph_doc())}


def base_files(base: str, doc: Any) -> tuple[dict[str, bytes], list[str]]:
    """The files of a case of ``base`` whose document is ``doc``, and the command line that reads it."""
    files = common_files()
    make, argv = BASES[base]
    if base == "study":
        files["s.yaml"] = dump(graph_doc())
        files["study.yaml"] = dump(doc)
    else:
        files["s.yaml"] = dump(doc)
    return files, list(argv)


def get_at(doc: Any, path: Sequence[Any]) -> Any:
    """The node of ``doc`` at ``path`` (keys and list indices), or None where the path leaves the document."""
    node = doc
    for p in path:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, list) and isinstance(p, int) and p < len(node):
            node = node[p]
        else:
            return None
    return node
