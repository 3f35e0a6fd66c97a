"""``simsched train rl CONFIG.yaml``: train the model-free (PPO + GNN) and model-based (World
Models) agents, with progress, periodic evaluation against HEFT, checkpoints and an optional report.

Stages: ``ppo`` writes ``OUTPUT/rl.pt`` (+ ``rl_history.json``); ``world`` trains the model-based
agent within ``world.real_fraction`` of the PPO agent's real-simulator steps and writes
``OUTPUT/rl_world.pt`` (+ ``world_history.json``); ``--report`` then evaluates both on
``eval.final_seeds`` unseen seeds and writes ``report.md``/``report.png``/``report.json``
(:mod:`simsched.learned.rl.report`).  torch and gymnasium are imported only inside the command.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from simsched.errors import SimschedError
from simsched.fileio import atomic_write_text


def _ppo_steps(cfg) -> int:
    """Real steps of the PPO run: one step per task, so episodes x mean tasks (exact on average)."""
    return int((cfg.ppo.bc_episodes + cfg.ppo.iterations * cfg.ppo.episodes_per_iter) * sum(cfg.tasks) / 2)


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
    from simsched.cli.common import user_errors

    user_errors(_run)(config, stage, report, budget_min, output, seed, select_days, report_days, resume)


def _is_stream_scenario(path: Path) -> bool:
    """Whether ``path`` is a scenario with a job stream (``workload.stream``) rather than a training
    config (errors of either kind are left to the loader that follows).  O(file)."""
    from simsched.yamlio import load_yaml

    try:
        data = load_yaml(path, require_mapping=False).data
    except SimschedError:
        return False
    return isinstance(data, dict) and isinstance(data.get("workload"), dict) and "stream" in data["workload"]


def _run(config: Path, stage: str, report: bool, budget_min: float | None = None, output: Path | None = None,
         seed: int | None = None, select_days: int | None = None, report_days: int | None = None,
         resume: bool = False) -> None:
    from rich.console import Console

    console = Console(stderr=True)
    from simsched.extras import require_extra, require_learned

    if stage not in ("all", "ppo", "world", "none"):  # before torch loads (seconds of CPU)
        raise SimschedError(f"--stage must be all, ppo, world or none, got {stage!r}")
    require_learned("`simsched train rl`")
    require_extra("gymnasium", "learned", "`simsched train rl`")
    scenario_only = {"--budget-min": budget_min, "--output": output, "--seed": seed, "--select-days": select_days,
                     "--report-days": report_days, "--resume": resume or None}
    if _is_stream_scenario(config):
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
        _report(cfg, out, rl_net, world, console)


def _progress(console, total: int, label: str):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                    TimeElapsedColumn(), console=console, transient=False)


def _train_ppo(cfg, conf, out: Path, console):
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.ppo import train_ppo

    def save(net, rec):
        checkpoint.save(out / "rl.pt", "rl", conf, net.state_dict(), rec)

    with _progress(console, cfg.ppo.iterations, "PPO") as bar:
        task = bar.add_task("ppo", total=cfg.ppo.iterations, info="")

        def progress(i, n, rec):
            info = f"steps {rec['real_steps']}"
            if "eval_ratio" in rec:
                info += f"  eval {'mean JCT' if cfg.reward == 'jobs' else 'makespan'}/HEFT {rec['eval_ratio']:.3f}"
            bar.update(task, completed=i, info=info)

        net, hist = train_ppo(cfg, progress, save)
    (out / "rl_history.json").write_text(json.dumps(hist))
    return net


def steps_to_best(history: list[dict]) -> int:
    """Real-simulator steps the model-free run had used when it saved its checkpoint: PPO keeps the
    iteration with the best evaluation, so that is what the shipped agent cost (not the last)."""
    evaluated = [h for h in history if "eval_ratio" in h]
    if not evaluated:
        return int(history[-1]["real_steps"]) if history else 0
    return int(min(evaluated, key=lambda h: h["eval_ratio"])["real_steps"])


def _model_free_steps(out: Path) -> int:
    """Real steps of the model-free agent in ``out``: from its training history, else from its
    checkpoint's record (a shipped ``rl.pt`` copied there); 0 when neither is there."""
    hist_path = out / "rl_history.json"
    if hist_path.exists():
        from simsched.limits import read_json

        history = read_json(hist_path, what="a training history")
        if not (isinstance(history, list) and all(isinstance(h, dict) for h in history)):
            raise SimschedError("a training history is a JSON list of records (written by `simsched train rl`)",
                                file=hist_path)
        return steps_to_best(history)
    if (out / "rl.pt").exists():
        from simsched.learned.rl import checkpoint

        return int(checkpoint.load(out / "rl.pt", "rl").get("meta", {}).get("real_steps", 0))
    return 0


def _train_world(cfg, conf, out: Path, console):
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.world import train_world

    ppo_steps = _model_free_steps(out) or _ppo_steps(cfg)
    budget = int(cfg.world.real_fraction * ppo_steps)
    with _progress(console, cfg.world.rounds, "world model") as bar:
        task = bar.add_task("world", total=cfg.world.rounds, info=f"budget {budget} real steps")

        done: list[dict] = []

        def progress(kind, rec):
            bar.update(task, advance=1, info=f"steps {rec['real_steps']}  eval makespan/HEFT {rec['eval_ratio']:.3f}")
            # each round's record as it ends: a long run on a busy machine shows (and keeps) its progress
            console.print(f"world round {rec['round']}: {rec['real_steps']} real steps, evaluation score / "
                          f"HEFT's {rec['eval_ratio']:.4f}, {rec['wall_s']:.0f} s")
            done.append(rec)
            atomic_write_text(out / "world_history.json", json.dumps(done))

        agent, hist, timing = train_world(cfg, budget, progress)
    checkpoint.save(out / "rl_world.pt", "rl-world", conf, agent.state_dict(), {"timing": timing})
    (out / "world_history.json").write_text(json.dumps(hist))
    return agent


def _report(cfg, out: Path, rl_net, world, console) -> None:
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
    console.print(f"evaluating on {cfg.eval.final_seeds} unseen seeds ...")
    jobs = cfg.reward == "jobs"
    final = final_evaluation(cfg, None if jobs else rl_net, world)
    table = job_comparison(cfg, rl_net) if jobs else None
    hist = {k: json.loads((out / f"{k}.json").read_text()) if (out / f"{k}.json").exists() else []
            for k in ("rl_history", "world_history")}
    steps = {"rl": _model_free_steps(out),
             "rl-world": hist["world_history"][-1]["real_steps"] if hist["world_history"] else 0}
    data = {"scenario": cfg.scenario, "tasks": list(cfg.tasks), "final_seeds": cfg.eval.final_seeds,
            "final": final, "real_steps": steps, **hist}
    if table is not None:
        data.update(jobs=cfg.jobs, jobs_table=table)
        print("\n".join(job_table_lines(table)))
    if world is not None:
        console.print("timing real vs world-model steps ...")
        data["timing"] = measure_steps(cfg, world)
        if hasattr(world, "starts"):
            console.print(f"temperature sweep {cfg.world.tau_sweep} ...")
            data["sweep"] = temperature_sweep(world, cfg, make_env(cfg), cfg.world.tau_sweep,
                                              eval_seeds(cfg, cfg.eval.seeds))
    write_report(out, data)
    console.print(f"wrote {out / 'report.md'} and {out / 'report.png'}")


def _train_scenario(path: Path, budget_min: float | None, output: Path | None, seed: int | None,
                    select_days: int | None, report_days: int | None, resume: bool, console) -> None:
    """``simsched train rl SCENARIO.yaml``: :func:`simsched.learned.rl.budget.train_within_budget` with a
    rich progress bar over the CPU budget, then the evaluate-space report."""
    from simsched.learned.rl import budget as bd
    from simsched.outputs import output_dir
    from simsched.scenario import load_scenario

    budget_min = 30.0 if budget_min is None else budget_min
    if not 0 < budget_min <= bd.MAX_BUDGET_MIN:
        raise SimschedError(f"--budget-min must be in (0, {bd.MAX_BUDGET_MIN:g}] CPU minutes, got {budget_min!r}")
    seed = 0 if seed is None else seed
    if seed < 0:
        raise SimschedError(f"--seed must be >= 0, got {seed}")
    select_days, report_days = (8 if select_days is None else select_days), (20 if report_days is None else report_days)
    for name, v in (("--select-days", select_days), ("--report-days", report_days)):
        if not 1 <= v <= bd.MAX_DAYS:
            raise SimschedError(f"{name} must be from 1 to {bd.MAX_DAYS}, got {v}")
    sc = load_scenario(path)  # a bad scenario: one located line, before any training
    bd.config_for(path, Path("."), seed)  # the seed space check, before any output is made
    out = output if output is not None else Path("out") / f"rl-{path.stem}"
    if resume:  # what it resumes from is read and checked before anything is printed or trained
        bd.resume_state(bd.config_for(path, out, seed), out)
    out = output_dir(out, option="--output")
    budget_s = 60.0 * budget_min
    console.print(f"training rl on {sc.name}: {budget_min:g} CPU minutes; train, select ({select_days} days) and "
                  f"evaluate ({report_days} days) seed spaces of seed {sc.seed}; writing {out}")
    with _progress(console, int(budget_s), "rl") as bar:
        task = bar.add_task("rl", total=budget_s, info="cloning srjf-eft")

        def progress(cpu_s: float, rec: dict) -> None:
            label = "clone" if rec.get("phase") == "clone" else f"PPO {rec.get('iteration')}"
            bar.update(task, completed=min(cpu_s, budget_s),
                       info=f"{label}: select mean JCT / srjf-eft {rec['select_ratio']:.3f}"
                            + (" (best)" if rec.get("best") else ""))

        result = bd.train_within_budget(path, out, budget_s, seed=seed, select_days=select_days,
                                        report_days=report_days, resume=resume, progress=progress)
    r = result["report"]
    console.print(f"selected: mean JCT / srjf-eft {result['best']:.3f} on {select_days} select days")
    print(f"evaluate space, {r['days']} days (seeds {r['first_seed']}...): rl / srjf-eft mean JCT "
          f"{r['ratio']:.3f} [{r['low']:.3f}, {r['high']:.3f}] (geometric mean of per-day ratios, paired 95% "
          f"interval), better on {r['better_days']}/{r['days']} days")
    print(f"wrote {out / 'rl.pt'}, {out / 'train_history.json'}, {out / 'report.json'} "
          f"({r['cpu_s']:.0f} CPU s); run it with {{name: rl, checkpoint: {out / 'rl.pt'}}}")
