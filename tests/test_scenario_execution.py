"""platform.overheads and platform.storage in scenarios: read, validated (exit 2, located), reported by
`simsched validate`, and wired into task-graph and stream runs; absent or all zero, today's runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import refused
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.run.runner import run_scenario
from simsched.scenario import load_scenario
from simsched.simulator.engine import PROFILES, Overheads

MONTAGE = Path(__file__).resolve().parents[1] / "scenarios" / "montage_wfcommons.yaml"

BASE = """\
name: t
seed: 3
platform:
  processors: [{{name: cpu, count: 3}}]
  network: {{bandwidth: 2.0, latency: 0.1}}
{extra}workload: {{generator: random, tasks: 12}}
schedulers: [heft, mct]
"""

STREAM = """\
name: s
seed: 1
platform:
  processors: [{{name: cpu, count: 3}}]
{extra}workload:
  stream:
    jobs: {{generator: random, tasks: [4, 8]}}
    arrivals: {{poisson: 0.05}}
    horizon: 200
schedulers: [mct, heft]
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def rows(path: Path) -> dict[str, dict]:
    report = run_scenario(load_scenario(path))
    return {r["scheduler"]: r for r in report.rows}


def test_profiles_names_and_overrides_are_read(tmp_path):
    sc = load_scenario(write(tmp_path, BASE.format(extra="  overheads: pegasus\n")))
    assert sc.overheads == PROFILES["pegasus"]
    sc = load_scenario(write(tmp_path, BASE.format(extra="  overheads: {profile: pegasus, post: 1, cycle: 10}\n")))
    assert sc.overheads == Overheads.profile("pegasus", post=1.0, cycle=10.0)
    sc = load_scenario(write(tmp_path, BASE.format(extra="  overheads: {pre: 2}\n")))
    assert sc.overheads == Overheads(pre=2.0)
    sc = load_scenario(write(tmp_path, BASE.format(extra="  overheads: {pre: 0}\n")))
    assert sc.overheads is None  # all zero: today's model
    sc = load_scenario(write(tmp_path, BASE.format(extra="  storage: {bandwidth: 1e6, latency: 0.5}\n")))
    assert (sc.storage.storage.bandwidth, sc.storage.storage.latency, sc.storage.data_unit) == (1e6, 0.5, 1e6)


def test_the_storage_data_unit_follows_the_importer(tmp_path):
    data = MONTAGE.parent / "data" / "montage_60.json"
    text = (f"name: m\nplatform:\n  processors: [{{name: n, count: 2}}]\n  storage: {{bandwidth: 1e8}}\n"
            f"workload: {{wfcommons: {data}, data_unit: 1000}}\nschedulers: [mct]\n")
    assert load_scenario(write(tmp_path, text)).storage.data_unit == 1000.0
    text = text.replace("{bandwidth: 1e8}", "{bandwidth: 1e8, data_unit: 1}")
    assert load_scenario(write(tmp_path, text)).storage.data_unit == 1.0


def test_validate_reports_them(tmp_path):
    p = write(tmp_path, BASE.format(extra="  overheads: {profile: pegasus, cycle: 10}\n"
                                          "  storage: {bandwidth: 1e8, latency: 0.01}\n"))
    out = CliRunner().invoke(app, ["validate", str(p)])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())  # the ok line is one paragraph, wrapped to the width
    assert "overheads: submit 13.5 s, dispatch interval 0.05 s, cycle 10 s, pre 13.5 s, post 13.5 s" in said
    assert "storage: 1e+08 B/s shared, latency 0.01 s, edge data x 1e+06 B" in said


@pytest.mark.parametrize(("extra", "says"), [
    ("  overheads: condor\n", "platform.overheads.profile: unknown profile 'condor'"),
    ("  overheads: {profile: nextflw}\n", "unknown profile 'nextflw'"),
    ("  overheads: {pre: -1}\n", "platform.overheads.pre"),
    ("  overheads: {post: .nan}\n", "platform.overheads.post"),
    ("  overheads: {submit: .inf}\n", "platform.overheads.submit"),
    ("  overheads: {cycle: 1e35}\n", "platform.overheads.cycle: must be a finite number no larger than 1e+30"),
    ("  overheads: {pre: true}\n", "platform.overheads.pre"),
    ("  overheads: {prep: 1}\n", "platform.overheads.prep: unknown field"),
    ("  overheads: [1, 2]\n", "platform.overheads"),
    ("  storage: {latency: 1}\n", "platform.storage.bandwidth: this field is required"),
    ("  storage: {bandwidth: 0}\n", "platform.storage.bandwidth"),
    ("  storage: {bandwidth: -5}\n", "platform.storage.bandwidth"),
    ("  storage: {bandwidth: 1e40}\n", "platform.storage.bandwidth"),
    ("  storage: {bandwidth: .inf}\n", "platform.storage.bandwidth"),
    ("  storage: {bandwidth: 10, latency: -1}\n", "platform.storage.latency"),
    ("  storage: {bandwidth: 10, data_unit: 0}\n", "platform.storage.data_unit"),
    ("  storage: 100\n", "platform.storage"),
])
def test_bad_sections_exit_2_located(tmp_path, extra, says):
    p = write(tmp_path, BASE.format(extra=extra))
    out = tmp_path / "out.json"
    for cmd in (["validate", str(p)], ["run", str(p), "--json", str(out)]):
        line = refused(cmd, inputs=(p,), absent=(out,), says=says)
        assert f"{p}:6:" in line, line  # the file and the section's line


def test_all_zero_overheads_give_todays_rows(tmp_path):
    plain = rows(write(tmp_path, BASE.format(extra="")))
    zero = rows(write(tmp_path, BASE.format(extra="  overheads: {submit: 0, pre: 0}\n"), "z.yaml"))
    for label, row in plain.items():
        assert list(zero[label]["schedule"]) == list(row["schedule"])
        assert zero[label]["makespan"] == row["makespan"]


def test_task_graph_runs_count_overheads_and_post_in_the_makespan(tmp_path):
    plain = rows(write(tmp_path, BASE.format(extra="")))
    slow = rows(write(tmp_path, BASE.format(extra="  overheads: {pre: 1, post: 5}\n"), "o.yaml"))
    for label in ("heft", "mct"):
        finish = max(r["finish"] for r in slow[label]["schedule"])
        assert slow[label]["makespan"] == pytest.approx(finish + 5.0)  # the last post step ends the run
        assert slow[label]["makespan"] > plain[label]["makespan"]
        assert all(r["finish"] - r["start"] >= 1.0 for r in slow[label]["schedule"])


def test_task_graph_runs_with_storage(tmp_path):
    rows_ = rows(write(tmp_path, BASE.format(extra="  storage: {bandwidth: 4, data_unit: 1}\n")))
    for row in rows_.values():
        assert row["makespan"] > 0 and len(row["schedule"]) == 12


def test_stream_runs_take_them(tmp_path):
    plain = rows(write(tmp_path, STREAM.format(extra="")))
    slow = rows(write(tmp_path, STREAM.format(extra="  overheads: {submit: 2, post: 3, startup: 10}\n"
                                                   "  storage: {bandwidth: 50, data_unit: 1}\n"), "o.yaml"))
    for label in ("mct", "heft"):
        assert slow[label]["jct_mean"] > plain[label]["jct_mean"]
        first = slow[label]["schedule"][0]
        assert first["start"] >= 12.0  # startup 10 + submit 2 before the first job's first task
        assert slow[label]["engine"] == "simpy"


def test_run_json_carries_them(tmp_path):
    p = write(tmp_path, BASE.format(extra="  overheads: nextflow\n"))
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", str(p), "--json", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    mk = {r["scheduler"]: r["makespan"] for r in doc["results"]}
    assert all(np.isfinite(v) for v in mk.values())
