"""The power over time in a run's results: its profile (exact slices and per-processor steps), the
HTML report's power and energy section, the Perfetto power counter tracks (their integral is the
run's energy), and results documents whose power profile is malformed (exit 2, nothing written)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.report.html import report_html
from simsched.report.power_plot import power_section
from simsched.report.trace import write_trace, write_trace_document
from simsched.run.document import first_runs
from simsched.run.results import write_results
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario
from simsched.simulator.power import energy_of_steps, mean_power

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

STREAM = """
name: tiny-power-stream
seed: 3
platform:
  processors:
    - {name: cpu, type: cpu, speed: 1.0, count: 3}
    - {name: gpu, type: gpu, speed: 2.0, count: 1}
  network: {bandwidth: 5.0, latency: 0.1}
  power:
    types:
      cpu: {idle: 30, busy: 110, powered_off: 3}
      gpu:
        pstates: [{speed: 1.0, busy: 300, idle: 60}, {speed: 0.6, busy: 150, idle: 45}]
        failed: 10
    link_energy: 0.2
workload:
  stream:
    jobs: {generator: random, tasks: [4, 8], ccr: 0.5}
    arrivals: {poisson: 0.05}
    horizon: 200
failures:
  types: {cpu: {mtbf: 300, mttr: 20}}
schedulers: [mct, power-off]
"""


def _doc(report, tmp_path: Path) -> dict:
    path = write_results(report, tmp_path / "r.json")
    return json.loads(Path(path).read_text())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 500)), min_size=1, max_size=30), st.integers(1, 50))
def test_slices_hold_exactly_the_step_functions_energy(knots, bins) -> None:
    t = np.cumsum([0.0] + [dt for dt, _ in knots])
    w = np.array([x for _, x in knots])
    edges = np.linspace(0.0, t[-1], bins + 1)
    means = mean_power((t, w), edges)
    assert float(np.sum(means * np.diff(edges))) == pytest.approx(energy_of_steps((t, w)), rel=1e-9, abs=1e-9)


def test_static_profile_plot_and_counters_match_the_golden_joules(tmp_path: Path) -> None:
    report = run_scenario(load_scenario(ROOT / "scenarios/energy/golden.yaml"))
    doc = _doc(report, tmp_path)
    row = doc["results"][0]
    prof = row["power"]
    assert row["energy_j"] == pytest.approx(920) and prof["extra_j"] == 0
    w = prof["watts"]["cpu"]
    assert sum(w) * prof["horizon"] / len(w) == pytest.approx(920)
    # p0: b [0, 4] at 100 W then idle 20 W to 5; p1: c, a back to back at 100 W
    assert prof["processors"]["p0"] == {"t": [0.0, 4.0, 5.0], "w": [100.0, 20.0]}
    assert prof["processors"]["p1"] == {"t": [0.0, 5.0], "w": [100.0]}
    page = report_html(doc)
    assert "<h2>Power and energy</h2>" in page and 'id="energy"' in page
    drawn = [float(x) for x in re.findall(r'data-type="cpu" data-energy-j="([^"]+)"', page)]
    assert drawn == [pytest.approx(920)]
    for trace in (write_trace(report, tmp_path / "t1.json"), write_trace_document(doc, tmp_path / "t2.json")):
        events = json.loads(Path(trace).read_text())["traceEvents"]
        counters = [e for e in events if e["ph"] == "C"]
        assert {e["name"] for e in counters} == {"power p0 (W)", "power p1 (W)"}
        assert _integral(counters) == pytest.approx(920)


def _integral(counters: list[dict]) -> float:
    """Watts x trace seconds of every counter track (each sample holds until the track's next one)."""
    total = 0.0
    for name in {e["name"] for e in counters}:
        track = sorted((e for e in counters if e["name"] == name), key=lambda e: e["ts"])
        for a, b in zip(track, track[1:]):
            total += a["args"]["W"] * (b["ts"] - a["ts"]) / 1e6
        assert track[-1]["args"]["W"] == 0.0
    return total


def test_stream_counters_plus_lumps_are_energy_and_jobs_are_drawn(tmp_path: Path) -> None:
    scenario_path = tmp_path / "s.yaml"
    scenario_path.write_text(STREAM)
    report = run_scenario(load_scenario(scenario_path), repetitions=2)
    doc = _doc(report, tmp_path)
    firsts = first_runs(doc)
    assert all("power" in r for r in firsts)
    assert sum("power" in r for r in doc["results"]) == len(firsts)  # only the first run of each carries it
    events = json.loads(Path(write_trace_document(doc, tmp_path / "t.json")).read_text())
    energy = events["otherData"]["energy"]
    for pid, row in enumerate(firsts, start=1):
        counters = [e for e in events["traceEvents"] if e["ph"] == "C" and e["pid"] == pid]
        label = f"{row['scheduler']} (seed {row['seed']})"
        joules = _integral(counters) * energy[label]["time_unit_s"] + energy[label]["extra_j"]
        assert joules == pytest.approx(row["energy_j"], rel=1e-9)
        assert len({e["name"] for e in counters}) == 4  # one track per processor
        prof = row["power"]
        per_type = sum(sum(v) for v in prof["watts"].values()) * prof["horizon"] / 200
        assert per_type * prof["time_unit_s"] + prof["extra_j"] == pytest.approx(row["energy_j"], rel=1e-9)
    section = power_section(doc, firsts)
    bars = re.findall(r'<rect class="jobenergy" data-job="(\d+)" data-energy-j="([^"]+)"', section)
    first_jobs = {int(j["job"]): j["energy_j"] for j in firsts[0]["jobs"]}
    assert bars and all(float(e) == pytest.approx(first_jobs[int(j)]) for j, e in bars[:len(first_jobs)])


def test_a_run_without_power_has_no_section() -> None:
    report = run_scenario(load_scenario(ROOT / "scenarios/topcuoglu2002.yaml"), schedulers=["heft"])
    assert all("power" not in r for r in report.rows)
    doc = {"results": [{**report.rows[0], "schedule": list(report.rows[0]["schedule"])}]}
    assert power_section(doc, first_runs(doc)) == ""


@pytest.mark.parametrize(("power", "field"), [
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": [1, -2]}}, "power.watts.cpu[1]"),
    ({"horizon": 5, "time_unit_s": 0, "watts": {"cpu": [1]}}, "time_unit_s"),
    ({"horizon": 5, "watts": {"cpu": [1]}}, "power"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": [1], "gpu": [1, 2]}}, "watts.gpu"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": []}}, "watts.cpu"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": "x"}}, "watts.cpu"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": [1]}, "processors": {"p0": {"t": [0, 5], "w": [1, 2]}}},
     "processors.p0"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": [1]}, "processors": {"p0": {"t": [3, 1], "w": [1]}}},
     "processors.p0.t[1]"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": [1]}, "extra_j": float("nan")}, "extra_j"),
    ({"horizon": 5, "time_unit_s": 1, "watts": {"cpu": [True]}}, "power.watts.cpu[0]"),
    ("no", "power"),
])
def test_malformed_power_profile_is_refused_with_its_field(tmp_path: Path, power, field: str) -> None:
    report = run_scenario(load_scenario(ROOT / "scenarios/energy/golden.yaml"))
    doc = _doc(report, tmp_path)
    doc["results"][0]["power"] = power
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, indent=1).replace("NaN", "1e999"))
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(bad), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert field in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
