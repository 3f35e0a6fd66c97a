"""Capacity what-if (simsched.capacity and `simsched capacity`): objectives, the search, confidence,
a task-graph scenario end to end, and bad input (exit 2, located)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer import Typer
from typer.testing import CliRunner

from simsched.capacity import find_capacity, parse_objective, search_capacity
from simsched.cli.capacity_cmd import capacity_command
from simsched.errors import SimschedError


def test_parse_objective_forms() -> None:
    o = parse_objective("p95 JCT ≤ 6h and deadline-miss <= 1%")
    assert [(c.metric, c.op, c.threshold) for c in o.clauses] == [("jct_p95", "<=", 21600.0),
                                                                 ("deadline_miss_rate", "<=", 0.01)]
    assert parse_objective("makespan<120").clauses[0].threshold == 120.0
    u = parse_objective("utilisation >= 0.5").clauses[0]
    assert u.metric == "utilization" and u.holds(0.5) and not u.holds(0.49) and not u.holds(float("nan"))
    assert parse_objective("jct_mean <= 30min").clauses[0].threshold == 1800.0


@pytest.mark.parametrize("text", ["", "makespan", "makespan == 3", "makespan <= fast", "<= 3", "makespan <= 3 parsecs",
                                  "makespan <= inf", 12])
def test_parse_objective_rejects(text) -> None:
    with pytest.raises(SimschedError) as exc:
        parse_objective(text, field="capacity.objective", file="s.yaml", line=7)
    assert exc.value.field == "capacity.objective" and exc.value.line == 7


class Monotone:
    """A day's makespan is work / capacity plus a per-day jitter: monotone in capacity."""

    unit = "processors"
    variants = ["a", "b"]
    metrics = ["makespan"]

    def __init__(self, work: dict[str, float]) -> None:
        self.work, self.calls = work, 0

    def __call__(self, variant: str, capacity: int, seed: int) -> dict[str, float]:
        self.calls += 1
        jitter = np.random.default_rng(seed).uniform(0.0, 1.0)
        return {"makespan": self.work[variant] / capacity + jitter}


@pytest.mark.parametrize("work", [1.0, 7.0, 100.0, 1000.0, 4096.0])
def test_search_finds_the_fewest_capacity(work) -> None:
    model = Monotone({"a": work, "b": work})
    seeds = list(range(20))
    obj = parse_objective("makespan <= 2")
    ans = search_capacity(model, "a", obj, seeds, on_days=0.95, high=10_000)
    jitter = np.sort([np.random.default_rng(s).uniform() for s in seeds])
    # brute force: the fewest n with >= 95% of days meeting it
    brute = next(n for n in range(1, 10_000) if np.mean(work / n + jitter <= 2) >= 0.95)
    assert ans.capacity == brute
    assert ans.capacity - 1 in ans.levels or ans.capacity == 1  # the answer is tight
    assert len(ans.levels) <= 2 * int(np.ceil(np.log2(brute + 1))) + 2  # O(log n) capacities
    assert model.calls == sum(len(lv.met) for lv in ans.levels.values())
    assert len(ans.levels[ans.capacity].met) == 20  # the answer is simulated on every day
    full = search_capacity(Monotone({"a": work, "b": work}), "a", obj, seeds, on_days=0.95, high=10_000,
                           all_days=True)
    assert full.capacity == ans.capacity and all(len(lv.met) == 20 for lv in full.levels.values())
    if ans.capacity > 1:  # a failing capacity stopped at its second miss (one of 20 may miss)
        below = ans.levels[ans.capacity - 1]
        assert below.stopped_early or len(below.met) == 20
        assert len(below.met) - below.met_days == 2 or len(below.met) == 20


def test_search_unreachable_and_all_days_rule() -> None:
    model = Monotone({"a": 100.0, "b": 1.0})
    obj = parse_objective("makespan <= 0.5")  # the jitter alone breaks it on some days
    ans = search_capacity(model, "a", obj, list(range(20)), high=64)
    assert ans.capacity is None and max(ans.levels) == 64
    out = find_capacity(model, parse_objective("makespan <= 2"), days=20, on_days=1.0, variants=["b"])
    entry = out["variants"][0]
    lv = next(lv for lv in entry["levels"] if lv["capacity"] == entry["capacity"])
    assert lv["met_days"] == 20 and lv["rate"] == 1.0 and lv["wilson"][1] == 1.0 and lv["wilson"][0] < 1.0
    m = lv["metrics"]["makespan"]
    assert m["t_low"] <= m["mean"] <= m["t_high"] and m["boot_low"] <= m["mean"] <= m["boot_high"]


def test_search_rejects_bad_arguments() -> None:
    model = Monotone({"a": 1.0, "b": 1.0})
    obj = parse_objective("makespan <= 2")
    with pytest.raises(SimschedError):
        search_capacity(model, "a", obj, [], high=4)
    with pytest.raises(SimschedError):
        search_capacity(model, "a", obj, [0], on_days=0.0)
    with pytest.raises(SimschedError):
        find_capacity(model, obj, variants=["nope"])


def _app() -> Typer:
    app = Typer()
    app.command()(capacity_command)
    return app


TASK_GRAPH = {
    "name": "tg", "seed": 0,
    "platform": {"processors": [{"name": "c", "type": "cpu", "count": 1}, {"name": "g", "type": "gpu", "count": 1}]},
    "workload": {"generator": "random", "tasks": 30},
    "schedulers": ["heft", "minmin"],
}


def test_task_graph_scenario_end_to_end(tmp_path: Path) -> None:
    """Sizing the gpu entry of a random-DAG scenario: the answer meets the objective on the days, one fewer does not."""
    scen = tmp_path / "tg.yaml"
    scen.write_text(yaml.safe_dump({**TASK_GRAPH, "capacity": {"objective": "slr <= 2.2", "resource": "gpu",
                                                                "days": 6}}))
    out_json, plot = tmp_path / "cap.json", tmp_path / "cap.png"
    r = CliRunner().invoke(_app(), [str(scen), "--scheduler", "heft", "--json", str(out_json), "--plot", str(plot)])
    assert r.exit_code == 0, r.output
    result = json.loads(out_json.read_text())
    entry = result["variants"][0]
    n = entry["capacity"]
    assert n is not None and result["days"] == 6 and result["unit"] == "processors (gpu)"
    assert plot.read_bytes()[:4] == b"\x89PNG"
    from simsched.run.runner import run_scenario
    from simsched.scenario import parse_scenario
    from simsched.yamlio import YamlDocument

    def slr(count: int, seed: int) -> float:
        data = json.loads(json.dumps(TASK_GRAPH))
        data["platform"]["processors"][1]["count"] = count
        return run_scenario(parse_scenario(YamlDocument(data)), schedulers=["heft"], seed=seed).rows[0]["slr"]

    assert all(slr(n, s) <= 2.2 for s in range(6))
    if n > 1:
        assert not all(slr(n - 1, s) <= 2.2 for s in range(6))


@pytest.mark.parametrize("extra, args, needle", [
    ({"capacity": {"objective": "makespan <= soon"}}, [], "capacity.objective"),
    ({"capacity": {"objective": "jct_p95 <= 3h", "resource": "gpu"}}, [], "no metric 'jct_p95'"),
    ({"capacity": {"days": 0}}, ["--objective", "makespan <= 9"], "capacity.days"),
    ({"capacity": {"dayz": 3}}, ["--objective", "makespan <= 9"], "capacity.dayz"),
    ({}, ["--objective", "makespan <= 9", "--resource", "tpu"], "no processor entry"),
    ({}, ["--objective", "makespan <= 9"], "several processor entries"),
    ({}, ["--objective", "makespan <= 9", "--resource", "gpu", "--days", "0"], "--days"),
    ({}, [], "no service objective"),
])
def test_bad_input_is_exit_2_located(tmp_path: Path, extra, args, needle) -> None:
    scen = tmp_path / "bad.yaml"
    scen.write_text(yaml.safe_dump({**TASK_GRAPH, **extra}, sort_keys=False))
    out = tmp_path / "never.json"
    r = CliRunner().invoke(_app(), [str(scen), *args, "--json", str(out)])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.output
    assert "bad.yaml" in lines[0] or needle == "--days"
    if extra:
        assert ":" in lines[0].split("bad.yaml", 1)[1][:6]  # file:line
    assert not out.exists()


def test_bundled_capacity_scenario_and_grid_study_validate() -> None:
    from simsched.capacity import question_from
    from simsched.study.spec import load_study
    from simsched.yamlio import load_yaml

    root = Path(__file__).resolve().parents[1] / "scenarios"
    q = question_from(load_yaml(root / "capacity" / "gpus_for_a_deadline.yaml"))
    assert q.days >= 20 and q.objective.clauses[0].metric == "makespan" and q.model.resource == "gpu"
    study = load_study(root / "studies" / "capacity_grid.yaml")
    assert len(study.points) == 9 and len(study.tasks()) == 360


def test_summarize_counts_days_meeting_an_objective(tmp_path: Path) -> None:
    from simsched.cli.main import app
    from simsched.run.tables import columns_of, write_table

    rows = [{"task_id": f"t{p}{s}", "point": p, "point_id": f"p{p}", "platform.processors[1].count": p + 1,
             "scheduler": "heft", "seed": s, "tasks": 5, "makespan": 100.0 + 10 * s / (p + 1), "error": None}
            for p in range(2) for s in range(10)]
    rows[-1]["error"], rows[-1]["makespan"] = "boom", float("nan")  # a failed run misses the objective
    csv = write_table(tmp_path / "r.csv", rows, columns_of(rows))
    out = tmp_path / "s.json"
    r = CliRunner().invoke(app, ["summarize", str(csv), "-m", "makespan", "--objective", "makespan <= 150",
                                 "--json", str(out)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    groups = json.loads(out.read_text())["objective"]["groups"]
    # point 0: makespan 100 + 10 s <= 150 for s <= 5 (6 of 10); point 1: 100 + 5 s for all but the failed run
    assert [(g["met_days"], g["days"]) for g in groups] == [(6, 10), (9, 10)]
    assert groups[0]["wilson"][0] < 0.6 < groups[0]["wilson"][1]
    bad = CliRunner().invoke(app, ["summarize", str(csv), "--objective", "speed >= 2"])
    assert bad.exit_code == 2 and "speed" in bad.stderr and "makespan" in bad.stderr and "paired" not in bad.stdout


def test_autotuning_day_without_arrivals_meets_upper_bounds() -> None:
    from simsched.capacity import AutotuneModel, find_capacity

    section = {"servers": [{"cores": 8, "gpus": 1}],
               "arrivals": {"rate_per_hour": 0.05, "duration_h": 1,
                            "jobs": [{"tasks": [{"name": "a"}], "trials_per_task": 32, "batch_size": 16}]},
               "policies": ["sequential"]}
    model = AutotuneModel(section)
    quiet = [s for s in range(40) if model("sequential", 1, s)["jobs"] == 0]
    assert quiet and model("sequential", 1, quiet[0])["jct_p95"] == 0.0
    out = find_capacity(model, parse_objective("jct_p95 <= 1h"), days=10)
    assert out["variants"][0]["capacity"] == 1
