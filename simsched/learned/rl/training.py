"""The stages of ``simsched train rl CONFIG.yaml``: train the model-free agent, train the model-based one
within a share of its real steps, and report on both; and the checks of ``simsched train rl SCENARIO.yaml``
before it trains within a CPU budget (:func:`simsched.learned.rl.budget.train_within_budget`).

* :func:`train_ppo_stage` writes ``OUTPUT/rl.pt`` (+ ``rl_history.json``);
* :func:`train_world_stage` trains ``rl-world`` within ``world.real_fraction`` of the PPO agent's real
  simulator steps and writes ``OUTPUT/rl_world.pt`` (+ ``world_history.json``, each round as it ends);
* :func:`report_stage` evaluates both on ``eval.final_seeds`` unseen seeds and writes
  ``report.md``/``report.png``/``report.json`` (:mod:`simsched.learned.rl.report`).

The command draws the progress bars: each stage takes callbacks and imports torch only when it runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simsched.errors import SimschedError
from simsched.fileio import atomic_write_text

if TYPE_CHECKING:
    from simsched.learned.rl.config import TrainConfig


def is_stream_scenario(path: Path) -> bool:
    """Whether ``path`` is a scenario with a job stream (``workload.stream``) rather than a training
    config (errors of either kind are left to the loader that follows).  O(file)."""
    from simsched.yamlio import load_yaml

    try:
        data = load_yaml(path, require_mapping=False).data
    except SimschedError:
        return False
    return isinstance(data, dict) and isinstance(data.get("workload"), dict) and "stream" in data["workload"]


def ppo_steps(cfg: TrainConfig) -> int:
    """Real steps of the PPO run of ``cfg``: one step per task, so episodes x mean tasks (exact on average)."""
    return int((cfg.ppo.bc_episodes + cfg.ppo.iterations * cfg.ppo.episodes_per_iter) * sum(cfg.tasks) / 2)


def steps_to_best(history: list[dict]) -> int:
    """Real-simulator steps the model-free run had used when it saved its checkpoint: PPO keeps the
    iteration with the best evaluation, so that is what the shipped agent cost (not the last)."""
    evaluated = [h for h in history if "eval_ratio" in h]
    if not evaluated:
        return int(history[-1]["real_steps"]) if history else 0
    return int(min(evaluated, key=lambda h: h["eval_ratio"])["real_steps"])


_HISTORY_NUMBERS = ("real_steps", "eval_ratio", "imagined_return")
"""Fields of a history record that are read as numbers (``real_steps`` a whole number of at least 0)."""


def read_history(path: Path) -> list[dict[str, Any]]:
    """The training history ``path`` (``rl_history.json``, ``world_history.json``; ``[]`` when absent),
    read by :func:`simsched.limits.read_json` (a regular file within ``max_file_mb``, at most ``max_depth``
    deep): a JSON list of records whose :data:`_HISTORY_NUMBERS` are finite numbers (``real_steps`` a whole
    number of at least 0).  :class:`SimschedError` naming the file and the field otherwise.  O(size)."""
    import math

    from simsched import limits
    from simsched.errors import shown

    if not os.path.lexists(path):
        return []
    history = limits.read_json(path, what="a training history")
    if not (isinstance(history, list) and all(isinstance(h, dict) for h in history)):
        raise SimschedError("a training history is a JSON list of records (written by `simsched train rl`)",
                            file=path)
    for k, record in enumerate(history):
        for key in _HISTORY_NUMBERS:
            if key not in record:
                continue
            v = record[key]
            whole = key != "real_steps" or (isinstance(v, int) and 0 <= v <= limits.MAX_INT)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not whole:
                want = "a whole number of at least 0" if key == "real_steps" else "a finite number"
                raise SimschedError(f"{shown(v, 40)} is not {want}", file=path, field=f"[{k}].{key}")
    return history


def model_free_steps(out: Path) -> int:
    """Real steps of the model-free agent in ``out``: from its training history (:func:`read_history`),
    else from its checkpoint's record (a shipped ``rl.pt`` copied there); 0 when neither is there."""
    hist_path = out / "rl_history.json"
    if os.path.lexists(hist_path):
        return steps_to_best(read_history(hist_path))
    if (out / "rl.pt").exists():
        from simsched.learned.rl import checkpoint

        return int(checkpoint.load(out / "rl.pt", "rl").get("meta", {}).get("real_steps", 0))
    return 0


def train_ppo_stage(cfg: TrainConfig, conf: dict, out: Path, progress: Callable[[int, int, dict], None]) -> Any:
    """Train ``rl`` (PPO + GNN) from ``cfg`` (``conf``: its dump, stored in the checkpoint); the checkpoint
    ``out/rl.pt`` is saved whenever PPO keeps an iteration, the history at the end.  Returns the network."""
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.ppo import train_ppo

    def save(net: Any, rec: dict) -> None:
        checkpoint.save(out / "rl.pt", "rl", conf, net.state_dict(), rec)

    net, hist = train_ppo(cfg, progress, save)
    (out / "rl_history.json").write_text(json.dumps(hist))
    return net


def world_budget(cfg: TrainConfig, out: Path) -> int:
    """Real steps ``rl-world`` may use: ``world.real_fraction`` of what the model-free agent in ``out`` cost
    (:func:`model_free_steps`, else the planned PPO run's :func:`ppo_steps`)."""
    return int(cfg.world.real_fraction * (model_free_steps(out) or ppo_steps(cfg)))


def train_world_stage(cfg: TrainConfig, conf: dict, out: Path, budget: int, progress: Callable[[dict], None]) -> Any:
    """Train ``rl-world`` within ``budget`` real steps; after each round ``progress(record)`` and the history
    so far written to ``out/world_history.json`` (a long run shows and keeps its progress); at the end the
    checkpoint ``out/rl_world.pt``.  Returns the agent."""
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.world import train_world

    done: list[dict] = []

    def round_ended(kind: str, rec: dict) -> None:
        progress(rec)
        done.append(rec)
        atomic_write_text(out / "world_history.json", json.dumps(done))

    agent, hist, timing = train_world(cfg, budget, round_ended)
    checkpoint.save(out / "rl_world.pt", "rl-world", conf, agent.state_dict(), {"timing": timing})
    (out / "world_history.json").write_text(json.dumps(hist))
    return agent


def report_stage(cfg: TrainConfig, out: Path, rl_net: Any, world: Any, say: Callable[[str], None],
                 show: Callable[[str], None]) -> None:
    """Evaluate the agents (those given, else the checkpoints in ``out``) on ``eval.final_seeds`` unseen seeds
    and write the report into ``out``; ``say`` tells what it is doing, ``show`` prints the job table of a
    job-stream config.  :class:`SimschedError` when there is no agent to report on."""
    from simsched.learned.rl.policy import _load
    from simsched.learned.rl.ppo import eval_seeds, make_env
    from simsched.learned.rl.report import (
        final_evaluation,
        job_comparison,
        job_table_lines,
        measure_steps,
        write_report,
    )
    from simsched.learned.rl.world import temperature_sweep

    if rl_net is None and (out / "rl.pt").exists():
        rl_net = _load("rl", str(out / "rl.pt"))
    if world is None and (out / "rl_world.pt").exists():
        world = _load("rl-world", str(out / "rl_world.pt"))
    if rl_net is None and world is None:
        raise SimschedError(f"no checkpoint in {out} to report on; train first")
    say(f"evaluating on {cfg.eval.final_seeds} unseen seeds ...")
    jobs = cfg.reward == "jobs"
    final = final_evaluation(cfg, None if jobs else rl_net, world)
    table = job_comparison(cfg, rl_net) if jobs else None
    hist = {k: read_history(out / f"{k}.json") for k in ("rl_history", "world_history")}
    steps = {"rl": model_free_steps(out),
             "rl-world": hist["world_history"][-1]["real_steps"] if hist["world_history"] else 0}
    data = {"scenario": cfg.scenario, "tasks": list(cfg.tasks), "final_seeds": cfg.eval.final_seeds,
            "final": final, "real_steps": steps, **hist}
    if table is not None:
        data.update(jobs=cfg.jobs, jobs_table=table)
        show("\n".join(job_table_lines(table)))
    if world is not None:
        say("timing real vs world-model steps ...")
        data["timing"] = measure_steps(cfg, world)
        if hasattr(world, "starts"):
            say(f"temperature sweep {cfg.world.tau_sweep} ...")
            data["sweep"] = temperature_sweep(world, cfg, make_env(cfg), cfg.world.tau_sweep,
                                              eval_seeds(cfg, cfg.eval.seeds))
    write_report(out, data)
    say(f"wrote {out / 'report.md'} and {out / 'report.png'}")


@dataclass(frozen=True)
class BudgetRun:
    """The checked settings of ``simsched train rl SCENARIO.yaml``: CPU minutes, training seed, select and
    report days (defaults filled in)."""

    budget_min: float
    seed: int
    select_days: int
    report_days: int


def budget_run(budget_min: float | None, seed: int | None, select_days: int | None,
               report_days: int | None) -> BudgetRun:
    """The settings of a budgeted training run, defaults filled in (30 CPU minutes, seed 0, 8 select days, 20
    report days), each checked against :mod:`simsched.learned.rl.budget`'s limits: :class:`SimschedError`
    naming the option otherwise.  O(1)."""
    from simsched.learned.rl.budget import MAX_BUDGET_MIN, MAX_DAYS

    budget_min = 30.0 if budget_min is None else budget_min
    if not 0 < budget_min <= MAX_BUDGET_MIN:
        raise SimschedError(f"--budget-min must be in (0, {MAX_BUDGET_MIN:g}] CPU minutes, got {budget_min!r}")
    seed = 0 if seed is None else seed
    if seed < 0:
        raise SimschedError(f"--seed must be >= 0, got {seed}")
    select_days, report_days = (8 if select_days is None else select_days), (20 if report_days is None else report_days)
    for name, v in (("--select-days", select_days), ("--report-days", report_days)):
        if not 1 <= v <= MAX_DAYS:
            raise SimschedError(f"{name} must be from 1 to {MAX_DAYS}, got {v}")
    return BudgetRun(budget_min, seed, select_days, report_days)
