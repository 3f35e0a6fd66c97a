"""Kernel inputs as read-only views (:mod:`simsched.readonly`): no copy, the caller's arrays untouched,
and one compiled version of a kernel whatever writability its callers' arrays have; stale machine code
of a kernel that includes a sibling file's functions dropped."""

from __future__ import annotations

import numpy as np
import pytest

from simsched.readonly import inputs_read_only, read_only


def test_read_only_views_share_memory_and_leave_the_caller_writable() -> None:
    a, frozen = np.arange(4.0), np.ones(3)
    frozen.flags.writeable = False
    out = read_only([a, 7, frozen, None])
    assert out[1] == 7 and out[3] is None and out[2] is frozen
    assert not out[0].flags.writeable and np.shares_memory(out[0], a) and a.flags.writeable
    with pytest.raises(ValueError):
        out[0][0] = 1.0


def test_a_wrapped_kernel_compiles_once_for_writable_and_read_only_arrays() -> None:
    numba = pytest.importorskip("numba")

    @numba.njit
    def total(x, y):  # pragma: no cover - compiled
        return x.sum() + y.sum()

    kernel = inputs_read_only(total)
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    assert kernel(np.arange(3.0), np.ones(2)) == kernel(frozen, np.ones(2)) == 5.0
    assert len(kernel.compiled.signatures) == 1
    total(np.arange(3.0), np.ones(2))  # unwrapped, a writable array is another type
    assert len(total.signatures) == 2


def test_stale_machine_code_of_an_inlined_sibling_is_dropped(tmp_path) -> None:
    import os

    from simsched.readonly import drop_stale_machine_code

    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("kernel.py", "view.py"):
        (tmp_path / name).write_text("")
    old, fresh, other = (cache / n for n in ("kernel.loop-12.py311.nbi", "kernel.step-40.py311.nbi",
                                             "view.row-3.py311.nbi"))
    for path, t in ((old, 100.0), (fresh, 300.0), (other, 100.0)):
        path.write_text("")
        os.utime(path, (t, t))
    os.utime(tmp_path / "view.py", (200.0, 200.0))
    drop_stale_machine_code(tmp_path, {"kernel": ("view.py",)})
    assert not old.exists() and fresh.exists() and other.exists()  # only the includer's older index
    drop_stale_machine_code(tmp_path, {"kernel": ("missing.py",)})  # a source not there: nothing happens
    assert fresh.exists()
