"""What a WfFormat instance recorded of its run (simsched.workloads.recorded, importers.wfformat_recorded):
the same hand-written fork-join run in the shapes of WfFormat 1.3, 1.4, 1.5 and 1.6 gives the same record;
inconsistent records are refused with the file, line, task and field; three real WfInstances executions
(tests/data/wfinstances, LGPL-3.0) import with their machines and makespan; a property over generated runs."""

from __future__ import annotations

import copy
import json
import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from simsched.cli.main import app
from simsched.errors import SimschedError
from simsched.workloads.importers.wfformat import read_wfformat
from simsched.workloads.importers.wfformat_recorded import machines, parse_timestamp, read_recorded
from simsched.workloads.recorded import (
    MAKESPAN_FROM_STARTS,
    MAKESPAN_RECORDED,
    RecordedMachine,
    RecordedRun,
    RecordedTask,
    installations,
)

DATA = Path(__file__).parent / "data"
HAND = DATA / "wfformat"
REAL = DATA / "wfinstances"
VERSIONS = ("1.3", "1.4", "1.5", "1.6")
NAMES = ("split_ID01", "work_ID02", "work_ID03", "merge_ID04")
WMS = {"1.3": ("Makeflow", "7.1.12"), "1.4": ("Pegasus", "4.9.3"), "1.5": ("Pegasus", "5.0"), "1.6": ("Pegasus", "5.0")}
TEN_UTC = datetime(2024, 3, 1, 10, 0, tzinfo=timezone.utc)
nan = math.nan


def _same(a, b) -> bool:
    return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)


def _doc(version: str) -> dict:
    return json.loads((HAND / f"recorded_{version}.json").read_text())


def _write(tmp_path: Path, doc: dict, name: str = "run.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc, indent=2))
    return p


# ------------------------------------------------------------------ the four shapes
@pytest.mark.parametrize("version", VERSIONS)
def test_each_version_records_the_same_run(version):
    path = HAND / f"recorded_{version}.json"
    graph, run = read_recorded(path)
    assert run.schema_version == version and (run.wms_name, run.wms_version) == WMS[version]
    assert run.names == NAMES == graph.names and run.source == str(path)
    assert run.machines == (RecordedMachine("n1", 8, 2400.0, 16e9), RecordedMachine("n2", 4, 3000.0, None))
    assert run.machine.tolist() == [0, 1, 0, 1] and run.task_machines == ((0,), (1,), (0,), (1,))
    assert run.has_placement
    assert run.runtime.tolist() == [10.0, 20.0, 15.0, 4.0]
    assert _same(run.cores, [1, 2, nan, nan])
    assert _same(run.read_bytes, [7e6, 3e6, nan, nan]) and _same(run.written_bytes, [4e6, 5e5, nan, nan])
    assert _same(run.memory_bytes, [2e6, nan, nan, nan])
    assert _same(run.energy_kwh, [0.5, nan, nan, nan]) and _same(run.avg_power_w, [180.0, nan, nan, nan])
    assert run.energy_total_kwh == 0.5
    assert run.files == ("raw.dat", "x.dat", "y.dat", "r1.dat", "r2.dat", "final.out")
    assert run.file_size.tolist() == [7e6, 3e6, 1e6, 5e5, 2.5e5, 2e6]
    assert run.inputs == ((0,), (1,), (2,), (3, 4)) and run.outputs == ((1, 2), (3,), (4,), (5,))
    assert run.workflow_inputs == (0,) and run.workflow_outputs == (5,)
    assert run.bytes_of(run.workflow_inputs) == 7e6 and run.bytes_of(run.workflow_outputs) == 2e6
    assert (run.makespan, run.makespan_source) == (45.0, MAKESPAN_RECORDED)
    assert run.executed_at == TEN_UTC
    assert run.critical_path(graph) == 34.0  # split 10 + work 20 + merge 4
    # the graph is the one read_wfformat gives
    plain = read_wfformat(path)
    for name in ("work", "kind", "cores", "memory", "edge_src", "edge_dst", "edge_data"):
        assert np.array_equal(getattr(plain, name), getattr(graph, name)), name
    assert plain.kind_names == graph.kind_names
    assert graph.memory.tolist() == [2.0, 0.0, 0.0, 0.0] and graph.cores.tolist() == [1, 2, 1, 1]  # MB; 1.3: KB
    # the arrays cannot be changed
    with pytest.raises(ValueError):
        run.runtime[0] = 1.0
    with pytest.raises(AttributeError):
        run.makespan = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("version", ("1.5", "1.6"))
def test_start_times_count_from_the_workflow_start(version):
    _, run = read_recorded(HAND / f"recorded_{version}.json")
    assert run.origin == TEN_UTC and run.has_starts
    assert run.start.tolist() == [5.0, 16.0, 15.0, 37.0]  # 1.6 writes them in four offsets
    assert run.span == 36.0 and run.end.tolist() == [15.0, 36.0, 30.0, 41.0]
    assert run.task("work_ID02") == RecordedTask(
        name="work_ID02", machines=("n2",), start=16.0, runtime=20.0, cores=2.0, read_bytes=3e6,
        written_bytes=5e5, memory_bytes=None, energy_kwh=None, avg_power_w=None,
        inputs=(("x.dat", 3e6),), outputs=(("r1.dat", 5e5),))
    assert run.task(1).end == 36.0 and run.index("merge_ID04") == 3


@pytest.mark.parametrize("version", ("1.3", "1.4"))
def test_versions_without_task_starts(version):
    _, run = read_recorded(HAND / f"recorded_{version}.json")
    assert run.origin is None and not run.has_starts and run.span is None
    assert np.isnan(run.start).all() and run.task(0).start is None and run.task(0).end is None


def test_13_units_follow_the_migration_tool(tmp_path):
    """1.3 bytes read/written are KB (x1000) except under Pegasus, whose tracer wrote bytes."""
    doc = _doc("1.3")
    doc["wms"]["name"] = "pegasus"
    _, run = read_recorded(_write(tmp_path, doc))
    assert _same(run.read_bytes, [7000, 3000, nan, nan]) and _same(run.memory_bytes, [2e6, nan, nan, nan])
    assert machines(HAND / "recorded_1.3.json") == [
        dict(name="n1", cores=8, speed_mhz=2400.0, memory_bytes=16e9),
        dict(name="n2", cores=4, speed_mhz=3000.0, memory_bytes=None)]


def test_13_imports_through_the_command_line():
    """1.3 used to be refused ("unknown schemaVersion") although the 1.4 reader parses it."""
    result = CliRunner().invoke(app, ["workload", "info", str(HAND / "recorded_1.3.json")])
    assert result.exit_code == 0, result.output
    assert re.search(r"tasks\s*│\s*4\s*│", result.output)
    assert re.search(r"critical path work\s*│\s*34\s*│", result.output)


def test_makespan_from_starts_and_origin_from_first_start(tmp_path):
    doc = _doc("1.5")
    del doc["workflow"]["execution"]["makespanInSeconds"]
    _, run = read_recorded(_write(tmp_path, doc))
    assert (run.makespan, run.makespan_source) == (41.0, MAKESPAN_FROM_STARTS)
    doc["workflow"]["execution"]["executedAt"] = "not a time"
    _, run = read_recorded(_write(tmp_path, doc))
    assert run.executed_at is None and run.executed_at_text == "not a time"
    assert run.origin == TEN_UTC + timedelta(seconds=5) and run.start.tolist() == [0.0, 11.0, 10.0, 32.0]
    assert run.makespan == 36.0


def test_no_machine_list_takes_the_names_tasks_give(tmp_path):
    doc = _doc("1.4")
    del doc["workflow"]["machines"]
    _, run = read_recorded(_write(tmp_path, doc))
    assert run.machines == (RecordedMachine("n1"), RecordedMachine("n2")) and run.machine.tolist() == [0, 1, 0, 1]


def test_a_task_without_a_record_stays_unrecorded(tmp_path):
    """WfInstances' montage-2mass-02d lists ten tasks with runtime 0 and no machine (never run)."""
    doc = _doc("1.5")
    ex = doc["workflow"]["execution"]["tasks"][3]
    doc["workflow"]["execution"]["tasks"][3] = {"id": ex["id"], "runtimeInSeconds": 0}
    _, run = read_recorded(_write(tmp_path, doc))
    assert run.machine[3] == -1 and not run.has_placement and not run.has_starts
    assert run.task(3).machines == () and np.isnan(run.start[3])


def test_wfcommons_own_writer(tmp_path):
    """The 1.6 that WfCommons writes (extra ``workflows``): metrics objects, RFC 3339 task starts."""
    common = pytest.importorskip("wfcommons.common")
    wf = common.Workflow(name="w", runtime_system_name="Pegasus", runtime_system_version="5.0",
                         executed_at="2024-03-01T10:00:00+00:00", makespan=40.0)
    m = common.Machine("n1", cpu={"coreCount": 8, "speedInMHz": 2400}, memory=16_000_000_000)
    a = common.Task(name="a", task_id="a_01", runtime=10.0, output_files=[common.File("x", 3000)], machines=[m],
                    executed_at="2024-03-01T10:00:02+00:00", bytes_read=100, cores=2)
    b = common.Task(name="b", task_id="b_02", runtime=5.0, input_files=[common.File("x", 3000)], machines=[m],
                    executed_at="2024-03-01T10:00:13+00:00")
    wf.add_task(a)
    wf.add_task(b)
    wf.add_dependency("a_01", "b_02")
    wf.write_json(tmp_path / "w.json")
    graph, run = read_recorded(tmp_path / "w.json")
    assert run.schema_version == json.loads((tmp_path / "w.json").read_text())["schemaVersion"]
    assert run.machines == (RecordedMachine("n1", 8, 2400.0, 16e9),) and run.machine.tolist() == [0, 0]
    assert run.start.tolist() == [2.0, 13.0] and run.runtime.tolist() == [10.0, 5.0] and run.makespan == 40.0
    assert _same(run.cores, [2, 1]) and _same(run.read_bytes, [100, nan]) and run.file_size.tolist() == [3000.0]
    assert graph.names == ("a_01", "b_02") and graph.n_edges == 1


@pytest.mark.parametrize("text, expected", [
    ("2020-12-25T20:10:08+00:00", datetime(2020, 12, 25, 20, 10, 8, tzinfo=timezone.utc)),
    ("2023-03-29T15:45:52-10:00", datetime(2023, 3, 30, 1, 45, 52, tzinfo=timezone.utc)),
    ("20200401T054215+0000", datetime(2020, 4, 1, 5, 42, 15, tzinfo=timezone.utc)),
    ("05-10-23T16:23:32Z", datetime(2023, 5, 10, 16, 23, 32, tzinfo=timezone.utc)),
    ("2024-01-02 03:04:05.25", datetime(2024, 1, 2, 3, 4, 5, 250000, tzinfo=timezone.utc)),
    (1700000000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)),
    ("yesterday", None), ("2024-13-01T00:00:00Z", None), (None, None), (True, None), ([], None),
])
def test_parse_timestamp(text, expected):
    assert parse_timestamp(text) == expected


# ------------------------------------------------------------------ refused, located
def _refused(tmp_path: Path, doc: dict, *needles: str, field: str | None = None, line_has: str | None = None,
             **options) -> SimschedError:
    p = _write(tmp_path, doc, "bad.json")
    with pytest.raises(SimschedError) as info:
        read_recorded(p, **options)
    e = info.value
    text = str(e)
    assert e.exit_code == 2 and "\n" not in text and e.file == str(p) and text.startswith(f"{p}:")
    for needle in needles:
        assert needle in text, text
    if field is not None:
        assert e.field == field, e.field
    if line_has is not None:
        assert e.line is not None and line_has in json.dumps(doc, indent=2).splitlines()[e.line - 1], e.line
    return e


def _ex(doc: dict, i: int) -> dict:
    return doc["workflow"]["execution"]["tasks"][i]


def test_a_task_that_starts_before_its_parent_ends(tmp_path):
    doc = _doc("1.5")
    _ex(doc, 1)["executedAt"] = "2024-03-01T10:00:12Z"
    _refused(tmp_path, doc, "task 'work_ID02'", "before its parent 'split_ID01' ends at 15 s",
             field="workflow.execution.tasks[id=work_ID02].executedAt", line_has='"executedAt"')
    _ex(doc, 1)["executedAt"] = "2024-03-01T10:00:14.5Z"  # 0.5 s early: within the 1 s of whole-second stamps
    read_recorded(_write(tmp_path, doc))
    _refused(tmp_path, doc, "starts at 14.5 s", tolerance=0)


def test_a_task_that_starts_before_the_workflow(tmp_path):
    doc = _doc("1.6")
    _ex(doc, 0)["executedAt"] = "2024-03-01T09:58:00Z"
    _refused(tmp_path, doc, "task 'split_ID01'", "starts 120 s before the workflow's executedAt",
             field="workflow.execution.tasks[id=split_ID01].executedAt", line_has='"executedAt"')


def test_a_start_that_is_not_a_time(tmp_path):
    doc = _doc("1.5")
    _ex(doc, 2)["executedAt"] = "soon"
    _refused(tmp_path, doc, "task 'work_ID03'", "executedAt 'soon' is not a timestamp",
             field="workflow.execution.tasks[id=work_ID03].executedAt", line_has='"soon"')


def test_negative_and_missing_runtimes(tmp_path):
    doc = _doc("1.5")
    _ex(doc, 1)["runtimeInSeconds"] = -3
    _refused(tmp_path, doc, "task 'work_ID02'", "runtimeInSeconds must be >= 0, got -3",
             field="workflow.execution.tasks[id=work_ID02].runtimeInSeconds", line_has="runtimeInSeconds")
    doc = _doc("1.3")
    doc["workflow"]["tasks"][2]["runtime"] = -1.5
    e = _refused(tmp_path, doc, "task 'work_ID03': runtime must be >= 0, got -1.5", field="workflow.tasks[2].runtime",
                 line_has='"runtime"')
    assert "strict" not in str(e)  # a recorded run has no lenient mode to point to
    doc = _doc("1.4")
    del doc["workflow"]["tasks"][2]["runtimeInSeconds"]
    _refused(tmp_path, doc, "task 'work_ID03' has no runtimeInSeconds")


def test_negative_file_size(tmp_path):
    doc = _doc("1.5")
    doc["workflow"]["specification"]["files"][0]["sizeInBytes"] = -7
    _refused(tmp_path, doc, "file 'raw.dat': sizeInBytes must be >= 0, got -7", field="workflow.specification.files",
             line_has='"id": "raw.dat"')


def test_unknown_machine(tmp_path):
    doc = _doc("1.5")
    _ex(doc, 3)["machines"] = ["n2", "n9"]
    _refused(tmp_path, doc, "task 'merge_ID04'", "ran on machine 'n9', which the machine list does not name",
             "n1, n2", field="workflow.execution.tasks[id=merge_ID04].machines", line_has='"machines"')
    doc = _doc("1.4")
    doc["workflow"]["tasks"][1]["machine"] = "elsewhere"
    _refused(tmp_path, doc, "task 'work_ID02'", "'elsewhere'", field="workflow.tasks[1].machine",
             line_has='"machine"')
    doc = _doc("1.5")
    _ex(doc, 0)["machines"] = "n1"  # one name without its list: unambiguous, read
    assert read_recorded(_write(tmp_path, doc)).run.machine[0] == 0
    _ex(doc, 0)["machines"] = ["n1", 7]
    _refused(tmp_path, doc, "machines must be a list of machine names, got ['n1', 7]")


@pytest.mark.parametrize("key, value, message", [
    ("readBytes", 1e400, "readBytes must be finite"),
    ("writtenBytes", -5, "writtenBytes must be >= 0, got -5"),
    ("memoryInBytes", "lots", "memoryInBytes must be a number, got 'lots'"),
    ("energyInKWh", -0.1, "energyInKWh must be >= 0"),
    ("avgPowerInW", [1], "avgPowerInW must be a number"),
    ("coreCount", 0, "coreCount must be > 0, got 0"),
])
def test_bad_task_numbers(tmp_path, key, value, message):
    doc = _doc("1.5")
    _ex(doc, 1)[key] = value
    p = _write(tmp_path, doc, "bad.json")
    if value == 1e400:  # JSON cannot write it; the text can
        p.write_text(p.read_text().replace("Infinity", "1e400"))
    with pytest.raises(SimschedError) as info:
        read_recorded(p)
    e = info.value
    assert "task 'work_ID02'" in str(e) and message in str(e), str(e)
    assert e.field == f"workflow.execution.tasks[id=work_ID02].{key}" and e.line is not None
    assert f'"{key}"' in p.read_text().splitlines()[e.line - 1]


def test_bad_machines(tmp_path):
    doc = _doc("1.5")
    doc["workflow"]["execution"]["machines"].append({"nodeName": "n1", "cpu": {"coreCount": 2}})
    _refused(tmp_path, doc, "machine 'n1' is listed twice", field="workflow.execution.machines[2]",
             line_has='"nodeName"')
    doc = _doc("1.5")
    doc["workflow"]["execution"]["machines"][1]["cpu"]["coreCount"] = 2.5
    _refused(tmp_path, doc, "machine 'n2': cpu.coreCount must be a whole number",
             field="workflow.execution.machines[1].cpu.coreCount")
    doc = _doc("1.4")
    doc["workflow"]["machines"][0]["cpu"]["speed"] = -1
    _refused(tmp_path, doc, "machine 'n1': cpu.speedInMHz must be >= 0", field="workflow.machines[0].cpu.speedInMHz")
    doc = _doc("1.5")
    doc["workflow"]["execution"]["machines"][0] = {"cpu": {}}
    _refused(tmp_path, doc, "a machine must be an object with a nodeName")


def test_makespan_shorter_than_the_run(tmp_path):
    doc = _doc("1.5")
    doc["workflow"]["execution"]["makespanInSeconds"] = 30
    _refused(tmp_path, doc, "recorded makespan 30 s is shorter than its tasks' span 36 s",
             field="workflow.execution.makespanInSeconds", line_has="makespanInSeconds")
    doc = _doc("1.4")  # no starts: the chain of runtimes (34 s) is the bound
    doc["workflow"]["makespanInSeconds"] = 20
    _refused(tmp_path, doc, "shorter than the longest chain of recorded runtimes, 34 s",
             field="workflow.makespanInSeconds")
    doc["workflow"]["makespanInSeconds"] = 0
    _refused(tmp_path, doc, "a generated instance, not a recorded run?")
    doc["workflow"]["makespanInSeconds"] = 33.5  # within the tolerance
    read_recorded(_write(tmp_path, doc))
    doc = _doc("1.3")
    doc["workflow"]["makespan"] = -1
    _refused(tmp_path, doc, "makespan must be >= 0", field="workflow.makespan", line_has='"makespan"')


def test_execution_entry_for_a_task_the_specification_lacks(tmp_path):
    doc = _doc("1.5")
    doc["workflow"]["execution"]["tasks"].append({"id": "ghost_ID99", "runtimeInSeconds": 1})
    _refused(tmp_path, doc, "records task 'ghost_ID99', which the specification does not list",
             field="workflow.execution.tasks[4].id", line_has="ghost_ID99")


def test_bad_tolerance_and_schema(tmp_path):
    with pytest.raises(SimschedError, match="the time tolerance must be >= 0"):
        read_recorded(HAND / "recorded_1.5.json", tolerance=-1)
    doc = _doc("1.5")
    doc["schemaVersion"] = "1.2"
    _refused(tmp_path, doc, "unknown schemaVersion '1.2'; supported: 1.3, 1.4, 1.5, 1.6")


# ------------------------------------------------------------------ real executions
@pytest.mark.parametrize("name, wms, tasks, machine_names, makespan", [
    ("bacass-dirt02-001.json", ("Nextflow", "23.04.1"), 11, ("dirt02",), 4243.0),
    ("srasearch-chameleon-10a-001.json", ("Pegasus", "5.0"), 22, ("worker-4",), 3488.0),
    ("blast-chameleon-small-001.json", ("Makeflow", "7.1.12."), 43, ("worker-1.novalocal", "worker-2.novalocal"),
     1279.3),
])
def test_real_wfinstances_executions(name, wms, tasks, machine_names, makespan):
    graph, run = read_recorded(REAL / name)
    assert (run.wms_name, run.wms_version) == wms and run.n_tasks == tasks == graph.n_tasks
    assert tuple(m.name for m in run.machines) == machine_names
    assert (run.makespan, run.makespan_source) == (makespan, MAKESPAN_RECORDED)
    assert run.makespan >= run.critical_path(graph) and not run.has_starts
    assert np.array_equal(run.runtime, read_wfformat(REAL / name).work)
    if wms[0] == "Nextflow":  # Nextflow's tracer records no placement; it ran on the one machine listed
        assert (run.machine == -1).all() and run.machines[0].cores == 1
    else:
        assert run.has_placement
    if wms[0] == "Makeflow":
        assert (run.cores == 1).all() and run.machines[0].cores == 24
        assert not np.isnan(run.read_bytes).any() and run.workflow_inputs


def _fields(wms: str, *names: str) -> dict:
    return dict(source=None, schema_version="1.5", wms_name=wms, wms_version=None, executed_at_text=None,
                executed_at=None, origin=None, makespan=None, makespan_source="",
                machines=tuple(RecordedMachine(n) for n in names), names=("t",), runtime=[1.0], start=[nan],
                machine=[-1], task_machines=((),), cores=[nan], read_bytes=[nan], written_bytes=[nan],
                memory_bytes=[nan], energy_kwh=[nan], avg_power_w=[nan], inputs=((),), outputs=((),), files=(),
                file_size=[])


def test_installations_join_runs_that_share_machines():
    runs = [RecordedRun(**_fields(*args)) for args in (("Pegasus", "c-3", "c-5"), ("Makeflow", "c-3"),
                                                       ("pegasus", "c-7"), ("Pegasus", "c-5", "c-7"), ("Nextflow",),
                                                       ("Pegasus", "w-1"))]
    assert installations(runs) == [("pegasus@c-3+2", [0, 2, 3]), ("makeflow@c-3", [1]),
                                   ("nextflow@(no machines)", [4]), ("pegasus@w-1", [5])]


def test_a_run_checks_its_shapes():
    with pytest.raises(ValueError, match="start has shape"):
        RecordedRun(**{**_fields("x"), "start": [1.0, 2.0]})
    with pytest.raises(ValueError, match="inputs has 0 entries"):
        RecordedRun(**{**_fields("x"), "inputs": ()})
    assert "1 tasks on 0 machines, x, no makespan" in repr(RecordedRun(**_fields("x")))


# ------------------------------------------------------------------ property
@st.composite
def recorded_runs(draw):
    """A consistent 1.5 run: a random DAG over n tasks, runtimes, each task started a random delay after its
    last parent ended (or after the workflow start), a makespan at or past the last end."""
    n = draw(st.integers(1, 12))
    parents = [sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else [] for i in range(n)]
    runtime = [draw(st.floats(0, 500, allow_nan=False).map(lambda x: round(x, 3))) for _ in range(n)]
    delay = [draw(st.floats(0, 100, allow_nan=False).map(lambda x: round(x, 3))) for _ in range(n)]
    start: list[float] = []
    for i in range(n):
        ready = max((start[p] + runtime[p] for p in parents[i]), default=0.0)
        start.append(round(ready + delay[i], 3))
    makespan = max(s + r for s, r in zip(start, runtime)) + draw(st.floats(0, 50, allow_nan=False))
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    ids = [f"t{i}" for i in range(n)]
    doc = {"name": "p", "schemaVersion": "1.5", "runtimeSystem": {"name": "Pegasus", "version": "5.0"},
           "workflow": {"specification": {"tasks": [
               {"name": "t", "id": ids[i], "parents": [ids[p] for p in parents[i]], "children": [],
                "inputFiles": [], "outputFiles": []} for i in range(n)], "files": []},
               "execution": {"makespanInSeconds": makespan, "executedAt": t0.isoformat(),
                             "machines": [{"nodeName": "m", "cpu": {"coreCount": 4}}],
                             "tasks": [{"id": ids[i], "runtimeInSeconds": runtime[i], "machines": ["m"],
                                        "executedAt": (t0 + timedelta(seconds=start[i])).isoformat()}
                                       for i in range(n)]}}}
    return doc, start, runtime, parents


@settings(max_examples=60, deadline=None)
@given(recorded_runs())
def test_property_a_consistent_run_reads_back_and_a_late_parent_is_refused(tmp_path_factory, case):
    doc, start, runtime, parents = case
    p = _write(tmp_path_factory.mktemp("p"), doc)
    graph, run = read_recorded(p)
    assert np.allclose(run.start, start, atol=1e-6) and run.runtime.tolist() == runtime
    assert run.span >= 0 and run.makespan >= run.span - 1e-6
    assert run.makespan >= float(np.max(run.end) - np.min(run.start)) - 1e-6
    assert run.makespan >= run.critical_path(graph) - 1e-6
    child = next((i for i in range(len(parents)) if parents[i]), None)
    if child is not None:  # move the child to 2 s before its first parent ends
        par = parents[child][0]
        bad = copy.deepcopy(doc)
        t0 = parse_timestamp(doc["workflow"]["execution"]["executedAt"])
        early = start[par] + runtime[par] - 2.0
        bad["workflow"]["execution"]["tasks"][child]["executedAt"] = (t0 + timedelta(seconds=early)).isoformat()
        with pytest.raises(SimschedError, match="before"):
            read_recorded(_write(tmp_path_factory.mktemp("q"), bad))
