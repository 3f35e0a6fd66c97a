"""Tools for testing a scheduler against simsched's contract, in a user's own test suite or CI.

* :mod:`simsched.testing.strategies`: hypothesis strategies for task graphs, platforms, problems;
* :mod:`simsched.testing.contract`: :func:`check_scheduler`, the contract every built-in meets;
* :mod:`simsched.testing.baseline`: record metrics of scenarios and compare a later run with them;
* :mod:`simsched.testing.pytest_plugin`: fixtures and the ``simsched_baseline`` marker (loaded
  automatically by pytest once simsched is installed).

Names are imported lazily so that ``import simsched.testing`` does not pull in hypothesis.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_scheduler", "ContractReport"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from simsched.testing import contract

        return getattr(contract, name)
    raise AttributeError(name)
