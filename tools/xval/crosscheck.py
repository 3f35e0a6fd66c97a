"""Check simsched's batch replay against two established batch simulators, job by job.

The tools (fetched separately; nothing of theirs is in this repository):

* RLScheduler's batch environment (Zhang et al., SC'20), the public repository
  DIR-LAB/deep-batch-scheduler at commit cd433e3d62a01705f255bd48cb55b393862800e7 (a plain checkout;
  its heuristic replay needs numpy and scipy only, see ``rlscheduler_adapter.py``);
* AccaSim 1.1.3 (Galleguillos et al., Cluster Computing 2020), ``pip install accasim==1.1.3`` in a
  virtual environment of its own (``accasim_adapter.py``).

For every trace — the shipped Lublin and RICC logs, the shipped GPU-cluster CSV, and seeded random
SWF traces with ties, zero-length jobs, jobs as wide as the machine and requested times below the
run times — the script writes the jobs as simsched keeps them back to SWF (``write_swf``: one
processor count, requested time filled, status 1), so every tool replays the same jobs, and runs:

* simsched's ``fcfs``, ``sjf`` and ``easy-backfill`` on its SimPy batch engine;
* the tools' FCFS, SJF and "EASY" on that file;
* simsched's engine with three small policies written here that follow the tools' rules as read
  in their source (``RLSchedulerBackfill``, ``RLSchedulerSJF``, ``AccaSimEBF`` below), to show that
  each difference between a tool and simsched comes from that rule and nothing else.

It prints one row per (trace, pair): jobs compared, identical start times, max |delta wait|, and the
two bounded slowdowns (tau = 10 s) and utilisations.  Zero-length jobs are left out on both sides
(RLScheduler's loader drops jobs whose run time is 0; AccaSim holds a zero-length job's processors
until its next event).  ``--raw`` also replays the original SWF files as each tool reads them
(processor field, statuses kept, RLScheduler's whole nodes) against simsched reading them the same
way (``procs_from``, ``keep``).

Usage (a few minutes on one core)::

    python tools/xval/crosscheck.py --rlscheduler PATH/TO/deep-batch-scheduler \\
        --accasim-python PATH/TO/accasim-venv/bin/python [--random 20] [--out DIR] [--raw]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from simsched.schedulers.batch_easy import EASYBackfill
from simsched.schedulers.batch_fcfs import FCFS, start_in_order
from simsched.schedulers.batch_sjf import SJF
from simsched.simulator.batch import TAU, BatchView, simulate_batch
from simsched.workloads.importers.gpu_trace import read_gpu_trace
from simsched.workloads.importers.swf import RigidTrace, make_trace, read_swf, write_swf

HERE = Path(__file__).resolve().parent
TRACES = HERE.parents[1] / "scenarios" / "data" / "traces"  # the shipped traces stay with the data
SHIPPED = [("lublin_256", TRACES / "lublin_256.swf", 256), ("ricc_2010_5000", TRACES / "ricc_2010_5000.swf", 8192),
           ("gpu_jobs_300", TRACES / "gpu_jobs_300.csv", 64)]


# ----------------------------------------------------------------------------------------------
# The tools' rules, as policies of simsched's engine (read from their source; see the docs page)
class RLSchedulerBackfill:
    """RLScheduler's ``backfil=True`` replay: FCFS; when the head does not fit, its reservation is
    the estimated end (start + requested, not clamped to now) at which enough processors are free,
    computed once when the job became the blocked head; a later job is backfilled only if it fits
    and ``now + requested < reservation`` (strictly); no "extra processors" rule.  Events of one
    instant are taken one at a time (arrivals first, then each ending job), with a backfill pass
    after each while the head waits; the head starts as soon as it fits, before the instant's other
    events.  The tool's list of running jobs (sorted by actual end before each event, by estimated
    end for a reservation; stable sorts) is kept to release same-instant jobs in its order."""

    name = "rlscheduler-backfill"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs, self.req, self.run = trace.procs.tolist(), trace.requested.tolist(), trace.run.tolist()
        self.head, self.shadow, self.running, self.start = -1, 0.0, [], {}

    def decide(self, view: BatchView) -> list[int]:
        now, procs = view.now, self.procs
        arrivals = sorted(view.arrived)  # file order
        queue = [j for j in view.queue if j not in set(arrivals)]
        free = view.free - sum(procs[j] for j in view.finished)  # before this instant's releases
        out: list[int] = []
        end = lambda j: self.start[j] + self.run[j]  # noqa: E731
        first = True  # at a new instant the tool's next step is an event, not a pass

        def event() -> None:
            nonlocal free
            self.running.sort(key=end)
            if arrivals:
                queue.append(arrivals.pop(0))
            else:
                j = self.running.pop(0)
                assert end(j) == now, "a release outside this instant"
                free += procs[j]

        def begin(j: int) -> None:
            nonlocal free
            out.append(j)
            queue.remove(j)
            free -= procs[j]
            self.start[j] = now
            self.running.append(j)

        pending = lambda: bool(arrivals) or any(end(j) == now for j in self.running)  # noqa: E731
        while True:
            if self.head >= 0:  # the head's waiting loop
                if procs[self.head] <= free:
                    begin(self.head)
                    self.head = -1
                    continue
                if not first:
                    for j in list(queue):
                        if j != self.head and procs[j] <= free and now + self.req[j] < self.shadow:
                            begin(j)
                first = False
                if not pending():
                    break
                event()
            elif queue:  # the main loop: the next job in submit order
                j = queue[0]
                if procs[j] <= free:
                    begin(j)
                    continue
                self.head, first = j, False
                self.running.sort(key=lambda r: self.start[r] + self.req[r])
                avail = free
                for r in self.running:
                    avail += procs[r]
                    self.shadow = self.start[r] + self.req[r]
                    if avail >= procs[j]:
                        break
            elif pending():  # an empty queue: events until a job arrives
                event()
                first = False
            else:
                break
        return out


class RLSchedulerSJF:
    """RLScheduler's SJF replay: the shortest waiting job by requested time (ties by submit time)
    is chosen and the machine waits for it, even when a shorter job arrives meanwhile (no job
    starts before it).  Jobs arriving into an empty queue join it one at a time, in file order: each
    is chosen alone, so they start in file order while they fit, and the first that does not fit is
    the chosen one."""

    name = "rlscheduler-sjf"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs, self.req, self.submit = trace.procs.tolist(), trace.requested, trace.submit
        self.chosen, self.empty = -1, True

    def decide(self, view: BatchView) -> list[int]:
        waiting = list(view.queue)
        out: list[int] = []
        free = view.free
        if self.empty and self.chosen < 0:  # the queue was empty: arrivals are taken one by one
            for j in waiting:
                if self.procs[j] > free:
                    self.chosen = j
                    break
                out.append(j)
                free -= self.procs[j]
            waiting = waiting[len(out):]
        while waiting:
            if self.chosen < 0:
                self.chosen = min(waiting, key=lambda j: (self.req[j], self.submit[j], j))
            j = self.chosen
            if self.procs[j] > free:
                break
            out.append(j)
            free -= self.procs[j]
            waiting.remove(j)
            self.chosen = -1
        self.empty = not waiting
        return out


class AccaSimEBF:
    """AccaSim's EASYBackfilling: FIFO until a job blocks; the blocked job gets a reservation time
    (estimated ends, not clamped to now) computed once, and is tried again only at decision points at
    or after that time; meanwhile every other waiting job that fits now is started in queue order
    (the reservation's nodes are never withheld: ``reserved_nodes=[]``), so the blocked job can be
    delayed past its reservation — greedy first fit, not EASY.  With nothing running and no event
    left, AccaSim advances its clock a second at a time, which reaches the reservation time."""

    name = "accasim-ebf"

    def reset(self, trace: RigidTrace, m: int) -> None:
        self.procs, self.req, self.blocked, self.at = trace.procs.tolist(), trace.requested, -1, None

    def _slot(self, view: BatchView, started: list[int], free: int, need: int) -> float:
        run = np.fromiter(view.running, dtype=np.int64)
        ends = np.concatenate([view.est_end[run], view.now + self.req[started]])
        procs = np.concatenate([view.trace.procs[run], view.trace.procs[started]])
        order = np.argsort(ends, kind="stable")
        return float(ends[order][int(np.argmax(free + np.cumsum(procs[order]) >= need))])

    def decide(self, view: BatchView) -> list[int]:
        q = view.queue
        out: list[int] = []
        free = view.free
        reached = self.blocked >= 0 and self.at is not None and self.at <= view.now
        if reached and self.procs[self.blocked] <= free:
            out.append(self.blocked)
            free -= self.procs[self.blocked]
            self.blocked, self.at = -1, None
        rest = [j for j in q if j not in out and j != self.blocked]
        if self.blocked < 0 and rest:
            fifo = start_in_order(np.asarray(rest), self.procs, free)
            out += fifo
            free -= sum(self.procs[j] for j in fifo)
            if len(fifo) < len(rest):
                self.blocked = rest[len(fifo)]
                self.at = self._slot(view, out, free, self.procs[self.blocked])
                rest = rest[len(fifo) + 1:]
            else:
                rest = []
        for j in rest:  # greedy fill, in queue order
            if self.procs[j] <= free:
                out.append(j)
                free -= self.procs[j]
        if self.blocked >= 0 and not view.running and not out:
            view.wake_at(self.at)  # with no event left AccaSim steps its clock a second at a time
        return out


# ----------------------------------------------------------------------------------------------
def random_trace(seed: int) -> tuple[RigidTrace, int]:
    """A seeded random log: 150-400 jobs on 8-64 processors, integer times, ties in submit times,
    about 5% zero-length jobs, about 10% as wide as the machine, requested time 0.5x (a fifth of
    the jobs), 1x, 2x or 5x the run time."""
    rng = np.random.default_rng(seed)
    m = int(rng.choice([8, 16, 32, 64]))
    n = int(rng.integers(150, 400))
    gaps = rng.choice([0, 0, 1, 5, 30, 120, 600], size=n)
    submit = np.cumsum(gaps) - gaps[0]
    run = rng.integers(0, 3000, size=n) * (rng.random(n) > 0.05)
    procs = np.minimum(m, rng.integers(1, m + 1, size=n) * (rng.random(n) > 0.1) + (rng.random(n) < 0.1) * m)
    procs = np.maximum(1, procs)
    factor = rng.choice([0.5, 1.0, 1.0, 2.0, 5.0], size=n)
    requested = np.maximum(1, np.round(run * factor)).astype(np.int64)
    return make_trace(submit, run, procs.astype(np.int64), requested, max_procs=m, source=f"random-{seed}"), m


def normalised(trace: RigidTrace, m: int, path: Path) -> Path:
    """``trace`` as simsched keeps it, written to SWF (the file every tool replays)."""
    write_swf(path, replace(trace, max_procs=m), comment="cross-check input")
    return path


def read_tool_rows(text: str) -> dict[int, tuple[float, float, float]]:
    """job -> (submit, start, run) from an adapter's lines."""
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 6:
            j, sub, start, end_or_run = int(parts[0]), float(parts[1]), float(parts[2]), float(parts[3])
            rows[j] = (sub, start, end_or_run)
    return rows


REUSE = False
"""``--reuse``: take a tool's output already in the work folder instead of replaying again."""

DONE: set[Path] = set()
"""Tool outputs written by this run (a tool's replay serves every row that compares with it)."""


def run_rlscheduler(tool: Path, swf: Path, policy: str, backfill: bool,
                    work: Path | None = None) -> dict[int, tuple[float, float, float]]:
    """RLScheduler's replay of ``swf`` (job -> (submit, start, run)), kept in ``work`` (and replayed
    once per run of this script)."""
    saved = (work or swf.parent) / f"rl-{swf.stem}-{policy}{'-backfill' if backfill else ''}.txt"
    if not ((REUSE or saved in DONE) and saved.exists()):
        DONE.add(saved)
        cmd = [sys.executable, str(HERE / "rlscheduler_adapter.py"), str(tool), str(swf), policy]
        done = subprocess.run(cmd + (["backfill"] if backfill else []), check=True, capture_output=True, text=True)
        saved.write_text(done.stdout)
    return read_tool_rows(saved.read_text())


def run_accasim(python: str, swf: Path, m: int, policy: str, work: Path) -> dict[int, tuple[float, float, float]]:
    """AccaSim's replay of ``swf`` on ``m`` one-core nodes (job -> (queued, start, run)), kept in ``work``."""
    folder = work / f"acc-{swf.stem}-{policy}"
    plan = folder / f"sched-{swf.name}"
    if not ((REUSE or plan in DONE) and plan.exists()):
        DONE.add(plan)
        subprocess.run([python, str(HERE / "accasim_adapter.py"), str(swf), str(m), policy, str(folder)],
                       check=True, capture_output=True, text=True)
    rows = read_tool_rows(plan.read_text())
    return {j: (s, a, e - a) for j, (s, a, e) in rows.items()}  # (queued, start, end) -> run


def compare(trace: RigidTrace, m: int, start: np.ndarray, tool: dict[int, tuple[float, float, float]]) -> dict:
    """Per job over the jobs both ran: identical starts (as waits, so the time origin does not
    matter), max |delta wait|, both bsld means and both utilisations (processor-seconds over ``m`` x
    [first submit, last end], as simsched's metrics) from the two schedules."""
    index = {int(j): i for i, j in enumerate(trace.ids.tolist())}
    common = [j for j in tool if j in index]
    i = np.array([index[j] for j in common], dtype=np.int64)
    w_s = start[i] - trace.submit[i]
    w_t = np.array([tool[j][1] - tool[j][0] for j in common])
    run, procs, sub = trace.run[i], trace.procs[i], trace.submit[i]
    bsld = lambda w: float(np.mean(np.maximum(1.0, (w + run) / np.maximum(run, TAU))))  # noqa: E731
    util = lambda w: float(np.dot(procs, run) / (m * (np.max(sub + w + run) - sub.min())))  # noqa: E731
    d = np.abs(w_s - w_t)
    return {"jobs": len(common), "same": int(np.sum(d < 1e-6)), "max_dwait": float(d.max()) if d.size else 0.0,
            "bsld_simsched": bsld(w_s), "bsld_tool": bsld(w_t), "util_simsched": util(w_s), "util_tool": util(w_t)}


def check(name: str, trace: RigidTrace, m: int, args: argparse.Namespace, work: Path) -> list[tuple]:
    rows = []
    # zero-length jobs are left out on both sides: RLScheduler's loader drops them, and AccaSim keeps
    # their processors until its next event (its release is keyed at the instant being processed)
    nonzero = trace.take(trace.run > 0)
    swf_nz = normalised(nonzero, m, work / f"{name}.swf")

    def ours(tr: RigidTrace, policy) -> np.ndarray:
        return ours_on(tr, m, policy)

    if args.rlscheduler:
        tool = Path(args.rlscheduler)
        for label, policy, backfill, mine in (
                ("fcfs | RLScheduler FCFS", "fcfs", False, FCFS()),
                ("easy-backfill | RLScheduler backfill", "fcfs", True, EASYBackfill()),
                ("rule as read | RLScheduler backfill", "fcfs", True, RLSchedulerBackfill()),
                ("sjf | RLScheduler SJF", "sjf", False, SJF()),
                ("rule as read | RLScheduler SJF", "sjf", False, RLSchedulerSJF())):
            theirs = run_rlscheduler(tool, swf_nz, policy, backfill, work)
            rows.append((name, label, compare(nonzero, m, ours(nonzero, mine), theirs)))
    if args.accasim_python:
        for label, policy, mine in (("fcfs | AccaSim FIFO", "fifo", FCFS()),
                                    ("sjf | AccaSim SJF", "sjf", SJF()),
                                    ("easy-backfill | AccaSim EBF", "ebf", EASYBackfill()),
                                    ("rule as read | AccaSim EBF", "ebf", AccaSimEBF())):
            theirs = run_accasim(args.accasim_python, swf_nz, m, policy, work)
            rows.append((name, label, compare(nonzero, m, ours(nonzero, mine), theirs)))
    return rows


def check_raw(args: argparse.Namespace, work: Path) -> list[tuple]:
    """The original SWF files as each tool reads them, against simsched reading them the same way:
    RLScheduler takes the larger of fields 5 and 8, keeps every status, and allocates whole nodes
    (``ceil(processors / (MaxProcs / MaxNodes))`` of ``MaxNodes``: RICC's 1,024 nodes of 8 cores);
    AccaSim takes field 8 and keeps every status, on one core per node."""
    rows = []
    for name, original, m in SHIPPED[:2]:
        path = work / f"{name}-file.swf"  # the original file, under its own name in the work folder
        if not path.exists() or path.read_bytes() != original.read_bytes():
            shutil.copyfile(original, path)
        if args.rlscheduler:
            tr = read_swf(path, procs_from="max", keep="all")
            ppn = 8 if name.startswith("ricc") else 1
            nodes = replace(tr, procs=-(-tr.procs // ppn))
            for label, policy, backfill, mine in (("fcfs, read as it does | RLScheduler FCFS", "fcfs", False, FCFS()),
                                                  ("rule as read | RLScheduler backfill", "fcfs", True,
                                                   RLSchedulerBackfill())):
                theirs = run_rlscheduler(Path(args.rlscheduler), path, policy, backfill, work)
                rows.append((f"{name} (file)", label, compare(nodes, m // ppn, ours_on(nodes, m // ppn, mine), theirs)))
        if args.accasim_python and name.startswith("ricc"):
            tr = read_swf(path, procs_from="requested", keep="all")
            theirs = run_accasim(args.accasim_python, path, m, "fifo", work)
            rows.append((f"{name} (file)", "fcfs, read as it does | AccaSim FIFO",
                         compare(tr, m, ours_on(tr, m, FCFS()), theirs)))
    return rows


def ours_on(trace: RigidTrace, m: int, policy) -> np.ndarray:
    """Start times of ``trace`` on ``m`` processors under ``policy`` on simsched's engine."""
    return simulate_batch(trace, m, policy).start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rlscheduler", help="a checkout of DIR-LAB/deep-batch-scheduler")
    ap.add_argument("--accasim-python", help="a Python interpreter with accasim 1.1.3 installed")
    ap.add_argument("--random", type=int, default=20, help="random traces (seeds 0..N-1)")
    ap.add_argument("--only", help="run only traces whose name contains this")
    ap.add_argument("--out", help="keep the SWF files and tool outputs here (default: a temporary folder)")
    ap.add_argument("--raw", action="store_true", help="also replay the original SWF files as each tool reads them")
    ap.add_argument("--reuse", action="store_true", help="take the tools' outputs already in --out (no replay)")
    args = ap.parse_args()
    global REUSE
    REUSE = args.reuse
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.out or tmp)
        work.mkdir(parents=True, exist_ok=True)
        cases = []
        for name, path, m in SHIPPED:
            tr = read_gpu_trace(path, max_procs=m) if path.suffix == ".csv" else read_swf(path, max_procs=m)
            cases.append((name, tr, m))
        cases += [(f"random-{s}", *random_trace(s)) for s in range(args.random)]
        print(f"{'trace':<22} {'simsched | tool':<40} {'jobs':>5} {'same start':>10} {'max|dwait|':>11} "
              f"{'bsld simsched':>13} {'bsld tool':>10} {'util simsched':>13} {'util tool':>9}")
        pooled: dict[str, list[dict]] = {}
        for name, tr, m in cases:
            if not args.only or args.only in name:
                for trace_name, label, r in check(name, tr, m, args, work):
                    print_row(trace_name, label, r)
                    if trace_name.startswith("random"):
                        pooled.setdefault(label, []).append(r)
        for label, rs in pooled.items():  # the random traces together: sums, the largest difference, means
            print_row(f"{len(rs)} random", label, {
                "jobs": sum(r["jobs"] for r in rs), "same": sum(r["same"] for r in rs),
                "max_dwait": max(r["max_dwait"] for r in rs),
                **{k: float(np.mean([r[k] for r in rs])) for k in ("bsld_simsched", "bsld_tool", "util_simsched",
                                                                    "util_tool")}})
        if args.raw:
            for row in check_raw(args, work):
                print_row(*row)


def print_row(trace_name: str, label: str, r: dict) -> None:
    print(f"{trace_name:<22} {label:<40} {r['jobs']:>5} {r['same']:>10} {r['max_dwait']:>11.0f} "
          f"{r['bsld_simsched']:>13.3f} {r['bsld_tool']:>10.3f} {r['util_simsched']:>13.4f} {r['util_tool']:>9.4f}",
          flush=True)


if __name__ == "__main__":
    main()
