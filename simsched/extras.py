"""Optional dependencies: import one, or tell the user which extra of simsched installs it.

The core install stays light; PyTorch (the ``learned`` extra: DeepSched and the RL agents), OR-Tools,
Dask and the importers' packages come with extras (``pip install 'simsched[NAME]'``).
"""

from __future__ import annotations

import importlib
from typing import Any

from simsched.errors import SimschedError

LEARNED = ("torch", "learned")
"""The module and extra the learned schedulers (``deepsched``, ``rl``, ``rl-world``) need."""


EXTRA_MODULES: dict[str, str] = {"learned": "torch", "exact": "ortools", "workflows": "wfcommons",
                                  "onnx": "onnx", "dot": "pydot", "rl": "gymnasium", "study": "dask"}
"""The module each extra of simsched installs (checked when a registered scheduler declares the extra)."""


def require_extra(module: str, extra: str, feature: str) -> Any:
    """Import the optional ``module`` or raise a :class:`SimschedError` (exit 2) naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SimschedError(
            f"{feature} needs the optional package {module!r}: pip install 'simsched[{extra}]'"
        ) from None


def require_learned(feature: str) -> None:
    """Fail with one clear line when PyTorch (extra ``learned``) is missing."""
    require_extra(*LEARNED, feature)


def require_extras(extras: tuple[str, ...] | list[str], feature: str) -> None:
    """Fail with one clear line for the first of ``extras`` (names of :data:`EXTRA_MODULES`) whose
    module cannot be imported; an unknown extra name is ignored."""
    for extra in extras:
        if extra in EXTRA_MODULES:
            require_extra(EXTRA_MODULES[extra], extra, feature)
