"""Importers and exporters: fixtures written here, malformed inputs, round trips (hypothesis)."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simsched.errors import GraphError, SimschedError
from simsched.workloads.generators import GENERATORS
from simsched.workloads.importers import EXPORTERS, IMPORTERS, detect_form, load, save
from simsched.workloads.importers.wfformat import to_wfformat
from simsched.workloads.importers.wfformat_recorded import machines
from simsched.workloads.taskgraph import TaskGraph


def _edges(g: TaskGraph) -> dict:
    return {(g.names[s], g.names[d]): x for s, d, x in zip(g.edge_src, g.edge_dst, g.edge_data)}


def _same(a: TaskGraph, b: TaskGraph, *, kinds: bool = True, integer: bool = False) -> None:
    assert sorted(a.names) == sorted(b.names) or integer
    ea, eb = _edges(a), _edges(b)
    if integer:  # STG renames tasks to numbers and rounds values
        assert len(ea) == len(eb)
        return
    assert ea.keys() == eb.keys()
    for k in ea:
        assert ea[k] == pytest.approx(eb[k], rel=1e-6, abs=1e-6)
    wa = dict(zip(a.names, a.work))
    for i, n in enumerate(b.names):
        assert b.work[i] == pytest.approx(wa[n])
    if kinds:
        ka = {n: a.kind_of(i) for i, n in enumerate(a.names)}
        assert all(b.kind_of(i) == ka[n] for i, n in enumerate(b.names))


# ------------------------------------------------------------------ round trips
EXT = {"wfcommons": "json", "dax": "dax", "stg": "stg", "dot": "dot", "graphml": "graphml",
       "tasklist": "csv", "inline": "yaml"}


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 25))
    seed = draw(st.integers(0, 10**6))
    name = draw(st.sampled_from(["random", "layered", "series_parallel", "erdos_renyi"]))
    g = GENERATORS[name](tasks=n, rng=np.random.default_rng(seed))
    kinds = draw(st.lists(st.sampled_from(["conv", "gemm", "io"]), min_size=n, max_size=n))
    return g.with_(kind=kinds)


@pytest.mark.extra("dot")  # one of the formats is DOT (pydot)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=graphs(), form=st.sampled_from(sorted(EXPORTERS)))
def test_round_trip_through_every_format(tmp_path, g, form):
    path = tmp_path / f"g.{EXT[form]}"
    save(g, path, form)
    back = load(path, form)
    assert nx.is_directed_acyclic_graph(back.to_networkx())
    assert (back.work >= 0).all() and (back.edge_data >= 0).all()
    if form == "stg":
        _same(g, back, integer=True)
    elif form == "tasklist":  # a task list keeps dependencies but not their data
        assert _edges(back).keys() == _edges(g).keys()
    else:
        _same(g, back)
    again = TaskGraph.from_networkx(back.to_networkx())
    assert _edges(again) == pytest.approx(_edges(back)) and again.names == back.names


@pytest.mark.extra("dot")
def test_cost_matrix_survives_dot_graphml_csv_yaml(tmp_path):
    g = GENERATORS["random"](12, processors=3, rng=np.random.default_rng(1))
    for ext in ("dot", "graphml", "csv", "yaml", "json"):
        p = tmp_path / f"c.{ext}"
        save(g, p, "tasklist" if ext == "json" else None)
        back = load(p, "tasklist" if ext == "json" else None)
        order = [back.index(n) for n in g.names]
        assert np.allclose(back.cost[order], g.cost), ext


def test_registry_and_detection(tmp_path):
    assert {"wfcommons", "dax", "stg", "dot", "graphml", "tasklist", "onnx", "model"} <= set(IMPORTERS)
    g = GENERATORS["cholesky"](3)
    save(g, tmp_path / "w.json")
    assert detect_form(tmp_path / "w.json") == "wfcommons"
    save(g, tmp_path / "t.json", "tasklist")
    assert detect_form(tmp_path / "t.json") == "tasklist"
    with pytest.raises(SimschedError, match="extension"):
        detect_form(tmp_path / "x.bin")


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    g = GENERATORS["cholesky"](2)
    with pytest.raises(SimschedError, match="folder does not exist"):
        save(g, tmp_path / "missing" / "x.dot")
    out = tmp_path / "x.yaml"
    out.write_text("old")

    class Boom(Exception):
        pass

    from simsched.workloads.importers import _common

    def bad(tmp):
        tmp.write_text("partial")
        raise Boom

    with pytest.raises(Boom):
        _common.atomic_write(out, bad)
    assert out.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


# ------------------------------------------------------------------ WfFormat
def _wf14() -> dict:
    return {"name": "t", "schemaVersion": "1.4", "workflow": {
        "makespanInSeconds": 1, "executedAt": "x",
        "machines": [{"nodeName": "n1", "cpu": {"count": 8, "speed": 2400}, "memoryInBytes": 10}],
        "tasks": [
            {"name": "a", "type": "compute", "runtimeInSeconds": 2.0, "parents": [], "children": ["b"],
             "files": [{"name": "f1", "sizeInBytes": 3_000_000, "link": "output"}]},
            {"name": "b", "type": "compute", "runtimeInSeconds": 4.0, "parents": ["a"], "cores": 2,
             "files": [{"name": "f1", "sizeInBytes": 3_000_000, "link": "input"}]},
        ]}}


def _wf15() -> dict:
    return {"name": "t", "schemaVersion": "1.5", "workflow": {
        "specification": {
            "tasks": [
                {"name": "split", "id": "split_1", "parents": [], "children": ["work_2"],
                 "inputFiles": [], "outputFiles": ["x"]},
                {"name": "work", "id": "work_2", "parents": ["split_1"], "children": [],
                 "inputFiles": ["x"], "outputFiles": []},
            ],
            "files": [{"id": "x", "sizeInBytes": 5_000_000}]},
        "execution": {"makespanInSeconds": 1, "executedAt": "x",
                      "machines": [{"nodeName": "m", "cpu": {"coreCount": 4, "speedInMHz": 3000}}],
                      "tasks": [{"id": "split_1", "runtimeInSeconds": 1.5},
                                {"id": "work_2", "runtimeInSeconds": 7.0, "coreCount": 4}]}}}


def _write(tmp_path, doc, name="wf.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc, indent=2))
    return p


def test_wfformat_14_names_and_15_ids(tmp_path):
    g = load(_write(tmp_path, _wf14()), "wfcommons")
    assert g.names == ("a", "b") and list(g.work) == [2.0, 4.0] and _edges(g) == {("a", "b"): 3.0}
    assert list(g.cores) == [1, 2]
    g = load(_write(tmp_path, _wf15()), "wfcommons")
    assert g.names == ("split_1", "work_2") and _edges(g) == {("split_1", "work_2"): 5.0}
    assert g.kind_of(0) == "split" and int(g.cores[1]) == 4
    assert machines(tmp_path / "wf.json") == [dict(name="m", cores=4, speed_mhz=3000, memory_bytes=None)]


def _bad(tmp_path, doc_or_text, form="wfcommons", ext="json", **options):
    p = tmp_path / f"bad.{ext}"
    p.write_text(doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text, indent=2))
    with pytest.raises(SimschedError) as info:
        load(p, form, **options)
    err = info.value
    assert err.file == str(p) and str(p) in str(err)
    return err


def test_wfformat_malformed(tmp_path):
    text = json.dumps(_wf15(), indent=2)
    e = _bad(tmp_path, text[: len(text) // 2])
    assert "truncated" in e.message and e.line is not None
    doc = _wf15()
    doc["schemaVersion"] = "0.9"
    e = _bad(tmp_path, doc)
    assert "unknown schemaVersion '0.9'" in e.message and e.line == 3
    doc = _wf15()
    doc["workflow"]["specification"]["tasks"][1]["parents"] = ["ghost"]
    e = _bad(tmp_path, doc)
    assert "'ghost', which does not exist" in e.message and e.field.endswith("tasks[1].parents")
    assert json.dumps(doc, indent=2).splitlines()[e.line - 1].strip().startswith('"ghost"')
    doc = _wf15()
    doc["workflow"]["execution"]["tasks"][1]["runtimeInSeconds"] = -3
    e = _bad(tmp_path, doc, strict=True)
    assert "runtimeInSeconds must be >= 0" in e.message
    assert "runtimeInSeconds" in json.dumps(doc, indent=2).splitlines()[e.line - 1]
    doc = _wf15()
    del doc["workflow"]["execution"]["tasks"][0]["runtimeInSeconds"]
    e = _bad(tmp_path, doc)
    assert "has no runtimeInSeconds" in e.message
    doc = _wf14()
    doc["workflow"]["tasks"][0]["parents"] = ["b"]
    e = _bad(tmp_path, doc)
    assert isinstance(e, GraphError) and "cycle" in e.message


def test_wfformat_default_runtime(tmp_path):
    doc = _wf15()
    del doc["workflow"]["execution"]
    g = IMPORTERS["wfcommons"](_write(tmp_path, doc), default_runtime=1.0)
    assert list(g.work) == [1.0, 1.0]


def test_wfformat_14_export_round_trip(tmp_path):
    g = GENERATORS["cholesky"](3)
    p = tmp_path / "w14.json"
    p.write_text(json.dumps(to_wfformat(g, version="1.4")))
    _same(g, load(p))


def test_wfchef_recipe_generator():
    pytest.importorskip("wfcommons")  # in the 'workflows' and 'dev' extras
    g = GENERATORS["workflow"](recipe="montage", tasks=60, rng=np.random.default_rng(3))
    h = GENERATORS["workflow"](recipe="montage", tasks=60, rng=np.random.default_rng(3))
    assert g.n_tasks > 20 and "mProject" in g.kind_names and g.edge_data.sum() > 0
    assert g.names == h.names and np.array_equal(g.work, h.work)
    with pytest.raises(SimschedError, match="unknown recipe"):
        GENERATORS["workflow"](recipe="nope", tasks=50)


# ------------------------------------------------------------------ DAX
DAX = """<?xml version="1.0" encoding="UTF-8"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="2.1" name="mini">
  <job id="ID00000" namespace="Montage" name="mProjectPP" runtime="13.59">
    <uses file="r.fits" link="input" size="4222600"/>
    <uses file="p.fits" link="output" size="4167561"/>
  </job>
  <job id="ID00001" namespace="Montage" name="mDiffFit" runtime="10.6">
    <uses file="p.fits" link="input" size="4167561"/>
  </job>
  <child ref="ID00001">
    <parent ref="ID00000"/>
  </child>
</adag>
"""


def test_dax_fixture(tmp_path):
    p = tmp_path / "m.dax"
    p.write_text(DAX)
    g = load(p)
    assert g.names == ("ID00000", "ID00001") and g.kind_names == ("mDiffFit", "mProjectPP")
    assert _edges(g) == {("ID00000", "ID00001"): pytest.approx(4.167561)}


def test_dax_malformed(tmp_path):
    e = _bad(tmp_path, DAX[:300], "dax", "dax")
    assert "invalid XML" in e.message and e.line is not None
    e = _bad(tmp_path, DAX.replace('<parent ref="ID00000"/>', '<parent ref="ID9"/>'), "dax", "dax")
    assert "'ID9', which does not exist" in e.message and e.line == 11
    e = _bad(tmp_path, DAX.replace('runtime="10.6"', 'runtime="-1"'), "dax", "dax", strict=True)
    assert "runtime must be >= 0" in e.message and e.line == 7
    e = _bad(tmp_path, DAX.replace(' runtime="10.6"', ""), "dax", "dax")
    assert "has no runtime" in e.message and e.line == 7
    cyc = DAX.replace("</adag>", '<child ref="ID00000"><parent ref="ID00001"/></child>\n</adag>')
    assert "cycle" in _bad(tmp_path, cyc, "dax", "dax").message


# ------------------------------------------------------------------ STG
STG = """4
0 0 0
1 5 1 0
2 3 1 1
3 4 1 1
4 2 2 2 3
5 0 1 4
# a comment block after the graph
"""


def test_stg_fixture_with_and_without_dummies(tmp_path):
    p = tmp_path / "g.stg"
    p.write_text(STG)
    g = load(p)
    assert g.names == ("1", "2", "3", "4") and list(g.work) == [5, 3, 4, 2] and g.n_edges == 4
    g = IMPORTERS["stg"](p, keep_dummies=True)
    assert g.n_tasks == 6 and g.depth == 5
    p.write_text("2\n0 0 0\n1 5 1 0 7\n2 3 1 1 9\n3 0 1 2 0\n")
    assert _edges(load(p)) == {("1", "2"): 9.0}


@pytest.mark.parametrize("text, msg, line", [
    ("4\n0 0 0\n1 5 1 0\n", "truncated", 3),
    ("2\n0 0 0\n1 5 1 0\n2 3 1 7\n3 0 1 2\n", "predecessor 7 does not exist", 4),
    ("2\n0 0 0\n1 -5 1 0\n2 3 1 1\n3 0 1 2\n", "negative", 3),
    ("2\n0 0 0\n1 5 1 0\n2 x 1 1\n3 0 1 2\n", "expected an integer", 4),
    ("2\n0 0 0\n1 5 2 0\n2 3 1 1\n3 0 1 2\n", "declares 2 predecessors", 3),
])
def test_stg_malformed(tmp_path, text, msg, line):
    e = _bad(tmp_path, text, "stg", "stg")
    assert msg in e.message and e.line == line


def test_stg_cycle(tmp_path):
    e = _bad(tmp_path, "2\n0 0 0\n1 5 2 0 2\n2 3 1 1\n3 0 1 2\n", "stg", "stg")
    assert isinstance(e, GraphError) and "cycle" in e.message


# ------------------------------------------------------------------ DOT / GraphML
@pytest.mark.extra("dot")
def test_dot_attributes(tmp_path):
    p = tmp_path / "g.dot"
    p.write_text('digraph G {\n a [weight=3, kind="conv", cost="[1,2]"];\n "b c" [work=2.5, cost="4;5"];\n'
                 ' a -> "b c" [size=2];\n}\n')
    g = load(p)
    assert g.names == ("a", "b c") and list(g.work) == [3, 2.5] and g.kind_of(0) == "conv"
    assert g.cost.tolist() == [[1, 2], [4, 5]] and _edges(g) == {("a", "b c"): 2.0}


@pytest.mark.extra("dot")
def test_dot_malformed(tmp_path):
    e = _bad(tmp_path, "digraph {\n a -> b;\n b -> \n", "dot", "dot")
    assert "invalid DOT" in e.message and e.line is not None
    assert "undirected" in _bad(tmp_path, "graph { a -- b }", "dot", "dot").message
    assert "cycle" in _bad(tmp_path, "digraph { a -> b; b -> a }", "dot", "dot").message
    e = _bad(tmp_path, "digraph { a [work=-2]; }", "dot", "dot")
    assert "node 'a': work must be >= 0" in e.message


def test_graphml_malformed(tmp_path):
    g = GENERATORS["fork_join"](3, rng=np.random.default_rng(0))
    p = tmp_path / "g.graphml"
    save(g, p)
    e = _bad(tmp_path, p.read_text()[:200], "graphml", "graphml")
    assert "invalid XML" in e.message and e.line is not None


# ------------------------------------------------------------------ task lists and inline
def test_tasklist_csv_and_json(tmp_path):
    p = tmp_path / "jobs.csv"
    p.write_text("name,arrival,work,priority,memory,cost_0,cost_1\nj1,0,5,2,1.5,4,inf\nj2,1.5,3,1,0,2,1\n")
    g = load(p)
    assert list(g.arrival) == [0, 1.5] and g.cost[0, 1] == np.inf and list(g.priority) == [2, 1]
    q = tmp_path / "jobs.json"
    q.write_text(json.dumps([{"id": "a", "runtime": 2}, {"id": "b", "runtime": 1, "depends": ["a"]}]))
    assert _edges(load(q)) == {("a", "b"): 0.0}


@pytest.mark.parametrize("text, msg, line", [
    ("name,work\nj1,5\nj2,-3\n", "work must be >= 0", 3),
    ("name,work\nj1,5\nj2,abc\n", "must be a number", 3),
    ("name,work,depends\nj1,5,\nj2,3,j9\n", "'j9', which does not exist", 3),
    ("name,work\nj1,5,7\n", "fields", 2),
    ("name,work,colour\nj1,5,red\n", "unknown field 'colour'", 2),
])
def test_tasklist_csv_malformed(tmp_path, text, msg, line):
    e = _bad(tmp_path, text, "tasklist", "csv")
    assert msg in e.message and e.line == line


def test_tasklist_json_malformed_names_task(tmp_path):
    doc = {"tasks": [{"name": "a", "work": 1}, {"name": "b", "work": -1}]}
    e = _bad(tmp_path, json.dumps(doc, indent=2), "tasklist", "json")
    assert e.field == "tasks[1].work" and e.line == 9


def test_inline_yaml_lines(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_text("tasks:\n  - {name: a, work: 1}\n  - {name: b, work: 2}\nedges:\n  - {from: a, to: zz, data: 1}\n")
    e = _bad(tmp_path, p.read_text(), "inline", "yaml")
    assert "unknown task 'zz'" in e.message and e.line == 5


# ------------------------------------------------------------------ ONNX
def _tiny_onnx(path):
    onnx = pytest.importorskip("onnx")  # in the 'onnx' and 'dev' extras
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), dtype=np.float32), "w")
    fc = numpy_helper.from_array(np.ones((8, 10), dtype=np.float32), "fc")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], [w, fc])
    onnx.save(helper.make_model(graph), str(path))


def test_onnx_operator_dag(tmp_path):
    p = tmp_path / "tiny.onnx"
    _tiny_onnx(p)
    g = load(p)
    assert g.names == ("conv", "relu", "gap", "flat", "fc")
    assert g.kind_of(0) == "conv" and g.kind_of(4) == "matmul"
    assert g.work[0] == pytest.approx(2 * 8 * 8 * 8 * 3 * 3 * 3 / 1e9)
    assert g.work[4] == pytest.approx(2 * 8 * 10 / 1e9)
    assert _edges(g)[("conv", "relu")] == pytest.approx(8 * 8 * 8 * 4 / 1e6)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage-not-protobuf\xff\xff")
    with pytest.raises(SimschedError, match="not a valid ONNX model"):
        load(bad)


def test_missing_extra_message(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pydot", None)  # makes "import pydot" fail
    with pytest.raises(SimschedError, match=r"pip install -e '.*\[dot\]'"):
        IMPORTERS["dot"]("x.dot")


def test_file_errors(tmp_path):
    with pytest.raises(SimschedError, match="no such file"):
        load(tmp_path / "nope.stg")
