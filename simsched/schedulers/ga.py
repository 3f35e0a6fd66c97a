"""A genetic algorithm over (processor, priority) chromosomes, with whole populations evaluated at once.

The baseline of the DeepSched paper: Kumar et al.'s genetic algorithm for process scheduling,
extended to heterogeneous processors and task graphs.

* **Chromosome**: a processor per task (always an eligible one) and a priority key per task.  The
  keys are decoded into a topological sequence by
  :func:`~simsched.simulator.evaluate_batch.sequence_from_keys`, so no crossover or mutation can
  break precedence; each processor runs its tasks in sequence order, as early as possible.
* **Fitness** (minimised): average waiting time (start minus ready; the DeepSched paper's eq. 1) by
  default, or makespan or average turnaround (``objective``).
* **Operators**: random initialisation (optionally plus the HEFT solution as one individual),
  tournament selection, single-point crossover applied to both genes of a task together, per-gene
  mutation (a new random eligible processor; a Gaussian nudge of the key), elitism.
* **Evaluation**: every generation's population in one vectorised pass
  (:func:`~simsched.simulator.evaluate_batch.evaluate_sequences`).

With ``seed_heft`` the HEFT plan is in the first population and elitism keeps the best individual,
so the result is never worse than HEFT on the chosen objective.

Complexity: O(generations x population x (n D + n log n)) numpy work, D the largest in-degree.
"""

from __future__ import annotations

import time

import numpy as np

from simsched.schedulers.heft import heft_schedule
from simsched.simulator.evaluate_batch import Objective, evaluate_sequences, objective_values, sequence_from_keys
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Plan


class Population:
    """Chromosomes of a problem: ``processor`` (P, n) ints and ``keys`` (P, n) floats, with the
    vectorised evaluation and variation operators.  Randomness only from the ``rng`` passed in."""

    def __init__(self, problem: Problem, objective: Objective = "waiting") -> None:
        self.problem = problem
        self.objective = objective
        elig = problem.eligible
        self.n_eligible = elig.sum(axis=1)
        # eligible processors of each task first, in index order (stable sort of "not eligible")
        self.eligible_list = np.argsort(~elig, axis=1, kind="stable")

    def random_processors(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        """(P, n) eligible processors drawn uniformly per task.  O(P n)."""
        pick = (rng.random(shape) * self.n_eligible[None, :]).astype(np.int64)
        return self.eligible_list[np.arange(shape[1])[None, :], pick]

    def evaluate(self, processor: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fitness (P,), sequences (P, n)) of a population, all at once."""
        seq = sequence_from_keys(self.problem, keys)
        times = evaluate_sequences(self.problem, processor, seq)
        return objective_values(self.problem, times, self.objective), seq

    def evaluate_one_by_one(self, processor: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """(P,) fitness computed chromosome by chromosome with the single-plan evaluator — the
        baseline the vectorised :meth:`evaluate` is benchmarked against."""
        from simsched.simulator.evaluate import evaluate_plan

        seq = sequence_from_keys(self.problem, keys)
        out = np.empty(len(processor))
        for r in range(len(processor)):
            pos = np.empty(seq.shape[1])
            pos[seq[r]] = np.arange(seq.shape[1])
            s = evaluate_plan(self.problem, Plan(processor[r], pos))
            m = s.metrics(self.problem)
            out[r] = {"waiting": m.avg_waiting, "turnaround": m.avg_turnaround, "makespan": m.makespan}[self.objective]
        return out


def ga_schedule(
    problem: Problem,
    rng: np.random.Generator,
    *,
    population: int = 100,
    generations: int = 1000,
    time_limit_s: float = 10.0,
    objective: Objective = "waiting",
    crossover_rate: float = 0.9,
    mutation_rate: float | None = None,
    key_sigma: float = 0.05,
    tournament: int = 3,
    elite: int = 2,
    seed_heft: bool = True,
) -> Plan:
    """Run the GA; stop after ``generations`` or ``time_limit_s`` seconds of CPU (``time.process_time``:
    a loaded machine runs the same generations as an idle one, so a pinned result does not depend on
    the load), whichever comes first.

    ``mutation_rate`` is the per-gene probability (default ``1/n``).  Returns the best plan with
    its times and ``info``: objective, fitness, generations, evaluations, elapsed seconds and, when
    seeded, HEFT's fitness.  O(generations x population x (n D + n log n)).
    """
    clock = time.process_time()
    n = problem.n_tasks
    size = max(2, int(population))
    elite = min(max(int(elite), 1 if seed_heft else 0), size - 1)
    mut = 1.0 / n if mutation_rate is None else float(mutation_rate)
    pop = Population(problem, objective)

    proc = pop.random_processors(rng, (size, n))
    keys = rng.random((size, n))
    heft_fitness = None
    if seed_heft:
        heft = heft_schedule(problem)
        proc[0] = heft.processor
        keys[0] = np.argsort(np.argsort(heft.order, kind="stable"), kind="stable") / n
    fit, seq = pop.evaluate(proc, keys)
    if seed_heft:
        heft_fitness = float(fit[0])
    evaluations, gen = size, 0
    n_child = size - elite
    tasks = np.arange(n)
    while gen < generations and time.process_time() - clock < time_limit_s:
        gen += 1
        best = np.argsort(fit, kind="stable")[:elite]
        # tournament selection of two parents per child
        cand = rng.integers(0, size, (2, n_child, max(1, tournament)))
        winner = np.take_along_axis(cand, np.argmin(fit[cand], axis=2)[..., None], axis=2)[..., 0]
        a, b = winner
        # single-point crossover: genes of tasks before the cut from parent a, the rest from b
        cut = rng.integers(1, max(2, n), n_child)
        take_b = (tasks[None, :] >= cut[:, None]) & (rng.random(n_child) < crossover_rate)[:, None]
        child_proc = np.where(take_b, proc[b], proc[a])
        child_keys = np.where(take_b, keys[b], keys[a])
        # mutation
        flip = rng.random((n_child, n)) < mut
        if flip.any():
            child_proc = np.where(flip, pop.random_processors(rng, (n_child, n)), child_proc)
        nudge = rng.random((n_child, n)) < mut
        child_keys = child_keys + nudge * rng.normal(0.0, key_sigma, (n_child, n))
        child_fit, child_seq = pop.evaluate(child_proc, child_keys)
        evaluations += n_child
        proc = np.concatenate([proc[best], child_proc])
        keys = np.concatenate([keys[best], child_keys])
        seq = np.concatenate([seq[best], child_seq])
        fit = np.concatenate([fit[best], child_fit])
    i = int(np.argmin(fit))
    order = np.empty(n)
    order[seq[i]] = np.arange(n)
    times = evaluate_sequences(problem, proc[i], seq[i])
    info = {"objective": objective, "fitness": float(fit[i]), "generations": gen, "evaluations": evaluations,
            "elapsed_s": time.process_time() - clock}
    if heft_fitness is not None:
        info["heft_fitness"] = heft_fitness
    return Plan(proc[i], order, times.start[0], times.finish[0], info)


class GA:
    """Genetic algorithm (processor + topological priority per task), vectorised population fitness.

    Baseline of the DeepSched paper, after Kumar et al.'s GA for process scheduling, extended to
    heterogeneous processors.  O(generations x population x (n D + n log n)); stops at
    ``generations`` or ``time_limit_s`` CPU seconds, whichever comes first; randomness only from ``rng``.

    Parameters:
        population, generations, time_limit_s: search budget (``time_limit_s`` in CPU seconds).
        objective: ``waiting`` (average waiting time, the paper's eq. 1), ``makespan`` or
            ``turnaround``.
        crossover_rate, mutation_rate (per gene, default 1/n), key_sigma (std of a key nudge),
        tournament (size), elite (individuals kept unchanged).
        seed_heft: put the HEFT plan in the first population (never worse than HEFT then);
            ``False`` gives the paper's purely random start.
    """

    name = "ga"

    def __init__(self, *, population: int = 100, generations: int = 1000, time_limit_s: float = 10.0,
                 objective: Objective = "waiting", crossover_rate: float = 0.9,
                 mutation_rate: float | None = None, key_sigma: float = 0.05, tournament: int = 3,
                 elite: int = 2, seed_heft: bool = True) -> None:
        if population < 2 or generations < 0 or time_limit_s <= 0:
            raise ValueError("population must be >= 2, generations >= 0 and time_limit_s > 0")
        self.params = dict(population=population, generations=generations, time_limit_s=time_limit_s,
                           objective=objective, crossover_rate=crossover_rate, mutation_rate=mutation_rate,
                           key_sigma=key_sigma, tournament=tournament, elite=elite, seed_heft=seed_heft)

    def plan(self, problem: Problem, rng: np.random.Generator | None = None) -> Plan:
        return ga_schedule(problem, rng if rng is not None else np.random.default_rng(0), **self.params)
