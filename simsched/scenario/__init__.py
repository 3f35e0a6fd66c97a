"""Scenario files: YAML validated into typed objects, with errors that say where.

A scenario names a platform, a workload, the schedulers to compare, duration noise, a seed and a
number of repetitions (see ``docs/`` and ``scenarios/`` for examples)::

    name: quickstart
    seed: 42
    repetitions: 5
    platform:
      processors: [{name: cpu, type: cpu, count: 8}, {name: gpu, type: gpu, speed: 4, count: 2}]
      network: {bandwidth: 10.0, latency: 0.1}
    workload: {generator: random, tasks: 100}
    noise: {model: lognormal, sigma: 0.1}
    schedulers: [heft, cpop, {name: mct}]

:func:`load_scenario` reads a file and returns a :class:`Scenario`; every problem it finds is
reported with the file, the dotted field path and the line (all of them at once, in
:attr:`ScenarioError.problems`).  :func:`build_problem` turns a scenario into the
:class:`~simsched.simulator.problem.Problem` the schedulers see; graph errors (a cycle, a negative
cost, a task no processor may run) are located in the file as well.

The workload section has several *forms*, chosen by its keys:

* inline: ``tasks: [...]`` and ``edges: [...]``;
* ``generator: NAME`` plus that generator's parameters
  (:data:`simsched.workloads.generators.GENERATORS`);
* ``FORM: path`` plus options, for every ``FORM`` in ``simsched.workloads.importers.IMPORTERS``
  (paths relative to the scenario file).

Generator parameters and importer options are checked against the function's signature, so a new
generator or importer needs no change here.
"""

from simsched.scenario.build import build_graph, build_problem
from simsched.scenario.load import (
    Scenario,
    SchedulerChoice,
    load_scenario,
    parse_label,
    parse_scenario,
    scheduler_label,
)
from simsched.scenario.locate import Loc, Problems, ScenarioError, check_params, dotted, locate_in
from simsched.scenario.schema import InlineWorkload, ScenarioModel
from simsched.scenario.workload import WorkloadSpec

__all__ = [
    "InlineWorkload", "Loc", "Problems", "Scenario", "ScenarioError", "ScenarioModel", "SchedulerChoice",
    "WorkloadSpec", "build_graph", "build_problem", "check_params", "dotted", "load_scenario", "locate_in",
    "parse_label", "parse_scenario", "scheduler_label",
]
