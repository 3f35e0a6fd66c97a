"""PPO training of the model-free agent on the engine-driven env.

PPO with the clipped surrogate objective (Schulman et al., "Proximal policy optimization
algorithms", 2017) and generalised advantage estimation (Schulman et al., "High-dimensional
continuous control using generalized advantage estimation", ICLR 2016); the policy is the GNN
two-step :class:`~simsched.learned.rl.nets.ActorCritic`.  Each iteration collects ``episodes_per_iter``
episodes on fresh training seeds, then runs ``epochs`` passes of minibatch updates.  Cost per
iteration: one forward per real step (collection) plus ``epochs`` forward/backward passes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from simsched.learned.rl.config import TrainConfig
from simsched.learned.rl.env import SchedulingEnv
from simsched.learned.rl.family import Family
from simsched.learned.rl.nets import ActorCritic, collate, network_for

Progress = Callable[[int, int, dict], None]


def make_family(cfg: TrainConfig):  # -> Family | StreamFamily
    """The config's family: the scenario's platform and generator, with the config's task range,
    job stream, noise range and disruptions; or, with ``stream_scenario``, that stream scenario's
    world (:class:`~simsched.learned.rl.family.StreamFamily`)."""
    from simsched.simulator.engine import Disruptions

    if cfg.worlds:
        from simsched.learned.rl.worldfamily import WorldsFamily

        return WorldsFamily()
    if cfg.stream_scenario is not None:
        from simsched.learned.rl.family import StreamFamily

        return StreamFamily.from_scenario(cfg.path(cfg.stream_scenario))
    return Family.from_scenario(cfg.path(cfg.scenario), tasks=tuple(cfg.tasks), n_jobs=cfg.jobs,
                                job_rate=cfg.job_rate, sigma_range=cfg.sigma,
                                disruptions=Disruptions(**cfg.disruptions.model_dump()))


def make_env(cfg: TrainConfig, family: Family | None = None) -> SchedulingEnv:
    fam = family or make_family(cfg)
    return SchedulingEnv(fam, reward=cfg.reward, max_tasks=max(64, fam.tasks[1] * fam.n_jobs),
                         max_procs=getattr(fam, "max_processors", None) or fam.platform.n_processors,
                         max_jobs=max(4, fam.n_jobs), fixed_seed=cfg.fixed_seed, arrived_only=cfg.arrived_only,
                         world_obs=cfg.world_obs)


@dataclass
class Transitions:
    """Collected steps (flattened over episodes) with GAE advantages and returns."""

    obs: list = field(default_factory=list)
    tasks: list = field(default_factory=list)
    procs: list = field(default_factory=list)
    logp: list = field(default_factory=list)
    adv: list = field(default_factory=list)
    ret: list = field(default_factory=list)
    episode_returns: list = field(default_factory=list)
    ratios: list = field(default_factory=list)


def gae(rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of one finished episode (bootstrap value 0 at the end).  O(T)."""
    adv = np.zeros_like(rewards)
    last = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        nxt = values[t + 1] if t + 1 < len(values) else 0.0
        delta = rewards[t] + gamma * nxt - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv, adv + values


def run_episode(env: SchedulingEnv, net: ActorCritic, seed: int | None, greedy: bool,
                gen: torch.Generator | None, episode=None) -> tuple[list, float, float]:
    """One episode; returns ``(steps, return, score / HEFT's score)`` (makespan, or mean job
    completion time for the ``jobs`` reward) with steps ``(obs, task, proc, logp, value, reward)``."""
    if episode is not None:
        env.load(episode)
    else:
        env.reset(seed=seed)
    steps, total, done, info = [], 0.0, False, {}
    while not done:
        o = env.obs
        with torch.no_grad():
            t, p, logp, _, v, _ = net(collate([o]), greedy=greedy, generator=gen)
        t, p = int(t[0]), int(p[0])
        _, r, done, _, info = env.step((t, p))
        steps.append((o, t, p, float(logp[0]), float(v[0]), float(r)))
        total += r
    return steps, total, info["score"] / info["baseline_score"]


def collect(env: SchedulingEnv, net: ActorCritic, seeds: list[int], cfg: TrainConfig,
            gen: torch.Generator) -> Transitions:
    tr = Transitions()
    for s in seeds:
        steps, total, ratio = run_episode(env, net, s, False, gen)
        rew = np.array([x[5] for x in steps])
        val = np.array([x[4] for x in steps])
        adv, ret = gae(rew, val, cfg.ppo.gamma, cfg.ppo.lam)
        for (o, t, p, lp, _, _), a, r in zip(steps, adv, ret):
            tr.obs.append(o)
            tr.tasks.append(t)
            tr.procs.append(p)
            tr.logp.append(lp)
            tr.adv.append(a)
            tr.ret.append(r)
        tr.episode_returns.append(total)
        tr.ratios.append(ratio)
    return tr


def ppo_update(net: ActorCritic, opt: torch.optim.Optimizer, tr: Transitions, cfg: TrainConfig,
               rng: np.random.Generator) -> dict:
    """``epochs`` passes of clipped-PPO minibatch updates.  Returns mean losses."""
    c = cfg.ppo
    n = len(tr.obs)
    adv = np.array(tr.adv, dtype=np.float32)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ret = torch.tensor(tr.ret, dtype=torch.float32)
    old = torch.tensor(tr.logp, dtype=torch.float32)
    tasks, procs = torch.tensor(tr.tasks), torch.tensor(tr.procs)
    advt = torch.from_numpy(adv)
    stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "clip_frac": 0.0}
    k = 0
    for _ in range(c.epochs):
        perm = rng.permutation(n)
        for i in range(0, n, c.minibatch):
            idx = perm[i:i + c.minibatch]
            b = collate([tr.obs[j] for j in idx])
            ti = torch.from_numpy(idx)
            _, _, logp, ent, value, _ = net(b, tasks[ti], procs[ti])
            ratio = (logp - old[ti]).exp()
            a = advt[ti]
            pl = -torch.min(ratio * a, ratio.clamp(1 - c.clip, 1 + c.clip) * a).mean()
            vl = ((value - ret[ti]) ** 2).mean()
            el = ent.mean()
            loss = pl + c.value_coef * vl - c.entropy * el
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), c.max_grad_norm)
            opt.step()
            stats["policy_loss"] += float(pl.detach())
            stats["value_loss"] += float(vl.detach())
            stats["entropy"] += float(el.detach())
            stats["clip_frac"] += float(((ratio - 1).abs() > c.clip).float().mean())
            k += 1
    return {key: v / max(k, 1) for key, v in stats.items()}


def behaviour_clone(env: SchedulingEnv, net: ActorCritic, seeds: list[int], cfg: TrainConfig,
                    rng: np.random.Generator) -> float:
    """Warm start: fit the two heads to the teacher's choices (``ppo.bc_teacher``: online HEFT or
    shortest remaining job first, both on the earliest-finish processor; :mod:`simsched.learned.rl.baselines`)
    on the states the teacher reaches.  Returns the final loss."""
    from simsched.schedulers.jobaware import OnlineHEFT, ShortestJobEFT

    teacher = ShortestJobEFT() if cfg.ppo.bc_teacher == "srjf" else OnlineHEFT()
    obs, tasks, procs = [], [], []
    for s in seeds:
        env.reset(seed=s)
        teacher.reset(env.episode.problem, rng)
        done = False
        while not done:
            t, p = teacher.choose(env.view)
            t = env.obs.row_of(t)
            obs.append(env.obs)
            tasks.append(t)
            procs.append(p)
            _, _, done, _, _ = env.step((t, p))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    tt, pt = torch.tensor(tasks), torch.tensor(procs)
    loss = torch.tensor(0.0)
    for _ in range(cfg.ppo.bc_epochs):
        perm = rng.permutation(len(obs))
        for i in range(0, len(obs), cfg.ppo.minibatch):
            idx = perm[i:i + cfg.ppo.minibatch]
            ti = torch.from_numpy(idx)
            _, _, logp, _, _, _ = net(collate([obs[j] for j in idx]), tt[ti], pt[ti])
            loss = -logp.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float(loss.detach())


def evaluate(env: SchedulingEnv, act: Callable, seeds: list[int]) -> dict:
    """Run ``act(env, episode)`` (one greedy episode in the env) on each seed's episode; returns the
    agent's scores (:meth:`SchedulingEnv.score`: makespan, or mean job completion time) and HEFT's
    static plan's under the same noise, and their ratio.  ``makespan``/``heft`` hold the same
    arrays (the score)."""
    ours, heft = [], []
    for s in seeds:
        act(env, env.family.draw(s))
        ours.append(env.score())
        heft.append(env.baseline_score)
    ours_a, heft_a = np.array(ours), np.array(heft)
    return {"score": ours_a, "baseline": heft_a, "makespan": ours_a, "heft": heft_a, "ratio": ours_a / heft_a}


def greedy_actor(net: ActorCritic) -> Callable:
    def act(env: SchedulingEnv, ep) -> float:
        run_episode(env, net, None, True, None, episode=ep)
        return env.score()
    return act


def eval_seeds(cfg: TrainConfig, k: int) -> list[int]:
    """The first ``k`` evaluation seeds (``eval.seed_offset`` on; training draws below it): the
    first ``eval.seeds`` of them select the checkpoint."""
    return [cfg.eval.seed_offset + i for i in range(k)]


def final_seeds(cfg: TrainConfig) -> list[int]:
    """The ``eval.final_seeds`` seeds of the final report: after the selection seeds, so neither
    training nor checkpoint selection saw them (disjoint from both by construction)."""
    return eval_seeds(cfg, cfg.eval.seeds + cfg.eval.final_seeds)[cfg.eval.seeds:]


def train_ppo(cfg: TrainConfig, progress: Progress | None = None,
              save: Callable[[ActorCritic, dict], None] | None = None,
              max_real_steps: int | None = None, env: SchedulingEnv | None = None) -> tuple[ActorCritic, list[dict]]:
    """Train the model-free agent; returns the best network (by evaluation ratio) and the history
    (one dict per iteration: real steps so far, wall time, mean training ratio and, every
    ``eval.every`` iterations, the evaluation ratio against HEFT)."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    env = env or make_env(cfg)
    net = network_for(cfg)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.ppo.lr)
    history: list[dict] = []
    best, best_state = np.inf, None
    t0 = time.perf_counter()
    seeds = eval_seeds(cfg, cfg.eval.seeds)
    its = cfg.ppo.iterations
    if cfg.ppo.bc_episodes:
        bc_loss = behaviour_clone(env, net, rng.integers(0, cfg.eval.seed_offset, cfg.ppo.bc_episodes).tolist(),
                                  cfg, rng)
        ev = evaluate(env, greedy_actor(net), seeds)
        history.append({"iteration": 0, "real_steps": env.real_steps, "wall_s": time.perf_counter() - t0,
                        "bc_loss": bc_loss, "eval_ratio": float(ev["ratio"].mean())})
        if cfg.ppo.bc_teacher != "rank":  # a cloned job-aware policy competes with the PPO iterations
            best = history[-1]["eval_ratio"]
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
            if save is not None:
                save(net, history[-1])
        if progress is not None:
            progress(0, its, history[-1])
    for it in range(1, its + 1):
        train_seeds = rng.integers(0, cfg.eval.seed_offset, cfg.ppo.episodes_per_iter).tolist()
        net.train()
        tr = collect(env, net, train_seeds, cfg, gen)
        stats = ppo_update(net, opt, tr, cfg, rng)
        rec = {"iteration": it, "real_steps": env.real_steps, "wall_s": time.perf_counter() - t0,
               "train_ratio": float(np.mean(tr.ratios)), "train_return": float(np.mean(tr.episode_returns)),
               **stats}
        if it % cfg.eval.every == 0 or it == its:
            steps_before = env.real_steps
            ev = evaluate(env, greedy_actor(net), seeds)
            env.real_steps = steps_before  # evaluation steps are not training samples
            rec["eval_ratio"] = float(ev["ratio"].mean())
            if rec["eval_ratio"] < best:
                best = rec["eval_ratio"]
                best_state = {k: v.clone() for k, v in net.state_dict().items()}
                if save is not None:
                    save(net, rec)
        history.append(rec)
        if progress is not None:
            progress(it, its, rec)
        if max_real_steps is not None and env.real_steps >= max_real_steps:
            break
    if best_state is not None:
        net.load_state_dict(best_state)
    return net, history
