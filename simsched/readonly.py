"""Read-only views for the arguments of compiled (numba) kernels.

numba compiles one machine code per tuple of argument types, and whether an array may be written is
part of its type: a kernel handed the same arrays writable from one caller and read-only from another
(a problem's frozen cost table, a cached observation's rows) was compiled, and cached, once per mix —
12 versions of one observation kernel in the test suite.  Handing a kernel its input arrays as
read-only views makes one version, which ``tools/warm_numba.py`` can compile once per CI run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

import numpy as np


def read_only(values: Iterable[Any]) -> list[Any]:
    """``values`` with every numpy array replaced by a read-only view of it (no copy; other values
    as they are).  O(len(values))."""
    out = []
    for v in values:
        if isinstance(v, np.ndarray) and v.flags.writeable:
            v = v.view()
            v.flags.writeable = False
        out.append(v)
    return out


def inputs_read_only(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` called with every array argument read-only (:func:`read_only`): for a compiled
    kernel that writes none of its arguments, one compiled version whatever its callers pass."""
    @wraps(kernel)
    def call(*args: Any) -> Any:
        return kernel(*read_only(args))

    call.compiled = kernel  # type: ignore[attr-defined]  # the numba dispatcher (its signatures, for a warm-up)
    return call
