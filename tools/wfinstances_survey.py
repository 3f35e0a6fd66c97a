"""Survey a folder of WfFormat instances (e.g. a checkout of github.com/wfcommons/WfInstances): one CSV row per
file with what its execution recorded, read by simsched's importer, and a summary on stdout.

    PYTHONPATH=. python tools/wfinstances_survey.py /work/corpus/WfInstances --out /work/corpus/survey.csv

Per file: path, workflow system and version, application (the file name up to its first ``-``), schema
version, tasks, edges, machines (names, cores, MHz, memory), how many tasks record a machine, a start time,
a core count, bytes read and written, files and sized files, the workflow's input and final output bytes,
the recorded makespan (and where it comes from), the sum and the critical path of the runtimes, their
ratio, the workflow's ``executedAt``, the installation (:func:`simsched.workloads.recorded.installations`),
and for a file the importer refuses, its error line.  O(total size of the files).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from simsched.errors import SimschedError
from simsched.workloads.importers.wfformat_recorded import read_recorded
from simsched.workloads.recorded import RecordedRun, installations
from simsched.workloads.taskgraph import TaskGraph

COLUMNS = ("path", "wms", "wms_version", "app", "schema_version", "tasks", "edges", "machines", "machine_names",
           "machine_cores", "machine_mhz", "machine_memory_gb", "tasks_with_machine", "tasks_with_start",
           "tasks_with_cores", "tasks_with_read_bytes", "tasks_with_written_bytes", "files", "files_with_size",
           "workflow_input_bytes", "workflow_output_bytes", "read_bytes", "written_bytes", "makespan",
           "makespan_source", "sum_runtime", "critical_path", "makespan_over_critical_path", "executed_at",
           "installation", "refused")


def _join(values: list) -> str:
    return ";".join("" if v is None else f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def _known(a: np.ndarray) -> int:
    return int((~np.isnan(a)).sum())


def row(path: str, graph: TaskGraph, run: RecordedRun) -> dict:
    """The survey row of one imported instance.  O(tasks + edges + file references)."""
    cp = run.critical_path(graph)
    return {
        "path": path, "wms": run.wms_name or "", "wms_version": run.wms_version or "",
        "app": Path(path).stem.split("-")[0], "schema_version": run.schema_version,
        "tasks": run.n_tasks, "edges": graph.n_edges, "machines": len(run.machines),
        "machine_names": _join([m.name for m in run.machines]),
        "machine_cores": _join([m.cores for m in run.machines]),
        "machine_mhz": _join([m.speed_mhz for m in run.machines]),
        "machine_memory_gb": _join([None if m.memory_bytes is None else round(m.memory_bytes / 1e9, 1)
                                    for m in run.machines]),
        "tasks_with_machine": int((run.machine >= 0).sum()), "tasks_with_start": _known(run.start),
        "tasks_with_cores": _known(run.cores), "tasks_with_read_bytes": _known(run.read_bytes),
        "tasks_with_written_bytes": _known(run.written_bytes), "files": len(run.files),
        "files_with_size": _known(run.file_size),
        "workflow_input_bytes": run.bytes_of(run.workflow_inputs),
        "workflow_output_bytes": run.bytes_of(run.workflow_outputs),
        "read_bytes": float(np.nansum(run.read_bytes)), "written_bytes": float(np.nansum(run.written_bytes)),
        "makespan": run.makespan, "makespan_source": run.makespan_source,
        "sum_runtime": round(float(run.runtime.sum()), 3), "critical_path": round(cp, 3),
        "makespan_over_critical_path": round(run.makespan / cp, 3) if run.makespan is not None and cp > 0 else None,
        "executed_at": run.executed_at_text or "", "installation": "", "refused": "",
    }


def survey(root: Path) -> list[dict]:
    """Rows for every ``*.json`` under ``root`` (sorted), installations filled in."""
    rows, runs, where = [], [], []
    for p in sorted(root.rglob("*.json")):
        rel = str(p.relative_to(root))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graph, run = read_recorded(p)
        except SimschedError as e:
            rows.append({**dict.fromkeys(COLUMNS, ""), "path": rel, "refused": str(e)})
            continue
        rows.append(row(rel, graph, run))
        runs.append(run)
        where.append(len(rows) - 1)
    for label, members in installations(runs):
        for k in members:
            rows[where[k]]["installation"] = label
    return rows


def summary(rows: list[dict]) -> str:
    """The survey in a few tables of text."""
    ok = [r for r in rows if not r["refused"]]
    out = [f"{len(rows)} instance files, {len(ok)} imported, {len(rows) - len(ok)} refused"]
    for r in rows:
        if r["refused"]:
            out.append(f"  refused: {r['refused']}")
    out.append("\nby workflow system, version, schema:")
    for key, n in sorted(Counter((r["wms"], r["wms_version"], r["schema_version"]) for r in ok).items()):
        out.append(f"  {' '.join(key):40s} {n:4d}")
    out.append("\nby workflow system and application: runs, tasks (min-max), median makespan / critical path")
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in ok:
        groups[(r["wms"], r["app"])].append(r)
    for (wms, app), rs in sorted(groups.items()):
        ratios = [r["makespan_over_critical_path"] for r in rs if r["makespan_over_critical_path"] is not None]
        med = f"{statistics.median(ratios):8.2f}" if ratios else "       -"
        out.append(f"  {wms:10s} {app:14s} {len(rs):4d} {min(r['tasks'] for r in rs):6d}-"
                   f"{max(r['tasks'] for r in rs):<6d} {med}")
    out.append("\nwhat the runs record (files with the field on every task / on some task):")
    for field in ("tasks_with_machine", "tasks_with_start", "tasks_with_cores", "tasks_with_read_bytes",
                  "tasks_with_written_bytes"):
        every = sum(1 for r in ok if r[field] == r["tasks"])
        some = sum(1 for r in ok if 0 < r[field] < r["tasks"])
        out.append(f"  {field:26s} every task: {every:4d}   some tasks: {some:4d}")
    out.append("\nmakespan / critical path of runtimes, per workflow system: median [min, max]")
    by_wms: dict[str, list[float]] = defaultdict(list)
    for r in ok:
        if r["makespan_over_critical_path"] is not None:
            by_wms[r["wms"]].append(r["makespan_over_critical_path"])
    for wms, ratios in sorted(by_wms.items()):
        out.append(f"  {wms:10s} {len(ratios):4d} runs  {statistics.median(ratios):7.2f} "
                   f"[{min(ratios):.2f}, {max(ratios):.2f}]")
    out.append("\ninstallations (one workflow system on one pool of machines): runs, applications")
    inst: dict[str, list[dict]] = defaultdict(list)
    for r in ok:
        inst[r["installation"]].append(r)
    for label, rs in sorted(inst.items(), key=lambda kv: -len(kv[1])):
        machines = sorted({m for r in rs for m in r["machine_names"].split(";") if m})
        apps = ", ".join(f"{a} {n}" for a, n in sorted(Counter(r["app"] for r in rs).items()))
        versions = "/".join(sorted({r["wms_version"] for r in rs}))
        out.append(f"  {label:30s} {versions:12s} {len(rs):4d} runs, {len(machines)} machines; {apps}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="folder of WfFormat instances (searched recursively)")
    parser.add_argument("--out", type=Path, help="CSV file to write (one row per instance file)")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"error: {args.root}: not a folder", file=sys.stderr)
        return 2
    rows = survey(args.root)
    if args.out:
        with open(args.out, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
