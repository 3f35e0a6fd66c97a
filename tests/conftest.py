"""Shared fixtures: the papers' reference problems, loaded from tests/data (copies of
shared/reference, so the suite does not depend on a checkout layout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph

DATA = Path(__file__).parent / "data"


def reference_problem(name: str) -> tuple[Problem, dict]:
    """The problem of a reference JSON file (explicit costs, unit bandwidth) and its expectations."""
    ref = json.loads((DATA / f"{name}.json").read_text())
    tasks = [{"name": k, "cost": v} for k, v in ref["computation_cost"].items()]
    graph = TaskGraph.from_named(tasks, [tuple(e) for e in ref["edges"]])
    platform = Platform.uniform([Processor(p) for p in ref["processors"]], bandwidth=ref["link_bandwidth"])
    return Problem(graph, platform), ref["expected"]


@pytest.fixture
def topcuoglu() -> tuple[Problem, dict]:
    return reference_problem("topcuoglu2002")


@pytest.fixture
def peft_example() -> tuple[Problem, dict]:
    return reference_problem("arabnejad2014_peft")
