"""Optional dependencies: import one, or tell the user the command that installs it.

The core install stays light; PyTorch (the ``learned`` and ``rl`` extras: DeepSched and the RL agents),
OR-Tools, Dask and the importers' packages come with extras of the project.  simsched is not on a package
registry: users install it from its checkout, so every hint this module prints is ``pip install -e`` of
the checkout with the extra (``pip install -e '.[exact]'``), and for an extra that brings PyTorch it installs
the pinned CPU build first (``pip install torch==2.13.0 && ...``) so pip does not fetch a large CUDA build.
:func:`install_hint` is the one place those commands are written; a test checks every hint the project
prints or documents names an extra of ``pyproject.toml`` that holds the needed package.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError

TORCH_PIN = "torch==2.13.0"
"""The PyTorch build installed before an extra that needs torch (the CPU build on these machines)."""

TORCH_EXTRAS = frozenset({"learned", "rl", "sb3"})
"""Extras whose packages include PyTorch: their hint installs :data:`TORCH_PIN` first."""

LEARNED = ("torch", "learned")
"""The module and extra the learned schedulers (``deepsched``, ``rl``, ``rl-world``) need."""


def checkout_root() -> Path | None:
    """The simsched checkout this package was imported from (the folder holding ``pyproject.toml``), or
    None when simsched was installed from a wheel.  O(1)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def install_hint(extra: str) -> str:
    """The shell command that installs the optional ``extra`` from where the user stands.

    From inside the checkout it is ``pip install -e '.[extra]'``; from elsewhere the checkout's absolute
    path replaces ``.``, so the command works pasted as is.  Extras that bring PyTorch install
    :data:`TORCH_PIN` first.  O(1).

    >>> install_hint("exact").startswith("pip install -e '")
    True
    >>> install_hint("learned").startswith("pip install torch==2.13.0 && pip install -e '")
    True
    """
    root = checkout_root()
    if root is None:
        target = "."
        where = " (in the simsched checkout)"
    else:
        try:
            here = Path(os.getcwd()).resolve()
        except OSError:  # the current directory was removed
            here = None
        target = "." if here == root else str(root)
        where = ""
    command = f"pip install -e '{target}[{extra}]'{where}"
    if extra in TORCH_EXTRAS:
        command = f"pip install {TORCH_PIN} && {command}"
    return command


EXTRA_MODULES: dict[str, str] = {"learned": "torch", "exact": "ortools", "workflows": "wfcommons",
                                  "onnx": "onnx", "dot": "pydot", "rl": "gymnasium", "study": "dask",
                                  "notebook": "pandas", "sb3": "sb3_contrib"}
"""The module each extra of simsched installs (checked when a registered scheduler declares the extra)."""


def require_extra(module: str, extra: str, feature: str) -> Any:
    """Import the optional ``module`` or raise a :class:`SimschedError` (exit 2) whose line ends with the
    command installing ``extra`` (:func:`install_hint`)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SimschedError(
            f"{feature} needs the optional package {module!r}: {install_hint(extra)}"
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
