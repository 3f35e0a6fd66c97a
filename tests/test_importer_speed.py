"""Importers in linear time (issue 29): line numbers only on the error path, from one index of line
starts; the all-at-once WfFormat path builds the same graph as the value-by-value reading it replaced.
(Speed itself is a `simsched bench workloads` row, timed beside json.load of the same file.)"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.limits import data_depth
from simsched.workloads.generators import layered_dag
from simsched.workloads.importers import _common, dax, wfformat
from simsched.workloads.importers._common import Lines, line_of
from simsched.workloads.importers.dax import read_dax, to_dax
from simsched.workloads.importers.wfformat import read_wfformat, to_wfformat


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab\n\"é", max_size=60), st.text(alphabet="ab\n\"é", min_size=1, max_size=3),
       st.integers(0, 70))
def test_line_index_agrees_with_counting_newlines(text: str, needle: str, start: int) -> None:
    lines = Lines(text)
    assert lines.of(needle, start) == line_of(text, needle, start)
    for k in range(len(text) + 1):
        assert lines.at(k) == text.count("\n", 0, k) + 1


def test_line_index_of_nothing() -> None:
    assert Lines(None).of("x") is None and Lines("").of("x") is None and Lines("a\nb").of("c") is None


def _reference_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_reference_depth(v) for v in value), default=0)
    return 0


_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=2), inner, max_size=4), max_leaves=25)


@settings(max_examples=80, deadline=None)
@given(_json, st.integers(1, 8))
def test_data_depth_is_the_nesting_depth(value: object, limit: int) -> None:
    depth = _reference_depth(value)
    assert data_depth(value, limit) == (depth if depth <= limit else limit + 1)


_text = st.text(alphabet='ab"\\[]{}é\n', max_size=6)
_json_strings = st.recursive(_scalars | _text, lambda inner: st.lists(inner, max_size=4)
                             | st.dictionaries(_text, inner, max_size=4), max_leaves=25)


@settings(max_examples=120, deadline=None)
@given(_json_strings, st.sampled_from([None, 1]))
def test_json_depth_of_the_text_is_the_depth_of_the_data(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)  # strings holding quotes, brackets, backslashes
    assert _common.json_depth(text) == _reference_depth(value)


def test_json_depth_edge_cases() -> None:
    assert [_common.json_depth(t) for t in ('1', '"[{"', '[]', '[[], [[]]]', '{"a\\\\": ["\\"]"]}')] == [0, 0, 1, 3, 2]


def _graph(n: int = 60, seed: int = 3):
    return layered_dag(n, layers=6, out_degree=2.5, rng=np.random.default_rng(seed))


def _no_line_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("a line number was computed on the success path")

    monkeypatch.setattr(_common.Lines, "at", refuse)
    for module in (_common, wfformat, dax):  # and any importer that took its own reference to line_of
        if hasattr(module, "line_of"):
            monkeypatch.setattr(module, "line_of", refuse)


def test_a_clean_file_never_asks_for_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = _graph()
    wf, dax = tmp_path / "g.json", tmp_path / "g.dax"
    wf.write_text(json.dumps(to_wfformat(g), indent=1))
    dax.write_text(to_dax(g))
    _no_line_lookups(monkeypatch)
    want = _edge_data(g)
    for loaded in (read_wfformat(wf), read_dax(dax)):
        assert loaded.names == g.names and np.allclose(loaded.work, g.work)
        got = _edge_data(loaded)
        assert got.keys() == want.keys() and np.allclose([got[k] for k in want], list(want.values()))


def _edge_data(g) -> dict[tuple[str, str], float]:
    return {(g.names[s], g.names[d]): x for s, d, x in zip(g.edge_src.tolist(), g.edge_dst.tolist(),
                                                            g.edge_data.tolist())}


def _reference_edges(doc: dict) -> dict[tuple[str, str], float]:
    """The edges and their data (bytes) of a WfFormat 1.5 document, file reference by file reference,
    as the importer read them before it was vectorised."""
    spec = doc["workflow"]["specification"]
    size = {f["id"]: f.get("sizeInBytes", 0) for f in spec["files"]}
    writers: dict[str, list[str]] = {}
    for t in spec["tasks"]:
        for f in t["outputFiles"]:
            writers.setdefault(f, []).append(t["id"])
    edges: dict[tuple[str, str], float] = {}
    for t in spec["tasks"]:
        for p in t["parents"]:
            edges.setdefault((p, t["id"]), 0.0)
        for c in t["children"]:
            edges.setdefault((t["id"], c), 0.0)
    for t in spec["tasks"]:
        for f in t["inputFiles"]:
            for w in writers.get(f, ()):
                if (w, t["id"]) in edges:
                    edges[(w, t["id"])] += abs(size[f])
    return edges


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans(), st.booleans())
def test_wfformat_graph_matches_the_reading_by_reference(seed: int, shared_writer: bool, listed_twice: bool,
                                                          negative: bool) -> None:
    doc = to_wfformat(_graph(25, seed))
    tasks = doc["workflow"]["specification"]["tasks"]
    files = doc["workflow"]["specification"]["files"]
    rng = np.random.default_rng(seed)
    if shared_writer and files:  # one file written by two tasks: the several-writers path
        f = files[int(rng.integers(len(files)))]["id"]
        tasks[int(rng.integers(len(tasks)))]["outputFiles"].append(f)
    if listed_twice:  # a dependency named on both ends, and twice on one: still one edge
        for t in tasks:
            t["parents"] = t["parents"] + t["parents"][:1]
    if negative and files:  # a negative size: repaired by its absolute value, value by value
        files[0]["sizeInBytes"] = -abs(files[0]["sizeInBytes"]) - 1
    g = _from_doc(doc)
    want = _reference_edges(doc)
    got = {(g.names[s], g.names[d]): float(x) * 1e6
           for s, d, x in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_data.tolist())}
    assert list(got) == list(want)  # same edges, in the order they are first listed
    assert np.allclose(list(got.values()), list(want.values()), rtol=1e-12)


def _from_doc(doc: dict):
    from simsched.workloads.importers.wfformat import parse_wfformat

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one line about repaired negative sizes
        return parse_wfformat(doc, file="doc.json", text=json.dumps(doc, indent=1))


@pytest.mark.parametrize(("change", "says", "line_of_needle"), [
    (lambda d: d["workflow"]["execution"]["tasks"][3].update(runtimeInSeconds="slow"), "runtimeInSeconds",
     '"runtimeInSeconds": "slow"'),
    (lambda d: d["workflow"]["specification"]["files"][2].update(sizeInBytes="big"), "sizeInBytes", None),
    (lambda d: d["workflow"]["specification"]["tasks"][4]["parents"].append("ghost"), "'ghost'", '"ghost"'),
    (lambda d: d["workflow"]["execution"]["tasks"][5].update(coreCount=-2), "coreCount", None),
])
def test_bad_values_are_still_named_with_their_line(tmp_path: Path, change, says: str, line_of_needle) -> None:
    doc = to_wfformat(_graph(30))
    change(doc)
    text = json.dumps(doc, indent=1)
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(SimschedError) as err:
        read_wfformat(path)
    assert says in str(err.value) and str(err.value).startswith(str(path))
    if line_of_needle:
        assert err.value.line == line_of(text, line_of_needle)


def test_bench_row_times_the_import_beside_json_load() -> None:
    from simsched.bench.workloads import bench_workloads

    w = bench_workloads(tasks_wf=300, tasks_random=1000, repeat=1)
    assert w["wfcommons_tasks"] == 300 and w["json_load_s"] > 0 and w["wfcommons_load_s"] > 0
    assert w["wfcommons_ratio"] == pytest.approx(w["wfcommons_load_s"] / w["json_load_s"])
