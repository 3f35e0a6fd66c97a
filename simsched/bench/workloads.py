"""Workload benchmarks: import speed of a large WfCommons instance and generator speed.

Targets (issue 3): loading a 5,000-task WfFormat instance < 2 s; generating a 100,000-task random
DAG (Topcuoglu parameters) < 2 s.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def bench_workloads(tasks_wf: int = 5000, tasks_random: int = 100_000, seed: int = 0) -> dict:
    """Run both benchmarks; returns seconds and sizes.  The WfFormat instance is written by
    simsched's own exporter from a layered random DAG (no download, no wfcommons needed)."""
    import numpy as np

    from simsched.workloads.generators import layered_dag, random_dag
    from simsched.workloads.importers.wfformat import read_wfformat, write_wfformat

    out: dict = {}
    g = layered_dag(tasks_wf, layers=50, out_degree=3.0, rng=np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "wf5000.json"
        write_wfformat(g, path)
        out["wfcommons_file_mb"] = round(path.stat().st_size / 1e6, 2)
        t = time.perf_counter()
        loaded = read_wfformat(path)
        out["wfcommons_load_s"] = time.perf_counter() - t
    out["wfcommons_tasks"], out["wfcommons_edges"] = loaded.n_tasks, loaded.n_edges
    t = time.perf_counter()
    r = random_dag(tasks_random, rng=np.random.default_rng(seed))
    out["random_dag_s"] = time.perf_counter() - t
    out["random_dag_tasks"], out["random_dag_edges"] = r.n_tasks, r.n_edges
    out["targets_met"] = out["wfcommons_load_s"] < 2.0 and out["random_dag_s"] < 2.0
    return out


if __name__ == "__main__":  # pragma: no cover
    print(bench_workloads())
