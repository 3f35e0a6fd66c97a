"""The model-free vs model-based report (``simsched train rl CONFIG --report``).

Figures: quality (mean makespan / HEFT's makespan under the same noise, with a 95% confidence
interval) on ``eval.final_seeds`` unseen seeds against the real-simulator steps each agent used;
learning curves (quality vs real steps); seconds per world-model step vs per real step; and a
temperature sweep (tau 0.1 ... 3.0: controller retrained in the dream at each tau, evaluated in the
real simulator), as the dissertation's Table 5.1.  Written atomically as ``report.md``,
``report.png`` and ``report.json`` in the output folder.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from simsched.fileio import atomic_write_bytes, save_figure
from simsched.learned.rl.config import TrainConfig


def ci95(x: np.ndarray) -> float:
    """Half-width of the normal 95% confidence interval of the mean."""
    return float(1.96 * x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")


def _atomic_write(path: Path, data: bytes) -> None:
    atomic_write_bytes(path, data)


def measure_steps(cfg: TrainConfig, agent, n: int = 300) -> dict:
    """Seconds per real step (engine + features; and with the V encoding a controller needs) and per
    world-model step (batched dream step per sample, and a single unbatched step)."""
    import torch

    from simsched.learned.rl.ppo import make_env
    from simsched.learned.rl.world import imagine
    from simsched.learned.rl.world_model import agent_slots, z_size

    env = make_env(cfg)
    w = agent.w
    t_env = t_enc = 0.0
    k = 0
    seed = 0
    while k < n:
        env.reset(seed=cfg.eval.seed_offset + 10_000 + seed)
        seed += 1
        done = False
        while not done and k < n:
            t0 = time.perf_counter()
            pairs, valid = agent_slots(w, env.obs, env.info_static.rank)
            a = int(np.flatnonzero(valid)[0])
            _, _, done, _, _ = env.step(tuple(pairs[a]))
            t1 = time.perf_counter()
            if not done:
                nxt, _ = agent_slots(w, env.obs, env.info_static.rank)
                with torch.no_grad():
                    agent.latent([env.obs], [nxt])
            t_env += t1 - t0
            t_enc += time.perf_counter() - t1
            k += 1
    out = {"real_step_s": t_env / k, "real_step_with_encoding_s": (t_env + t_enc) / k}
    bounds = torch.tensor([-1.0, 0.0, 0.1])
    with torch.no_grad():
        for batch in (1, w.dream_batch):
            z = torch.zeros(batch, z_size(w))
            states = [m.initial(batch) for m in agent.members]
            mask = torch.ones(batch, w.task_slots * w.proc_slots, dtype=torch.bool)
            reps = 200 if batch == 1 else 40
            t0 = time.perf_counter()
            for _ in range(reps):  # a dream step: C acts, every ensemble member steps, one samples z'
                logp, _ = agent.ctrl(z, states[0][0], mask)
                a = torch.multinomial(logp.exp(), 1).squeeze(1)
                z, _, mask, states, _ = imagine(agent, z, a, states, 1.0, None, bounds)
            out[f"world_step_s_batch{batch}"] = (time.perf_counter() - t0) / reps / batch
    return out


def final_evaluation(cfg: TrainConfig, rl_net, world_agent) -> dict:
    """Makespans of both agents and HEFT on ``final_seeds`` seeds that neither training nor
    checkpoint selection saw (:func:`~simsched.learned.rl.ppo.final_seeds`; same noise per seed)."""
    from simsched.learned.rl.ppo import evaluate, final_seeds, greedy_actor, make_env
    from simsched.learned.rl.world import world_actor

    env = make_env(cfg)
    seeds = final_seeds(cfg)
    res = {}
    for name, actor in (("rl", greedy_actor(rl_net) if rl_net is not None else None),
                        ("rl-world", world_actor(world_agent) if world_agent is not None else None)):
        if actor is None:
            continue
        ev = evaluate(env, actor, seeds)
        r = ev["ratio"]
        res[name] = {"mean_makespan": float(ev["makespan"].mean()), "makespan_ci95": ci95(ev["makespan"]),
                     "heft_mean_makespan": float(ev["heft"].mean()), "heft_ci95": ci95(ev["heft"]),
                     "ratio_mean": float(r.mean()), "ratio_ci95": ci95(r),
                     "wins": int((r < 1).sum()), "seeds": len(seeds)}
    if world_agent is not None:
        from simsched.learned.rl.world import heuristic_agreement, imagined_returns

        res["rl-world"]["heuristic_agreement"] = heuristic_agreement(world_agent, env, seeds[:20])
        imagined = imagined_returns(world_agent, env, seeds)
        real = -res["rl-world"]["ratio_mean"]
        res["rl-world"].update(imagined_return=float(imagined.mean()), imagined_ci95=ci95(imagined), real_return=real)
        res["rl-world"]["agreement_seeds"] = len(seeds[:20])
    return res


def job_comparison(cfg: TrainConfig, rl_net) -> dict:
    """The job-stream table: mean job completion time (JCT) and makespan of ``rl`` and each
    heuristic (:func:`simsched.learned.rl.baselines.heuristics`) on ``eval.final_seeds`` seeds that neither
    training nor checkpoint selection saw (after the ``eval.seeds`` selection seeds), every policy
    under the same noise and stragglers per seed.  Per-seed JCT ratios to the best list heuristic
    (lowest mean JCT among HEFT static, online HEFT, MCT, min-min) give paired 95% intervals.
    ``per_seed``: every policy's JCT per seed, for paired comparisons."""
    from simsched.learned.rl.baselines import episode_metrics, heuristics
    from simsched.learned.rl.ppo import final_seeds, make_env, run_episode
    from simsched.simulator.jobmetrics import job_metrics

    env = make_env(cfg)
    seeds = final_seeds(cfg)
    jct: dict[str, list[float]] = {}
    span: dict[str, list[float]] = {}
    for s in seeds:
        ep = env.family.draw(s)
        runs = {name: episode_metrics(ep, pol, env.family.disruptions) for name, pol in heuristics(ep).items()}
        if rl_net is not None:
            run_episode(env, rl_net, None, True, None, episode=ep)
            runs["rl"] = job_metrics(env.session.schedule(), ep.jobs, ep.job_arrival)
        for name, m in runs.items():
            jct.setdefault(name, []).append(m.mean_flow_time)
            span.setdefault(name, []).append(m.makespan)
    arr = {k: np.array(v) for k, v in jct.items()}
    best = min(LIST_HEURISTICS, key=lambda k: arr[k].mean())
    rows = []
    for name, x in arr.items():
        r = x / arr[best]
        rows.append({"policy": name, "mean_jct": float(x.mean()), "jct_ci95": ci95(x),
                     "mean_makespan": float(np.mean(span[name])), "makespan_ci95": ci95(np.array(span[name])),
                     "ratio_to_best": float(r.mean()), "ratio_ci95": ci95(r),
                     "gain_vs_best": float(1 - x.mean() / arr[best].mean()), "wins": int((x < arr[best]).sum())})
    return {"seeds": len(seeds), "first_seed": seeds[0], "best_heuristic": best, "rows": rows,
            "per_seed": {k: v.tolist() for k, v in arr.items()}}


LIST_HEURISTICS = ("heft-static", "online-heft", "mct", "minmin")
"""The baselines the gain is measured against (the job-aware ``srjf-eft`` is reported beside them)."""


def job_table_lines(table: dict) -> list[str]:
    """Markdown lines of :func:`job_comparison`'s table."""
    best = table["best_heuristic"]
    lines = [f"Mean job completion time (JCT) on {table['seeds']} unseen seeds, every policy under the same "
             f"noise and stragglers; ratio = per-seed JCT / {best}'s JCT (best list heuristic), mean with 95% CI.",
             "", "| policy | mean JCT (95% CI) | mean makespan (95% CI) | JCT ratio to "
             f"{best} (95% CI) | JCT gain vs {best} | seeds better than {best} |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in sorted(table["rows"], key=lambda r: -r["mean_jct"]):
        lines.append(f"| {r['policy']} | {r['mean_jct']:.1f} ± {r['jct_ci95']:.1f} | {r['mean_makespan']:.1f} ± "
                     f"{r['makespan_ci95']:.1f} | {r['ratio_to_best']:.3f} ± {r['ratio_ci95']:.3f} | "
                     f"{100 * r['gain_vs_best']:+.1f}% | {r['wins']}/{table['seeds']} |")
    return lines


def _makespan_table(data: dict, fin: dict, steps: dict) -> list[str]:
    lines = [
             f"Family: `{data['scenario']}`, tasks {data['tasks']}; {data['final_seeds']} unseen seeds; "
             "ratio = agent makespan / HEFT plan's makespan under the same noise "
             "(< 1: better than HEFT).",
             "", "| agent | real-simulator steps | mean makespan (95% CI) | HEFT mean makespan "
             "| ratio (95% CI) | seeds better than HEFT |",
             "|---|---:|---:|---:|---:|---:|"]
    for name in ("rl", "rl-world"):
        if name in fin:
            f = fin[name]
            lines.append(f"| {name} | {steps.get(name, 0)} | {f['mean_makespan']:.1f} ± {f['makespan_ci95']:.1f} | "
                         f"{f['heft_mean_makespan']:.1f} | {f['ratio_mean']:.4f} ± {f['ratio_ci95']:.4f} | "
                         f"{f['wins']}/{f['seeds']} |")
    return lines


def write_report(out: Path, data: dict) -> None:
    """``report.json``, ``report.md`` and ``report.png`` in ``out``, each written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(out / "report.json", json.dumps(data, indent=2).encode())
    fin, steps, tm = data["final"], data["real_steps"], data.get("timing", {})
    title = "online job streams" if data.get("jobs_table") else "model-free (PPO + GNN) vs model-based (World Models)"
    lines = [f"# simsched RL report: {title}", ""]
    if data.get("jobs_table"):
        lines += [f"Family: `{data['scenario']}`, streams of {data['jobs']} jobs of {data['tasks']} tasks; "
                  f"objective: mean job completion time. `rl` used {steps.get('rl', 0)} real-simulator steps.",
                  ""] + job_table_lines(data["jobs_table"]) + [""]
    if fin:
        lines += _makespan_table(data, fin, steps)
    if "rl" in fin and "rl-world" in fin and steps.get("rl"):
        q = fin["rl-world"]["ratio_mean"] / fin["rl"]["ratio_mean"]
        lines += ["", f"rl-world / rl: quality {q:.3f} (makespan ratio; within 5% means <= 1.05), "
                  f"real steps {steps.get('rl-world', 0) / steps['rl']:.3f} (a quarter means <= 0.25)."]
    if "heuristic_agreement" in fin.get("rl-world", {}):
        lines += ["", f"rl-world's greedy controller takes the rank + earliest-finish heuristic's action at "
                  f"{100 * fin['rl-world']['heuristic_agreement']:.0f}% of its decisions "
                  f"({fin['rl-world'].get('agreement_seeds', 20)} seeds): "
                  "it was never trained to copy it."]
    if "imagined_return" in fin.get("rl-world", {}):
        f = fin["rl-world"]
        lines += ["", f"Whole-episode return of rl-world's greedy controller: imagined by the world model "
                  f"{f['imagined_return']:.3f} ± {f['imagined_ci95']:.3f}, real {f['real_return']:.3f} "
                  "(minus makespan / HEFT's makespan)."]
    if tm:
        lines += ["", "| step | seconds |", "|---|---:|"]
        for k, v in tm.items():
            lines.append(f"| {k} | {v:.2e} |")
        if "world_step_s_batch1" in tm:
            lines.append("")
            batched = next(k for k in tm if k.startswith("world_step_s_batch") and k != "world_step_s_batch1")
            real = tm["real_step_with_encoding_s"]
            lines.append(f"Real step (engine + features + GNN encoding) / world-model step: "
                         f"{real / tm['world_step_s_batch1']:.1f}x unbatched, {real / tm[batched]:.1f}x batched.")
    if data.get("sweep"):
        lines += ["", "Temperature sweep (a fresh controller trained in the dream at each tau, "
                  "evaluated in the real simulator; dream return = mean imagined return of a branch):",
                  "", "| tau | dream return | real ratio to HEFT (95% CI) |", "|---:|---:|---:|"]
        for r in data["sweep"]:
            lines.append(f"| {r['tau']:.1f} | {r['dream_return']:.3f} | {r['real_ratio']:.4f} ± {r['ci95']:.4f} |")
    _atomic_write(out / "report.md", ("\n".join(lines) + "\n").encode())

    rounds = [h for h in data.get("world_history", []) if "imagined_return" in h]
    second = bool(data.get("jobs_table") or data.get("sweep") or rounds)  # a right panel only with content
    fig, axes = plt.subplots(1, 2 if second else 1, figsize=(11 if second else 6.5, 4), squeeze=False)
    ax = axes[0]
    for name, hist in (("rl (PPO)", data.get("rl_history", [])), ("rl-world", data.get("world_history", []))):
        pts = [(h["real_steps"], h["eval_ratio"]) for h in hist if "eval_ratio" in h]
        if pts:
            ax[0].plot(*zip(*pts), marker="o", label=name)
    for name in ("rl", "rl-world"):
        if name in fin and steps.get(name):
            ax[0].errorbar([steps[name]], [fin[name]["ratio_mean"]], [fin[name]["ratio_ci95"]], fmt="s", capsize=3,
                           label=f"{name} final ({fin[name]['seeds']} seeds)")
    ax[0].axhline(1.0, color="grey", ls="--", label="HEFT static")
    ax[0].set_xlabel("real-simulator steps")
    ax[0].set_ylabel(("mean JCT" if data.get("jobs_table") else "makespan") + " / HEFT static (eval seeds)")
    ax[0].legend()
    if data.get("jobs_table"):
        rows = sorted(data["jobs_table"]["rows"], key=lambda r: -r["mean_jct"])
        ax[1].barh([r["policy"] for r in rows], [r["mean_jct"] for r in rows], xerr=[r["jct_ci95"] for r in rows],
                   color=["tab:orange" if r["policy"] == "rl" else "tab:blue" for r in rows])
        ax[1].set_xlabel(f"mean job completion time, {data['jobs_table']['seeds']} unseen seeds (95% CI)")
    if data.get("sweep"):
        taus = [r["tau"] for r in data["sweep"]]
        ax[1].errorbar(taus, [r["real_ratio"] for r in data["sweep"]], [r["ci95"] for r in data["sweep"]], marker="o")
        ax[1].set_xlabel("temperature tau")
        ax[1].set_ylabel("real makespan / HEFT")
    elif rounds and not data.get("jobs_table"):
        x = [h["round"] for h in rounds]
        ax[1].plot(x, [h["imagined_return"] for h in rounds], marker="o", label="imagined by the world model")
        ax[1].plot(x, [h["real_return"] for h in rounds], marker="s", label="real")
        ax[1].set_xticks(x)
        ax[1].set_xlabel("rl-world round")
        ax[1].set_ylabel("greedy controller's episode return (eval seeds)")
        ax[1].legend()
    fig.tight_layout()
    try:
        save_figure(fig, out / "report.png", dpi=90)
    finally:
        plt.close(fig)
