"""The planning step of conservative backfilling compiled: numba's machine code for the very source of
:mod:`simsched.schedulers.conservative_plan` and :mod:`simsched.schedulers.conservative_incremental`,
each function recompiled with this module's globals, where the names of the others are their
compiled versions.  So the compiled and the plain Python
planning make the same float operations in the same order and give the same reservations.

Imported only when numba is installed (extra ``simsched[fast]``) and a log is large (loading numba
costs ~0.2-0.5 s of CPU, once per process); numba caches the machine code beside the source module,
so only the first run on a machine pays the compilation (a few seconds).
"""

from __future__ import annotations

import types
from pathlib import Path

import numba
import numpy as np  # noqa: F401 - a global of the compiled functions

from simsched.readonly import drop_stale_machine_code
from simsched.schedulers import conservative_incremental as _step
from simsched.schedulers import conservative_plan as _source

# each module's kernels call the other's: an edit of one leaves the other's cached machine code stale
drop_stale_machine_code(Path(__file__).parent, {"conservative_plan": ("conservative_incremental.py",),
                                                 "conservative_incremental": ("conservative_plan.py",)})

ENDS = _source.ENDS
_NAMES = ((_source, ("_split", "_add", "_earliest", "_earliest_runs", "_build", "_replan", "instant_ranks",
                     "build_profile", "plan_queue")),
          (_step, ("_insert", "_take", "_fit", "_merge", "_put", "_slot", "_changes", "_from_scratch", "_place",
                   "plan_step")))
for _module, _names in _NAMES:  # numba resolves a call by its name among these globals, at the first compile
    for _name in _names:
        globals()[_name] = numba.njit(cache=True)(types.FunctionType(getattr(_module, _name).__code__, globals(),
                                                                     _name))
