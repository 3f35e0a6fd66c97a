"""``simsched bench streams``: a Poisson stream of DAG jobs simulated end to end on the online
engine, its SimPy events per second beside a raw SimPy floor timed in the same process, its tasks
per second beside the least SimPy needs for that many tasks, and peak memory.

The stream: ``jobs`` random layered DAGs (Topcuoglu et al. 2002 generator, 50-150 tasks, CCR 0.5)
arriving as a Poisson process at about 90% offered load on ``processors`` identical processors;
the policy is MCT (Braun et al. 2001), one of the cheapest online rules, so the figure is the
engine's.  Costs are computed on demand (work / speed), so the run holds no (tasks, processors)
matrix.  Sizes: ``--quick`` 100 jobs on 50 processors (CI), default 1,000 jobs on 100, and
``--size 10000x1000`` the issue's target (10,000 jobs, ~1M tasks, on 1,000 processors).

The floors, timed in the same process right after the run:

* events: the least SimPy can do for the *same number of events* as the run — one ``Timeout`` per
  event whose callback schedules the next one on its "processor" (``processors`` chains; no model,
  no policy).  The engine's events/s is its events over the CPU time of a second run of the same
  stream whose policy replays the first run's recorded decisions (each ``decide`` returns the
  recorded list: O(1)), so it measures the engine alone — the same events, the same schedule
  (checked), without the policy's work and without timing each decision (``time.process_time`` is
  a system call of a few microseconds, which timing every decision charged to the engine).
* tasks: the same floor with one event per task (the fewest any discrete-event model of the
  tasks needs), against the run's tasks per second end to end (engine and policy).

Rates are over this process's CPU time (``time.process_time``), the run's, the policy's and the
floors' alike: on a shared machine wall time also counts the waits for a core, which made the same
code measure 2-3x apart from run to run; the run's wall time is the end-to-end row.

Then each of ``mct``, ``srjf-eft``, ``fair-eft``, ``online-heft``, ``minmin`` and ``rl-gate`` (:data:`POLICIES`) runs
the same stream in a fresh interpreter of its own, on the engine :func:`~simsched.simulator.engine.run_online` picks
(all six have a compiled form; ``rl-gate``, whose training worlds had 3-15 processors of two classes, hands its
decisions to ``srjf-eft`` from the first job on the bench's identical processors, and its row says so): its CPU
seconds (against the issue's targets at 1M tasks, :data:`POLICY_TARGETS`), peak memory, and events per CPU second
beside the raw SimPy floor for as many events; and, up to :data:`SIMPY_COMPARED_MAX` tasks, the same run on the
SimPy engine in the same process, its CPU seconds beside the compiled loop's and its schedule checked equal.
``rl-gate`` runs once more on a stream of its own kind of world, with failures and stragglers (:data:`GATE_WORLD`:
there it decides, counting the failures it sees), both engines in the same process likewise.

Each size runs in a fresh interpreter so its peak memory is its own.  Last, the stream is built and run
by ``srjf-eft`` alone in a fresh interpreter (:func:`measure_memory`): the process's peak memory against
the issue's targets (:data:`MEMORY_TARGETS`: 200 MB at 100k tasks, 1 GB at 1M), beside the same for a
one-job stream on the same engine (what the interpreter, the imports and numba take whatever the size).
The stream is merged job by job into flat arrays (:class:`~simsched.workloads.jobs.JobMerger`), as
``simsched run`` builds a scenario's stream.
"""

from __future__ import annotations

import resource
import time
import warnings

import numpy as np

TARGET_TASKS = 1_000_000
"""The size the targets are stated for (10,000 jobs of ~100 tasks on 1,000 processors)."""

SIZES = {"quick": (100, 50), "default": (1_000, 100), "target": (10_000, 1_000)}
"""``(jobs, processors)`` of ``--quick``, the default and the issue's target (``--size target``)."""


def parse_size(size: str | None, quick: bool) -> tuple[int, int]:
    """``(jobs, processors)`` from ``--size`` (``JOBSxPROCESSORS``, or ``quick``/``default``/``target``),
    else from ``--quick``.  :class:`SimschedError` naming the option on anything else."""
    from simsched.errors import SimschedError

    if size is None:
        return SIZES["quick" if quick else "default"]
    if size in SIZES:
        return SIZES[size]
    from simsched import limits

    parts = size.lower().replace(",", "").replace("_", "").split("x")
    if len(parts) == 2 and all(p.isascii() and p.isdigit() and 0 < len(p) <= 12 and int(p) > 0 for p in parts):
        jobs, processors = int(parts[0]), int(parts[1])
        limits.check_amount(jobs, "max_jobs", what="the jobs of --size", where="--size")
        limits.check_processors(processors, field="--size")
        limits.check_tasks(jobs * 100, field="--size")  # ~100 tasks a job (see TARGET_TASKS)
        return jobs, processors
    shown = size if len(size) <= 40 else size[:40] + f"... ({len(size):,} characters)"
    raise SimschedError(f"--size: {shown!r} is not JOBSxPROCESSORS with ASCII digits (e.g. 10000x1000) nor one of "
                        f"{', '.join(SIZES)}")


def _target(limit: str, tasks: int, ok: bool) -> dict:
    """``target``/``ok`` of a row: compared only when measured within 10% of :data:`TARGET_TASKS`."""
    if abs(tasks - TARGET_TASKS) > 0.1 * TARGET_TASKS:
        return {"target": f"{limit} at {TARGET_TASKS:,} tasks (not compared)", "ok": None}
    return {"target": f"{limit} at {TARGET_TASKS:,} tasks", "ok": ok}


def _stream_problem(n_jobs: int, n_procs: int, seed: int = 0, tasks: tuple[int, int] = (50, 150),
                    fast: int = 0):
    """The bench stream (module docstring) as ``(Problem, JobStream)``: each job drawn, merged
    (:class:`~simsched.workloads.jobs.JobMerger`) and let go before the next, so the build holds the
    stream's flat arrays and one job, never a list of job graphs.  ``tasks``: the jobs' least and most
    tasks; ``fast``: every ``fast``-th processor a GPU three times as fast (0: none), the load offered
    against the processors' total speed.  O(tasks + edges)."""
    from simsched.simulator.platform import Platform, Processor
    from simsched.simulator.problem import Problem
    from simsched.workloads.generators import random_dag
    from simsched.workloads.jobs import JobMerger, poisson_arrivals

    rng = np.random.default_rng(seed)
    merger, work = JobMerger(), []
    for _ in range(n_jobs):
        g = random_dag(int(rng.integers(tasks[0], tasks[1] + 1)), ccr=0.5, mean_cost=20.0, rng=rng)
        work.append(g.work.sum())
        merger.add(g)
    del g
    speed = [3.0 if fast and i % fast == fast - 1 else 1.0 for i in range(n_procs)]
    rate = 0.9 * float(sum(speed)) / float(np.mean(work))  # offered load 0.9 on the processors' total speed
    stream = merger.finish(poisson_arrivals(rate, rng, count=n_jobs))
    procs = [Processor(f"p{i}") if v == 1.0 else Processor(f"p{i}", type="gpu", speed=v) for i, v in enumerate(speed)]
    platform = Platform.uniform(procs, bandwidth=5.0, latency=0.1)
    return Problem(stream.graph, platform), stream


def simpy_floor(n_events: int, n_chains: int, seed: int = 0, clock=time.perf_counter) -> float:
    """Events per second of bare SimPy: ``n_chains`` chains of timeouts, each callback scheduling
    the next timeout of its chain, ``n_events`` in all, timed with ``clock`` (wall time by default;
    ``time.process_time`` for this process's CPU time).  O(n_events)."""
    import simpy
    from simpy.events import Timeout

    env = simpy.Environment()
    delays = np.random.default_rng(seed).exponential(1.0, n_events).tolist()
    per_chain = -(-n_events // n_chains)
    left = [per_chain] * n_chains

    def step(ev: Timeout) -> None:
        c = ev._value
        left[c] -= 1
        if left[c] > 0:
            Timeout(env, delays[left[c] % len(delays)], c).callbacks.append(step)

    for c in range(n_chains):
        Timeout(env, delays[c % len(delays)], c).callbacks.append(step)
    t0 = clock()
    env.run()
    return per_chain * n_chains / (clock() - t0)


class _Recorded:
    """An online policy whose decisions are kept (``policy``'s decisions unchanged), for
    :class:`~simsched.simulator.engine.compiled.Replay`.  O(1) per decision on top."""

    def __init__(self, policy) -> None:
        self.policy, self.name, self.log = policy, policy.name, []

    def reset(self, problem, rng) -> None:
        self.policy.reset(problem, rng)

    def decide(self, view):
        out = self.policy.decide(view)
        self.log.append(out)
        return out


def measure_stream(n_jobs: int, n_procs: int) -> dict:
    """One end-to-end stream run (see the module docstring), in this process."""
    from simsched.schedulers.online import MCT
    from simsched.simulator.engine import run_online
    from simsched.simulator.engine.compiled import Replay
    from simsched.simulator.jobmetrics import stream_metrics
    from simsched.simulator.schedule import validate_schedule

    t0 = time.perf_counter()
    problem, stream = _stream_problem(n_jobs, n_procs)
    build_s = time.perf_counter() - t0
    policy = _Recorded(MCT())
    t0, c0 = time.perf_counter(), time.process_time()
    schedule, stats = run_online(problem, policy, engine="simpy")
    run_s, run_cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_run = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0, c0 = time.perf_counter(), time.process_time()
    replayed, replay_stats = run_online(problem, Replay(policy.log), engine="simpy")
    engine_s, engine_cpu = time.perf_counter() - t0, time.process_time() - c0
    same = replay_stats.events == stats.events and _same_schedule(replayed, schedule)
    ok = same and not validate_schedule(schedule, problem, check_durations=True)
    peak_simpy = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    compiled = measure_compiled(problem, schedule, stats, policy.log)
    policy.log.clear()
    metrics = stream_metrics(schedule, problem, stream.jobs, stream.job_arrival)
    energy_cpu, energy_j = energy_accounting_cpu(problem, schedule, stats)
    floor = simpy_floor(stats.events, n_procs, clock=time.process_time)
    floor_tasks = simpy_floor(problem.n_tasks, n_procs, clock=time.process_time)
    return {"tasks": problem.n_tasks, "jobs": n_jobs, "processors": n_procs, "events": stats.events,
            "decisions": stats.decisions, "build_s": build_s, "run_s": run_s, "engine_s": engine_s,
            "policy_s": stats.policy_time_s, "run_cpu_s": run_cpu, "engine_cpu_s": engine_cpu,
            "policy_cpu_s": run_cpu - engine_cpu, "replay_same": same, "events_per_s": stats.events / engine_cpu,
            "floor_events_per_s": floor, "tasks_per_s": problem.n_tasks / run_cpu, "floor_tasks_per_s": floor_tasks,
            "energy_cpu_s": energy_cpu, "energy_j": energy_j,
            "valid": ok, "jct_mean": metrics.summary["jct_mean"], "offered_load": metrics.summary["offered_load"],
            "peak_run_mb": peak_run, "peak_rss_mb": peak_simpy, "compiled": compiled}


def _same_schedule(a, b) -> bool:
    return (np.array_equal(a.processor, b.processor) and np.array_equal(a.start, b.start)
            and np.array_equal(a.finish, b.finish))


def measure_compiled(problem, schedule, stats, log: list) -> dict | None:
    """The compiled stream engine (:mod:`simsched.simulator.engine.compiled`) on the same stream, in
    this process after the SimPy runs: numba's load (or first compile) CPU time alone, then MCT end to
    end and a replay of the SimPy run's recorded decisions (``log``), each in CPU time, each schedule
    checked equal to the SimPy run's (``same``) with the same event count.  None without numba."""
    from simsched.simulator.engine import compiled, run_online

    if not compiled.numba_available():
        return None
    from simsched.schedulers.online import MCT

    load_cpu = compiled.compile_seconds()
    c0 = time.process_time()
    s_mct, st_mct = run_online(problem, MCT(), engine="compiled")
    run_cpu = time.process_time() - c0
    c0 = time.process_time()
    s_rep, st_rep = run_online(problem, compiled.Replay(log), engine="compiled")
    replay_cpu = time.process_time() - c0
    same = (st_mct.events == st_rep.events == stats.events and _same_schedule(s_mct, schedule)
            and _same_schedule(s_rep, schedule))
    return {"load_cpu_s": load_cpu, "run_cpu_s": run_cpu, "replay_cpu_s": replay_cpu, "same": same,
            "events_per_s": stats.events / replay_cpu, "tasks_per_s": problem.n_tasks / run_cpu,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def energy_accounting_cpu(problem, schedule, stats) -> tuple[float, float]:
    """CPU seconds of the energy accounting of a finished stream run (a two-P-state power model on
    every processor; :meth:`~simsched.simulator.power.EnergySetup.measure`: intervals, time in state,
    energy, carbon, cost) and the joules it found.  O(k log k) for k attempts."""
    from simsched.simulator.power import EnergySetup, IntensityTrace, PowerModel, Price, ProcessorPower, PState

    setup = EnergySetup(PowerModel({"cpu": ProcessorPower((PState(1.0, 95.0, 25.0), PState(0.6, 40.0, 20.0)), 2.0)}),
                        {"cpu": Price(hourly=0.1)}, 0.25,
                        IntensityTrace(np.array([0.0, 1000.0, 5000.0]), np.array([400.0, 200.0, 300.0]), "linear"))
    c0 = time.process_time()
    fields, _ = setup.measure(problem, schedule, None, stats.log)
    return time.process_time() - c0, fields["energy_j"]


POLICIES = ("mct", "srjf-eft", "fair-eft", "online-heft", "minmin", "rl-gate")
"""The online policies timed one by one on the bench stream (the rules with a compiled form, MCT first)."""


POLICY_TARGETS = {"mct": 15.0, "srjf-eft": 30.0}
"""CPU seconds end to end the issue asks of these policies at :data:`TARGET_TASKS` (#42)."""

SIMPY_COMPARED_MAX = 200_000
"""Up to this many tasks a policy run on the compiled loop is run again on the SimPy engine, in the same
process, for the ratio and the check of the schedule (beyond, SimPy's job-aware runs take many minutes)."""


GATE_WORLD = {"processors": 12, "fast": 4, "tasks": (10, 40), "jobs_per_job": 4, "mtbf": 50.0, "mttr": 3.0,
              "straggle_every": 100.0, "straggle_for": 1.0, "slowdown": 2.0}
"""``rl-gate``'s row with failures (:func:`measure_policy`, ``failures``): a stream in the gate's own kind of world,
where it decides rather than hand its decisions to ``srjf-eft`` — 12 processors, every 4th a GPU three times as fast,
jobs of 10-40 tasks (4 for each job of the bench's size, about as many tasks) — with failures and stragglers, in
mean task times (20): each processor failing every 50 on average, repaired in 3, straggling (2x slower) every 100
for 1."""


def _gate_world(n_jobs: int):
    """``(Problem, Disruptions)`` of :data:`GATE_WORLD` for a bench size of ``n_jobs`` jobs.  O(tasks + edges)."""
    from simsched.simulator.engine import Disruptions

    w = GATE_WORLD
    problem, _ = _stream_problem(n_jobs * w["jobs_per_job"], w["processors"], tasks=w["tasks"], fast=w["fast"])
    mean = 20.0
    d = Disruptions(failure_rate=1.0 / (w["mtbf"] * mean), repair_time=w["mttr"] * mean,
                    slowdown_rate=1.0 / (w["straggle_every"] * mean), slowdown_duration=w["straggle_for"] * mean,
                    slowdown=w["slowdown"])
    return problem, d


def measure_policy(n_jobs: int, n_procs: int, name: str, failures: bool = False) -> dict:
    """Policy ``name`` on the bench stream end to end, in this process (a fresh one, for its own peak
    memory): the CPU seconds of :func:`~simsched.simulator.engine.run_online` on the engine it picks
    (``engine``; numba loaded first, outside the timing), the process's peak resident memory, the
    events and the raw SimPy floor for that many events timed right after (CPU time), and a digest of
    the schedule.  When the compiled loop ran it and the stream has at most :data:`SIMPY_COMPARED_MAX`
    tasks, the same run on the SimPy engine after it (``simpy_cpu_s``, ``same``: the same schedule and
    events).  ``failures``: on :data:`GATE_WORLD`'s stream with its failures and stragglers instead (both runs
    drawing them from one seed; ``failures`` seen, ``late`` decisions of a gate).  O(the run)."""
    import hashlib

    from simsched.schedulers import registry
    from simsched.simulator.engine import compiled, run_online

    problem, d = _gate_world(n_jobs) if failures else (_stream_problem(n_jobs, n_procs)[0], None)
    world = {"disruptions": d, "disruption_rng": np.random.default_rng(1)}
    policy = registry.create(name)
    if compiled.numba_available():  # numba's load is its own row (measure_compiled), not the policy's
        compiled.compile_seconds()
    c0 = time.process_time()
    with warnings.catch_warnings():  # a learned policy's fallback warning: its reason goes in the row
        warnings.simplefilter("ignore")
        schedule, stats = run_online(problem, policy, **world)
    cpu = time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    digest = hashlib.sha256(b"".join(a.tobytes() for a in (schedule.processor, schedule.start, schedule.finish)))
    out = {"policy": name, "engine": stats.engine, "tasks": problem.n_tasks, "events": stats.events, "cpu_s": cpu,
           "peak_rss_mb": peak, "events_per_s": stats.events / cpu,
           "floor_events_per_s": simpy_floor(stats.events, n_procs, clock=time.process_time),
           "digest": digest.hexdigest()[:16], "simpy_cpu_s": None, "same": None,
           "fallback": getattr(policy, "fallback_reason", None), "failures": stats.failures if failures else None,
           "late": getattr(policy, "late_decisions", None)}
    if stats.engine == "compiled" and problem.n_tasks <= SIMPY_COMPARED_MAX:
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, ref_stats = run_online(problem, registry.create(name), engine="simpy", disruptions=d,
                                        disruption_rng=np.random.default_rng(1))
        out["simpy_cpu_s"] = time.process_time() - c0
        out["same"] = _same_schedule(ref, schedule) and ref_stats.events == stats.events
    return out


MEMORY_POLICY = "srjf-eft"
"""The policy whose build+run peak memory is held against :data:`MEMORY_TARGETS`."""

MEMORY_TARGETS = ((100_000, 200.0), (1_000_000, 1024.0))
"""``(tasks, MB)``: the process peak the issue allows a stream's build and run at these sizes (#42)."""


def measure_memory(n_jobs: int, n_procs: int, policy: str = MEMORY_POLICY, engine: str = "auto") -> dict:
    """The bench stream built and run by ``policy`` on ``engine``, in this process (a fresh one: its
    peak resident memory, ``ru_maxrss``, is the build's and the run's alone): the peak after the build
    (``build_mb``) and after the run (``peak_mb``), the tasks and the engine that ran.  O(the run)."""
    from simsched.schedulers import registry
    from simsched.simulator.engine import run_online

    problem, _stream = _stream_problem(n_jobs, n_procs)
    build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    _schedule, stats = run_online(problem, registry.create(policy), engine=engine)
    return {"tasks": problem.n_tasks, "engine": stats.engine, "build_mb": build,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def _memory_target(tasks: int, mb: float) -> dict:
    """``target``/``ok`` against :data:`MEMORY_TARGETS`, compared within 10% of one of their sizes."""
    for size, limit in MEMORY_TARGETS:
        if abs(tasks - size) <= 0.1 * size:
            return {"target": f"<= {limit:,.0f} MB at {size:,} tasks", "ok": mb <= limit}
    return {"target": "<= 200 MB at 100k, <= 1,024 MB at 1M tasks (not compared)", "ok": None}


def _memory_rows(mem: dict, floor: dict, size: str) -> list[dict]:
    """The stream's build peak and its build+run peak by :data:`MEMORY_POLICY`, each in a fresh process,
    beside the same process's peak for a one-job stream on the same engine (the interpreter, its imports
    and, on the compiled loop, numba's own ~130 MB: what no stream size changes)."""
    return [
        dict(what="stream build peak memory (baseline: one job)", size=size,
             measured=mem["build_mb"], baseline=floor["build_mb"], ratio=None, unit="MB", target="-", ok=None),
        dict(what=f"{MEMORY_POLICY} build+run peak memory, {mem['engine']} (baseline: one job)", size=size,
             measured=mem["peak_mb"], baseline=floor["peak_mb"], ratio=None, unit="MB",
             **_memory_target(mem["tasks"], mem["peak_mb"])),
    ]


def _policy_rows(runs: list[dict], size: str) -> list[dict]:
    """Per policy: its CPU seconds end to end (engine and policy; against :data:`POLICY_TARGETS`), beside
    the SimPy engine's for the same run when measured, its events/s beside the raw SimPy floor for as many
    events (both CPU time), and its peak memory."""
    rows = []
    for p in runs:
        if p.get("fallback"):  # a learned policy that handed its decisions to a rule: which, from when
            p = dict(p, policy=f"{p['policy']} ({p['fallback'].split(':')[0]})")
        if p.get("failures") is not None:  # GATE_WORLD's stream: how many failed, how often the gate waited
            p = dict(p, policy=f"{p['policy']} with failures ({p['tasks']:,} tasks on {GATE_WORLD['processors']} "
                                f"processors of two classes, {p['failures']:,} failures, {p['late'] or 0:,} late "
                                f"decisions)")
        rows.append(dict(what=f"{p['policy']} end to end ({p['engine']} engine, engine and policy, {p['cpu_s']:.2f} s "
                              f"CPU) events/s vs raw SimPy floor (same events, CPU time)",
                         size=f"{size}, {p['events']:,} events", measured=p["events_per_s"],
                         baseline=p["floor_events_per_s"], ratio=p["events_per_s"] / p["floor_events_per_s"],
                         unit="inst/s", target="-", ok=None))
        limit = POLICY_TARGETS.get(p["policy"])
        target = _target(f"<= {limit:g} s", p["tasks"], p["cpu_s"] <= limit) if limit else {"target": "-", "ok": None}
        rows.append(dict(what=f"{p['policy']} end to end: CPU seconds", size=size, measured=p["cpu_s"], baseline=None,
                         ratio=None, unit="s", **target))
        if p["simpy_cpu_s"] is not None:
            tag = "" if p["same"] else " [schedule differs: NO]"
            rows.append(dict(what=f"{p['policy']} end to end, compiled vs SimPy engine (CPU time){tag}", size=size,
                             measured=p["cpu_s"], baseline=p["simpy_cpu_s"], ratio=p["simpy_cpu_s"] / p["cpu_s"],
                             unit="s", target="-", ok=None))
        rows.append(dict(what=f"{p['policy']} run peak memory", size=size, measured=p["peak_rss_mb"], baseline=None,
                         ratio=None, unit="MB", **_target("<= 1024 MB", p["tasks"], p["peak_rss_mb"] <= 1024)))
    return rows


def bench_streams(quick: bool = False, size: str | None = None) -> list[dict]:
    """Rows ``{what, size, measured, baseline, ratio, target, ok}`` for ``simsched bench streams``
    at ``size`` (:func:`parse_size`; default 1,000 jobs on 100 processors, ``quick`` 100 on 50): the
    MCT run, its replays and floors (:func:`measure_stream`), then each of :data:`POLICIES` on the same
    stream in a process of its own (:func:`measure_policy`)."""
    import multiprocessing as mp  # here, not at the top: measure_memory's process needs neither
    from concurrent.futures import ProcessPoolExecutor

    n_jobs, n_procs = parse_size(size, quick)
    spawn = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:  # own peak memory
        r = pool.submit(measure_stream, n_jobs, n_procs).result()
    runs = []
    for name, failures in [(name, False) for name in POLICIES] + [("rl-gate", True)]:
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
            runs.append(pool.submit(measure_policy, n_jobs, n_procs, name, failures).result())
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        mem = pool.submit(measure_memory, n_jobs, n_procs).result()
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        floor = pool.submit(measure_memory, 1, n_procs, MEMORY_POLICY, mem["engine"]).result()
    size = f"{r['jobs']:,} jobs, {r['tasks']:,} tasks x {r['processors']:,}"
    ratio = r["events_per_s"] / r["floor_events_per_s"]
    return (_simpy_rows(r, size, ratio) + _compiled_rows(r, size) + _policy_rows(runs, size)
            + _memory_rows(mem, floor, size))


def _compiled_rows(r: dict, size: str) -> list[dict]:
    """The compiled engine's rows beside the SimPy engine's and the floor, all from one run."""
    c = r["compiled"]
    if c is None:
        from simsched.extras import install_hint

        return [dict(what=f"compiled stream engine: not measured, numba is not installed ({install_hint('fast')})",
                     size=size, measured=None, baseline=None, ratio=None, target="-", ok=None)]
    ratio = c["events_per_s"] / r["floor_events_per_s"]
    tag = "" if c["same"] else " [schedule differs: NO]"
    return [
        dict(what=f"compiled engine events/s (a replay of the decisions, SimPy's event count) vs raw SimPy floor "
                  f"(same events, CPU time){tag}", size=f"{size}, {r['events']:,} events",
             measured=c["events_per_s"], baseline=r["floor_events_per_s"], ratio=ratio, unit="inst/s",
             **_target(">= 50% of the floor", r["tasks"], ratio >= 0.5 and c["same"])),
        dict(what=f"compiled engine events/s vs SimPy engine events/s (both replays, CPU time){tag}",
             size=f"{size}, {r['events']:,} events", measured=c["events_per_s"], baseline=r["events_per_s"],
             ratio=c["events_per_s"] / r["events_per_s"], unit="inst/s", target="-", ok=None),
        dict(what=f"compiled stream end to end (MCT, engine and policy) vs the SimPy run (CPU time){tag}",
             size=size, measured=c["run_cpu_s"], baseline=r["run_cpu_s"], ratio=r["run_cpu_s"] / c["run_cpu_s"],
             unit="s", target="-", ok=None),
        dict(what="numba load of the compiled engine (first run on a machine: compilation; excluded from the rates)",
             size=size, measured=c["load_cpu_s"], baseline=None, ratio=None, unit="s", target="-", ok=None),
    ]


def _simpy_rows(r: dict, size: str, ratio: float) -> list[dict]:
    return [
        dict(what=f"stream end to end (MCT, load {r['offered_load']:.2f})", size=size, measured=r["run_s"],
             baseline=None, ratio=None, **_target("valid schedule", r["tasks"], r["valid"])),
        dict(what="SimPy engine events/s (a replay of the decisions) vs raw SimPy floor (same events, CPU time)",
             size=f"{size}, {r['events']:,} events",
             measured=r["events_per_s"], baseline=r["floor_events_per_s"], ratio=ratio, unit="inst/s",
             **_target(">= 50% of the floor", r["tasks"], ratio >= 0.5)),
        dict(what="tasks/s end to end vs SimPy floor (1 event/task, CPU time)",
             size=f"{size}, {r['decisions']:,} decisions",
             measured=r["tasks_per_s"], baseline=r["floor_tasks_per_s"],
             ratio=r["tasks_per_s"] / r["floor_tasks_per_s"], unit="inst/s", target="-", ok=None),
        dict(what="energy accounting (energy, carbon, cost) vs the stream run without it (CPU time)", size=size,
             measured=r["energy_cpu_s"], baseline=r["run_cpu_s"], ratio=r["run_cpu_s"] / r["energy_cpu_s"], unit="s",
             target="<= 10% of the run (ratio >= 10x)", ok=r["energy_cpu_s"] <= 0.1 * r["run_cpu_s"]),
        dict(what="stream run peak memory", size=size, measured=r["peak_rss_mb"], baseline=None, ratio=None,
             unit="MB", **_target("<= 4096 MB", r["tasks"], r["peak_rss_mb"] <= 4096)),
    ]
