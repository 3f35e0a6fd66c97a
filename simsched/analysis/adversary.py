"""Adversarial instance search: where is scheduler A as much worse than scheduler B as possible?

Simulated annealing over problem instances, after PISA (Coleman & Krishnamachari, "PISA: An
Adversarial Approach to Comparing Task Graph Scheduling Algorithms", 2024): the state is one
instance — a DAG on ``tasks`` tasks (edges only from a lower to a higher index, so it stays
acyclic), an explicit execution time per task and processor, data per edge and a bandwidth per
pair of processors — and the energy is the ratio ``makespan(A) / makespan(B)``, both measured by
the SimPy engine exactly as ``simsched run`` measures them (same seed streams).  A move changes one
thing: a task's time on one processor, all of a task's times, an edge's data, an edge's presence,
or a link's bandwidth.  A worse instance is accepted with probability
``exp((log r' - log r) / T)``, the temperature falling geometrically from ``T0`` to ``T1`` over the
iteration budget (or the time budget); after ``patience`` moves without a new best the walk
restarts from the best instance.

Values live on a grid of 0.001 within stated limits (:data:`LIMITS`) so the instance written as a
scenario is short and replays to the same floats (:func:`write_found`, checked by :func:`replay`).  Cost per
iteration: one run of each scheduler on a ``tasks`` x ``processors`` instance.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simsched.errors import SimschedError
from simsched.simulator.platform import Link, Platform, Processor
from simsched.simulator.problem import Problem
from simsched.workloads.taskgraph import TaskGraph

if TYPE_CHECKING:
    from simsched.run.runner import RunReport

LIMITS = {"cost": (0.1, 1.0), "data": (0.0, 1.0), "bandwidth": (0.2, 1.0)}
"""Range of every searched value: execution times, edge data, link bandwidths (grid 0.001)."""
GRID = 1000.0


@dataclass(frozen=True)
class Instance:
    """A searchable instance: ``cost`` (n, m), ``adjacency`` (n, n) upper-triangular bool, ``data``
    (n, n) per edge (ignored where there is no edge), ``bandwidth`` (m, m) symmetric."""

    cost: np.ndarray
    adjacency: np.ndarray
    data: np.ndarray
    bandwidth: np.ndarray

    @property
    def n_tasks(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_processors(self) -> int:
        return int(self.cost.shape[1])

    def task_names(self) -> list[str]:
        return [f"t{i}" for i in range(self.n_tasks)]

    def processor_names(self) -> list[str]:
        return [f"P{p + 1}" for p in range(self.n_processors)]

    def edges(self) -> list[tuple[str, str, float]]:
        names = self.task_names()
        src, dst = np.nonzero(self.adjacency)
        return [(names[a], names[b], float(self.data[a, b])) for a, b in zip(src.tolist(), dst.tolist())]

    def links(self) -> list[Link]:
        names, m = self.processor_names(), self.n_processors
        return [Link(names[p], names[q], float(self.bandwidth[p, q])) for p in range(m) for q in range(p + 1, m)]

    def problem(self) -> Problem:
        """The :class:`Problem`, built the way a scenario with this instance inline is loaded."""
        tasks = [{"name": name, "cost": [float(c) for c in row]} for name, row in zip(self.task_names(), self.cost)]
        graph = TaskGraph.from_named(tasks, self.edges())
        platform = Platform.uniform([Processor(name=p) for p in self.processor_names()], 1.0, 0.0,
                                    links=self.links())
        return Problem(graph, platform)

    def scenario_yaml(self, *, name: str, description: str, schedulers: tuple[str, ...], seed: int) -> str:
        """A scenario (YAML text) with this instance inline (explicit costs, edges with data, one
        link per pair of processors) comparing ``schedulers`` without noise."""
        import yaml

        def flow(rec: object) -> str:
            return yaml.safe_dump(rec, default_flow_style=True, width=10**9, sort_keys=False).strip()

        lines = [f"name: {name}", "description: >-"]
        lines += [f"  {line}" for line in description.strip().splitlines()]
        lines += [f"seed: {seed}", "repetitions: 1", "platform:",
                  "  processors: " + flow([{"name": p} for p in self.processor_names()]),
                  "  network: {bandwidth: 1.0, latency: 0.0}", "  links:" if self.links() else "  links: []"]
        lines += [f"    - {flow({'from': lk.a, 'to': lk.b, 'bandwidth': lk.bandwidth})}" for lk in self.links()]
        lines += ["workload:", "  tasks:"]
        lines += [f"    - {flow({'name': t, 'cost': [float(c) for c in row]})}"
                  for t, row in zip(self.task_names(), self.cost)]
        edges = self.edges()
        lines += ["  edges:" if edges else "  edges: []"]
        lines += [f"    - {flow({'from': a, 'to': b, 'data': d})}" for a, b, d in edges]
        lines += ["noise: {model: none}", "schedulers: " + flow(list(schedulers))]
        return "\n".join(lines) + "\n"


def _grid(x: np.ndarray | float, what: str) -> np.ndarray:
    lo, hi = LIMITS[what]
    return np.clip(np.round(np.asarray(x, dtype=np.float64) * GRID) / GRID, lo, hi)


def random_instance(tasks: int, processors: int, rng: np.random.Generator, edge_probability: float = 0.3) -> Instance:
    """A random start: each forward pair an edge with ``edge_probability``; values uniform in
    their :data:`LIMITS`."""
    n, m = tasks, processors
    adjacency = np.triu(rng.random((n, n)) < edge_probability, k=1)
    bw = _grid(rng.uniform(*LIMITS["bandwidth"], size=(m, m)), "bandwidth")
    bw = np.triu(bw, 1)
    return Instance(_grid(rng.uniform(*LIMITS["cost"], size=(n, m)), "cost"), adjacency,
                    _grid(rng.uniform(*LIMITS["data"], size=(n, n)), "data"), bw + bw.T + np.eye(m))


def perturb(inst: Instance, rng: np.random.Generator) -> Instance:
    """One random move (see the module docstring).  O(n^2 + m^2) for the copy."""
    n, m = inst.n_tasks, inst.n_processors
    moves = ["cost", "row", "data", "edge"] + (["bandwidth"] if m > 1 else [])
    move = moves[int(rng.integers(len(moves)))]
    if move in ("cost", "row"):
        cost = inst.cost.copy()
        i = int(rng.integers(n))
        if move == "cost":
            p = int(rng.integers(m))
            cost[i, p] = _grid(cost[i, p] * math.exp(rng.normal(0, 0.7)), "cost")
        else:
            cost[i] = _grid(cost[i] * math.exp(rng.normal(0, 0.7)), "cost")
        return replace(inst, cost=cost)
    if move == "bandwidth":
        p, q = sorted(rng.choice(m, size=2, replace=False).tolist())
        bw = inst.bandwidth.copy()
        bw[p, q] = bw[q, p] = _grid(bw[p, q] * math.exp(rng.normal(0, 0.7)), "bandwidth")
        return replace(inst, bandwidth=bw)
    if n < 2:
        return inst
    a, b = sorted(rng.choice(n, size=2, replace=False).tolist())
    if move == "edge":
        adjacency = inst.adjacency.copy()
        adjacency[a, b] = not adjacency[a, b]
        return replace(inst, adjacency=adjacency)
    data = inst.data.copy()
    src, dst = np.nonzero(inst.adjacency)
    if src.size:
        k = int(rng.integers(src.size))
        a, b = int(src[k]), int(dst[k])
    fresh = rng.uniform(*LIMITS["data"]) if rng.random() < 0.3 else data[a, b] * math.exp(rng.normal(0, 0.7))
    data[a, b] = _grid(fresh, "data")
    return replace(inst, data=data)


@dataclass
class SearchResult:
    """The worst instance found, its makespans, and what the search did."""

    instance: Instance
    makespan_a: float
    makespan_b: float
    iterations: int = 0
    accepted: int = 0
    rejected_errors: int = 0
    first_error: str = ""
    seconds: float = 0.0
    history: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.makespan_a / self.makespan_b


Evaluate = Callable[[Problem], float]
Progress = Callable[[int, float, float], None]
"""``progress(iteration, elapsed seconds, best ratio)``, called after every iteration."""


def makespan_of(spec: object, seed: int) -> Evaluate:
    """``problem -> simulated makespan`` of a scheduler spec, with the repetition streams
    ``simsched run`` uses for ``seed`` (so a scenario written with that seed replays the value)."""
    from simsched.run.runner import repetition_streams, run_once

    def evaluate(problem: Problem) -> float:
        schedule, _ = run_once(problem, spec, None, repetition_streams(seed)[0])
        return schedule.makespan  # every task arrives at 0: the makespan `simsched run` reports

    return evaluate


def anneal(evaluate_a: Evaluate, evaluate_b: Evaluate, *, tasks: int, processors: int, seed: int,
           iterations: int | None = None, seconds: float | None = None, t0: float = 0.1, t1: float = 0.002,
           patience: int = 300, progress: Progress | None = None) -> SearchResult:
    """Simulated annealing for the instance maximising ``evaluate_a / evaluate_b`` (see the module
    docstring).  Stops after ``iterations`` moves or ``seconds`` of wall time, whichever first (at
    least one must be given).  With ``iterations`` only, the same seed gives the same result.
    A candidate on which a scheduler raises is rejected (counted in ``rejected_errors``)."""
    if iterations is None and seconds is None:
        raise SimschedError("give an iteration or a time budget")
    if tasks < 1 or processors < 1:
        raise SimschedError(f"need at least 1 task and 1 processor, got {tasks} and {processors}")
    rng = np.random.default_rng(seed)
    began = time.perf_counter()

    def score(inst: Instance) -> tuple[float, float] | None:
        problem = inst.problem()
        try:
            return evaluate_a(problem), evaluate_b(problem)
        except SimschedError as exc:
            result.rejected_errors += 1
            result.first_error = result.first_error or str(exc)
            return None

    current = random_instance(tasks, processors, rng)
    result = SearchResult(current, float("nan"), float("nan"))
    first = score(current)
    if first is None:
        raise SimschedError(f"a scheduler failed on the first instance: {result.first_error}")
    result.makespan_a, result.makespan_b = first
    cur_energy = math.log(first[0] / first[1])
    since_best, i = 0, 0
    while True:
        elapsed = time.perf_counter() - began
        if (iterations is not None and i >= iterations) or (seconds is not None and elapsed >= seconds):
            break
        frac = i / iterations if iterations is not None else elapsed / seconds
        if seconds is not None and iterations is not None:
            frac = max(i / iterations, elapsed / seconds)
        temperature = t0 * (t1 / t0) ** min(frac, 1.0)
        candidate = perturb(current, rng)
        scored = score(candidate)
        i += 1
        if scored is not None:
            energy = math.log(scored[0] / scored[1])
            if energy >= cur_energy or rng.random() < math.exp((energy - cur_energy) / temperature):
                current, cur_energy = candidate, energy
                result.accepted += 1
            if energy > math.log(result.ratio) + 1e-12:
                result.instance, (result.makespan_a, result.makespan_b) = candidate, scored
                since_best = 0
            else:
                since_best += 1
        if since_best >= patience:
            current, cur_energy, since_best = result.instance, math.log(result.ratio), 0
        result.history.append(result.ratio)
        if progress is not None:
            progress(i, time.perf_counter() - began, result.ratio)
    result.iterations = i
    result.seconds = time.perf_counter() - began
    return result


def write_found(found: SearchResult, path: Path, a: str, b: str, *, name: str, tasks: int, processors: int,
                seed: int) -> None:
    """Write the worst instance of a search of ``a`` against ``b`` as a scenario at ``path`` (atomically):
    inline tasks with explicit costs, both schedulers, the seed, and a description saying how it was found
    and within which limits.  O(tasks x processors + edges)."""
    from simsched.fileio import atomic_write_text

    limits = ", ".join(f"{k} in [{lo:g}, {hi:g}]" for k, (lo, hi) in LIMITS.items())
    description = (f"Found by `simsched adversary {a} {b} --tasks {tasks} --processors {processors} "
                   f"--seed {seed}` after {found.iterations} iterations: {a}'s makespan is "
                   f"{found.ratio:.4g} times {b}'s.\nSearch limits: {limits}.")
    atomic_write_text(path, found.instance.scenario_yaml(name=name, description=description, schedulers=(a, b),
                                                         seed=seed))


def replay(path: Path, makespan_a: float, makespan_b: float) -> RunReport:
    """Load the written scenario at ``path`` and run it as ``simsched run`` does; the makespans must be the
    search's (else the instance did not survive the round trip: a bug, :class:`RuntimeError`, not a user
    error).  O(one run of each scheduler)."""
    from simsched.run.runner import run_scenario
    from simsched.scenario import load_scenario

    report = run_scenario(load_scenario(path))
    got = [report.rows_of(label)[0]["makespan"] for label in report.schedulers]
    if got != [makespan_a, makespan_b]:
        raise RuntimeError(f"the written scenario replays to makespans {got}, the search measured "
                           f"{[makespan_a, makespan_b]}")
    return report
