"""A job stream's offered load (simsched.simulator.jobmetrics.offered_load_by_type): the least load any
scheduler can keep the busiest processor type at, printed by ``validate`` and ``run`` with a warning above
1; exact against a linear program and against the closed form of uniform processors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.run.streams import offered_load_of
from simsched.scenario import load_scenario
from simsched.simulator import jobmetrics

STREAM = """\
name: load-stream
seed: 3
repetitions: 1
platform:
  processors: [{{name: cpu, count: 3, speed: 1.0}}, {{name: gpu, type: gpu, speed: 2.0}}]
  network: {{bandwidth: 5.0, latency: 0.1}}
workload:
  stream:
    jobs: {{generator: random, tasks: [4, 10], heterogeneity: 0}}
    arrivals: {{poisson: {rate}}}
    count: 12
schedulers: [mct, srjf-eft]
"""


def _write(tmp_path: Path, rate: float, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(STREAM.format(rate=rate))
    return path


def test_uniform_processors_give_the_closed_form(tmp_path: Path) -> None:
    # cost = work / speed on every processor: the platform runs 3 x 1 + 1 x 2 = 5 units of work per unit of
    # time, so the least load is (work per unit of time) / 5, while the mean-cost load over the 4 processors
    # is (work per unit of time) x mean(1 / speed) / 4 = (work per unit of time) x 0.875 / 4
    load = offered_load_of(load_scenario(_write(tmp_path, 0.05)), 3)
    assert load is not None and set(load.by_type) == {"cpu", "gpu"}
    assert load.least == pytest.approx(load.mean * 4 / 0.875 / 5, rel=1e-9)
    assert load.by_type["cpu"] == pytest.approx(load.least) and load.by_type["gpu"] == pytest.approx(load.least)


def test_the_load_is_proportional_to_the_arrival_rate(tmp_path: Path) -> None:
    slow = offered_load_of(load_scenario(_write(tmp_path, 0.05, "a.yaml")), 3)
    fast = offered_load_of(load_scenario(_write(tmp_path, 0.1, "b.yaml")), 3)
    assert fast.least == pytest.approx(2 * slow.least, rel=1e-9)


def test_a_task_graph_scenario_has_no_offered_load() -> None:
    root = Path(__file__).resolve().parent.parent
    assert offered_load_of(load_scenario(root / "scenarios" / "topcuoglu2002.yaml"), 0) is None


finite = st.floats(0.1, 100.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7).flatmap(lambda g: st.tuples(
    st.lists(st.tuples(finite, finite, st.sampled_from(["both", "only0", "only1"])), min_size=g, max_size=g),
    st.tuples(st.integers(1, 6), st.integers(1, 6)))))
def test_the_two_type_split_is_the_linear_programs_optimum(case) -> None:
    groups, per = case
    cost = np.array([[a if where != "only1" else np.inf, b if where != "only0" else np.inf]
                     for a, b, where in groups])
    per_type = np.array(per, dtype=float)

    def busiest(x: np.ndarray) -> float:
        return max((np.where(x > 0, cost, 0.0) * x)[:, j].sum() / per_type[j] for j in range(2))

    fast = jobmetrics._two_types(cost, per_type)
    assert np.allclose(fast.sum(axis=1), 1.0) and not (fast[~np.isfinite(cost)] > 0).any()
    assert busiest(fast) == pytest.approx(busiest(jobmetrics._linear_program(cost, per_type)), rel=1e-9, abs=1e-12)


def test_three_types_use_the_linear_program() -> None:
    cost = np.array([[1.0, 2.0, 4.0], [4.0, 1.0, 2.0], [2.0, 4.0, 1.0]])
    x = jobmetrics._least_busiest(cost, np.ones(3))
    assert np.allclose(x, np.eye(3))  # each group on its own fastest type: every type busy 1


def test_validate_and_run_print_the_load_and_warn_above_one(tmp_path: Path) -> None:
    calm, busy = _write(tmp_path, 0.01, "calm.yaml"), _write(tmp_path, 5.0, "busy.yaml")
    result = CliRunner().invoke(app, ["validate", str(calm)])
    assert result.exit_code == 0 and "offered load 0." in result.stdout and "(cpu " in result.stdout
    assert "warning" not in result.stderr
    result = CliRunner().invoke(app, ["validate", str(busy)])
    assert result.exit_code == 0
    lines = result.stderr.strip().splitlines()  # one warning paragraph, wrapped to the width (continuations indented)
    assert lines[0].startswith("warning: offered load ") and all(line.startswith("  ") for line in lines[1:])
    assert "grow without bound" in " ".join(line.strip() for line in lines) and max(map(len, lines)) <= 100
    result = CliRunner().invoke(app, ["run", str(busy), "-s", "mct"])
    assert result.exit_code == 0 and "offered load" in result.stdout and "grow without bound" in result.stderr


def _count_draws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The seeds of every drawing of a stream's day from now on (``build_stream`` counted)."""
    from simsched.scenario import stream as stream_module

    calls: list[int] = []
    real = stream_module.build_stream

    def counting(scenario, seed):  # noqa: ANN001, ANN202
        calls.append(seed)
        return real(scenario, seed)

    monkeypatch.setattr(stream_module, "build_stream", counting)
    return calls


def test_validate_draws_the_day_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``validate`` builds the problem and prints the offered load from one drawing of the day's stream
    (it once drew the same day twice: for the problem, then again for the load)."""
    calls = _count_draws(monkeypatch)
    result = CliRunner().invoke(app, ["validate", str(_write(tmp_path, 0.05))])
    assert result.exit_code == 0, result.output
    assert "offered load" in result.output
    assert calls == [3]  # the scenario's seed, once
    # the load printed is the one of that day, as offered_load_of draws it on its own
    alone = offered_load_of(load_scenario(tmp_path / "s.yaml"), 3)
    assert alone is not None and alone.line() in " ".join(result.output.split())  # wrapped at 100 columns


def test_run_draws_each_day_once_with_the_results_of_separate_draws(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` draws each day's stream once for the load line, the problem, the range probe and every
    scheduler's run (it drew the first day four times), and its results are those of
    :func:`simsched.run.runner.run_scenario` on its own, whose day is drawn apart from the load line's
    (the pinned scenario digests hold both against the separate draws of before)."""
    import json

    from simsched.run.runner import run_scenario

    path = _write(tmp_path, 0.05)
    path.write_text(path.read_text().replace("repetitions: 1", "repetitions: 2"))
    apart = run_scenario(load_scenario(path))  # no load line: its days drawn by itself
    calls = _count_draws(monkeypatch)
    result = CliRunner().invoke(app, ["run", str(path), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert "offered load" in result.output
    assert sorted(calls) == [3, 4]  # two days, each drawn once
    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    assert len(rows) == len(apart.rows) == 4
    for row, alone in zip(rows, apart.rows):
        assert (row["scheduler"], row["seed"]) == (alone["scheduler"], alone["seed"])
        assert row["makespan"] == alone["makespan"] and row["jct_mean"] == alone["jct_mean"]
