"""What a capacity search can ask: one simulated day of a variant at a capacity, as metrics.

Each model has a ``unit`` (what the capacity counts), ``variants`` (schedulers or policies),
``metrics`` (the names a day reports) and is called as ``model(variant, capacity, seed)``
(:class:`~simsched.capacity.search.CapacityModel`):

* :class:`TaskGraphModel` — a task-graph or job-stream scenario, one processor entry's count;
* :class:`AutotuneModel` — an autotuning section, the number of servers;
* :class:`BatchCapacityModel` — a cluster log (or rigid DAG tasks) under batch policies, processors;
* :class:`MixModel` — a mix of processor types, each sized entry at its count (the cheapest-mix search).

Each carries a plain-data ``source`` (:func:`~simsched.capacity.models.base.model_source`) from which
:func:`rebuild_model` builds it again in a worker process.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simsched.capacity.models.autotune import AutotuneModel
from simsched.capacity.models.base import model_source, row_metrics, with_energy_units
from simsched.capacity.models.batch import BatchCapacityModel
from simsched.capacity.models.mix import MixModel
from simsched.capacity.models.taskgraph import TaskGraphModel
from simsched.errors import SimschedError
from simsched.scenario import parse_scenario
from simsched.yamlio import YamlDocument

__all__ = ["AutotuneModel", "BatchCapacityModel", "MixModel", "TaskGraphModel", "model_source", "rebuild_model",
           "row_metrics", "with_energy_units"]


def rebuild_model(source: Mapping[str, Any]) -> Any:
    """The capacity model ``source`` describes (:func:`~simsched.capacity.models.base.model_source`),
    built as the command built it, from plain data.  Errors are those of building it the first time."""
    kind = source["kind"]
    if kind == "autotuning":
        return AutotuneModel(source["section"], quantiles=source["quantiles"])
    doc = YamlDocument(dict(source["data"]), {}, Path(source["file"]) if source["file"] else None)
    if kind == "task-graph":
        return TaskGraphModel(doc, source["resource"])
    if kind == "mix":
        return MixModel(doc, source["mix"], field=source["field"])
    if kind == "batch":
        return BatchCapacityModel(parse_scenario(doc))
    raise SimschedError(f"unknown capacity model kind {kind!r}")
