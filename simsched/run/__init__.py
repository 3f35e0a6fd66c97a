"""Floor 5 — running scenarios: ``run_scenario`` for task-graph and autotuning scenarios (``runner``),
batch runs of cluster logs (``batch``), the results document (``results``) and its reader
(``document``); and many runs at once: ``executors`` (a local process pool or a Dask cluster, whose
workers die with their parent: ``lifeline``) and the crash-safe, resumable results store (``store``,
written as ``tables`` with the ``columns`` of a results row), which sweeps and capacity searches share.

Imports only from ``scenario`` and the floors below it; never from ``capacity``, ``study``,
``learned``, ``report``, ``bench`` or ``cli``.

The package is also callable: ``simsched.run(path_or_dict, ...)`` is
:func:`simsched.report.notebook.run` (the Python entry point for notebooks), found by its name when called,
the door a lower floor has to an upper one (as the registry's ``"module:Class"`` strings)."""

import importlib
import sys
import types
from typing import Any

NOTEBOOK_RUN = "simsched.report.notebook:run"
"""The function ``simsched.run(...)`` calls, as ``"module:function"``."""


class _CallablePackage(types.ModuleType):
    """This package's module class: a module whose call runs a scenario (see the package docstring)."""

    def __call__(self, scenario: Any, **options: Any) -> Any:
        """``simsched.run(scenario, *, schedulers=None, seed=None, repetitions=None) -> Results``: see
        :func:`simsched.report.notebook.run`."""
        module, _, name = NOTEBOOK_RUN.partition(":")
        return getattr(importlib.import_module(module), name)(scenario, **options)


sys.modules[__name__].__class__ = _CallablePackage
