"""What ``report``, ``summarize``, ``plot`` and the energy table read back is validated by one reader per
kind before it is trusted (issue 40, row 2).

* Results documents (``run --json``; :func:`simsched.run.document.load_document`): types, finite numbers,
  identity (the scenario and version are text, a row's ``seed_space`` is the space its seed lies in),
  size and depth; a cluster log's document with a text ``per_user`` or ``processors: 0`` is refused, not
  rendered; a generalisation matrix handed to ``report`` says what it is.
* Sweep results (CSV, Parquet; :func:`simsched.run.tables.read_table`): seeds are whole numbers up to
  2**63 - 1; the study identity beside them is read by one reader (:func:`simsched.run.store.read_identity`)
  and a malformed one is refused, not guessed; the energy metrics a sweep writes (``energy_j``, ``peak_w``,
  ``carbon_g``, ``cost_usd``) are metrics ``summarize``, ``plot`` and ``report`` accept.

Every refusal: exit 2, one ``error:`` line naming the file, the line and the field, nothing written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)
from typer.testing import CliRunner

from simsched.cli.main import app

ROOT = Path(__file__).resolve().parents[1]

BATCH = {
    "scenario": "tiny-log", "simsched_version": "0.1.0", "workload": "batch",
    "trace": {"file": "t.swf", "kill": False, "jobs": 2, "notes": []}, "processors": 4, "schedulers": ["fcfs"],
    "results": [{
        "scheduler": "fcfs", "seed": 0, "seed_space": "scenario",
        "wait_mean": 1.0, "wait_p95": 2.0, "bsld_mean": 1.5, "bsld_p95": 2.0, "utilisation": 0.5,
        "utilization": 0.5, "lost_capacity": 0.1, "makespan": 10.0, "killed_jobs": 0, "decisions": 3,
        "engine": "simpy",
        "jobs": [{"job": 1, "submit": 0.0, "start": 0.0, "end": 5.0, "procs": 2, "killed": False},
                 {"job": 2, "submit": 1.0, "start": 3.0, "end": 10.0, "procs": 4, "killed": False}],
        "timeline": {"t": [0.0, 5.0, 10.0], "busy": [2, 4, 0], "queued": [1, 0, 0]},
        "per_user": {"7": {"jobs": 2, "wait_mean": 1.0, "bsld_mean": 1.5}},
    }],
}
"""A cluster log's results document as ``run --json`` writes it (two jobs, one user)."""


def _doc(tmp_path: Path, doc: dict[str, Any], change: tuple[tuple[Any, ...], Any] | None = None) -> Path:
    doc = json.loads(json.dumps(doc))
    if change is not None:
        where, value = change
        node = doc
        for part in where[:-1]:
            node = node[part]
        node[where[-1]] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def test_a_cluster_log_document_as_run_writes_it_is_reported(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", str(_doc(tmp_path, BATCH)), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "fcfs" in out.read_text()


@pytest.mark.parametrize(("where", "value", "field"), [
    (("results", 0, "per_user"), "lots of users", "results[0].per_user"),
    (("results", 0, "per_user", "7"), [1, 2], "results[0].per_user.7"),
    (("results", 0, "per_user", "7", "wait_mean"), "fast", "results[0].per_user.7.wait_mean"),
    (("results", 0, "per_user", "7", "jobs"), -2, "results[0].per_user.7.jobs"),
    (("processors",), 0, "processors"),
    (("processors",), "256", "processors"),
    (("processors",), 2.5, "processors"),
    (("trace",), "t.swf", "trace"),
    (("trace", "jobs"), "two", "trace.jobs"),
    (("schedulers",), "fcfs", "schedulers"),
    (("results", 0, "killed_jobs"), 0.5, "results[0].killed_jobs"),
    (("results", 0, "engine"), 3, "results[0].engine"),
    (("results", 0, "response_mean"), "slow", "results[0].response_mean"),
    (("results", 0, "jobs", 0, "procs"), 2.5, "results[0].jobs[0].procs"),
    (("results", 0, "jobs", 0, "killed"), "no", "results[0].jobs[0].killed"),
    (("results", 0, "seed_space"), "evaluate", "results[0].seed_space"),
    (("scenario",), {"name": "x"}, "scenario"),
    (("simsched_version",), 1, "simsched_version"),
])
def test_a_cluster_log_document_that_cannot_mean_anything_is_refused(tmp_path: Path, where: tuple[Any, ...],
                                                                      value: Any, field: str) -> None:
    path = _doc(tmp_path, BATCH, (where, value))
    out = tmp_path / "r.html"
    line = refused(["report", str(path), "-o", str(out)], inputs=(path,), absent=(out,), says=f": {field}: ")
    assert line.startswith(f"error: {path}:"), line  # the file and the line where the field sits


def test_a_row_cannot_claim_a_seed_space_its_seed_is_not_in(tmp_path: Path) -> None:
    doc = {"scenario": "s", "simsched_version": "0.1.0", "results": [{
        "scheduler": "heft", "seed": 5, "seed_space": "evaluate", "makespan": 3.0, "avg_turnaround": 2.0,
        "avg_waiting": 0.0, "utilization": 1.0,
        "schedule": [{"task": "a", "processor": "p0", "start": 0.0, "finish": 3.0}]}]}
    out = tmp_path / "r.html"
    assert CliRunner().invoke(app, ["report", str(_doc(tmp_path, doc, (("results", 0, "seed_space"), "scenario"))),
                                    "-o", str(out)]).exit_code == 0
    path = _doc(tmp_path, doc)
    out.unlink()
    refused(["report", str(path), "-o", str(out)], inputs=(path,), absent=(out,), says="seed_space")


def test_a_generalisation_matrix_handed_to_report_says_what_it_is(tmp_path: Path) -> None:
    path = _doc(tmp_path, {"scenario": "s", "scheduler": "mct", "days": 2, "seed_space": "evaluate", "seed": 0,
                           "rows": [], "summary": {}})
    refused(["report", str(path), "-o", str(tmp_path / "m.html")], inputs=(path,), says="generalise --html")


def _energy_table(path: Path) -> Any:
    import subprocess

    return subprocess.run([sys.executable, "-m", "simsched.study.energy_table", str(path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_the_energy_table_reads_through_the_same_reader(tmp_path: Path) -> None:
    """Nested 100,000 deep, a text metric, a YAML file: one located line, exit 2 (no RecursionError)."""
    deep = tmp_path / "deep.json"
    deep.write_text('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}")
    text = _doc(tmp_path, {"results": [{"scheduler": "a", "seed": 0, "makespan": "fast", "avg_turnaround": 1.0,
                                        "avg_waiting": 0.0, "utilization": 1.0, "energy_j": 5.0}]})
    for path, says in ((deep, "nested"), (text, "results[0].makespan")):
        r = _energy_table(path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}") and says in lines[0], r.stderr


# ------------------------------------------------------------------ sweep results
ENERGY_STUDY = f"""\
name: energy-study
scenario: {ROOT / "scenarios" / "energy" / "golden.yaml"}
grid:
  platform.power.types.cpu.busy: [100, 150]
schedulers: [heft, minmin]
seeds: [0, 1]
"""


@pytest.fixture(scope="module")
def energy_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("energy")
    (tmp / "study.yaml").write_text(ENERGY_STUDY)
    out = tmp / "es.csv"
    r = CliRunner().invoke(app, ["sweep", str(tmp / "study.yaml"), "-o", str(out), "--workers", "1"])
    assert r.exit_code == 0, r.output
    return out


def test_summarize_plot_and_report_accept_the_energy_metrics_a_sweep_writes(energy_sweep: Path,
                                                                            tmp_path: Path) -> None:
    header = energy_sweep.read_text().splitlines()[0].split(",")
    assert {"energy_j", "peak_w", "carbon_g", "cost_usd"} <= set(header)
    r = CliRunner().invoke(app, ["summarize", str(energy_sweep), "-m", "energy_j", "-m", "carbon_g", "--json",
                                 str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["metrics"] == ["energy_j", "carbon_g"]
    means = {g["scheduler"]: g["energy_j"]["mean"] for g in summary["groups"]
             if g["platform.power.types.cpu.busy"] == 100}
    assert means["heft"] == pytest.approx(920.0)  # the hand-computed case of docs/energy.md
    for args in (["plot", str(energy_sweep), "--x", "platform.power.types.cpu.busy", "--y", "energy_j", "-o",
                  str(tmp_path / "e.png")],
                 ["report", str(energy_sweep), "-m", "cost_usd", "-o", str(tmp_path / "e.html")]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, r.output


def test_a_negative_energy_cell_is_refused(energy_sweep: Path, tmp_path: Path) -> None:
    lines = energy_sweep.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index("energy_j")] = "-920.0"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    refused(["summarize", str(bad), "-m", "energy_j"], inputs=(bad,), says=f"{bad}:2: energy_j:")


def test_a_seed_beyond_two_to_the_63_is_refused(energy_sweep: Path, tmp_path: Path) -> None:
    lines = energy_sweep.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index("seed")] = str(2**64)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
    refused(["summarize", str(bad)], inputs=(bad,), says=f"{bad}:2: seed:")


@pytest.mark.parametrize(("identity", "says"), [
    ('{"study": "energy-study", "runs": "eight"}', "runs: must be a whole number"),
    ('{"study": "energy-study", "runs": -1}', "runs: must be a whole number"),
    ('{"study": ["x"], "runs": 8}', "study: must be text"),
    ('{"study": "energy-study", "points": [1, 2]}', "points: must be a list of point ids"),
    ('{"study": ', "not JSON"),
    ("[" * 100_000, "nested"),
    ("[1, 2]", "must be an object"),
])
def test_a_malformed_study_identity_is_refused_not_guessed(energy_sweep: Path, tmp_path: Path, identity: str,
                                                           says: str) -> None:
    results = tmp_path / "es.csv"
    results.write_bytes(energy_sweep.read_bytes())
    ident = tmp_path / "es.csv.study.json"
    ident.write_text(identity)
    line = refused(["summarize", str(results)], inputs=(results, ident), says=says)
    assert str(ident) in line
