"""Sweeps over job streams: rows carry the stream metrics, tables default to them and compare the
schedulers paired on the same days, and a grid over arrival rate x capacity is one resumable study."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.run.columns import GRAPH_METRICS, METRICS, STREAM_METRICS
from simsched.run.executors import PoolExecutor
from simsched.run.store import load_rows
from simsched.study.spec import load_study
from simsched.study.stats import default_metrics, objective_entries, paired_comparison
from simsched.study.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[1]

STREAM = """\
name: tiny-stream
scenario:
  platform:
    processors:
      - {name: cpu, type: cpu, count: 2}
      - {name: gpu, type: gpu, speed: 4.0, count: 1}
    network: {bandwidth: 10.0}
  workload:
    stream:
      jobs: {generator: random, tasks: [4, 8]}
      arrivals: {poisson: 0.05}
      count: 6
      deadline: {slack: 3.0}
  schedulers: [mct]
grid:
  workload.stream.arrivals.poisson: [0.02, 0.2]
  platform.processors[1].count: [1, 2]
schedulers: [mct, srjf-eft]
seeds: [0, 1, 2]
"""

runner = CliRunner()


def _sweep(tmp_path: Path, text: str = STREAM) -> tuple[object, Path]:
    path = tmp_path / "study.yaml"
    path.write_text(text)
    study = load_study(path)
    out = tmp_path / "r.csv"
    run_sweep(study, out, PoolExecutor(1))
    return study, out


def test_stream_rows_carry_job_metrics_and_graph_rows_do_not(tmp_path: Path) -> None:
    study, out = _sweep(tmp_path)
    rows = load_rows(out)
    assert len(rows) == 4 * 2 * 3 and not any(r["error"] for r in rows)
    for r in rows:
        assert r["jobs"] == 6.0
        assert r["jct_p50"] <= r["jct_p95"] <= r["jct_p99"]
        assert r["jct_mean"] > 0 and r["slowdown_mean"] >= 1.0 - 1e-9
        assert 0.0 <= r["deadline_miss_rate"] <= 1.0 and r["throughput"] > 0
        assert r["lost_work"] == 0.0 and r["failures"] == 0.0  # no failures in this scenario
    # more arrivals per unit time on the same platform: the offered load grows with the rate
    by = {(r["workload.stream.arrivals.poisson"], r["platform.processors[1].count"], r["scheduler"], r["seed"]): r
          for r in rows}
    for seed in (0, 1, 2):
        assert by[(0.2, 1, "mct", seed)]["offered_load"] > by[(0.02, 1, "mct", seed)]["offered_load"]
    # a task-graph sweep fills the graph metrics and leaves the stream ones NaN (empty cells)
    graph = tmp_path / "g"
    graph.mkdir()
    _, gout = _sweep(graph, (ROOT / "tests" / "test_sweep.py").read_text().split('SMALL = """\\\n')[1]
                     .split('"""')[0])
    grow = load_rows(gout)[0]
    assert all(math.isfinite(grow[m]) for m in ("makespan", "slr"))
    assert not any(m in grow for m in STREAM_METRICS)  # no empty stream columns in a graph study
    header = gout.read_text().splitlines()[0].split(",")
    assert not set(STREAM_METRICS) & set(header) and "workload.ccr" in header
    stream_header = out.read_text().splitlines()[0].split(",")
    assert stream_header.index("efficiency") < stream_header.index("jct_mean") < stream_header.index("error")


def test_default_metrics_follow_the_results() -> None:
    graph = [{"makespan": 3.0, "jct_mean": math.nan, "error": ""}]
    stream = [{"makespan": 3.0, "jct_mean": 2.0, "deadline_miss_rate": math.nan, "error": ""}]
    deadlines = [{**stream[0], "deadline_miss_rate": 0.0}]
    failed = [{"makespan": math.nan, "jct_mean": 5.0, "error": "boom"}]
    assert default_metrics(graph) == ("makespan", "slr", "utilization")
    assert default_metrics([]) == ("makespan", "slr", "utilization")
    assert default_metrics(failed) == ("makespan", "slr", "utilization")
    assert default_metrics(stream)[0] == "jct_mean" and "deadline_miss_rate" not in default_metrics(stream)
    assert "deadline_miss_rate" in default_metrics(deadlines)
    assert set(default_metrics(deadlines)) <= set(METRICS) and set(GRAPH_METRICS) < set(METRICS)


def test_throughput_is_compared_higher_is_better() -> None:
    rows = [{"scheduler": s, "seed": k, "throughput": v * (1 + 0.01 * k), "error": ""}
            for s, v in (("fast", 2.0), ("slow", 1.0)) for k in range(5)]
    comp = paired_comparison(rows, "throughput")
    assert comp["reference"] == "fast" and comp["best"] == "fast"
    assert comp["ratios"]["slow"]["ratio"] == pytest.approx(0.5)
    # a tie on every day: nobody is significantly best
    tie = [{**r, "throughput": 1.0} for r in rows]
    assert paired_comparison(tie, "throughput")["best"] is None


def test_summarize_and_report_default_to_job_metrics_paired(tmp_path: Path) -> None:
    _, out = _sweep(tmp_path)
    result = runner.invoke(app, ["summarize", str(out), "--json", str(tmp_path / "s.json"),
                                 "--objective", "jct_p95 <= 150"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["metrics"][:3] == ["jct_mean", "jct_p95", "slowdown_mean"]
    assert "deadline_miss_rate" in doc["metrics"]  # the jobs have a deadline
    assert len(doc["groups"]) == 8 and all(g["jct_mean"]["n"] == 3 for g in doc["groups"])
    for point in doc["paired"]:
        comp = point["jct_mean"]
        assert set(comp["ratios"]) == {"mct", "srjf-eft"}
        assert all(c["n"] == 3 for c in comp["ratios"].values())  # paired on the 3 common days
        assert comp["best"] in (None, "mct", "srjf-eft")
    met = doc["objective"]["groups"]
    assert len(met) == 8 and all(0 <= g["met_days"] <= g["days"] == 3 for g in met)
    assert "jct_mean" in result.output and "%" in result.output
    html = tmp_path / "s.html"
    result = runner.invoke(app, ["report", str(out), "-o", str(html)])
    assert result.exit_code == 0, result.output
    page = html.read_text()
    assert "jct_p95" in page and "paired ratio" in page and "deadline_miss_rate" in page


def test_objective_on_stream_metrics_counts_days(tmp_path: Path) -> None:
    rows = [{"point": 0, "scheduler": "a", "seed": s, "jct_p95": v, "error": ""}
            for s, v in enumerate([100.0, 200.0, 300.0, math.nan])]
    (entry,) = objective_entries(rows, [], "jct_p95 <= 250")
    assert entry["met_days"] == 2 and entry["days"] == 4 and entry["wilson"][0] < 0.5 < entry["wilson"][1]


def test_bundled_stream_capacity_grid_validates() -> None:
    study = load_study(ROOT / "scenarios" / "studies" / "stream_capacity_grid.yaml")
    assert study.fields == ("workload.stream.arrivals.poisson", "platform.processors[1].count")
    assert len(study.points) == 9 and len(study.tasks()) == 360
    gpus = {p.overrides["platform.processors[1].count"] for p in study.points}
    assert gpus == {1, 2, 3}
    assert len({p.point_id for p in study.points}) == 9


def test_stream_sweep_resumes_without_rerunning(tmp_path: Path) -> None:
    study, out = _sweep(tmp_path)
    before = {r["task_id"]: r["run_id"] for r in load_rows(out)}
    outcome = run_sweep(study, out, PoolExecutor(1), resume=True)
    assert outcome.ran == 0 and outcome.skipped == len(before)
    assert {r["task_id"]: r["run_id"] for r in load_rows(out)} == before


# ---------------------------------------------------------------- capacity per value: --over
TINY_CAPACITY = """\
seed: 0
platform:
  processors:
    - {name: cpu, type: cpu, count: 1}
    - {name: gpu, type: gpu, speed: 4.0, count: 1}
  network: {bandwidth: 10.0}
workload:
  stream:
    jobs: {generator: random, tasks: [3, 6]}
    arrivals: {poisson: 0.05}
    count: 5
schedulers: [mct]
"""


def test_parse_over() -> None:
    from simsched.capacity import parse_over
    from simsched.errors import SimschedError

    assert parse_over("workload.stream.arrivals.poisson=0.01, 0.02") == ("workload.stream.arrivals.poisson",
                                                                        [0.01, 0.02])
    assert parse_over("platform.processors[0].count=1") == ("platform.processors[0].count", [1])
    for bad in ("workload.tasks", "workload..tasks=1", "workload.tasks=", "workload.tasks=1,,2", "a=1,1"):
        with pytest.raises(SimschedError) as info:
            parse_over(bad)
        assert info.value.field == "--over"


def test_capacity_over_searches_each_value_on_the_same_days(tmp_path: Path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(TINY_CAPACITY)
    out = tmp_path / "over.json"
    result = runner.invoke(app, ["capacity", str(scen), "--objective", "jct_p95 <= 60", "--resource", "gpu",
                                 "--days", "3",
                                 "--over", "workload.stream.arrivals.poisson=0.005,0.5", "--json", str(out)],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["field"] == "workload.stream.arrivals.poisson" and doc["values"] == [0.005, 0.5]
    slow, fast = (c["result"] for c in doc["cells"])
    assert slow["seeds"] == fast["seeds"] == [0, 2]  # the same days for every value
    need = [r["variants"][0]["capacity"] for r in (slow, fast)]
    assert all(n is not None for n in need)
    assert need[0] <= need[1]  # a hundred times the arrival rate never needs fewer GPUs
    assert "0.005" in result.output and "0.5" in result.output
    # one search of the same value gives the same answer as its cell
    single = tmp_path / "one.yaml"
    single.write_text(TINY_CAPACITY.replace("poisson: 0.05", "poisson: 0.5"))
    one = tmp_path / "one.json"
    r = runner.invoke(app, ["capacity", str(single), "--objective", "jct_p95 <= 60", "--resource", "gpu",
                                 "--days", "3",
                            "--json", str(one)])
    assert r.exit_code == 0, r.output
    assert json.loads(one.read_text())["variants"][0]["capacity"] == need[1]


@pytest.mark.parametrize("over, extra, needle", [
    ("workload.stream.arrivals.poisson=0.1,-1", [], "-1"),
    ("workload.stream.arrivals.poisson", [], "FIELD=V1"),
    ("platform.processors[7].count=1,2", [], "[7]"),
    ("workload.stream.arrivals.poisson=0.1", ["--plot", "p.png"], "--plot"),
])
def test_capacity_over_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, over, extra, needle) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(TINY_CAPACITY)
    out = tmp_path / "over.json"
    args = [a if a != "p.png" else str(tmp_path / a) for a in extra]
    result = runner.invoke(app, ["capacity", str(scen), "--objective", "jct_p95 <= 60", "--resource", "gpu",
                                 "--days", "2",
                                 "--over", over, "--json", str(out), *args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output
    assert "s.yaml" in lines[0] and needle in lines[0], lines[0]
    assert not out.exists() and not (tmp_path / "p.png").exists()


def test_a_failure_world_sweep_records_lost_work(tmp_path: Path) -> None:
    """A task graph on failing processors runs on the online engine: its rows carry the failure
    counters and the work lost, so an MTBF sweep can be summarised on them."""
    text = """\
name: mtbf
scenario:
  platform: {processors: [{name: p, count: 3}], network: {bandwidth: 1.0}}
  workload: {generator: random, tasks: 20}
  failures: {mtbf: 200, mttr: 10}
  schedulers: [mct]
grid:
  failures.mtbf: [50, 5000]
schedulers: [mct]
seeds: [0, 1]
"""
    _, out = _sweep(tmp_path, text)
    rows = load_rows(out)
    assert len(rows) == 4 and not any(r["error"] for r in rows)
    by = {}
    for r in rows:
        assert r["lost_work"] >= 0 and r["restarts"] <= r["failures"] + r["tasks"]
        by.setdefault(r["failures.mtbf"], []).append(r)
    assert sum(r["failures"] for r in by[50]) > sum(r["failures"] for r in by[5000])
    result = runner.invoke(app, ["summarize", str(out), "-m", "lost_work", "-m", "failures"])
    assert result.exit_code == 0, result.output
