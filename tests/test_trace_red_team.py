"""Hostile but plausible cluster-log inputs that once fell, each pinned at the layer that now holds it.

* a UTF-8 byte-order mark (what spreadsheets and Windows editors write) is no part of an SWF header line
  or a GPU trace's first column: the file reads as without it;
* a GPU trace goes through the one capped CSV reader of input tables (``limits.read_csv_records``): a
  cell past ``max_csv_field`` or a GPU count past 2**53 is a located refusal, not a traceback;
* ``scale`` and ``window`` of a cluster log take numbers as every other scenario field does: YAML 1.1
  reads ``1e6`` (no dot) as a string, which a strict float refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import refused
from typer.testing import CliRunner

from simsched import limits
from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.scenario.load import load_scenario
from simsched.workloads.importers.gpu_trace import read_gpu_trace
from simsched.workloads.importers.swf import read_swf

SWF = "; Version: 2.2\n; MaxProcs: 8\n" + "".join(
    f"{j} {10 * j} -1 {20 + j} {1 + j % 8} -1 -1 {1 + j % 8} -1 -1 1 {j % 3} -1 -1 -1 -1 -1 -1\n" for j in range(1, 9))
GPU = "job,submit,gpus,duration,user,requested\n" + "".join(
    f"j{i},{5 * i},{1 + i % 4},{30 + i},u{i % 2},{'' if i % 3 else 60}\n" for i in range(1, 9))


def _same(a, b) -> None:
    for f in ("ids", "submit", "run", "requested", "procs", "user"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert a.max_procs == b.max_procs


@pytest.mark.parametrize("body", [SWF, SWF.replace("; Version: 2.2\n; MaxProcs: 8\n", "")])
def test_swf_with_a_byte_order_mark_reads_as_without(tmp_path: Path, body: str) -> None:
    plain, marked = tmp_path / "a.swf", tmp_path / "b.swf"
    plain.write_text(body)
    marked.write_bytes("\ufeff".encode() + body.replace("\n", "\r\n").encode())
    _same(read_swf(plain), read_swf(marked))


def test_gpu_trace_with_a_byte_order_mark_reads_as_without(tmp_path: Path) -> None:
    plain, marked = tmp_path / "a.csv", tmp_path / "b.csv"
    plain.write_text(GPU)
    marked.write_bytes(b"\xef\xbb\xbf" + GPU.upper().replace("J", "j").encode())  # header case folded too
    _same(read_gpu_trace(plain), read_gpu_trace(marked))


def test_gpu_trace_rows_of_empty_cells_are_blank_lines(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    p.write_text(GPU.replace("\nj2,", "\n,,,,,\n\nj2,") + ",,,,,\n")
    q = tmp_path / "h.csv"
    q.write_text(GPU)
    _same(read_gpu_trace(p), read_gpu_trace(q))


@pytest.mark.parametrize(("row", "field", "says"), [
    ("j9,100,1e20,5,u,", "gpus", "at most"),                # overflowed the int64 cast: OverflowError
    ("j9,100,1e16,5,u,", "gpus", "at most"),
    ("j9,100,1,5,u,1e300", "requested", "finite"),
])
def test_gpu_trace_numbers_past_their_range_are_located(tmp_path: Path, row: str, field: str, says: str) -> None:
    p = tmp_path / "g.csv"
    p.write_text(GPU + row + "\n")
    with pytest.raises(SimschedError, match=says) as info:
        read_gpu_trace(p, max_procs=8)
    assert (info.value.line, info.value.field) == (10, field)


def test_gpu_trace_cells_are_capped(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    cap = limits.current().max_csv_field
    p.write_text(GPU + "j9,100,1,5," + "u" * (cap + 10) + ",\n")  # the csv module raised _csv.Error
    with pytest.raises(limits.LimitError, match="longer than") as info:
        read_gpu_trace(p)
    assert info.value.line == 10
    p.write_text(GPU + 'j9,100,1,5,"u\0",\n')
    with pytest.raises(SimschedError, match="NUL"):
        read_gpu_trace(p)


def _cluster(tmp_path: Path, stream: str, trace: str = "swf") -> Path:
    (tmp_path / "t.swf").write_text(SWF)
    (tmp_path / "t.csv").write_text(GPU)
    s = tmp_path / "s.yaml"
    s.write_text("platform:\n  processors:\n    - {name: n, type: cpu, count: 8}\nworkload:\n  stream:\n"
                 f"    {trace}: t.{'swf' if trace == 'swf' else 'csv'}\n{stream}schedulers: [fcfs, easy-backfill]\n")
    return s


@pytest.mark.parametrize(("stream", "first", "n"), [
    ("    scale: 1e6\n", 0.0, 8),
    ("    scale: 1e-6\n", 0.0, 8),
    ("    window: [0, 1e-9]\n", 0.0, 1),   # only the first job, at 0
    ("    window: [1e1, 3e1]\n", 0.0, 2),  # jobs submitted 10 and 20 s after the first, rebased
])
def test_cluster_log_numbers_written_with_an_exponent(tmp_path: Path, stream: str, first: float, n: int) -> None:
    trace = load_scenario(_cluster(tmp_path, stream)).workload.options["batch"].trace
    assert trace.n == n and trace.submit[0] == first
    if "scale" in stream:
        assert trace.submit[-1] == pytest.approx(70 / float(stream.split(":")[1]))


@pytest.mark.parametrize(("stream", "says"), [
    ("    scale: 1e7\n", "scale"), ("    scale: 1e-7\n", "scale"), ("    scale: .nan\n", "NaN"),
    ("    scale: true\n", "boolean"), ("    window: [0, .inf]\n", "window[1]"),
    ("    window: [0, 1e300]\n", "window[1]"),
    ("    window: [1e9, 2e9]\n", "no job"), ("    window: [5, 5]\n", "start < end"), ("    limit: 0\n", "limit"),
])
def test_cluster_log_slices_out_of_range_are_refused(tmp_path: Path, stream: str, says: str) -> None:
    s = _cluster(tmp_path, stream)
    refused(["run", str(s), "--json", str(tmp_path / "o.json")], inputs=(s,), absent=(tmp_path / "o.json",), says=says)


def test_bom_gpu_trace_runs_end_to_end(tmp_path: Path) -> None:
    s = _cluster(tmp_path, "    scale: 2e0\n", trace="gpu_trace")
    (tmp_path / "t.csv").write_bytes(b"\xef\xbb\xbf" + GPU.replace("\n", "\r\n").encode())
    result = CliRunner().invoke(app, ["run", str(s), "--json", str(tmp_path / "o.json")])
    assert result.exit_code == 0, result.output
    assert "nan" not in (tmp_path / "o.json").read_text().lower()


@pytest.mark.parametrize(("text", "error", "line"), [
    ("time,intensity\n0," + "1" * 70_000 + "\n", limits.LimitError, 2),  # an uncaught _csv.Error before
    ("time,intensity\n0,5\n10,5\0\n", SimschedError, 3),
    ("time,intensity\n0,5,7\n", SimschedError, 2),
    (b"time,intensity\n0,5\n10,\xe9\n", SimschedError, 3),  # Latin-1 was read as a replacement character
])
def test_carbon_trace_goes_through_the_capped_csv_reader(tmp_path: Path, text, error, line: int) -> None:
    from simsched.scenario.energy import read_intensity

    p = tmp_path / "grid.csv"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(error) as info:
        read_intensity(p)
    assert info.value.line == line


def test_carbon_trace_with_a_byte_order_mark_and_a_note_column(tmp_path: Path) -> None:
    from simsched.scenario.energy import read_intensity

    p = tmp_path / "grid.csv"
    p.write_bytes(b"\xef\xbb\xbftime,intensity,source\r\n0,300,coal\r\n3600,120,solar\r\n")
    trace = read_intensity(p)
    assert trace.times.tolist() == [0.0, 3600.0] and trace.g_per_kwh.tolist() == [300.0, 120.0]


GANG = """platform:
  processors:
    - {name: gpu, type: gpu, speed: 2.0, count: 8}
    - {name: cpu, type: cpu, count: 4}
workload:
  tasks:
    - {name: a, work: 4}
    - {name: b, work: 80, procs: PROCS}
  edges:
    - {from: a, to: b, data: 5}
failures: {mtbf: MTBF, mttr: 5}
schedulers: [heft, srjf-eft]
"""


def test_a_gang_that_failures_would_restart_forever_is_refused_up_front(tmp_path: Path) -> None:
    """A task on k processors restarts when any of them fails: e^(k L / MTBF) attempts, not e^(L / MTBF).
    b takes 40 on 8 GPUs at MTBF 50: e^6.4 attempts (about 600, each the whole gang), which ran past a
    minute per scheduler; the per-processor bound (e^0.8) let it through."""
    s = tmp_path / "s.yaml"
    s.write_text(GANG.replace("PROCS", "8").replace("MTBF", "50"))
    refused(["run", str(s)], inputs=(s,), says="on 8 processors at once", seconds=60)
    # the bound is a lower one: moldable on 1-8, one GPU (80 / 2 = 40 at MTBF 50) stays e^0.8, and runs
    s.write_text(GANG.replace("PROCS", "[1, 8]").replace("MTBF", "50"))
    result = CliRunner().invoke(app, ["run", str(s)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("procs", "says"), [
    ("1000000", "workload.tasks[1].procs: must be at most the processor limit"),
    ("2.5", "workload.tasks[1].procs: Input should be a valid integer"),
    ("[1, 2, 3]", "workload.tasks[1].procs: "),
])
def test_union_member_names_stay_out_of_the_located_field(tmp_path: Path, procs: str, says: str) -> None:
    """procs is k or [k_min, k_max]: pydantic names each member it tried in the error's location
    (``procs.function-after[_procs_bound(), ...<function ... at 0x7f...>]``), which is no key of the file."""
    s = tmp_path / "s.yaml"
    s.write_text(GANG.replace("PROCS", procs).replace("failures: {mtbf: MTBF, mttr: 5}\n", ""))
    line = refused(["run", str(s)], inputs=(s,), says=says)
    assert "function-" not in line and " at 0x" not in line and "tuple[" not in line


def test_union_member_names_stay_out_of_the_slice_fields(tmp_path: Path) -> None:
    s = _cluster(tmp_path, "    scale: [2]\n")
    line = refused(["run", str(s)], inputs=(s,), says="workload.stream.scale: ")
    assert "scale.float" not in line


def test_capacity_json_is_strict_json_when_a_level_has_no_finite_day(tmp_path: Path) -> None:
    """On too few processors a job never fits, every day's bounded slowdown is infinite and the level's
    mean over finite days is NaN: --json wrote the token NaN, which JSON does not allow (``simsched
    report`` and jq refuse it); it writes null, as run --json does."""
    import json

    s = _cluster(tmp_path, "")
    s.write_text(s.read_text() + "capacity: {objective: bsld_mean <= 5, days: 1, max: 16}\n")
    out = tmp_path / "c.json"
    result = CliRunner().invoke(app, ["capacity", str(s), "-s", "fcfs", "--json", str(out)])
    assert result.exit_code == 0, result.output

    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in the capacity JSON")

    doc = json.loads(out.read_text(), parse_constant=no_constant)
    levels = doc["variants"][0]["levels"]
    assert levels[0]["capacity"] == 1 and levels[0]["metrics"]["bsld_mean"]["mean"] is None
    assert levels[0]["metrics"]["bsld_mean"]["infinite_days"] == 1


def test_a_job_whose_processors_are_never_up_together_is_refused_up_front(tmp_path: Path) -> None:
    """Jobs as wide as the machine, processors down a thousand times longer than up (MTTR 1e9 s, MTBF
    1e6 s): all 16 are up at once with chance about 1e-48, so the replay drew failures and repairs for
    ever (past a minute, killed).  A Chernoff bound on the number up refuses it before the run; with
    a short repair the same log runs."""
    line = "{} {} -1 1000 16 -1 -1 16 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    body = "; MaxProcs: 16\n" + "".join(line.format(j, j) for j in range(1, 6))
    (tmp_path / "t.swf").write_text(body)
    s = tmp_path / "s.yaml"
    head = "platform:\n  processors:\n    - {name: n, type: cpu, count: 16}\nworkload:\n  stream:\n    swf: t.swf\n"
    s.write_text(head + "failures: {mtbf: 1000000, mttr: 1.0e9}\nschedulers: [fcfs, easy-backfill]\n")
    refused(["run", str(s)], inputs=(s,), says="up at once", seconds=60)
    s.write_text(head + "failures: {mtbf: 1000000, mttr: 60}\nschedulers: [fcfs, easy-backfill]\n")
    result = CliRunner().invoke(app, ["run", str(s)])
    assert result.exit_code == 0, result.output


def test_gpu_trace_reads_the_limits_once(tmp_path: Path, monkeypatch) -> None:
    """limits.current() parses the environment (about a millisecond): once per row it was most of the time
    of reading a 5,000-job trace."""
    calls = []
    real = limits.current
    monkeypatch.setattr(limits, "current", lambda: calls.append(1) or real())
    p = tmp_path / "g.csv"
    p.write_text("job,submit,gpus,duration\n" + "".join(f"j{i},{i},1,5\n" for i in range(500)))
    assert read_gpu_trace(p).n == 500 and len(calls) < 10  # was one per row and more


def test_yaml_exponents_are_numbers_everywhere(tmp_path: Path) -> None:
    """YAML 1.1 (PyYAML) reads 1e6 and 1.0e29 as strings; the loader reads them as YAML 1.2 does, so a
    job file's Downey A: 1.0e29 is a number (it was refused as "A and sigma are numbers") and quoted text
    stays text."""
    from simsched.yamlio import load_yaml

    p = tmp_path / "d.yaml"
    p.write_text("a: 1e6\nb: 1.0e29\nc: -2E-3\nd: 1e\ne: '1e6'\nf: .5e1\ng: 1e6x\n")
    assert load_yaml(p).data == {"a": 1e6, "b": 1e29, "c": -0.002, "d": "1e", "e": "1e6", "f": 5.0, "g": "1e6x"}
    (tmp_path / "j.yaml").write_text("tasks:\n  - {name: a, work: 10, procs: [1, 8], speedup: {model: downey, "
                                     "A: 1.0e29, sigma: 2e0}}\n  - {name: b, work: 1e1}\n"
                                     "edges:\n  - {from: a, to: b}\n")
    s = tmp_path / "s.yaml"
    s.write_text("platform:\n  processors:\n    - {name: g, type: gpu, count: 8}\nworkload:\n  stream:\n"
                 "    jobs: {inline: j.yaml}\n    arrivals: {poisson: 1e-2}\n    count: 3\nschedulers: [srjf-eft]\n")
    result = CliRunner().invoke(app, ["run", str(s)])
    assert result.exit_code == 0, result.output


JOB_FILE_STREAM = """platform:
  processors:
    - {name: g, type: gpu, count: 8}
    - {name: c, type: cpu, count: 4}
workload:
  stream:
    jobs: {inline: j.yaml}
    arrivals: {poisson: 0.01}
    count: 3
schedulers: [srjf-eft]
"""


@pytest.mark.parametrize("policies", [["-s", "fcfs"], ["-s", "fcfs", "-s", "srjf-eft"]])
def test_a_job_file_task_wider_than_every_type_is_located_on_the_batch_path(tmp_path: Path, policies) -> None:
    """A job file's task needs 9 GPUs of 8: under -s with a task-graph scheduler the refusal had no file
    and no line (the stream's problem was built outside the scenario's location)."""
    (tmp_path / "j.yaml").write_text("tasks:\n  - {name: a, work: 10, procs: 9}\n  - {name: b, work: 1}\n"
                                     "edges:\n  - {from: a, to: b}\n")
    s = tmp_path / "s.yaml"
    s.write_text(JOB_FILE_STREAM)
    refused(["run", str(s), *policies], inputs=(s,), says="s.yaml:6: workload.stream: task 'j0.a' needs 9")


def test_the_one_json_clean_up_nulls_every_non_finite_number_and_keeps_text():
    """``outputs.finite`` (used by the results, baseline and capacity writers): NaN and infinities
    become null at any depth, through mappings, lists, tuples and other sequences; text and ints stay."""
    import json
    import math
    from collections import UserList

    from simsched.outputs import finite, strict_json

    value = {"a": [1.0, math.nan, ("x", math.inf)], "b": {"c": -math.inf, "d": 3}, "e": UserList([math.nan]),
             "s": "nan"}
    assert finite(value) == {"a": [1.0, None, ["x", None]], "b": {"c": None, "d": 3}, "e": [None], "s": "nan"}
    assert json.loads(strict_json(value)) == finite(value)


# --------------------------------------------------------------------------- issue 40: traces read back bounded
def _tiny_rows(path: Path, megabytes: int = 60) -> Path:
    """A GPU trace of ~``megabytes`` MB of tiny valid rows (about 4 million jobs)."""
    row = "".join(f"{i},{i},1,1\n" for i in range(1000))  # one block, repeated: ids repeat, but rows are read first
    with path.open("w") as fh:
        fh.write("job,submit,gpus,duration\n")
        for _ in range(megabytes * 2**20 // len(row)):
            fh.write(row)
    return path


@pytest.mark.parametrize("limit", [None, 10])
def test_a_60_mb_gpu_trace_of_tiny_rows_is_bounded_while_read(tmp_path: Path, limit) -> None:
    """A 60 MB GPU trace of tiny rows held ~4 million rows as dictionaries before its job count was checked
    (16 s and 1.7 GB with ``limit: 10``): rows are now counted while read, refused past max_jobs, and a
    ``limit`` stops reading after its jobs."""
    import time

    p = _tiny_rows(tmp_path / "big.csv")
    t0 = time.process_time()
    if limit is None:
        with pytest.raises(limits.LimitError, match="more than 100,000 rows.*max_jobs") as info:
            read_gpu_trace(p)
        assert info.value.line == 100_002
    else:
        assert read_gpu_trace(p, limit=limit).n == limit
    assert time.process_time() - t0 < 5.0


def test_an_arrival_trace_and_a_task_list_are_bounded_while_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SIMSCHED_MAX_JOBS", "5")
    monkeypatch.setenv("SIMSCHED_MAX_TRACE_ROWS", "4")
    p = tmp_path / "a.csv"
    p.write_text("time,job\n" + "".join(f"{i},j\n" for i in range(10)))
    with pytest.raises(limits.LimitError, match="arrival trace has more than 5 rows.*max_jobs"):
        limits.read_csv_records(p, required=("time", "job"), what="an arrival trace", max_rows=(5, "max_jobs"))
    d = tmp_path / "down.csv"
    d.write_text("processor,start,end\n" + "".join(f"P0,{i},{i + 0.5}\n" for i in range(10)))
    with pytest.raises(limits.LimitError, match="max_trace_rows") as info:
        limits.read_csv_records(d, required=("processor", "start", "end"), what="a down-interval trace")
    assert info.value.line == 6


@pytest.mark.parametrize("value", ["9" * 400, "99999999999999999999999999", str(2**53 + 1), "12abc"])
def test_an_swf_header_with_a_huge_integer_is_a_located_refusal(tmp_path: Path, value: str) -> None:
    """``; MaxProcs: 999...`` (400 digits) was compared with the float job fields: OverflowError."""
    p = tmp_path / "h.swf"
    p.write_text(f"; Version: 2.2\n; MaxProcs: {value}\n1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(SimschedError, match="MaxProcs|maxprocs") as info:
        read_swf(p, max_procs=4)
    assert info.value.line == 2 and len(str(info.value)) < 300
    s = tmp_path / "s.yaml"
    s.write_text("platform:\n  processors: [{name: node, count: 4}]\nworkload:\n  stream: {swf: h.swf}\n"
                 "schedulers: [fcfs]\n")
    refused(["run", str(s)], inputs=(p, s), says="h.swf")
