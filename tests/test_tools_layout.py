"""Code lives in the package, the tests or ``tools/``; ``scenarios/`` holds data only.

The cross-check against AccaSim and RLScheduler (``tools/xval/``, docs/cluster-traces.md, "Checked against
other simulators") needs the two tools fetched separately, so it is not run here; what is checked is that the
script still finds the traces it replays and that its "rule as read" policies run on simsched's engine.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from simsched.schedulers.batch_fcfs import FCFS

ROOT = Path(__file__).resolve().parents[1]


def test_no_python_file_lives_under_scenarios() -> None:
    code = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "scenarios").rglob("*.py"))
    assert not code, f"scenarios/ holds data only; move these to tools/ (or the package): {code}"


@pytest.fixture(scope="module")
def crosscheck():
    path = ROOT / "tools" / "xval" / "crosscheck.py"
    spec = importlib.util.spec_from_file_location("xval_crosscheck", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_crosscheck_finds_the_shipped_traces_and_its_adapters(crosscheck) -> None:
    missing = [str(path) for _, path, _ in crosscheck.SHIPPED if not path.is_file()]
    assert not missing, f"the cross-check's traces moved: {missing}"
    for adapter in ("rlscheduler_adapter.py", "accasim_adapter.py"):
        assert (crosscheck.HERE / adapter).is_file()


@pytest.mark.parametrize("name", ["RLSchedulerBackfill", "RLSchedulerSJF", "AccaSimEBF"])
def test_rules_as_read_give_feasible_schedules(crosscheck, name: str) -> None:
    """Every job starts once, not before its submit time, and no instant uses more than ``m`` processors;
    the comparison of a schedule with itself finds every start the same."""
    for seed in (0, 1):
        trace, m = crosscheck.random_trace(seed)
        trace = trace.take(trace.run > 0)  # as the script replays them (zero-length jobs left out)
        start = crosscheck.ours_on(trace, m, getattr(crosscheck, name)())
        assert np.all(np.isfinite(start)) and np.all(start >= trace.submit)
        end = start + trace.run
        times = np.unique(start)
        in_use = [int(trace.procs[(start <= t) & (end > t)].sum()) for t in times]
        assert max(in_use) <= m
        tool = {int(j): (float(s), float(a), float(r)) for j, s, a, r in
                zip(trace.ids.tolist(), trace.submit, start, trace.run, strict=True)}
        same = crosscheck.compare(trace, m, start, tool)
        assert same["same"] == same["jobs"] == trace.ids.size and same["max_dwait"] == 0.0


def test_fcfs_differs_from_a_rule_as_read_somewhere(crosscheck) -> None:
    """The comparison can fail: simsched's FCFS and RLScheduler's SJF rule disagree on a random trace."""
    trace, m = crosscheck.random_trace(0)
    trace = trace.take(trace.run > 0)
    ours = crosscheck.ours_on(trace, m, FCFS())
    theirs = crosscheck.ours_on(trace, m, crosscheck.RLSchedulerSJF())
    tool = {int(j): (float(s), float(a), float(r)) for j, s, a, r in
            zip(trace.ids.tolist(), trace.submit, theirs, trace.run, strict=True)}
    assert crosscheck.compare(trace, m, ours, tool)["same"] < trace.ids.size
