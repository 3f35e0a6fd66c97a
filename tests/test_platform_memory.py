"""The platform's network is stored in O(m) and expanded to (m, m) matrices only when read.

A uniform platform (``Platform.uniform``) keeps host codes, four scalars and its link overrides;
the dense ``latency``/``bandwidth`` equal, bit for bit, a pair-by-pair reference; a batch replay of a
cluster log on 8,192 cores never builds them.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simsched.errors import SimschedError
from simsched.scenario import load_scenario
from simsched.simulator.platform import Link, Platform, Processor

ROOT = Path(__file__).resolve().parents[1]
RICC = ROOT / "scenarios" / "data" / "traces" / "ricc_2010_5000.swf"


def reference(procs: list[Processor], bw: float, lat: float, hbw: float, hlat: float,
              links: list[Link]) -> tuple[np.ndarray, np.ndarray]:
    """The documented network, pair by pair (the definition, deliberately naive)."""
    m = len(procs)
    L, B = np.zeros((m, m)), np.full((m, m), np.inf)
    for p in range(m):
        for q in range(m):
            if p == q:
                continue
            same = procs[p].host == procs[q].host
            L[p, q], B[p, q] = (hlat, hbw) if same else (lat, bw)
            for lk in links:  # later links win
                a = {procs[p].name, procs[p].host}
                b = {procs[q].name, procs[q].host}
                if (lk.a in a and lk.b in b) or (lk.b in a and lk.a in b):
                    L[p, q], B[p, q] = lk.latency, lk.bandwidth
    return L, B


@st.composite
def platforms(draw):
    m = draw(st.integers(1, 9))
    hosts = draw(st.lists(st.integers(0, 3), min_size=m, max_size=m))
    procs = [Processor(f"p{i}", host=f"h{h}") for i, h in enumerate(hosts)]
    ends = [p.name for p in procs] + sorted({p.host for p in procs})
    value = st.sampled_from([0.0, 0.25, 1.0, 3.0])
    links = draw(st.lists(st.builds(Link, st.sampled_from(ends), st.sampled_from(ends),
                                    st.sampled_from([0.5, 2.0, float("inf")]), value), max_size=3))
    bw, hbw = draw(st.sampled_from([1.0, 8.0])), draw(st.sampled_from([float("inf"), 4.0]))
    return procs, bw, draw(value), hbw, draw(value), links


@settings(max_examples=60, deadline=None)
@given(platforms())
def test_lazy_matrices_equal_the_pairwise_definition(case) -> None:
    procs, bw, lat, hbw, hlat, links = case
    plat = Platform.uniform(procs, bw, lat, host_bandwidth=hbw, host_latency=hlat, links=links)
    assert not plat.expanded
    L, B = reference(procs, bw, lat, hbw, hlat, links)
    assert plat.latency.tobytes() == L.tobytes() and plat.bandwidth.tobytes() == B.tobytes()
    assert plat.expanded and plat.latency is plat.latency  # expanded once, then kept
    assert not plat.latency.flags.writeable and not plat.bandwidth.flags.writeable
    # the explicit constructor, given the same matrices, holds the same network
    again = Platform(procs, plat.latency, plat.bandwidth)
    assert again.network is None and again.latency.tobytes() == L.tobytes()
    hosts = {h: i for i, h in enumerate(dict.fromkeys(p.host for p in procs))}
    assert plat.host_index.tolist() == [hosts[p.host] for p in procs]


def test_8192_processors_cost_about_a_megabyte_until_the_matrices_are_read() -> None:
    procs = [Processor(f"core{i}", host=f"node{i // 8}") for i in range(8192)]
    tracemalloc.start()
    try:
        plat = Platform.uniform(procs, 1.0, 0.5, links=[Link("node0", "node1", 4.0)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the dense pair would be 2 x 8192^2 x 8 B = 1 GiB; O(m) columns, host codes and one link's ends
    assert peak < 4 * 2**20, peak
    assert not plat.expanded and plat.host_index.max() == 1023
    assert plat.speed.shape == (8192,) and not plat.expanded  # per-processor queries stay O(m)


def test_one_host_platform_ignores_the_unused_cross_host_values_as_before() -> None:
    # the dense check saw only the values present: with one host the cross-host ones never occur
    one = Platform.uniform([Processor("a", host="h"), Processor("b", host="h")], bandwidth=0.0, latency=-1.0)
    assert one.latency.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(SimschedError, match="^latency must be >= 0$"):
        Platform.uniform([Processor("a"), Processor("b")], latency=-1.0)
    with pytest.raises(SimschedError, match="^bandwidth must be > 0$"):
        Platform.uniform([Processor("a"), Processor("b")], bandwidth=float("nan"))
    with pytest.raises(SimschedError, match="^latency must be >= 0$"):
        Platform.uniform([Processor("a")], host_latency=float("nan"))
    with pytest.raises(SimschedError, match="^bandwidth must be > 0$"):
        Platform.uniform([Processor("a"), Processor("b")], links=[Link("a", "b", 0.0)])
    with pytest.raises(SimschedError, match="no processor or host named 'c'"):
        Platform.uniform([Processor("a"), Processor("b")], links=[Link("a", "c", 1.0)])
    with pytest.raises(SimschedError, match="no processors"):
        Platform.uniform([])


@pytest.mark.filterwarnings("ignore::simsched.errors.DataRepairWarning")  # the real log's unfinished jobs
def test_a_batch_replay_on_8192_cores_never_builds_the_network(tmp_path) -> None:
    from simsched.run.batch import run_batch_scenario

    path = tmp_path / "ricc.yaml"
    path.write_text(f"limits: {{max_processors: 8192}}\nplatform:\n  processors: [{{name: core, count: 8192}}]\n"
                    f"workload:\n  stream:\n    swf: {RICC}\n    limit: 300\nschedulers: [fcfs, easy-backfill]\n")
    scenario = load_scenario(path)
    report = run_batch_scenario(scenario)
    assert report.processors == 8192 and [r["scheduler"] for r in report.rows] == ["fcfs", "easy-backfill"]
    assert not scenario.platform.expanded


def test_the_bench_rows_measure_the_lazy_build_against_the_dense_one() -> None:
    from simsched.bench.batch import measure_platform

    r = measure_platform(512)
    # lazy: O(m) columns; dense: two 512 x 512 float64 matrices (4 MiB) on top
    assert r["lazy_untouched"] and r["lazy_mb"] < 1.0 < 4.0 <= r["dense_mb"]
