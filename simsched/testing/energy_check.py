"""An independent check of the energy accounting (:mod:`simsched.simulator.power`).

:func:`reference` integrates the power model by walking each processor's timeline in plain Python —
every elementary segment between two recorded instants gets its state by asking which interval
covers its midpoint — and shares nothing with :func:`~simsched.simulator.power.account` but the
model's semantics (docs/energy.md).  :func:`check` draws one random case from a seed — a random plan
replayed by the SimPy engine with random P-states, or an online run on a stream with failures whose
policy picks a random P-state for each task it places (the engine stretches the attempt and records
its P-state) — puts random power-off intervals into idle gaps, and compares energy, time in each
state, conservation (``busy + idle + off + switching + failed == horizon``) and carbon; it also
checks that every attempt the engine ran lasted ``W x speed_0 / speed_k`` of its P-state (longer
only under a straggler).

Run ``python -m simsched.testing.energy_check --cases 5000`` (docs/energy.md); it prints the number of
cases and of mismatches, and exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from simsched.simulator.engine import Disruptions, execute_plan, run_online
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.power import (
    J_PER_KWH,
    EnergyAccount,
    IntensityTrace,
    Intervals,
    PowerTables,
    ProcessorPower,
    PState,
    account,
    carbon_g,
    energy_of_steps,
)
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan
from simsched.workloads.generators import random_dag


def reference(tables: PowerTables, iv: Intervals, horizon: float) -> dict[str, np.ndarray]:
    """Time in each state and energy (J, lumps included, links excluded) per processor, by a plain walk
    over each processor's elementary segments; also ``segments``: ``[(t0, t1, watts)]`` of all processors
    and ``lumps``: ``[(t, joules)]`` (for carbon).  O(m s^2) for s intervals per processor: a test oracle."""
    m, u = tables.m, tables.time_unit_s
    out = {k: np.zeros(m) for k in ("busy", "idle", "off", "switching", "failed", "energy")}
    segments: list[tuple[float, float, float]] = []
    lumps: list[tuple[float, float]] = []

    def clip(a: float, b: float) -> tuple[float, float]:
        a = min(max(a, 0.0), horizon)
        return a, min(max(b, a), horizon)

    for p in range(m):
        busy = sorted((clip(float(s), float(e)) + (int(k),)) for q, s, e, k in
                      zip(iv.proc.tolist(), iv.start.tolist(), iv.end.tolist(), iv.pstate.tolist()) if q == p)
        down = [clip(s, e) for q, s, e in iv.down.tolist() if int(q) == p]
        offs = [(clip(s, e), e <= horizon, s < horizon) for q, s, e in iv.off.tolist() if int(q) == p]
        # switch windows: before each busy interval whose P-state differs from the previous one
        switches = []
        state, last_end = 0, 0.0
        for s, e, k in busy:
            if k != state:
                free = max([last_end] + [b for a, b in down if b <= s + 1e-12 and a >= last_end - 1e-12]
                           + [b for (a, b), _, _ in offs if b <= s + 1e-12 and a >= last_end - 1e-12])
                w = max(0.0, min(float(tables.switch_latency[p]), s - free))
                switches.append((s - w, s, state))
                out["energy"][p] += tables.switch_energy_j[p]
                lumps.append((s - w, float(tables.switch_energy_j[p])))
            state, last_end = k, e
        for (a, b), up, started in offs:
            if started:
                out["energy"][p] += tables.off_energy_j[p]
                lumps.append((a, float(tables.off_energy_j[p])))
            if up:
                out["energy"][p] += tables.on_energy_j[p]
                lumps.append((b, float(tables.on_energy_j[p])))
        cuts = sorted({0.0, horizon, *[x for s, e, _ in busy for x in (s, e)], *[x for iv_ in down for x in iv_],
                       *[x for (a, b), _, _ in offs for x in (a, b, min(b, a + tables.off_delay[p]),
                                                          max(a, b - tables.on_delay[p]))],
                       *[x for a, b, _ in switches for x in (a, b)]})
        for t0, t1 in zip(cuts, cuts[1:]):
            if t1 <= t0:
                continue
            mid = 0.5 * (t0 + t1)
            dt = t1 - t0
            run = [k for s, e, k in busy if s <= mid < e]
            if run:
                out["busy"][p] += dt
                w = tables.busy_w[p, run[0]]
            elif any(a <= mid < b for a, b in down):
                out["failed"][p] += dt
                w = tables.failed_w[p]
            elif any(a <= mid < b for (a, b), _, _ in offs):
                (a, b), up, _ = next(o for o in offs if o[0][0] <= mid < o[0][1])
                down_end = min(b, a + tables.off_delay[p])
                up_start = max(down_end, b - tables.on_delay[p]) if up else b
                out["switching" if mid < down_end or mid >= up_start else "off"][p] += dt
                w = tables.off_w[p]
            else:
                before = [k for s, e, k in busy if e <= mid]
                k = before[-1] if before else 0
                out["switching" if any(a <= mid < b for a, b, _ in switches) else "idle"][p] += dt
                w = tables.idle_w[p, k]
            out["energy"][p] += w * dt * u
            segments.append((t0, t1, float(w)))
    out["segments"] = segments  # type: ignore[assignment]
    out["lumps"] = lumps  # type: ignore[assignment]
    return out


def reference_carbon(ref: dict, trace: IntensityTrace, time_unit_s: float) -> float:
    """Grams of CO2 from the reference segments: each segment split at the trace's knots and integrated
    by the midpoint rule (exact for step and linear intensities).  O(segments x knots)."""
    g = 0.0
    for t0, t1, w in ref["segments"]:
        cuts = [t0, *[float(x) for x in trace.times if t0 < x < t1], t1]
        for a, b in zip(cuts, cuts[1:]):
            if trace.interpolation == "step":
                i = float(trace.at(np.array([a]))[0])
            else:
                i = float(trace.at(np.array([0.5 * (a + b)]))[0])
            g += w * (b - a) * time_unit_s * i / J_PER_KWH
    for t, j in ref["lumps"]:
        g += j * float(trace.at(np.array([t]))[0]) / J_PER_KWH
    return g


def random_tables(m: int, rng: np.random.Generator) -> PowerTables:
    """Random power for ``m`` processors: 1-3 P-states, switch, on/off and failed parameters, some zero."""
    entries = []
    for _ in range(m):
        states = []
        for _k in range(int(rng.integers(1, 4))):
            idle = float(rng.choice([0.0, rng.uniform(5, 50)]))
            states.append(PState(float(rng.choice([1.0, rng.uniform(0.2, 1.5)])), idle + float(rng.uniform(0, 200)),
                                 idle))
        pick = lambda hi: float(rng.choice([0.0, rng.uniform(0, hi)]))  # noqa: E731
        entries.append(ProcessorPower(tuple(states), pick(10), pick(20) if rng.random() < 0.5 else None,
                                      pick(3), pick(50), pick(4), pick(80), pick(4), pick(80)))
    return PowerTables.build(entries, float(rng.choice([0.0, 0.3])), float(rng.choice([1.0, 0.5, 60.0])))


def _add_offs(iv: Intervals, horizon: float, m: int, rng: np.random.Generator) -> Intervals:
    """``iv`` with random power-off intervals placed inside idle gaps (between busy and down intervals),
    some running past the horizon."""
    offs = []
    for p in range(m):
        taken = sorted([(s, e) for q, s, e in zip(iv.proc.tolist(), iv.start.tolist(), iv.end.tolist()) if q == p]
                       + [(s, e) for q, s, e in iv.down.tolist() if int(q) == p])
        t = 0.0
        for s, e in [*taken, (horizon, np.inf)]:
            if s - t > 1e-6 and rng.random() < 0.4:
                a = t + rng.uniform(0, 0.3) * (s - t)
                b = s - rng.uniform(0, 0.3) * (s - t) if s < horizon or rng.random() < 0.5 else horizon + 5.0
                if b > a:
                    offs.append((p, a, b))
            t = max(t, e)
    off = np.array(offs, dtype=np.float64).reshape(-1, 3)
    return Intervals(iv.task, iv.proc, iv.start, iv.end, iv.pstate, iv.down, off)


class _Greedy:
    """Online policy for the checks: each ready task to its earliest-completion processor, at a random
    P-state of that processor (through the engine: ``(task, processor, k)``) when given ``n_pstates``."""

    name = "greedy"

    def __init__(self, n_pstates: np.ndarray | None = None, rng: np.random.Generator | None = None) -> None:
        self.n_pstates, self.prng = n_pstates, rng

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        pass

    def decide(self, view) -> list[tuple[int, ...]]:
        out: list[tuple[int, ...]] = []
        for t in view.ready:
            p = int(np.argmin(view.completion_times(np.array([t]))[0]))
            if self.n_pstates is None:
                out.append((int(t), p))
            else:
                out.append((int(t), p, int(self.prng.integers(0, self.n_pstates[p]))))
        return out


def stretch_mismatches(problem: Problem, tables: PowerTables, iv: Intervals, completed: np.ndarray,
                       slowed: int) -> list[str]:
    """Completed attempts whose engine duration is not ``W x speed_0 / speed_k`` of the P-state they
    ran at (longer is allowed only when stragglers slowed some task: ``slowed > 0``).  O(attempts)."""
    want = problem.cost_pairs(iv.task[completed], iv.proc[completed]) * tables.slowdown(iv.proc[completed],
                                                                                          iv.pstate[completed])
    got = (iv.end - iv.start)[completed]
    tol = 1e-9 * np.maximum(1.0, want)
    bad = got < want - tol if slowed else np.abs(got - want) > tol
    return [f"attempt of task {int(t)} lasted {g!r}, not {w!r} at P-state {int(k)}"
            for t, g, w, k in zip(iv.task[completed][bad], got[bad], want[bad], iv.pstate[completed][bad])][:3]


def random_case(seed: int) -> tuple[PowerTables, Intervals, float, int, IntensityTrace, list[str]]:
    """One random case: power tables, the intervals a real engine run recorded (plus random off
    intervals), the horizon, the number of tasks, an intensity trace, and the engine's attempts whose
    duration is not the one their P-state gives (:func:`stretch_mismatches`; empty when right)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 5))
    n = int(rng.integers(1, 25))
    procs = [Processor(f"p{i}", speed=float(rng.choice([1.0, 2.0]))) for i in range(m)]
    platform = Platform.uniform(procs, bandwidth=float(rng.uniform(0.5, 5)), latency=float(rng.choice([0.0, 0.5])))
    graph = random_dag(n, ccr=float(rng.choice([0.0, 0.5])), rng=rng)
    problem = Problem(graph, platform)
    tables = random_tables(m, rng)
    if seed % 2 == 0:  # a static plan replayed by the engine, random P-states stretching durations
        plan = Plan(rng.integers(0, m, n), graph.level + rng.random(n))
        pstate = np.minimum(rng.integers(0, 3, n), tables.n_pstates[plan.processor] - 1)
        schedule = execute_plan(problem, plan, tables.slowdown(plan.processor, pstate))
        iv = Intervals.of_schedule(schedule, pstate)
        engine_bad = stretch_mismatches(problem, tables, iv, np.ones(iv.task.size, dtype=bool), 0)
    else:  # an online run with failures (random and traced) and stragglers; the policy picks P-states
        arrival_graph = random_dag(n, ccr=0.3, rng=rng)
        problem = Problem(arrival_graph, platform)
        d = Disruptions(failure_rate=float(rng.uniform(0.0, 0.05)), repair_time=float(rng.uniform(0.5, 10)),
                        slowdown_rate=float(rng.uniform(0, 0.02)),
                        down_trace=((0, float(rng.uniform(0, 5)), float(rng.uniform(6, 12))),))
        schedule, stats = run_online(problem, _Greedy(tables.n_pstates, rng), None, np.random.default_rng(seed), d,
                                     np.random.default_rng(seed + 1), tables.speed[:, :1] / tables.speed)
        iv = Intervals.of_schedule(schedule, stats.pstate, stats.log)  # each attempt at the P-state it ran at
        completed = np.array([ok for *_, ok in stats.log.attempts], dtype=bool)
        engine_bad = stretch_mismatches(problem, tables, iv, completed, stats.slowed_tasks)
    horizon = float(iv.end.max()) * float(rng.choice([1.0, 1.0, 1.3]))
    iv = _add_offs(iv, horizon, m, rng)
    knots = np.concatenate([[0.0], np.sort(rng.uniform(0, horizon * 1.2, int(rng.integers(0, 6))))])
    knots = np.unique(knots)
    trace = IntensityTrace(knots, rng.uniform(0, 800, knots.size), "step" if rng.random() < 0.5 else "linear")
    return tables, iv, horizon, problem.n_tasks, trace, engine_bad


def check(seed: int) -> list[str]:
    """The mismatches of case ``seed`` between :func:`~simsched.simulator.power.account` and
    :func:`reference` (empty when they agree): energy, every state's time, conservation, the power
    step function's integral and carbon, each to a relative 1e-9."""
    tables, iv, horizon, n, trace, engine_bad = random_case(seed)
    acc: EnergyAccount = account(tables, iv, horizon, n)
    ref = reference(tables, iv, horizon)
    bad = [f"seed {seed}: {line}" for line in engine_bad]
    tol = 1e-9 * max(1.0, horizon)

    def close(a: np.ndarray, b: np.ndarray, scale: float) -> bool:
        return bool(np.all(np.abs(np.asarray(a) - np.asarray(b)) <= 1e-9 * max(1.0, scale) + 1e-12))

    for name, mine in (("busy", acc.busy.sum(axis=1)), ("idle", acc.idle), ("off", acc.off),
                       ("switching", acc.switching), ("failed", acc.failed)):
        if not close(mine, ref[name], horizon):
            bad.append(f"seed {seed}: {name} time {mine} != reference {ref[name]}")
    if not np.all(np.abs(acc.time_in_states() - horizon) <= tol * 10):
        bad.append(f"seed {seed}: states sum to {acc.time_in_states()}, not the horizon {horizon}")
    scale = float(np.abs(ref["energy"]).sum())
    if not close(acc.energy_j, ref["energy"], scale):
        bad.append(f"seed {seed}: energy {acc.energy_j} != reference {ref['energy']}")
    lumps = float(np.sum(acc.lumps[1]))
    if abs(energy_of_steps(acc.steps) * tables.time_unit_s + lumps - acc.energy_j.sum()) > 1e-9 * max(1.0, scale):
        bad.append(f"seed {seed}: the power step function integrates to something else than the energy")
    mine_g = carbon_g(acc, tables, trace)
    ref_g = reference_carbon(ref, trace, tables.time_unit_s)
    if abs(mine_g - ref_g) > 1e-9 * max(1.0, abs(ref_g)):
        bad.append(f"seed {seed}: carbon {mine_g} != reference {ref_g}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    mismatches = []
    for s in range(args.seed, args.seed + args.cases):
        mismatches.extend(check(s))
    for line in mismatches[:10]:
        print(line)
    print(f"{args.cases} cases ({(args.cases + 1) // 2} static plans, {args.cases // 2} online runs with failures), "
          f"{len(mismatches)} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
