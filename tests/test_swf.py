"""Cluster logs in: SWF and GPU-trace importers (conventions, slices, refusals with file and line),
the SWF exporter, and a cluster-log scenario end to end through ``simsched run``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import DataRepairWarning, SimschedError
from simsched.schedulers.batch_easy import EASYBackfill
from simsched.simulator.batch import simulate_batch
from simsched.workloads.importers.gpu_trace import read_gpu_trace
from simsched.workloads.importers.swf import make_trace, read_swf, write_swf

ROOT = Path(__file__).resolve().parents[1]
LUBLIN = ROOT / "scenarios" / "data" / "traces" / "lublin_256.swf"
SCENARIO = ROOT / "scenarios" / "cluster" / "lublin_256.yaml"


def line(job, submit, run, procs, req_time=-1, status=1, user=-1, req_procs=-1) -> str:
    f = [job, submit, -1, run, procs, -1, -1, req_procs, req_time, -1, status, user, -1, -1, -1, -1, -1, -1]
    return " ".join(str(x) for x in f)


def swf(tmp_path: Path, *lines: str, header: str = "; MaxProcs: 8") -> Path:
    p = tmp_path / "t.swf"
    p.write_text("\n".join([header, *lines]) + "\n")
    return p


def test_the_shipped_trace() -> None:
    tr = read_swf(LUBLIN)
    assert tr.n == 2000 and tr.max_procs == 256
    assert tr.submit[0] == 0.0 and np.all(np.diff(tr.submit) >= 0)
    assert tr.perfect_estimates == 2000 and np.array_equal(tr.requested, tr.run)  # field 9 is -1 everywhere
    assert tr.procs.min() >= 1 and tr.procs.max() <= 256


def test_conventions(tmp_path: Path) -> None:
    p = swf(tmp_path, line(1, 100, 10, 2, req_time=20, user=3), line(2, 100, 5, -1, req_procs=4),
            line(3, 150, 7, 1, status=0), line(4, 160, -1, 1), line(5, 170, 3, 9),
            line(6, 200, 4, 1, status=-1), header="; MaxProcs: 16")
    with pytest.warns(DataRepairWarning, match="dropped 3 of 6 jobs: 1 not completed.*1 without a run time.*1 wider"):
        tr = read_swf(p, max_procs=8)
    assert tr.ids.tolist() == [1, 2, 6]
    assert tr.submit.tolist() == [0.0, 0.0, 100.0]  # rebased to the first kept submit
    assert tr.procs.tolist() == [2, 4, 1]  # allocated, else requested processors
    assert tr.requested.tolist() == [20.0, 5.0, 4.0] and tr.perfect_estimates == 2
    assert tr.user.tolist() == [3, -1, -1]


def test_archive_conventions_drop_rather_than_refuse(tmp_path: Path) -> None:
    """A cancelled request wider than the machine is dropped, not refused; parts of a checkpointed
    job (status 2-4) may repeat its number."""
    p = swf(tmp_path, line(1, 0, 5, 2), line(2, 1, 0, -1, req_procs=64, status=5), line(3, 2, 4, 1, status=2),
            line(3, 9, 4, 1, status=3), line(4, 10, 1, 1))
    with pytest.warns(DataRepairWarning, match="3 not completed"):
        tr = read_swf(p)
    assert tr.ids.tolist() == [1, 4]


def test_slices_and_scale(tmp_path: Path) -> None:
    p = swf(tmp_path, *[line(i, 10 * i, 1, 1) for i in range(1, 11)])
    assert read_swf(p, limit=3).ids.tolist() == [1, 2, 3]
    w = read_swf(p, window=(20, 50))
    assert w.ids.tolist() == [3, 4, 5] and w.submit.tolist() == [0.0, 10.0, 20.0]
    assert read_swf(p, scale=2.0).submit.tolist() == [5.0 * i for i in range(10)]


@pytest.mark.parametrize("bad, lineno, what", [
    ("1 0 -1 5 1", 3, "18 fields"),
    (line(1, 0, 5, "x"), 3, "not a number"),
    (line(1, "nan", 5, 1), 3, "finite"),
    (line(1, -5, 5, 1), 3, "submit time must be >= 0"),
    (line(1, 0, -3, 1), 3, "run time"),
    (line(1, 0, 5, 1, req_time=-7), 3, "requested time"),
    (line(1, 0, 5, 9), 3, "MaxProcs"),
    (line(1, 0, 5, -1, req_procs=12), 3, "MaxProcs"),
    (line(0, 0, 5, 1), 3, "appears twice"),
    (line(5, 0, 5, 1), 3, "sorted"),
    (line(1e20, 0, 5, 1), 3, "whole number"),
    (line(1, 0, 5, 2.5), 3, "whole number"),
])
def test_bad_lines_name_file_and_line(tmp_path: Path, bad: str, lineno: int, what: str) -> None:
    p = swf(tmp_path, line(0, 10 if what == "sorted" else 0, 5, 1), bad)
    with pytest.raises(SimschedError, match=what) as info:
        read_swf(p)
    assert info.value.file == str(p) and info.value.line == lineno


def test_more_jobs_than_the_limit_are_refused_while_reading(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SIMSCHED_MAX_JOBS", "3")
    p = swf(tmp_path, *[line(i, i, 1, 1) for i in range(1, 6)])
    with pytest.raises(SimschedError, match="max_jobs") as info:
        read_swf(p)
    assert info.value.line == 5


def test_empty_and_unfit(tmp_path: Path) -> None:
    with pytest.raises(SimschedError, match="no job lines"):
        read_swf(swf(tmp_path))
    p = swf(tmp_path, line(1, 0, 5, 4))
    with pytest.raises(SimschedError, match="no job of the SWF file is left"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_swf(p, max_procs=2)
    with pytest.raises(SimschedError, match="more than the machine's 2") as info:
        read_swf(p, max_procs=2, too_wide="refuse")
    assert info.value.line == 2


def test_gpu_trace(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    p.write_text("job,submit,gpus,duration,user,requested\n"
                 "a,10,8,100,alice,200\nb,10,2,50,bob,\nc,30,16,5,alice,5\n")
    with pytest.warns(DataRepairWarning, match="dropped 1 of 3 jobs"):
        tr = read_gpu_trace(p, max_procs=8)
    assert tr.procs.tolist() == [8, 2] and tr.submit.tolist() == [0.0, 0.0]
    assert tr.requested.tolist() == [200.0, 50.0] and tr.user.tolist() == [0, 1]
    for text, what, ln in (("job,submit,gpus\n", "duration", 1), ("job,submit,gpus,duration\na,0,1.5,3\n", "whole", 2),
                           ("job,submit,gpus,duration\na,5,1,3\nb,1,1,3\n", "sorted", 3),
                           ("job,submit,gpus,duration\na,0,1,3\na,1,1,3\n", "twice", 3),
                           ("job,submit,gpus,duration\na,0,1\n", "cell", 2),
                           ("job,submit,gpus,duration\na,0,1,inf\n", "finite", 2)):
        p.write_text(text)
        with pytest.raises(SimschedError, match=what) as info:
            read_gpu_trace(p)
        assert info.value.line == ln


def test_swf_round_trip(tmp_path: Path) -> None:
    tr = read_swf(LUBLIN, limit=200)
    r = simulate_batch(tr, 256, EASYBackfill())
    out = tmp_path / "out.swf"
    write_swf(out, tr, r.start, r.end)
    back = read_swf(out)
    assert back.ids.tolist() == tr.ids.tolist() and back.procs.tolist() == tr.procs.tolist()
    assert np.array_equal(back.run, tr.run) and np.array_equal(back.requested, tr.requested)
    waits = np.loadtxt(out, comments=";")[:, 2]
    assert np.array_equal(waits, r.start - tr.submit)


def test_make_trace_refuses_nonsense() -> None:
    for kw in ({"submit": [1, 0]}, {"run": [-1, 1]}, {"procs": [0, 1]}, {"submit": [0, float("nan")]}):
        args = {"submit": [0, 1], "run": [1, 1], "procs": [1, 1], **kw}
        with pytest.raises(SimschedError):
            make_trace(args["submit"], args["run"], args["procs"])


# --------------------------------------------------------------------------- through the command line
def test_run_a_cluster_log(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", str(SCENARIO), "-s", "fcfs", "-s", "easy-backfill", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "easy-backfill" in res.output and "perfect estimates" in res.output
    doc = json.loads(out.read_text())
    rows = {r["scheduler"]: r for r in doc["results"]}
    for key in ("wait_mean", "wait_p95", "bsld_mean", "bsld_p95", "utilisation"):
        assert key in rows["fcfs"]
    assert rows["easy-backfill"]["bsld_mean"] < rows["fcfs"]["bsld_mean"]
    assert len(rows["fcfs"]["jobs"]) == 2000


def _scenario(tmp_path: Path, stream: str, schedulers: str = "[fcfs]") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(f"platform:\n  processors: [{{name: n, count: 8}}]\nworkload:\n  stream: {stream}\n"
                 f"schedulers: {schedulers}\n")
    return p


@pytest.mark.parametrize("stream, schedulers, what", [
    ("{swf: dup.swf}", "[fcfs]", "dup.swf:3: field 1"),
    ("{swf: t.swf, scale: true}", "[fcfs]", "scale"),
    ("{swf: t.swf, limit: 0}", "[fcfs]", "limit"),
    ("{swf: t.swf, scale: .nan}", "[fcfs]", "scale"),
    ("{swf: t.swf, window: [5, 1]}", "[fcfs]", "window"),
    ("{swf: t.swf, gpu_trace: t.csv}", "[fcfs]", "exactly one"),
    ("{swf: missing.swf}", "[fcfs]", "no such file"),
    ("{swf: t.swf}", "[heft]", "a static scheduler"),
])
def test_bad_cluster_scenarios_exit_2(tmp_path: Path, stream: str, schedulers: str, what: str) -> None:
    swf(tmp_path, line(1, 0, 5, 1), line(2, 3, 5, 1))
    (tmp_path / "dup.swf").write_text("; MaxProcs: 8\n" + line(1, 0, 5, 1) + "\n" + line(1, 3, 5, 1) + "\n")
    p = _scenario(tmp_path, stream, schedulers)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["run", str(p), "--json", str(out)])
    assert res.exit_code == 2, res.output
    assert what in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_dag_scenario_refuses_a_batch_policy(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["run", str(ROOT / "scenarios" / "topcuoglu2002.yaml"), "-s", "easy-backfill"])
    assert res.exit_code == 2 and "batch policy" in res.output


def test_capacity_on_a_cluster_log(tmp_path: Path) -> None:
    """The fewest processors for bsld_mean <= 10 on a slice of the shipped log: the answer passes,
    one fewer fails, and the narrowest machine tried can run the widest job."""
    p = tmp_path / "c.yaml"
    p.write_text(f"platform:\n  processors: [{{name: n, count: 256}}]\n"
                 f"workload:\n  stream: {{swf: {LUBLIN}, limit: 300}}\nschedulers: [easy-backfill]\n")
    out = tmp_path / "cap.json"
    res = CliRunner().invoke(app, ["capacity", str(p), "--objective", "bsld_mean <= 10", "--days", "1", "--max", "1024",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    answer = json.loads(out.read_text())["variants"][0]
    n = answer["capacity"]
    assert n is not None and n >= int(read_swf(LUBLIN, limit=300).procs.max())
    levels = {lv["capacity"]: lv for lv in answer["levels"]}
    assert levels[n]["met_days"] == 1 and levels[n - 1]["met_days"] == 0


_TOKENS = ["1", "0", "-1", "5", "7.5", "-3", "1e400", "nan", "x", "256", "2e20", ""]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_TOKENS), min_size=16, max_size=19), min_size=1, max_size=6),
       st.sampled_from(["; MaxProcs: 8", "; MaxNodes: x", ""]))
def test_any_swf_text_is_read_or_refused_with_a_line(tmp_path_factory, lines, header) -> None:
    p = tmp_path_factory.mktemp("fuzz") / "f.swf"
    p.write_text("\n".join([header, *(" ".join(cells) for cells in lines)]) + "\n")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr = read_swf(p, max_procs=16)
    except SimschedError as exc:
        assert exc.file == str(p)
        return
    assert tr.n >= 1 and np.all(tr.procs >= 1) and np.all(tr.run >= 0) and np.all(np.diff(tr.submit) >= 0)


def test_the_job_limit_counts_the_slice_not_the_file(tmp_path: Path) -> None:
    """Issue 42: a log of 100,001 jobs replayed with ``limit: 10`` is accepted (max_jobs is 100,000 by
    default), and the same slice as the file cut to its first jobs: reading stops where the slice
    ends."""
    from simsched import limits

    assert limits.current().max_jobs == 100_000
    lines = [line(i, i, 5, 1 + i % 3, req_time=7) for i in range(1, 100_002)]
    big = read_swf(swf(tmp_path, *lines), limit=10, max_procs=8)
    small_dir = tmp_path / "small"
    small_dir.mkdir()
    small = read_swf(swf(small_dir, *lines[:50]), limit=10, max_procs=8)
    assert big.n == small.n == 10
    assert np.array_equal(big.submit, small.submit) and np.array_equal(big.procs, small.procs)
    with pytest.raises(SimschedError, match="max_jobs"):
        read_swf(swf(tmp_path, *lines), max_procs=8)  # the whole file is still refused


def test_a_slice_reads_only_what_it_needs(tmp_path: Path, monkeypatch) -> None:
    """Lines after the slice are never read (a broken one there is not refused); dropped jobs before
    its end are counted as before; the window's end stops reading too; a slice needing more lines
    than max_jobs is refused, naming the slice."""
    monkeypatch.setenv("SIMSCHED_MAX_JOBS", "4")
    p = swf(tmp_path, line(1, 0, 5, 1), line(2, 1, -1, 1), line(3, 2, 5, 5), line(4, 3, 5, 2),
            line(5, 4, 5, 2), "this line is not SWF")
    with pytest.warns(DataRepairWarning, match="dropped 2 of 4 jobs"):
        t = read_swf(p, limit=2, max_procs=4)
    assert t.ids.tolist() == [1, 4]
    t = read_swf(swf(tmp_path, line(1, 0, 5, 1), line(2, 10, 5, 1), line(3, 20, 5, 1), line(4, 30, 5, 1),
                     line(5, 40, 5, 1), "broken"), window=(5.0, 25.0), max_procs=8)
    assert t.ids.tolist() == [2, 3]
    with pytest.raises(SimschedError, match="the slice .* needs more than max_jobs = 4") as info:
        read_swf(swf(tmp_path, *[line(i, i, -1, 1) for i in range(1, 6)], line(6, 9, 5, 1)), limit=1, max_procs=8)
    assert info.value.line == 6
