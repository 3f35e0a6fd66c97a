"""The conventions simsched's batch replay was checked against two established batch simulators
(RLScheduler's environment and AccaSim; docs/cluster-traces.md, "Checked against other
simulators"): which SWF field gives a job's processors, which statuses are kept, requested time
``-1``, zero-length jobs, the bounded slowdown on hand-worked cases, the two EASY rules that one
tool lacks (backfill a job ending exactly at the shadow time; backfill onto the extra processors),
and an exported file that a tool sizing its machine by ``MaxNodes`` can read."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import DataRepairWarning, SimschedError
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.schedulers.batch_fcfs import FCFS
from simsched.simulator.batch import simulate_batch
from simsched.workloads.importers.swf import make_trace, read_swf, write_swf

ROOT = Path(__file__).resolve().parents[1]
RICC = ROOT / "scenarios" / "data" / "traces" / "ricc_2010_5000.swf"


def line(job: int, submit: int, run: int, alloc: int, req_procs: int = -1, status: int = 1, req_time: int = -1) -> str:
    f = [job, submit, -1, run, alloc, -1, -1, req_procs, req_time, -1, status, -1, -1, -1, -1, -1, -1, -1]
    return " ".join(str(x) for x in f)


def write(tmp_path: Path, *lines: str, header: str = "; MaxProcs: 8", name: str = "t.swf") -> Path:
    p = tmp_path / name
    p.write_text("\n".join([header, *lines]) + "\n")
    return p


def quiet_read(path: Path, **kw) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataRepairWarning)
        return read_swf(path, **kw)


def test_which_field_gives_the_processors(tmp_path: Path) -> None:
    # field 5 (allocated) and field 8 (requested): RICC's log has 1 allocated for 4 requested
    p = write(tmp_path, line(1, 0, 10, 1, 4), line(2, 1, 10, -1, 3), line(3, 2, 10, 5, -1), line(4, 3, 10, 6, 2))
    assert read_swf(p).procs.tolist() == [1, 3, 5, 6]  # the archive's field 5, else 8 (default)
    assert read_swf(p, procs_from="requested").procs.tolist() == [4, 3, 5, 2]  # AccaSim's reading
    assert read_swf(p, procs_from="max").procs.tolist() == [4, 3, 5, 6]  # RLScheduler's reading
    with pytest.raises(SimschedError, match="procs_from"):
        read_swf(p, procs_from="nodes")


def test_which_statuses_are_kept(tmp_path: Path) -> None:
    p = write(tmp_path, line(1, 0, 10, 1, status=1), line(2, 1, 10, 1, status=0), line(3, 2, 20, 1, status=5),
              line(4, 3, -1, 1, status=5), line(5, 4, 7, 1, status=-1), line(6, 5, 3, 1, status=3))
    with pytest.warns(DataRepairWarning, match=r"dropped 4 of 6 jobs: 4 not completed"):
        assert read_swf(p).ids.tolist() == [1, 5]
    # keep: all -- failed and cancelled jobs held their processors for their run time; a checkpoint
    # part (status 2-4) is a piece of a job, not one
    with pytest.warns(DataRepairWarning, match=r"dropped 2 of 6 jobs: 1 checkpoint parts \(status 2-4\), "
                                               r"1 without a run time"):
        assert read_swf(p, keep="all").ids.tolist() == [1, 2, 3, 5]
    with pytest.raises(SimschedError, match="keep"):
        read_swf(p, keep="failed")


def test_a_cancelled_request_wider_than_the_machine_is_dropped_not_refused(tmp_path: Path) -> None:
    p = write(tmp_path, line(1, 0, 10, 2), line(2, 1, 0, 16, 16, status=5))
    assert quiet_read(p).ids.tolist() == [1]
    with pytest.warns(DataRepairWarning, match="1 wider than the machine's 8 processors"):
        assert read_swf(p, keep="all").ids.tolist() == [1]
    bad = write(tmp_path, line(1, 0, 10, 2, 16), name="bad.swf")  # completed, asked for 16 on 8
    assert read_swf(bad).procs.tolist() == [2]
    with pytest.raises(SimschedError, match=r"bad.swf:2.*field 8 \(requested processors\).*MaxProcs"):
        read_swf(bad, procs_from="requested")


def test_the_real_log_under_each_reading() -> None:
    default = quiet_read(RICC)
    assert default.n == 4665 and default.dropped == {"not completed (status 0, 2-5)": 335}
    everything = quiet_read(RICC, keep="all")
    assert everything.n == 5000 and not everything.dropped
    requested = quiet_read(RICC, procs_from="requested")
    assert np.array_equal(requested.ids, default.ids)
    assert int(np.sum(requested.procs != default.procs)) == 253  # 246 of them 4 or 8 cores for 1 allocated...
    assert np.all(requested.procs >= default.procs)
    assert np.array_equal(quiet_read(RICC, procs_from="max").procs, requested.procs)  # field 8 >= field 5 here


def test_requested_time_and_zero_length_conventions(tmp_path: Path) -> None:
    p = write(tmp_path, line(1, 50, 20, 1), line(2, 60, 0, 1, req_time=30), line(3, 60, 5, 1, req_time=2))
    tr = read_swf(p)
    assert tr.submit.tolist() == [0.0, 10.0, 10.0]  # rebased to the first kept submit
    assert tr.requested.tolist() == [20.0, 30.0, 2.0] and tr.perfect_estimates == 1  # -1: the run time
    assert tr.run.tolist() == [20.0, 0.0, 5.0]  # a zero-length job is kept (it ran under 0.5 s)
    r = simulate_batch(tr, 1, FCFS())
    assert r.start.tolist() == [0.0, 20.0, 20.0] and r.end.tolist() == [20.0, 20.0, 25.0]


def test_bounded_slowdown_on_hand_cases() -> None:
    # one processor, all submitted at 0, FCFS: waits 0, 20, 25, 25; bsld = max(1, (w + r) / max(r, 10))
    tr = make_trace([0, 0, 0, 0], [20, 5, 0, 100], [1, 1, 1, 1])
    r = simulate_batch(tr, 1, FCFS())
    assert r.start.tolist() == [0.0, 20.0, 25.0, 25.0]
    m = r.metrics()
    assert m["wait_mean"] == pytest.approx((0 + 20 + 25 + 25) / 4)
    assert m["bsld_mean"] == pytest.approx((1.0 + 25 / 10 + 25 / 10 + 125 / 100) / 4)  # short jobs count as 10 s
    assert m["utilisation"] == pytest.approx(125 / 125)


def test_easy_backfills_a_job_ending_exactly_at_the_shadow_time() -> None:
    # 2 processors; job 1 (2 procs) waits for job 0 until 10, its shadow time; job 2 (1 proc, 8 s)
    # submitted at 2 ends at 10 = the shadow time and is backfilled (RLScheduler's rule, strictly
    # before, would hold it back to 15)
    tr = make_trace([0, 1, 2], [10, 5, 8], [1, 2, 1])
    assert simulate_batch(tr, 2, EASYBackfill()).start.tolist() == [0.0, 10.0, 2.0]


def test_easy_backfills_onto_the_extra_processors() -> None:
    # 4 processors; job 1 (3 procs) has its reservation at 10, leaving 1 extra processor there;
    # job 2 (1 proc, 100 s) runs past the shadow time on that extra one without delaying job 1
    # (RLScheduler's rule has no extra processors and holds it back to 15)
    tr = make_trace([0, 1, 2], [10, 5, 100], [2, 3, 1])
    assert simulate_batch(tr, 4, EASYBackfill()).start.tolist() == [0.0, 10.0, 2.0]


def test_an_export_names_nodes_and_processors(tmp_path: Path) -> None:
    tr = make_trace([0, 5], [10, 3], [2, 1], max_procs=16)
    out = tmp_path / "e.swf"
    write_swf(out, tr)
    head = [x for x in out.read_text().splitlines() if x.startswith(";")]
    assert "; MaxNodes: 16" in head and "; MaxProcs: 16" in head  # one core per node: MaxProcs / MaxNodes = 1
    assert read_swf(out).max_procs == 16


def test_a_scenario_chooses_the_reading(tmp_path: Path) -> None:
    write(tmp_path, line(1, 0, 10, 1, 4), line(2, 1, 10, 2, 2, status=5))
    p = tmp_path / "s.yaml"
    p.write_text("platform:\n  processors: [{name: n, count: 8}]\nworkload:\n  stream: {swf: t.swf, "
                 "procs_from: requested, keep: all}\nschedulers: [fcfs]\n")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", str(p), "--json", str(out)])
    assert res.exit_code == 0, res.output
    jobs = json.loads(out.read_text())["results"][0]["jobs"]
    assert [(j["job"], j["procs"]) for j in jobs] == [(1, 4), (2, 2)]


@pytest.mark.parametrize("stream, what", [
    ("{swf: t.swf, procs_from: nodes}", "procs_from"),
    ("{swf: t.swf, keep: true}", "keep"),
    ("{gpu_trace: g.csv, keep: all}", "swf or sacct log only"),
])
def test_bad_readings_exit_2(tmp_path: Path, stream: str, what: str) -> None:
    write(tmp_path, line(1, 0, 10, 1))
    (tmp_path / "g.csv").write_text("job,submit,gpus,duration\na,0,1,5\n")
    p = tmp_path / "s.yaml"
    p.write_text(f"platform:\n  processors: [{{name: n, count: 8}}]\nworkload:\n  stream: {stream}\n"
                 f"schedulers: [fcfs]\n")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", str(p), "--json", str(out)])
    assert res.exit_code == 2, res.output
    assert what in res.output and "Traceback" not in res.output and not out.exists()
