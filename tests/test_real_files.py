"""Real workflow files as they are: negative values repaired with one warning line (or refused with strict),
WfCommons task kinds taken from the category or the program name, every bundled file loading."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import DataRepairWarning, SimschedError
from simsched.workloads.importers import load
from simsched.workloads.importers.wfformat import kind_of_name

ROOT = Path(__file__).resolve().parents[1]

# a small DAX with the quirks of the Pegasus synthetic workflows: two negative file sizes, one negative runtime
NEGATIVE_DAX = """<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="2.1" name="quirky">
  <job id="ID1" namespace="Epigenomics" name="fastqSplit" runtime="34.5">
    <uses file="chr21.sfq" link="output" size="-6585019"/>
  </job>
  <job id="ID2" namespace="Epigenomics" name="filterContams" runtime="-2.25">
    <uses file="chr21.sfq" link="input" size="-6585019"/>
    <uses file="chr21.nocon" link="output" size="1000000"/>
  </job>
  <job id="ID3" namespace="Epigenomics" name="map" runtime="0">
    <uses file="chr21.nocon" link="input" size="1000000"/>
  </job>
  <child ref="ID2"><parent ref="ID1"/></child>
  <child ref="ID3"><parent ref="ID2"/></child>
</adag>
"""


def _dax(tmp_path: Path) -> Path:
    p = tmp_path / "quirky.dax"
    p.write_text(NEGATIVE_DAX)
    return p


def test_negative_dax_values_are_repaired_by_absolute_value_with_one_warning(tmp_path: Path) -> None:
    p = _dax(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = load(p)
    repairs = [w for w in caught if issubclass(w.category, DataRepairWarning)]
    assert len(repairs) == 1
    message = str(repairs[0].message)
    assert str(p) in message and "2 negative file sizes" in message and "1 negative runtimes" in message
    assert "absolute value" in message and "strict" in message and "\n" not in message
    assert list(g.work) == [34.5, 2.25, 0.0]  # |-2.25|; a zero runtime stays zero
    data = dict(zip(zip(g.edge_src.tolist(), g.edge_dst.tolist()), g.edge_data.tolist()))
    assert data == {(0, 1): pytest.approx(6.585019), (1, 2): pytest.approx(1.0)}


def test_strict_refuses_the_first_negative_value_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(SimschedError) as info:
        load(_dax(tmp_path), strict=True)
    e = info.value
    assert e.line == 3 and "must be >= 0" in e.message and "-6585019" in e.message and "strict" in e.message


def test_clean_file_gives_no_warning(tmp_path: Path) -> None:
    p = tmp_path / "clean.dax"
    p.write_text(NEGATIVE_DAX.replace("-", ""))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = load(p, strict=True)
    assert list(g.work) == [34.5, 2.25, 0.0]


def _scenario(tmp_path: Path, extra: str = "") -> Path:
    _dax(tmp_path)
    s = tmp_path / "s.yaml"
    s.write_text("name: quirky\nseed: 1\nrepetitions: 1\nplatform:\n  processors:\n"
                 "    - {name: cpu, type: cpu, speed: 1.0, count: 2}\n"
                 f"workload:\n  dax: quirky.dax\n{extra}schedulers: [heft]\n")
    return s


def test_cli_prints_one_warning_line_and_runs(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(_scenario(tmp_path))])
    assert result.exit_code == 0, result.output
    # one warning (it wraps at the width: its continuation lines are indented)
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    flat = " ".join(result.stderr.split())
    assert len(warnings) == 1 and flat.count("repaired") == 1 and "quirky.dax: repaired" in flat, result.stderr
    assert "Traceback" not in result.output and "heft" in result.stdout


def test_cli_strict_workload_option_refuses_with_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(_scenario(tmp_path, "  strict: true\n"))])
    assert result.exit_code == 2
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "quirky.dax:3" in err[0] and "Traceback" not in err[0]


# ------------------------------------------------------------------ WfCommons kinds
@pytest.mark.parametrize(("name", "kind"), [
    ("mProject_ID0000001", "mProject"), ("mDiffFit_00000005", "mDiffFit"), ("split_fasta_00000002", "split_fasta"),
    ("individuals-merge_ID0000017", "individuals-merge"), ("merge", "merge"), ("ID0000001", "ID0000001"),
])
def test_kind_is_the_name_before_the_id(name: str, kind: str) -> None:
    assert kind_of_name(name) == kind


def _wf15_real(tmp_path: Path, category: bool) -> Path:
    """A WfFormat 1.5 instance shaped like the ones WfCommons publishes (names carry the id)."""
    tasks, ex = [], []
    for i, prog in enumerate(["mProject", "mProject", "mDiffFit", "mAdd"], start=1):
        t = {"name": f"{prog}_ID{i:07d}", "id": f"ID{i:07d}", "parents": [], "children": [],
             "inputFiles": [], "outputFiles": []}
        if category:
            t["category"] = prog.lower()
        tasks.append(t)
        ex.append({"id": f"ID{i:07d}", "runtimeInSeconds": float(i)})
    tasks[2]["parents"] = ["ID0000001", "ID0000002"]
    tasks[3]["parents"] = ["ID0000003"]
    doc = {"name": "m", "schemaVersion": "1.5", "workflow": {
        "specification": {"tasks": tasks, "files": []}, "execution": {"tasks": ex}}}
    p = tmp_path / f"m{int(category)}.json"
    p.write_text(json.dumps(doc, indent=1))
    return p


def test_wfcommons_kind_is_the_category_or_the_program(tmp_path: Path) -> None:
    g = load(_wf15_real(tmp_path, category=False))
    assert [g.kind_of(i) for i in range(4)] == ["mProject", "mProject", "mDiffFit", "mAdd"]
    assert sorted(g.kind_names) == ["mAdd", "mDiffFit", "mProject"]
    g = load(_wf15_real(tmp_path, category=True))
    assert [g.kind_of(i) for i in range(4)] == ["mproject", "mproject", "mdifffit", "madd"]


def test_per_kind_affinity_applies_to_a_real_workflow(tmp_path: Path) -> None:
    """``mProject: {gpu: 4}`` must speed up both mProject tasks on the GPU."""
    _wf15_real(tmp_path, category=False)
    s = tmp_path / "aff.yaml"
    s.write_text("name: aff\nseed: 1\nrepetitions: 1\nplatform:\n  processors:\n"
                 "    - {name: cpu, type: cpu, speed: 1.0}\n    - {name: gpu, type: gpu, speed: 1.0}\n"
                 "  affinity:\n    mProject: {gpu: 4.0}\nworkload:\n  wfcommons: m0.json\nschedulers: [heft]\n")
    from simsched.scenario import build_problem, load_scenario

    problem = build_problem(load_scenario(s))
    W = problem.W
    assert W[0, 1] == pytest.approx(W[0, 0] / 4) and W[1, 1] == pytest.approx(W[1, 0] / 4)
    assert W[2, 1] == pytest.approx(W[2, 0])  # mDiffFit: no affinity


def test_every_bundled_workflow_file_loads() -> None:
    files = sorted((ROOT / "scenarios").rglob("*.dax")) + sorted((ROOT / "scenarios").rglob("*.xml")) + [
        p for p in sorted((ROOT / "scenarios").rglob("*.json")) if '"schemaVersion"' in p.read_text()[:4096]]
    assert len(files) >= 2
    for p in files:
        g = load(p)
        assert g.n_tasks > 0
        if p.suffix == ".json":  # per-kind affinity needs kinds shared between tasks
            assert len(g.kind_names) < g.n_tasks
