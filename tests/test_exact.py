"""The exact scheduler: brute force on tiny problems, proofs on Kasahara-style graphs, refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings

from simsched.testing.strategies import EDGE_CASES, problems

pytest.importorskip("ortools")

from simsched.bench.schedulers import kasahara_dag, uniform_platform  # noqa: E402
from simsched.errors import SimschedError  # noqa: E402
from simsched.schedulers import registry  # noqa: E402
from simsched.schedulers.exact import choose_scale, optimal_schedule  # noqa: E402
from simsched.simulator.bounds import lower_bound  # noqa: E402
from simsched.simulator.evaluate import evaluate_plan  # noqa: E402
from simsched.simulator.evaluate_batch import evaluate_sequences, objective_values  # noqa: E402
from simsched.simulator.problem import Problem  # noqa: E402


def brute_force_makespan(problem: Problem) -> float:
    """Minimum over every eligible assignment and every topological order of the left-justified
    makespan (every schedule is dominated by one of these).  O(m^n n!)."""
    g = problem.graph
    n = g.n_tasks
    orders = [p for p in itertools.permutations(range(n))
              if all(p.index(a) < p.index(b) for a, b in zip(g.edge_src, g.edge_dst))]
    choices = [np.flatnonzero(problem.eligible[i]) for i in range(n)]
    assign = np.array(list(itertools.product(*choices)), dtype=np.int64)
    proc = np.repeat(assign, len(orders), axis=0)
    seq = np.tile(np.array(orders, dtype=np.int64), (len(assign), 1))
    return float(objective_values(problem, evaluate_sequences(problem, proc, seq), "makespan").min())


def _check_consistent(problem: Problem, plan) -> float:
    s = evaluate_plan(problem, plan)
    assert s.validate(problem) == []
    np.testing.assert_array_equal(plan.start, s.start)
    np.testing.assert_array_equal(plan.finish, s.finish)
    return s.metrics(problem).makespan


@settings(max_examples=25, deadline=None)
@given(problem=problems(EDGE_CASES, max_tasks=6, max_processors=2))
def test_optimal_equals_brute_force_on_tiny_problems(problem):
    plan = optimal_schedule(problem, time_limit_s=20.0, workers=1)
    assert plan.info["optimal"]
    makespan = _check_consistent(problem, plan)
    best = brute_force_makespan(problem)
    slack = 0.0 if plan.info["exact"] else 4 * problem.n_tasks / plan.info["scale"]
    assert best - 1e-9 <= makespan <= best + slack + 1e-9
    assert lower_bound(problem) <= makespan + 1e-9


def test_optimal_equals_brute_force_on_seven_tasks_with_communication():
    rng = np.random.default_rng(3)
    from simsched.workloads.taskgraph import TaskGraph

    edges = [(0, 2), (1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 6)]
    cost = rng.integers(1, 10, (7, 2)).astype(float)
    graph = TaskGraph([f"t{i}" for i in range(7)], edges, rng.integers(0, 8, len(edges)), cost=cost)
    problem = Problem(graph, uniform_platform(2))
    plan = optimal_schedule(problem, time_limit_s=20.0, workers=1)
    assert plan.info["optimal"] and plan.info["exact"]
    assert _check_consistent(problem, plan) == brute_force_makespan(problem)


def test_reference_examples_are_solved_to_optimality(topcuoglu, peft_example):
    # the optimum can only beat the heuristics' published makespans (HEFT 80; PEFT 122)
    for (problem, _), known in ((topcuoglu, 80), (peft_example, 122)):
        plan = registry.create("optimal", time_limit_s=20.0).plan(problem, np.random.default_rng(0))
        assert plan.info["optimal"] and plan.info["exact"]
        assert _check_consistent(problem, plan) <= known
        assert plan.info["objective"] == plan.info["bound"]


def test_kasahara_50_tasks_are_proven_optimal():
    proven = 0
    for k, m in enumerate((2, 3, 4)):
        problem = Problem(kasahara_dag(50, np.random.default_rng(k)), uniform_platform(m))
        plan = optimal_schedule(problem, time_limit_s=5.0)
        proven += plan.info["optimal"]
        _check_consistent(problem, plan)
    assert proven >= 2


def test_refuses_problems_above_max_tasks():
    from simsched.workloads.generators import random_dag

    # heterogeneous costs and transfers: CP-SAT's case, capped by max_tasks (P|prec|Cmax goes to bnb)
    problem = Problem(random_dag(30, processors=2, rng=np.random.default_rng(0)), uniform_platform(2))
    with pytest.raises(SimschedError, match="max_tasks"):
        registry.create("optimal", max_tasks=20).plan(problem, np.random.default_rng(0))


def test_float_costs_are_scaled_and_rounded_up():
    assert choose_scale(np.array([1.0, 2.0, 3.0]), 10.0) == (1.0, True)
    assert choose_scale(np.array([0.25, 1.5]), 10.0) == (100.0, True)
    scale, exact = choose_scale(np.array([1 / 3]), 10.0)
    assert not exact and scale == 1e6
    rng = np.random.default_rng(0)
    from simsched.workloads.generators import random_dag

    problem = Problem(random_dag(8, processors=2, rng=rng), uniform_platform(2))
    plan = optimal_schedule(problem, time_limit_s=10.0, workers=1)
    assert not plan.info["exact"]
    makespan = _check_consistent(problem, plan)
    assert makespan <= plan.info["objective"] + 1e-9  # true times can only shorten the rounded plan


def test_missing_ortools_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("ortools"):
            raise ImportError("no ortools")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    from simsched.workloads.generators import random_dag

    problem = Problem(random_dag(5, processors=2, rng=np.random.default_rng(0)), uniform_platform(2))
    with pytest.raises(SimschedError, match=r"pip install -e '.*\[exact\]'"):
        optimal_schedule(problem)


def _invoke(*args):
    from typer.testing import CliRunner

    from simsched.cli.main import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_declined_scheduler_keeps_the_other_results(tmp_path):
    import json

    out = tmp_path / "r.json"
    result = _invoke("run", "scenarios/series_parallel.yaml", "-s", "heft", "-s", "optimal", "-r", "2",
                     "--json", out)
    assert result.exit_code == 0, result.output
    assert "declined" in result.output and "max_tasks" in result.output
    doc = json.loads(out.read_text())
    assert doc["schedulers"] == ["heft"]
    assert [r["scheduler"] for r in doc["results"]] == ["heft", "heft"]
    assert doc["declined"][0]["scheduler"] == "optimal" and "150" in doc["declined"][0]["reason"]


def test_every_scheduler_declined_is_one_line_exit_2(tmp_path):
    out = tmp_path / "r.json"
    result = _invoke("run", "scenarios/series_parallel.yaml", "-s", "optimal", "--json", out)
    assert result.exit_code == 2
    assert "declined" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_rows_say_whether_the_optimum_is_proven(tmp_path):
    import json

    out = tmp_path / "r.json"
    assert _invoke("run", "scenarios/topcuoglu2002.yaml", "-s", "heft", "-s", "optimal", "-r", "1",
                   "--json", out).exit_code == 0
    rows = {r["scheduler"]: r for r in json.loads(out.read_text())["results"]}
    assert "proven_optimal" not in rows["heft"]
    assert rows["optimal"]["proven_optimal"] is True
    assert rows["optimal"]["makespan_bound"] == rows["optimal"]["makespan"] <= rows["heft"]["makespan"]


@pytest.mark.parametrize("build_s, solver_s", [(0.3, 0.7), (2.5, 0.01)])
def test_time_limit_includes_building_the_model(monkeypatch: pytest.MonkeyPatch, topcuoglu, build_s: float,
                                                 solver_s: float) -> None:
    """The solver gets what is left of the limit after building the model (at least 0.01 s): on a
    clock where building takes ``build_s``, a 1 s limit leaves the solver ``solver_s`` — behaviour
    checked on a fake clock, not the machine's speed (wall times belong in `simsched bench`)."""
    import types

    from simsched.schedulers import exact

    real = exact._cp_model()
    seen: list[float] = []

    class Recording(real.CpSolver):
        def Solve(self, model, *args, **kwargs):  # noqa: N802 - OR-Tools' name
            seen.append(float(self.parameters.max_time_in_seconds))
            self.parameters.max_time_in_seconds = 1.0  # the real search: short, whatever the fake clock says
            return super().Solve(model, *args, **kwargs)

    readings = [0.0]  # the first reading starts the clock; every later one is after the build

    def perf_counter() -> float:
        readings.append(build_s)
        return readings[-2]

    monkeypatch.setattr(exact, "time", types.SimpleNamespace(perf_counter=perf_counter))
    monkeypatch.setattr(exact, "_cp_model", lambda: types.SimpleNamespace(**{**vars(real), "CpSolver": Recording}))
    problem = topcuoglu[0]  # heterogeneous: CP-SAT, not the branch and bound of identical processors
    plan = optimal_schedule(problem, time_limit_s=1.0, workers=1, warm_start_s=0.0)
    assert seen == [pytest.approx(solver_s)]
    assert plan.info["bound"] <= evaluate_plan(problem, plan).metrics(problem).makespan + 1e-9
