"""DeepSched training data: problems from workload generators, labelled by HEFT through the simulator.

Each instance is drawn from a :class:`~simsched.learned.deepsched.config.Family` (generator,
sizes, parameters) on a random platform (processor count, speeds, cores, memory and network varied
between instances), labelled with HEFT's processor per task and the *simulated* start and finish of
HEFT's plan (:func:`~simsched.simulator.evaluate.evaluate_plan`, equal to the SimPy engine), and
stored as features + labels in compressed shards (``np.savez_compressed``).  Splits: ``train``,
``val``, ``test`` from the seen families, ``unseen`` from the held-out families; every instance is
regenerable from ``(family, seed)``, which the shards keep, so evaluation can rebuild the problem
and run it in the simulator.

Unlike the paper's public code (random labels), the labels here are HEFT's real decisions.
Cost: one HEFT run per instance, O(n m + e m) each.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from simsched import limits
from simsched.errors import SimschedError
from simsched.fileio import atomic_path
from simsched.learned.deepsched.config import DataConfig, Family, PlatformSpec
from simsched.learned.deepsched.features import FEATURE_VERSION, Features, extract
from simsched.simulator.platform import Platform, Processor
from simsched.simulator.problem import Problem

SPLITS = ("train", "val", "test", "unseen")
_SPLIT_CODE = {s: i for i, s in enumerate(SPLITS)}
_ARRAYS = ("task", "machine", "pair", "eligible", "edges", "edge_data", "proc", "times")


def random_platform(spec: PlatformSpec, m: int, rng: np.random.Generator, memory: bool) -> Platform:
    """``m`` processors ``p0..`` with speeds, cores and (optionally) memory drawn from ``spec``, each
    its own host, one uniform network.  O(m^2)."""
    speed = rng.uniform(*spec.speed, m)
    cores = rng.choice(spec.cores, m)
    mem = rng.choice(spec.memory, m) if memory else np.full(m, np.inf)
    procs = [Processor(f"p{j}", speed=float(speed[j]), cores=int(cores[j]), memory=float(mem[j])) for j in range(m)]
    return Platform.uniform(procs, bandwidth=float(rng.uniform(*spec.bandwidth)),
                            latency=float(rng.uniform(*spec.latency)))


def make_problem(family: Family, spec: PlatformSpec, seed: int, tasks: int | None = None) -> Problem:
    """The problem of ``family`` for ``seed`` (deterministic); ``tasks`` overrides the drawn size."""
    from simsched.workloads.generators import GENERATORS

    rng = np.random.default_rng(seed)
    gen = GENERATORS.get(family.generator) or GENERATORS.get(family.generator.replace("_", ""))
    if gen is None:
        raise SimschedError(f"data family {family.name!r}: unknown generator {family.generator!r} "
                            f"(choose from {', '.join(GENERATORS)})")
    lo, hi = family.tasks
    if tasks is not None:
        n = int(tasks)
    elif family.log_sizes:  # log-uniform: as many instances of 10-100 tasks as of 100-1,000
        n = int(round(np.exp(rng.uniform(np.log(lo), np.log(hi + 1)))))
        n = min(max(n, lo), hi)
    else:
        n = int(rng.integers(lo, hi + 1))
    m = int(rng.integers(family.processors[0], family.processors[1] + 1))
    params = {k: (v[int(rng.integers(len(v)))] if isinstance(v, list) else v) for k, v in family.params.items()}
    explicit = bool(rng.random() < family.explicit_costs)
    accepts = inspect.signature(gen).parameters
    if "tasks" in accepts:  # size-parameterised generators (tiles, points, ...) take their size from params
        params["tasks"] = n
    elif tasks is not None:  # the size parameter whose task count is closest to the one asked for
        params.update(size_parameter(family.generator, gen, int(tasks)))
    if "processors" in accepts:
        params["processors"] = m if explicit else None
    try:
        graph = gen(rng=rng, **params)
    except TypeError as exc:
        raise SimschedError(f"data family {family.name!r}: generator {family.generator!r}: {exc}") from None
    platform = random_platform(spec, m, rng, family.memory)
    if family.memory and graph.memory.any():
        graph = graph.with_(memory=np.minimum(graph.memory, platform.memory.max()))
    return Problem(graph, platform)


_SIZE_PARAMS = {"tiles": range(2, 61), "points": [2 ** k for k in range(1, 13)], "matrix_size": range(3, 151)}
_SIZE_CACHE: dict[tuple[str, int], dict[str, int]] = {}


def size_parameter(name: str, gen: Callable, tasks: int) -> dict[str, int]:
    """``{parameter: value}`` giving a size-parameterised generator (``tiles``, ``points``,
    ``matrix_size``) the task count closest to ``tasks``; empty when it has none of them."""
    key = (name, tasks)
    if key not in _SIZE_CACHE:
        accepts = inspect.signature(gen).parameters
        best: dict[str, int] = {}
        for param, values in _SIZE_PARAMS.items():
            if param not in accepts:
                continue
            gap = None
            for v in values:
                n = gen(**{param: v}, rng=np.random.default_rng(0)).n_tasks
                if gap is None or abs(n - tasks) < gap:
                    gap, best = abs(n - tasks), {param: v}
                if n >= tasks:
                    break
        _SIZE_CACHE[key] = best
    return _SIZE_CACHE[key]


def label(problem: Problem) -> tuple[Features, np.ndarray, np.ndarray]:
    """Features, HEFT's processor per position and the simulated normalised (start, finish)."""
    from simsched.schedulers.heft import heft_schedule
    from simsched.simulator.evaluate import evaluate_plan

    f = extract(problem)
    plan = heft_schedule(problem)
    sched = evaluate_plan(problem, plan)
    return f, sched.processor[f.order].astype(np.int64), f.times_to_targets(sched.start, sched.finish)


def instance_seed(base: int, split: str, i: int) -> int:
    """Seed of instance ``i`` of ``split`` (independent streams per split)."""
    return int(np.random.SeedSequence([base, _SPLIT_CODE[split], i]).generate_state(1)[0])


def split_specs(cfg: DataConfig, split: str) -> list[tuple[int, int]]:
    """(family index, seed) of every instance of ``split``; families round-robin.  Unseen families
    are numbered after the seen ones."""
    count = {"train": cfg.train, "val": cfg.val, "test": cfg.test, "unseen": cfg.test_unseen}[split]
    fams = cfg.seen if split != "unseen" else cfg.unseen
    offset = 0 if split != "unseen" else len(cfg.seen)
    if not fams:
        return []
    return [(offset + i % len(fams), instance_seed(cfg.seed, split, i)) for i in range(count)]


def family_of(cfg: DataConfig, index: int) -> Family:
    return (cfg.seen + cfg.unseen)[index]


def generate_split(cfg: DataConfig, split: str, out_dir: Path,
                   progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Generate, label and write the shards of ``split``; returns the shard paths.  O(instances x HEFT)."""
    specs = split_specs(cfg, split)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(0, len(specs), cfg.shard_size):
        chunk = specs[k:k + cfg.shard_size]
        records = []
        for j, (fam, seed) in enumerate(chunk):
            problem = make_problem(family_of(cfg, fam), cfg.platform, seed)
            f, proc, times = label(problem)
            records.append(dict(task=f.task, machine=f.machine, pair=f.pair, eligible=f.eligible, edges=f.edges,
                                edge_data=f.edge_data, proc=proc, times=times, family=fam, seed=seed))
            if progress:
                progress(k + j + 1, len(specs))
        path = out_dir / f"{split}-{k // cfg.shard_size:04d}.npz"
        write_shard(path, records)
        paths.append(path)
    return paths


def write_shard(path: Path, records: list[dict]) -> None:
    """One compressed shard: each array concatenated along its first axis, with per-instance sizes."""
    arrays: dict[str, np.ndarray] = {"version": np.array(FEATURE_VERSION)}
    for key in _ARRAYS:
        flat = key in ("pair", "eligible")  # (n, m, ...) stored as (n m, ...)
        arrays[key] = np.concatenate([r[key].reshape((-1,) + r[key].shape[2:]) if flat else r[key] for r in records])
    arrays["n"] = np.array([r["task"].shape[0] for r in records])
    arrays["m"] = np.array([r["machine"].shape[0] for r in records])
    arrays["e"] = np.array([r["edges"].shape[0] for r in records])
    arrays["family"] = np.array([r["family"] for r in records])
    arrays["seed"] = np.array([r["seed"] for r in records], dtype=np.uint64)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:  # a handle: savez would append ".npz" to a name
        np.savez_compressed(fh, **arrays)


def read_shard(path: Path) -> Iterator[dict]:
    """The instances of one shard as dicts of arrays (the inverse of :func:`write_shard`); a regular file
    within ``max_file_mb`` (a FIFO, folder or device in its place is refused, never opened), no pickles."""
    limits.check_file_size(path)
    try:
        z = np.load(path, allow_pickle=False)
        if int(z["version"]) != FEATURE_VERSION:
            raise SimschedError(f"{path}: shard of feature version {int(z['version'])}, this simsched "
                                f"uses {FEATURE_VERSION}; regenerate the data")
        data = {k: z[k] for k in z.files}
    except SimschedError:
        raise
    except Exception as exc:
        raise SimschedError(f"{path}: cannot read the data shard: {exc}") from None
    n, m, e = data["n"], data["m"], data["e"]
    cn, cm, ce, cnm = (np.concatenate([[0], np.cumsum(x)]) for x in (n, m, e, n * m))
    for i in range(n.size):
        tn, tm = slice(cn[i], cn[i + 1]), slice(cm[i], cm[i + 1])
        yield dict(task=data["task"][tn], machine=data["machine"][tm],
                   pair=data["pair"][cnm[i]:cnm[i + 1]].reshape(n[i], m[i], -1),
                   eligible=data["eligible"][cnm[i]:cnm[i + 1]].reshape(n[i], m[i]),
                   edges=data["edges"][ce[i]:ce[i + 1]],
                   edge_data=data["edge_data"][ce[i]:ce[i + 1]], proc=data["proc"][tn], times=data["times"][tn],
                   family=int(data["family"][i]), seed=int(data["seed"][i]))


def load_split(data_dir: Path, split: str, files: list[str] | None = None) -> list[dict]:
    """Every instance of ``split`` under ``data_dir`` (empty when there is none): of the shards named
    in ``files`` when given (the manifest's, so another ``*.npz`` in the folder is never mixed in),
    else of every ``SPLIT-*.npz``."""
    names = sorted(data_dir.glob(f"{split}-*.npz")) if files is None else \
        [data_dir / f for f in sorted(files) if f.startswith(f"{split}-") and f.endswith(".npz")]
    return [r for p in names for r in read_shard(p)]


def record_of(f: Features) -> dict:
    """A label-free record of features (what the scheduler feeds the network)."""
    return dict(task=f.task, machine=f.machine, pair=f.pair, eligible=f.eligible, edges=f.edges,
                edge_data=f.edge_data)


def family_labels(family: Family) -> list[str]:
    """The workload family names a family's instances go by: the generator, and for WfChef
    workflows ``workflow:RECIPE`` per recipe."""
    gen = family.generator.replace("_", "") if family.generator not in ("fork_join", "series_parallel",
                                                                         "erdos_renyi", "gaussian_elimination") \
        else family.generator
    if gen != "workflow":
        return [gen]
    recipes = family.params.get("recipe", "montage")
    return [f"workflow:{r}" for r in (recipes if isinstance(recipes, list) else [recipes])]


def training_range(cfg: DataConfig, records: list[dict]) -> dict:
    """What the training instances span: task and processor counts, workload families, CCR (mean
    transfer time over mean execution time) and structure statistics
    (:func:`~simsched.learned.training_range.structure_span`), for a checkpoint's out-of-range
    warning.  O(sum of n m + e)."""
    from simsched.learned.training_range import structure_span
    from simsched.workloads.taskgraph import TaskGraph

    n = [r["task"].shape[0] for r in records]
    m = [r["machine"].shape[0] for r in records]
    ccr = [float(r["edge_data"].mean()) if r["edge_data"].size else 0.0 for r in records]
    fams = sorted({lab for i in {r["family"] for r in records} for lab in family_labels(family_of(cfg, i))})
    return {"tasks": [int(min(n)), int(max(n))], "processors": [int(min(m)), int(max(m))],
            "families": fams, "ccr": [round(min(ccr), 4), round(max(ccr), 4)],
            "structure": structure_span(TaskGraph([str(i) for i in range(r["task"].shape[0])], r["edges"])
                                        for r in records)}
