"""``simsched train rl CONFIG.yaml``: train the model-free (PPO + GNN) and model-based (World
Models) agents, with progress, periodic evaluation against HEFT, checkpoints and an optional report; or
``simsched train rl SCENARIO.yaml``: train ``rl`` on a stream scenario within a CPU budget.

The stages and checks are :mod:`simsched.learned.rl.training`'s, the budgeted run
:func:`simsched.learned.rl.budget.train_within_budget`; this command draws their progress bars
(:func:`simsched.report.terminal.training_bar`) and prints what they reached.  torch and gymnasium are
imported only inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from simsched.cli.common import user_errors
from simsched.errors import SimschedError


@user_errors
def rl(
    config: Path = typer.Argument(..., help="a training config (YAML, e.g. scenarios/rl/train_tiny.yaml) or a "
                                  "stream scenario (workload.stream) to train on within --budget-min"),
    stage: str = typer.Option("all", help="all | ppo | world | none (none: only --report from checkpoints)"),
    report: bool = typer.Option(False, "--report", help="evaluate both agents and write report.md/.png/.json"),
    budget_min: float | None = typer.Option(None, "--budget-min", help="stream scenario: CPU minutes for training "
                                            "and selection (default 30)"),
    output: Path | None = typer.Option(None, "--output", "-o", help="stream scenario: the folder for rl.pt, "
                                       "train_history.json and report.json (default out/rl-SCENARIO)"),
    seed: int | None = typer.Option(None, "--seed", help="stream scenario: training seed (not of the evaluate or "
                                    "fresh seed space; default 0)"),
    select_days: int | None = typer.Option(None, "--select-days", help="stream scenario: select-space days "
                                           "scoring each candidate (default 8)"),
    report_days: int | None = typer.Option(None, "--report-days", help="stream scenario: evaluate-space days of "
                                           "the final report (default 20)"),
    resume: bool = typer.Option(False, "--resume", help="stream scenario: continue from OUTPUT/rl.pt"),
) -> None:
    """Train the RL agents `rl` (PPO + GNN) and `rl-world` (MDN-RNN world model) on a scenario family, or `rl`
    on your own stream scenario within a CPU budget (train, select and evaluate seed spaces kept apart)."""
    from rich.console import Console

    console = Console(stderr=True)
    from simsched.extras import require_extra, require_learned

    if stage not in ("all", "ppo", "world", "none"):  # before torch loads (seconds of CPU)
        raise SimschedError(f"--stage must be all, ppo, world or none, got {stage!r}")
    require_learned("`simsched train rl`")
    require_extra("gymnasium", "learned", "`simsched train rl`")
    scenario_only = {"--budget-min": budget_min, "--output": output, "--seed": seed, "--select-days": select_days,
                     "--report-days": report_days, "--resume": resume or None}
    from simsched.learned.rl.training import is_stream_scenario, report_stage

    if is_stream_scenario(config):
        return _train_scenario(config, budget_min, output, seed, select_days, report_days, resume, console)
    given = [k for k, v in scenario_only.items() if v is not None]
    if given:
        raise SimschedError(f"{given[0]} applies to a stream scenario (workload.stream); {config} is a training "
                            f"config, whose own fields set this")
    import torch

    from simsched.learned.rl.config import load_config

    cfg = load_config(config)
    torch.set_num_threads(cfg.threads)
    from simsched.outputs import output_dir

    try:
        out = output_dir(cfg.path(cfg.output), option="output")
    except SimschedError as exc:
        raise exc.located(file=config) from None
    conf = cfg.model_dump()
    rl_net = world = None
    if stage in ("all", "ppo"):
        rl_net = _train_ppo(cfg, conf, out, console)
    if stage in ("all", "world") and cfg.world.enabled:
        world = _train_world(cfg, conf, out, console)
    if report:
        report_stage(cfg, out, rl_net, world, console.print, print)


def _train_ppo(cfg: Any, conf: dict, out: Path, console: Any) -> Any:
    """The PPO stage with a bar of iterations and the latest evaluation against HEFT."""
    from simsched.learned.rl.training import train_ppo_stage
    from simsched.report.terminal import training_bar

    with training_bar(console, "PPO") as bar:
        task = bar.add_task("ppo", total=cfg.ppo.iterations, info="")

        def progress(i: int, n: int, rec: dict) -> None:
            info = f"steps {rec['real_steps']}"
            if "eval_ratio" in rec:
                info += f"  eval {'mean JCT' if cfg.reward == 'jobs' else 'makespan'}/HEFT {rec['eval_ratio']:.3f}"
            bar.update(task, completed=i, info=info)

        return train_ppo_stage(cfg, conf, out, progress)


def _train_world(cfg: Any, conf: dict, out: Path, console: Any) -> Any:
    """The world-model stage with a bar of rounds and one line per round as it ends."""
    from simsched.learned.rl.training import train_world_stage, world_budget
    from simsched.report.terminal import training_bar

    budget = world_budget(cfg, out)
    with training_bar(console, "world model") as bar:
        task = bar.add_task("world", total=cfg.world.rounds, info=f"budget {budget} real steps")

        def progress(rec: dict) -> None:
            bar.update(task, advance=1, info=f"steps {rec['real_steps']}  eval makespan/HEFT {rec['eval_ratio']:.3f}")
            console.print(f"world round {rec['round']}: {rec['real_steps']} real steps, evaluation score / "
                          f"HEFT's {rec['eval_ratio']:.4f}, {rec['wall_s']:.0f} s")

        return train_world_stage(cfg, conf, out, budget, progress)


def _train_scenario(path: Path, budget_min: float | None, output: Path | None, seed: int | None,
                    select_days: int | None, report_days: int | None, resume: bool, console: Any) -> None:
    """``simsched train rl SCENARIO.yaml``: :func:`simsched.learned.rl.budget.train_within_budget` with a
    rich progress bar over the CPU budget, then the evaluate-space report."""
    from simsched.fileio import rewrites
    from simsched.learned.rl import budget as bd
    from simsched.learned.rl.training import budget_run
    from simsched.outputs import output_files
    from simsched.report.terminal import training_bar
    from simsched.scenario import load_scenario

    run = budget_run(budget_min, seed, select_days, report_days)
    sc = load_scenario(path)  # a bad scenario: one located line, before any training
    bd.config_for(path, Path("."), run.seed)  # the seed space check, before any output is made
    out = output if output is not None else Path("out") / f"rl-{path.stem}"
    if resume and not (out / "rl.pt").exists():
        raise SimschedError(f"nothing to resume: {out / 'rl.pt'} does not exist", field="--resume")
    # every file the run writes, checked before any training: none is a file the scenario reads (a
    # scheduler's checkpoint included), a folder, a FIFO or another command's output
    best, _candidate, history, report = output_files(out, ("rl.pt", "candidate.pt", "train_history.json",
                                                           "report.json"), option="--output", inputs=[path])
    out = best.parent
    if not resume:
        earlier = next((p for p in (best, history, report) if p.exists()), None)
        if earlier is not None:
            raise SimschedError(f"{earlier} holds an earlier training's result, which this run would replace; "
                                f"continue it with --resume, or choose another --output", field="--output")
    else:
        rewrites(best)  # the checkpoint resumed is this run's own output: read, then replaced when it improves
    budget_s = 60.0 * run.budget_min
    console.print(f"training rl on {sc.name}: {run.budget_min:g} CPU minutes; train, select ({run.select_days} "
                  f"days) and evaluate ({run.report_days} days) seed spaces of seed {sc.seed}; writing {out}")
    with training_bar(console, "rl") as bar:
        task = bar.add_task("rl", total=budget_s, info="cloning srjf-eft")

        def progress(cpu_s: float, rec: dict) -> None:
            label = "clone" if rec.get("phase") == "clone" else f"PPO {rec.get('iteration')}"
            bar.update(task, completed=min(cpu_s, budget_s),
                       info=f"{label}: select mean JCT / srjf-eft {rec['select_ratio']:.3f}"
                            + (" (best)" if rec.get("best") else ""))

        result = bd.train_within_budget(path, out, budget_s, seed=run.seed, select_days=run.select_days,
                                        report_days=run.report_days, resume=resume, progress=progress)
    r = result["report"]
    console.print(f"selected: mean JCT / srjf-eft {result['best']:.3f} on {run.select_days} select days")
    print(f"evaluate space, {r['days']} days (seeds {r['first_seed']}...): rl / srjf-eft mean JCT "
          f"{r['ratio']:.3f} [{r['low']:.3f}, {r['high']:.3f}] (geometric mean of per-day ratios, paired 95% "
          f"interval), better on {r['better_days']}/{r['days']} days")
    print(f"wrote {out / 'rl.pt'}, {out / 'train_history.json'}, {out / 'report.json'} "
          f"({r['cpu_s']:.0f} CPU s); run it with {{name: rl, checkpoint: {out / 'rl.pt'}}}")
