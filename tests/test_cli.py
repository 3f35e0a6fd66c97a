"""The command line: run / validate / list / bench, the results-JSON contract, determinism, Gantt
charts, and the Topcuoglu 2002 example (HEFT 80, CPOP 86) end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
TOPCUOGLU = ROOT / "scenarios" / "topcuoglu2002.yaml"
QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"

NOISY = """\
name: noisy
seed: 3
repetitions: 3
platform:
  processors:
    - {name: cpu, type: cpu, count: 3}
    - {name: gpu, type: gpu, speed: 3.0}
  network: {bandwidth: 2.0, latency: 0.1}
  affinity: {conv: {gpu: 4.0}}
workload:
  tasks:
    - {name: load, work: 4}
    - {name: c1, work: 20, kind: conv}
    - {name: c2, work: 16, kind: conv}
    - {name: fc, work: 6}
    - {name: loss, work: 2, arrival: 1}
  edges:
    - {from: load, to: c1, data: 8}
    - {from: load, to: c2, data: 8}
    - {from: c1, to: fc, data: 4}
    - {from: c2, to: fc, data: 4}
    - {from: fc, to: loss, data: 1}
noise: {model: lognormal, sigma: 0.2}
schedulers: [heft, cpop, mct, minmin, random]
"""


def invoke(*args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


def row_of(output: str, scheduler: str) -> list[str]:
    """Cells of the table row of ``scheduler``."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
        if cells and cells[0] == scheduler:
            return cells
    raise AssertionError(f"no row for {scheduler} in\n{output}")


def load_rows(path: Path) -> dict[str, dict]:
    doc = json.loads(path.read_text())
    return {r["scheduler"]: r for r in doc["results"]}


# --------------------------------------------------------------------------- Topcuoglu 2002
def test_topcuoglu_table_shows_heft_80_and_cpop_86() -> None:
    result = invoke("run", TOPCUOGLU)
    assert result.exit_code == 0, result.output
    assert row_of(result.stdout, "heft")[1] == "80"
    assert row_of(result.stdout, "cpop")[1] == "86"
    for name in ("mct", "minmin", "maxmin", "met", "olb", "round-robin", "random"):
        assert float(row_of(result.stdout, name)[1]) >= 80


def test_topcuoglu_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert invoke("run", TOPCUOGLU, "--json", out).exit_code == 0
    rows = load_rows(out)
    assert rows["heft"]["makespan"] == 80
    assert rows["cpop"]["makespan"] == 86


# --------------------------------------------------------------------------- results contract
def test_json_contract(tmp_path: Path) -> None:
    scenario, out = tmp_path / "noisy.yaml", tmp_path / "results.json"
    scenario.write_text(NOISY)
    result = invoke("run", scenario, "--json", out)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["scenario"] == "noisy"
    assert isinstance(doc["simsched_version"], str)
    assert len(doc["results"]) == 5 * 3
    for row in doc["results"]:
        for key, kind in (("scheduler", str), ("seed", int), ("makespan", float), ("avg_turnaround", float),
                          ("avg_waiting", float), ("utilization", float), ("scheduler_time_s", float),
                          ("slr", float), ("speedup", float), ("efficiency", float), ("lower_bound", float),
                          ("gap_to_lower_bound", float)):
            assert isinstance(row[key], kind), (key, row[key])
        assert row["makespan"] >= row["lower_bound"] * (1 - 1e-9)
        assert row["gap_to_lower_bound"] == pytest.approx(row["makespan"] / row["lower_bound"] - 1)
        assert {r["task"] for r in row["schedule"]} == {"load", "c1", "c2", "fc", "loss"}
        for rec in row["schedule"]:
            assert set(rec) == {"task", "processor", "start", "finish"}
            assert rec["processor"] in {"cpu0", "cpu1", "cpu2", "gpu"}
            assert 0 <= rec["start"] <= rec["finish"]
    assert sorted({r["seed"] for r in doc["results"]}) == [3, 4, 5]
    # the table: one row per scheduler, mean ± std
    for name in ("heft", "cpop", "mct", "minmin", "random"):
        assert "±" in row_of(result.stdout, name)[1]


def without_times(path: Path) -> dict:
    doc = json.loads(path.read_text())
    for row in doc["results"]:
        row.pop("scheduler_time_s")
    return doc


def test_same_seed_same_results(tmp_path: Path) -> None:
    scenario = tmp_path / "noisy.yaml"
    scenario.write_text(NOISY)
    paths = [tmp_path / f"{k}.json" for k in "abc"]
    for path in paths[:2]:
        assert invoke("run", scenario, "--json", path).exit_code == 0
    assert invoke("run", scenario, "--json", paths[2], "--seed", "11").exit_code == 0
    assert without_times(paths[0]) == without_times(paths[1])
    assert without_times(paths[0])["results"] != without_times(paths[2])["results"]


def test_every_scheduler_sees_the_same_noise(tmp_path: Path) -> None:
    """With one processor every schedule is a sequence; the makespan is then the sum of the
    (noisy) durations, identical for all schedulers in a repetition."""
    scenario, out = tmp_path / "one.yaml", tmp_path / "one.json"
    processors = "    - {name: cpu, type: cpu, count: 3}\n    - {name: gpu, type: gpu, speed: 3.0}\n"
    one_cpu = NOISY.replace(processors, "    - {name: cpu, type: cpu}\n")
    one_cpu = one_cpu.replace("  affinity: {conv: {gpu: 4.0}}\n", "")
    scenario.write_text(one_cpu.replace("arrival: 1", "arrival: 0"))
    assert invoke("run", scenario, "--json", out).exit_code == 0
    doc = json.loads(out.read_text())
    by_seed: dict[int, set] = {}
    for row in doc["results"]:
        by_seed.setdefault(row["seed"], set()).add(round(row["makespan"], 9))
    assert all(len(v) == 1 for v in by_seed.values())
    assert len({next(iter(v)) for v in by_seed.values()}) == 3  # repetitions differ


def test_scheduler_and_repetition_options(tmp_path: Path) -> None:
    scenario, out = tmp_path / "noisy.yaml", tmp_path / "r.json"
    scenario.write_text(NOISY)
    result = invoke("run", scenario, "-s", "heft", "--scheduler", "maxmin", "-r", "2", "--json", out)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert [r["scheduler"] for r in doc["results"]] == ["heft", "heft", "maxmin", "maxmin"]
    assert "cpop" not in result.stdout


# --------------------------------------------------------------------------- gantt
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_gantt_written(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"gantt{suffix}"
    result = invoke("run", TOPCUOGLU, "-s", "heft", "-s", "cpop", "--gantt", out)
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG")
    else:
        assert b"<svg" in data[:2000]
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left behind


# --------------------------------------------------------------------------- validate, list, misc
def test_validate_ok() -> None:
    result = invoke("validate", TOPCUOGLU)
    assert result.exit_code == 0
    assert result.stdout.startswith("ok: ")
    said = " ".join(result.stdout.split())  # one paragraph, wrapped to the width
    assert "10 tasks, 15 edges" in said and "3 processors" in said


def test_validate_lists_every_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(NOISY.replace("count: 3", "count: 0").replace("sigma: 0.2", "sigma: -1")
                   .replace("[heft,", "[heftt,"))
    result = invoke("validate", bad)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert all(line.startswith(f"error: {bad}:") for line in lines)
    joined = "\n".join(lines)
    assert ":6: platform.processors[0].count:" in joined
    assert ":23: noise.sigma:" in joined
    assert ":24: schedulers[0]: unknown scheduler 'heftt' (did you mean 'heft'?)" in joined


def test_list_shows_every_scheduler() -> None:
    from simsched.schedulers import registry

    result = invoke("list")
    assert result.exit_code == 0
    for name in registry.names():
        cells = row_of(result.stdout, name)
        assert cells[1] in ("static", "online")
        assert cells[2]  # a description
    assert row_of(result.stdout, "heft")[1] == "static"
    assert row_of(result.stdout, "mct")[1] == "online"


def test_version_and_help() -> None:
    assert invoke("--version").stdout.strip().startswith("simsched ")
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("run", "validate", "list", "bench"):
        assert command in result.stdout


def test_quickstart_runs(tmp_path: Path) -> None:
    out = tmp_path / "q.json"
    result = invoke("run", QUICKSTART, "-r", "1", "--json", out)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["scenario"] == "quickstart"
    assert {r["scheduler"] for r in doc["results"]} >= {"heft", "cpop", "mct", "minmin", "random"}
    assert all(len(r["schedule"]) == 100 for r in doc["results"])


def test_startup_does_not_import_heavy_modules() -> None:
    code = ("import sys, simsched.cli.main; "
            "heavy = [m for m in ('torch', 'matplotlib', 'numpy', 'simpy', 'pydantic') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_console_script_entry_point() -> None:
    out = subprocess.run([sys.executable, "-c", "from simsched.cli.main import main; main()", "--version"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.startswith("simsched ")


def test_atomic_write_leaves_nothing_on_failure(tmp_path: Path) -> None:
    from simsched.outputs import atomic_write

    target = tmp_path / "x.json"
    target.write_text("old")

    def boom(fh) -> None:
        fh.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, boom)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_python_dash_m_entry_point_starts():
    """Command modules share simsched.cli.common, so running main as __main__ has no import cycle."""
    out = subprocess.run([sys.executable, "-m", "simsched.cli.main", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "run" in out.stdout and "sweep" in out.stdout
