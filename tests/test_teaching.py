"""simsched.analysis.teaching and ``simsched explain``: the HEFT trace is HEFT; the greedy-gap search works."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simsched.analysis.teaching import search_greedy_gap, trace_heft
from simsched.cli.main import app
from simsched.scenario import build_problem, load_scenario
from simsched.schedulers.heft import heft_schedule

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name,seed", [("topcuoglu2002.yaml", 0), ("quickstart.yaml", 1), ("quickstart.yaml", 2)])
def test_trace_equals_heft(name: str, seed: int) -> None:
    problem = build_problem(load_scenario(ROOT / "scenarios" / name), seed)
    trace = trace_heft(problem)
    plan = heft_schedule(problem)
    assert trace.plan is not None
    np.testing.assert_array_equal(trace.plan.processor, plan.processor)
    np.testing.assert_array_equal(trace.plan.start, plan.start)
    assert [s.task for s in trace.steps] == trace.order.tolist()
    for step in trace.steps:
        assert step.eft[step.chosen] == step.eft.min()


def test_topcuoglu_ranks_and_makespan() -> None:
    problem = build_problem(load_scenario(ROOT / "scenarios" / "topcuoglu2002.yaml"))
    trace = trace_heft(problem)
    np.testing.assert_allclose(trace.rank[:5], [108, 77, 80, 80, 69])
    assert trace.plan is not None and trace.plan.finish is not None and trace.plan.finish.max() == 80


def test_greedy_gap_search_and_scenario(tmp_path: Path) -> None:
    pytest.importorskip("ortools")
    found = search_greedy_gap(tasks=6, processors=2, tries=3, seed=1)
    assert found.optimum <= found.heft and found.gap >= 0
    out = tmp_path / "gap.yaml"
    result = CliRunner().invoke(app, ["explain", "greedy-gap", "--tasks", "6", "--processors", "2",
                                      "--tries", "3", "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert build_problem(load_scenario(out)).n_tasks == 6


def test_explain_heft_cli_and_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["explain", "heft", str(ROOT / "scenarios" / "topcuoglu2002.yaml")])
    assert ok.exit_code == 0 and "HEFT makespan: 80" in ok.output
    bad = runner.invoke(app, ["explain", "heft", str(tmp_path / "missing.yaml")])
    assert bad.exit_code == 2
