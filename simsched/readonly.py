"""Helpers for compiled (numba) kernels: read-only views for their arguments, and stale cached
machine code dropped where a kernel includes functions of another file.

numba compiles one machine code per tuple of argument types, and whether an array may be written is
part of its type: a kernel handed the same arrays writable from one caller and read-only from another
(a problem's frozen cost table, a cached observation's rows) was compiled, and cached, once per mix —
12 versions of one observation kernel in the test suite.  Handing a kernel its input arrays as
read-only views makes one version, which ``tools/warm_numba.py`` can compile once per CI run.

numba keys each cached kernel on its own source file only: a kernel whose machine code includes
functions of a sibling file keeps running the old code after that file is edited
(:func:`drop_stale_machine_code`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import wraps
from pathlib import Path
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


def drop_stale_machine_code(folder: Path, inlined: Mapping[str, Iterable[str]]) -> None:
    """For each module ``name`` of ``folder`` whose compiled kernels include functions of the files
    ``inlined[name]`` (names in ``folder``), delete the module's cached machine code indexes
    (``__pycache__/name.*.nbi``) older than the newest of those files, so they are compiled again rather
    than run stale.  A read-only install (nothing edited there) is left as it is.  O(cached files)."""
    for module, sources in inlined.items():
        try:
            newest = max((folder / f).stat().st_mtime for f in sources)
        except OSError:
            continue
        for index in (folder / "__pycache__").glob(f"{module}.*.nbi"):
            try:  # another process may have dropped it first
                if index.stat().st_mtime < newest:
                    index.unlink()
            except OSError:
                pass
