"""Energy accounting (simsched.simulator.power): the hand-computed golden case of docs/energy.md,
properties against an independent integrator, SimGrid's one-core host, and bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.simulator.power import (
    EnergySetup,
    IntensityTrace,
    Intervals,
    PowerModel,
    PowerTables,
    Price,
    ProcessorPower,
    PState,
    account,
    carbon_g,
    cost_usd,
    energy_of_steps,
)
from simsched.testing.energy_check import check, reference

ROOT = Path(__file__).resolve().parents[1]
TWO_STATES = ProcessorPower((PState(1.0, 100.0, 20.0), PState(0.5, 40.0, 10.0)), switch_latency=1.0,
                            switch_energy_j=5.0)


def golden_intervals(**kw) -> Intervals:
    # a on p0 [0, 2] nominal; b on p0 [5, 9] at P-state 1 (half speed) after an idle gap; c on p1 [1, 4]
    return Intervals(np.array([0, 1, 2]), np.array([0, 0, 1]), np.array([0.0, 5.0, 1.0]), np.array([2.0, 9.0, 4.0]),
                     np.array([0, 1, 0]), **kw)


def test_golden_three_tasks_two_pstates_idle_gap() -> None:
    """docs/energy.md, worked by hand: p0 = 2 s x 100 W + 2 s idle x 20 W + 1 s switching (at the old
    P-state's 20 W) + 5 J + 4 s x 40 W = 425 J; p1 = 1 s x 20 + 3 s x 100 + 5 s x 20 = 420 J."""
    tables = PowerTables.build([TWO_STATES, TWO_STATES])
    acc = account(tables, golden_intervals(), 9.0, 3)
    assert acc.energy_j.tolist() == [425.0, 420.0]
    assert acc.total_j == 845.0
    assert acc.busy.tolist() == [[2.0, 4.0], [3.0, 0.0]]
    assert acc.idle.tolist() == [2.0, 6.0] and acc.switching.tolist() == [1.0, 0.0]
    assert acc.time_in_states().tolist() == [9.0, 9.0]
    assert acc.task_energy_j.tolist() == [200.0, 160.0, 300.0]
    assert energy_of_steps(acc.steps) + 5.0 == 845.0
    # carbon: 400 g/kWh until t=4, then 100: exact integral of the power steps
    trace = IntensityTrace(np.array([0.0, 4.0]), np.array([400.0, 100.0]))
    p = {0: [100, 100, 20, 20], 1: [20, 100, 100, 100]}  # watts on [0,1), [1,2), [2,3), [3,4) for p0 / p1
    first = sum(p[0]) + sum(p[1])  # 4 s at 400 g/kWh
    after = 1 * 20 + 40 * 4 + 20 * 5 + (20 - 20) * 0  # p0: idle 4-5 (incl. switch), busy 5-9; p1 idle 4-9
    expected = (first * 400 + after * 100 + 5 * 100) / 3.6e6  # the 5 J switch lump at t=4 (intensity 100)
    assert carbon_g(acc, tables, trace) == pytest.approx(expected, rel=1e-12)


def test_off_and_failed_states() -> None:
    tables = PowerTables.build([TWO_STATES, TWO_STATES])
    iv = golden_intervals(down=np.array([[1, 5.0, 7.0]]), off=np.array([[0, 2.5, 3.5]]))
    acc = account(tables, iv, 9.0, 3)
    assert acc.off.tolist() == [1.0, 0.0] and acc.failed.tolist() == [0.0, 2.0]
    assert acc.energy_j.tolist() == [405.0, 380.0]  # 1 s off saves 20 J on p0, 2 s failed saves 40 J on p1
    assert acc.time_in_states().tolist() == [9.0, 9.0]


def test_simgrid_one_core_host_gives_the_same_joules() -> None:
    """SimGrid host energy (wattage_per_state 'Idle:Epsilon:AllCores', one core): idle -> Idle, busy ->
    AllCores (load 1), off -> wattage_off; E = integral of P dt.  Our busy_w = AllCores, idle_w = Idle."""
    idle, all_cores, off = 95.0, 200.0, 10.0
    tables = PowerTables.build([ProcessorPower((PState(1.0, all_cores, idle),), off)])
    iv = Intervals(np.array([0, 1]), np.array([0, 0]), np.array([1.0, 6.0]), np.array([4.0, 7.0]), np.array([0, 0]),
                   off=np.array([[0, 8.0, 9.0]]))
    simgrid = idle * 1 + all_cores * 3 + idle * 2 + all_cores * 1 + idle * 1 + off * 1 + idle * 1
    assert account(tables, iv, 10.0, 2).total_j == pytest.approx(simgrid)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_matches_independent_integrator(seed: int) -> None:
    """Energy, time in every state, conservation and carbon equal the plain reference walk, on random
    engine runs (static plans with P-states, online runs with failures) with power-off intervals."""
    assert check(seed) == []


def test_cost_billing() -> None:
    tables = PowerTables.build([ProcessorPower.simple(0.0, 0.0)] * 2, time_unit_s=60.0)
    acc = account(tables, Intervals(np.array([0]), np.array([0]), np.array([0.0]), np.array([90.0]), np.array([0])),
                  90.0, 1)  # 90 minutes
    second = Price(hourly=2.0)
    hour = Price(hourly=2.0, billing="hour")
    owned = Price(purchase=8760.0, lifetime_hours=8760.0)
    assert cost_usd(acc, tables, [second, second], 0.0) == pytest.approx(6.0)
    assert cost_usd(acc, tables, [hour, hour], 0.0) == pytest.approx(8.0)  # two started hours each
    assert cost_usd(acc, tables, [owned, owned], 0.0) == pytest.approx(3.0)


def test_reference_is_not_vacuous() -> None:
    tables = PowerTables.build([TWO_STATES, TWO_STATES])
    ref = reference(tables, golden_intervals(), 9.0)
    assert ref["energy"].tolist() == [425.0, 420.0]


def test_intensity_trace_rejects_bad_rows() -> None:
    with pytest.raises(SimschedError):
        IntensityTrace(np.array([0.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(SimschedError):
        IntensityTrace(np.array([1.0]), np.array([1.0]))
    with pytest.raises(SimschedError):
        PState(0.0, 10.0, 5.0)
    with pytest.raises(SimschedError):
        PState(1.0, 5.0, 10.0)


# --------------------------------------------------------------------------- scenarios
def test_golden_scenario_row(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(ROOT / "scenarios/energy/golden.yaml"), "--json", str(out)])
    assert result.exit_code == 0
    row = json.loads(out.read_text())["results"][0]
    assert row["makespan"] == 5.0
    assert row["energy_j"] == 920.0
    assert row["carbon_g"] == pytest.approx(920 / 3.6e6 * 400)
    assert row["cost_usd"] == pytest.approx(920 / 3.6e6 * 0.30)


def test_stream_rows_and_job_energy(tmp_path: Path) -> None:
    from simsched.run.streams import simulate_stream
    from simsched.scenario import load_scenario

    scenario = load_scenario(ROOT / "scenarios/energy/stream_failures.yaml")
    run = simulate_stream(scenario, "mct", 21)
    assert run.stats.failures > 0
    assert set(run.energy) == {"energy_j", "peak_w", "carbon_g", "cost_usd"}
    jobs = sum(r["energy_j"] for r in run.metrics.records)
    assert 0 < jobs < run.energy["energy_j"]  # jobs are charged their busy energy; idle and failed are not


def test_no_power_model_no_energy_fields() -> None:
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    report = run_scenario(load_scenario(ROOT / "scenarios/topcuoglu2002.yaml"))
    makespans = {r["scheduler"]: r["makespan"] for r in report.rows}
    assert (makespans["heft"], makespans["cpop"]) == (80.0, 86.0)
    assert all("energy_j" not in r for r in report.rows)


BASE = """
name: e
platform:
  processors: [{name: p, type: cpu, count: 2}]
  power:
    types:
      cpu: {POWER}
  {EXTRA}
workload:
  tasks: [{name: a, cost: [1, 1]}]
schedulers: [heft]
"""


@pytest.mark.parametrize("power, extra, field", [
    ("{idle: -1, busy: 5}", "", "platform.power.types.cpu.idle"),
    ("{idle: .nan, busy: 5}", "", "platform.power.types.cpu.idle"),
    ("{idle: 1, busy: .inf}", "", "platform.power.types.cpu.busy"),
    ("{idle: true, busy: 5}", "", "platform.power.types.cpu.idle"),
    ("{idle: 10, busy: 5}", "", "platform.power.types.cpu"),
    ("{pstates: [{speed: 0, busy: 5, idle: 1}]}", "", "platform.power.types.cpu.pstates[0].speed"),
    ("{idle: 1, busy: 5}", "prices: {kwh: -0.1}", "platform.prices.kwh"),
    ("{idle: 1, busy: 5}", "prices: {types: {cpu: {hourly: -2}}}", "platform.prices.types.cpu.hourly"),
    ("{idle: 1, busy: 5}", "carbon: {trace: nothere.csv}", "platform.carbon.trace"),
])
def test_bad_input_exit_2_one_line(tmp_path: Path, power: str, extra: str, field: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(BASE.replace("{POWER}", power).replace("{EXTRA}", extra))
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["run", str(f), "--json", str(out)])
    assert result.exit_code == 2
    err = result.output.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert field in err and f"{f}:" in err
    assert not out.exists()


@pytest.mark.parametrize("rows, line, field", [
    ("time,intensity\n0,100\n10,90\n5,80\n", 4, "time"),      # out of order
    ("time,intensity\n0,100\n10,\n", 3, "intensity"),          # a gap
    ("time,intensity\n3,100\n", 2, "time"),                    # does not start at 0
    ("time,intensity\n0,-5\n", 2, "intensity"),                # negative
    ("time,intensity\n0,nan\n", 2, "intensity"),               # not finite
    ("when,intensity\n0,1\n", 1, "time"),                      # no time column
])
def test_bad_intensity_trace_located(tmp_path: Path, rows: str, line: int, field: str) -> None:
    (tmp_path / "grid.csv").write_text(rows)
    f = tmp_path / "s.yaml"
    f.write_text(BASE.replace("{POWER}", "{idle: 1, busy: 5}").replace("{EXTRA}", "carbon: {trace: grid.csv}"))
    result = CliRunner().invoke(app, ["validate", str(f)])
    assert result.exit_code == 2
    err = result.output.strip()
    assert f"grid.csv:{line}: {field}:" in err and len(err.splitlines()) == 1


def test_missing_type_entry(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(textwrap.dedent("""
        platform:
          processors: [{name: p, type: cpu}, {name: g, type: gpu}]
          power: {types: {cpu: {idle: 1, busy: 2}}}
        workload: {tasks: [{name: a, cost: [1, 1]}]}
        schedulers: [heft]
    """))
    result = CliRunner().invoke(app, ["validate", str(f)])
    assert result.exit_code == 2 and "no power entry for processor type 'gpu'" in result.output


def test_setup_resolves_against_any_platform() -> None:
    from simsched.simulator.platform import Platform, Processor

    setup = EnergySetup(PowerModel({"cpu": ProcessorPower.simple(1, 2)}, {"c3": ProcessorPower.simple(5, 9)}))
    tables = setup.power.tables(Platform.uniform([Processor(f"c{i}") for i in range(4)]))
    assert tables.idle_w[:, 0].tolist() == [1, 1, 1, 5]


def test_simgrid_k_core_host_with_epsilon_equal_idle() -> None:
    """docs/energy.md: a 2-core SimGrid host (Idle = 2i, AllCores = 2b, Epsilon = Idle) = 2 processors."""
    i, b = 10.0, 50.0
    tables = PowerTables.build([ProcessorPower.simple(i, b)] * 2)
    iv = Intervals(np.array([0, 1]), np.array([0, 1]), np.array([0.0, 2.0]), np.array([4.0, 6.0]), np.array([0, 0]))
    idle_h, all_h = 2 * i, 2 * b

    def host(load: float) -> float:
        return idle_h if load == 0 else idle_h + load * (all_h - idle_h)

    simgrid = host(0.5) * 2 + host(1.0) * 2 + host(0.5) * 2 + host(0.0) * 2  # on [0,2) [2,4) [4,6) [6,8)
    assert account(tables, iv, 8.0, 2).total_j == pytest.approx(simgrid)


def test_autotuning_rows_report_energy(tmp_path: Path) -> None:
    from simsched.run.autotune import _interference, plan_jobs, run_autotuning, servers_of
    from simsched.scenario import load_scenario
    from simsched.schedulers.registry import AUTOTUNE_POLICIES
    from simsched.simulator.autotune_engine import simulate

    cfg = load_scenario(ROOT / "scenarios/energy/autotuning_power.yaml").autotuning
    row = run_autotuning(cfg, seed=1, policies=["sequential"])["results"][0]
    # one server (60 W + 9 W per busy core) and one GPU (40 W idle, 250 W busy) over the makespan
    r = simulate(plan_jobs(cfg, 1), servers_of(cfg), AUTOTUNE_POLICIES["sequential"](), _interference(cfg))
    assert r.gpu_busy_s > 0 and r.core_busy_s > 0
    assert row["energy_j"] == pytest.approx(r.makespan * (60 + 40) + r.gpu_busy_s * (250 - 40) + r.core_busy_s * 9,
                                            rel=1e-12)
    f = tmp_path / "a.yaml"
    f.write_text((ROOT / "scenarios/energy/autotuning_power.yaml").read_text().replace("gpu_busy: 250", "gpu_busy: 30"))
    result = CliRunner().invoke(app, ["run", str(f), "--json", str(tmp_path / "o.json")])
    assert result.exit_code == 2 and "autotuning.power" in result.output and not (tmp_path / "o.json").exists()
