"""Workload benchmarks: import speed of a large WfCommons instance and generator speed.

Targets: importing a 20,000-task WfFormat instance within 3x the time of ``json.load`` of the same file,
timed in the same run (issue 29: the importer must stay linear; it was quadratic, 43 s of CPU for the
2,122-task Montage instance); generating a 100,000-task random DAG (Topcuoglu parameters) < 2 s (issue 3).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

IMPORT_RATIO_TARGET = 3.0
"""Import of a WfFormat file / ``json.load`` of the same file, at most."""


def _cpu(fn: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds of one call of ``fn`` (this process's, so other work on a shared machine does not count)
    and its result."""
    t = time.process_time()
    result = fn()
    return time.process_time() - t, result


def bench_workloads(tasks_wf: int = 20_000, tasks_random: int = 100_000, seed: int = 0, repeat: int = 3) -> dict:
    """Run both benchmarks; returns seconds and sizes.  The WfFormat instance is written by simsched's own
    exporter from a layered random DAG (no download, no wfcommons needed): one file per edge, so every
    dependency carries a file reference to resolve.  ``json.load`` of the same file is the baseline: each is
    timed in CPU seconds, the best of ``repeat`` runs, interleaved."""
    import numpy as np

    from simsched.workloads.generators import layered_dag, random_dag
    from simsched.workloads.importers.wfformat import read_wfformat, write_wfformat

    out: dict = {}
    g = layered_dag(tasks_wf, layers=50, out_degree=3.0, rng=np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"wf{tasks_wf}.json"
        write_wfformat(g, path)
        out["wfcommons_file_mb"] = round(path.stat().st_size / 1e6, 2)

        def load_json() -> object:
            with open(path, encoding="utf-8") as fh:
                return json.load(fh)

        json_s, load_s = float("inf"), float("inf")
        for _ in range(repeat):
            json_s = min(json_s, _cpu(load_json)[0])
            t, loaded = _cpu(lambda: read_wfformat(path))
            load_s = min(load_s, t)
    out["json_load_s"], out["wfcommons_load_s"] = json_s, load_s
    out["wfcommons_ratio"] = load_s / json_s
    out["wfcommons_tasks"], out["wfcommons_edges"] = loaded.n_tasks, loaded.n_edges  # type: ignore[attr-defined]
    t = time.perf_counter()
    r = random_dag(tasks_random, rng=np.random.default_rng(seed))
    out["random_dag_s"] = time.perf_counter() - t
    out["random_dag_tasks"], out["random_dag_edges"] = r.n_tasks, r.n_edges
    out["targets_met"] = out["wfcommons_ratio"] <= IMPORT_RATIO_TARGET and out["random_dag_s"] < 2.0
    return out


if __name__ == "__main__":  # pragma: no cover
    print(bench_workloads())
