"""simsched: a discrete-event testbed for scheduling work on heterogeneous distributed systems.

The package is a house of floors: a package imports only from lower floors, never sideways on its
floor, never up (``tests/test_layers.py`` and the import-linter contract in ``pyproject.toml`` check
it; ``docs/architecture.md`` draws it)::

    9  cli/                                  command table and thin commands
    8  report/  bench/                       pictures, documents, tables; benchmarks
    7  study/  testing/  learned/  analysis/ sweeps; contracts; DeepSched and RL (torch); adversary
    6  capacity/                             the capacity what-if (fidelity/ joins this floor)
    5  run/                                  one run and many: runner, results, executors, store
    4  scenario/                             YAML schema, load, build
    3  schedulers/                           the classic policies and ONE registry of SchedulerSpec
    2  simulator/                            platform, problem, the SimPy engine (ground truth)
    1  workloads/                            task graphs, generators, importers, jobs
    0  ground                                errors, limits, fileio, outputlock, outputs, yamlio,
                                             extras, checkpoints, stats

Upper floors reach lower ones by plain imports; lower floors reach upper ones only through the
registry's ``"module:Class"`` strings (learned schedulers, plug-ins), hooks found by ``getattr`` and
arguments passed in (a console, the Typer app).  This module holds the version and makes ``simsched.run``
reachable after a bare ``import simsched`` (the package :mod:`simsched.run`, imported when first named;
it is callable: ``simsched.run("scenario.yaml")`` returns the run's results, see docs/notebooks.md).
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``simsched.run`` imported when first named (PEP 562), so ``import simsched`` stays light."""
    if name == "run":
        import importlib

        return importlib.import_module("simsched.run")
    raise AttributeError(f"module 'simsched' has no attribute {name!r}")
