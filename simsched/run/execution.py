"""What a run passes the engine for the parts of the model of execution a scenario's platform may name
(workflow-system overheads, a storage service).

Off by default: a scenario without ``platform.overheads``/``platform.storage`` gets ``{}`` and every
run is today's (the closed plan replay, the compiled stream loop where it applies, the same floats).
"""

from __future__ import annotations

from typing import Any

from simsched.scenario import Scenario
from simsched.simulator.engine import TaskIO
from simsched.simulator.problem import Problem


def execution_kwargs(scenario: Scenario, problem: Problem) -> dict[str, Any]:
    """``overheads``, ``storage`` and ``io`` (one file per edge of ``problem``'s graph, of ``edge_data x
    data_unit`` bytes) for :func:`~simsched.simulator.engine.run_online` and
    :func:`~simsched.simulator.engine.execute_plan`; ``{}`` when the scenario names neither.  O(n + e)."""
    out: dict[str, Any] = {}
    if scenario.overheads is not None:
        out["overheads"] = scenario.overheads
    if scenario.storage is not None:
        out["storage"] = scenario.storage.storage
        out["io"] = TaskIO.from_graph(problem.graph, scenario.storage.data_unit)
    return out
