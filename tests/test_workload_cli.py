"""``simsched workload info`` / ``convert`` (the Typer sub-app) and the workload benchmark."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from simsched.cli.workload_cmd import app
from simsched.workloads.generators import GENERATORS
from simsched.workloads.importers import load, save

runner = CliRunner()


def test_info_on_file_json(tmp_path):
    p = tmp_path / "c.json"
    save(GENERATORS["cholesky"](3), p)
    r = runner.invoke(app, ["info", str(p), "--json"])
    assert r.exit_code == 0, r.output
    stats = json.loads(r.output)
    assert stats["tasks"] == 10 and stats["edges"] == 12 and stats["depth"] == 7
    # POTRF0 -> TRSM(0,2) -> GEMM(0,2,1) -> TRSM(1,2) -> SYRK(1,2) -> POTRF2
    assert stats["critical_path_work"] == pytest.approx(18 + 52 + 95 + 52 + 57 + 18)
    r = runner.invoke(app, ["info", str(p)])
    assert r.exit_code == 0 and "critical path" in r.output


def test_info_on_model_name():
    r = runner.invoke(app, ["info", "resnet18", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["tasks"] > 40


def test_info_on_scenario(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "name: s\nseed: 1\nplatform:\n  processors: [{name: cpu, type: cpu, count: 2}]\n"
        "  network: {bandwidth: 2.0, latency: 0}\nworkload: {generator: fork_join, branches: 3}\n"
        "schedulers: [heft]\n")
    r = runner.invoke(app, ["info", str(tmp_path / "s.yaml"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["tasks"] == 3 * 4 + 1


@pytest.mark.extra("dot")  # the source is a DOT file
def test_convert_between_formats(tmp_path):
    src = tmp_path / "g.dot"
    save(GENERATORS["fft"](4, rng=__import__("numpy").random.default_rng(0)), src)
    for out in ("g.graphml", "g.json", "g.yaml", "g.csv", "g.stg", "g.dax"):
        r = runner.invoke(app, ["convert", str(src), str(tmp_path / out)])
        assert r.exit_code == 0, r.output
        assert load(tmp_path / out).n_tasks == 15
    r = runner.invoke(app, ["convert", str(src), str(tmp_path / "t.json"), "--to", "tasklist"])
    assert r.exit_code == 0 and load(tmp_path / "t.json", "tasklist").n_tasks == 15


def test_errors_exit_2_one_line_no_partial_output(tmp_path):
    bad = tmp_path / "bad.stg"
    bad.write_text("3\n0 0 0\n1 5 1 0\n")
    out = tmp_path / "out.dot"
    r = runner.invoke(app, ["convert", str(bad), str(out)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{bad}:3:" in r.output and not out.exists()
    r = runner.invoke(app, ["info", str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "no such file" in r.output
    r = runner.invoke(app, ["convert", str(bad), str(tmp_path / "x.unknown")])
    assert r.exit_code == 2


def test_bench_workloads_small():
    from simsched.bench.workloads import bench_workloads

    res = bench_workloads(tasks_wf=500, tasks_random=5000)
    assert res["wfcommons_tasks"] == 500 and res["random_dag_tasks"] == 5000
    assert res["wfcommons_load_s"] > 0 and res["random_dag_s"] > 0  # measured; speed is `simsched bench`'s
