"""``simsched train rl SCENARIO.yaml``: train ``rl`` on a user's own stream scenario within a CPU budget,
with the tool's seed spaces doing the bookkeeping (:mod:`simsched.run.seedspace`).

* **Train** on episodes drawn with seeds of the scenario's ``train`` space (the training streams of
  :class:`~simsched.learned.rl.family.StreamFamily`, never one of ``simsched run``'s days): first
  behaviour cloning of ``srjf-eft`` (the best rule on job streams; up to a third of the budget), then
  PPO iterations (Schulman et al. 2017) while the budget lasts.
* **Select** after cloning and after every PPO iteration: the candidate network runs as ``simsched
  run`` would run it (the registered ``rl`` agent, arrived-only view, guard on) on days of the
  ``select`` space, scored by the geometric mean of its per-day mean-JCT ratio to ``srjf-eft``; the
  best candidate is the checkpoint, written atomically (``OUTPUT/rl.pt``) whenever it improves,
  with the history (``OUTPUT/train_history.json``).
* **Report** on days of the ``evaluate`` space, which neither step touched: the paired ratio to
  ``srjf-eft`` with its 95% interval (``OUTPUT/report.json``).  The training seed may not lie in the
  evaluate or fresh space (refused before anything runs).
* ``resume``: start from ``OUTPUT/rl.pt`` (cloning skipped) with a new budget; the history continues.

Budget: CPU seconds of this process (``time.process_time``), checked before each step with the
previous step's cost as the estimate, so a run ends within about one step of it.  Cost per PPO
iteration: ``episodes_per_iter`` training episodes plus ``select_days`` engine runs of the candidate.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

MAX_BUDGET_MIN = 24 * 60.0
"""The largest CPU budget accepted (minutes)."""

MAX_DAYS = 1000
"""The most selection or report days accepted."""


def config_for(scenario: Path, out: Path, seed: int):  # -> TrainConfig
    """The training config of a scenario run: the scenario's world (``stream_scenario``, absolute),
    arrived-only observations, the job-stream reward, cloning of srjf-eft, the network of the shipped
    ``rl_dynamic`` checkpoint (hidden 64, 3 rounds).  Refuses a seed of the evaluate or fresh space
    (:class:`SimschedError`, field ``--seed``).  O(1)."""
    from simsched.errors import SimschedError
    from simsched.learned.rl.config import TrainConfig
    from simsched.run.seedspace import training_refusal

    why = training_refusal(seed)
    if why is not None:
        raise SimschedError(why, field="--seed")
    return TrainConfig(stream_scenario=str(scenario.resolve()), arrived_only=True, reward="jobs", seed=seed,
                       output=str(out), world={"enabled": False},
                       ppo={"iterations": 1, "episodes_per_iter": 4, "epochs": 3, "minibatch": 256, "lr": 3e-4,
                            "entropy": 0.003, "hidden": 64, "layers": 3, "bc_episodes": 12, "bc_epochs": 8,
                            "bc_teacher": "srjf"})


class _Selector:
    """Scores a candidate network on the select days as ``simsched run`` would run it; srjf-eft's
    days are run once.  O(days) engine runs per candidate."""

    def __init__(self, scenario_path: Path, days: int) -> None:
        from simsched.run.seedspace import space_seeds
        from simsched.run.streams import simulate_stream
        from simsched.scenario import load_scenario

        self.scenario = load_scenario(scenario_path)
        self.seeds = space_seeds(int(self.scenario.seed), "select", days)
        self.rule = {s: float(simulate_stream(self.scenario, "srjf-eft", s).metrics.summary["jct_mean"])
                     for s in self.seeds}

    def score(self, checkpoint: Path) -> float:
        """Geometric mean over the select days of the candidate's mean JCT / srjf-eft's."""
        from simsched.learned.rl import policy
        from simsched.run.streams import simulate_stream
        from simsched.schedulers import registry
        from simsched.stats import paired_ratio

        policy._load.cache_clear()  # the candidate file is rewritten between calls
        ours = {}
        for s in self.seeds:
            agent = registry.create("rl", checkpoint=str(checkpoint))
            ours[s] = float(simulate_stream(self.scenario, "rl", s, scheduler=agent).metrics.summary["jct_mean"])
        return float(paired_ratio(ours, self.rule).estimate)


def evaluation_report(scenario_path: Path, checkpoint: Path, days: int) -> dict:
    """``rl`` (the checkpoint) against srjf-eft on the first ``days`` days of the scenario's
    evaluate space: per-day mean JCTs, the paired ratio (geometric mean, 95% t interval) and days
    better.  O(days) engine runs of each."""
    import warnings

    from simsched.learned.rl import policy
    from simsched.run.seedspace import space_seeds
    from simsched.run.streams import simulate_stream
    from simsched.scenario import load_scenario
    from simsched.schedulers import registry
    from simsched.stats import paired_ratio

    sc = load_scenario(scenario_path)
    seeds = space_seeds(int(sc.seed), "evaluate", days)
    policy._load.cache_clear()
    ours, rule = {}, {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for s in seeds:
            rule[s] = float(simulate_stream(sc, "srjf-eft", s).metrics.summary["jct_mean"])
            agent = registry.create("rl", checkpoint=str(checkpoint))
            ours[s] = float(simulate_stream(sc, "rl", s, scheduler=agent).metrics.summary["jct_mean"])
    r = paired_ratio(ours, rule)
    return {"space": "evaluate", "days": len(seeds), "first_seed": seeds[0], "ratio": r.estimate, "low": r.low,
            "high": r.high, "better_days": int(sum(ours[s] < rule[s] for s in seeds)),
            "rl_jct_mean": float(np.mean(list(ours.values()))), "srjf_jct_mean": float(np.mean(list(rule.values()))),
            "guard_fell_back": any("falls back" in str(w.message) for w in caught),
            "rl": {str(s): v for s, v in ours.items()}, "srjf-eft": {str(s): v for s, v in rule.items()}}


def train_within_budget(scenario_path: Path, out: Path, budget_s: float, *, seed: int = 0, select_days: int = 8,
                        report_days: int = 20, resume: bool = False,
                        progress: Callable[[float, dict], None] | None = None) -> dict:
    """Train, select and report (see the module docstring); returns ``{"history", "best", "report"}``
    and writes ``rl.pt``, ``train_history.json`` and ``report.json`` into ``out``.
    ``progress(cpu_seconds_used, record)`` after each step."""
    import torch

    from simsched.errors import SimschedError
    from simsched.fileio import atomic_write_text
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.nets import ActorCritic
    from simsched.learned.rl.ppo import behaviour_clone, collect, make_env, ppo_update
    from simsched.run.seedspace import space_seeds

    cfg = config_for(scenario_path, out, seed)
    conf = cfg.model_dump()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    c0 = time.process_time()
    used = lambda: time.process_time() - c0  # noqa: E731
    env = make_env(cfg)
    net = ActorCritic(cfg.ppo.hidden, cfg.ppo.layers)
    best_path, cand_path, hist_path = out / "rl.pt", out / "candidate.pt", out / "train_history.json"
    history: list[dict] = []
    best = np.inf
    if resume:
        if not best_path.is_file():
            raise SimschedError(f"nothing to resume: {best_path} does not exist", field="--resume")
        from simsched.checkpoints import load_checked_state

        ck = checkpoint.load(best_path, "rl")
        load_checked_state(net, ck["state"], file=best_path, what="rl", retrain=checkpoint.RETRAIN["rl"])
        if hist_path.is_file():
            history = json.loads(hist_path.read_text())
        best = float(ck.get("meta", {}).get("select_ratio", np.inf))
    selector = _Selector(scenario_path, select_days)
    # this run's training days: a window of the train space per seed (1,024 windows of 1,024 episodes)
    first = space_seeds(int(selector.scenario.seed), "train", 1)[0] + (seed % 1024) * 1024
    drawn = int(history[-1].get("train_seeds_used", 0)) if history else 0

    def train_seeds(k: int) -> list[int]:
        nonlocal drawn
        drawn += k
        return list(range(first + drawn - k, first + drawn))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.ppo.lr)

    def select(rec: dict) -> None:
        nonlocal best
        checkpoint.save(cand_path, "rl", conf, net.state_dict(), rec)
        rec["select_ratio"] = selector.score(cand_path)
        rec["cpu_s"] = used()
        rec["train_seeds_used"] = drawn
        if rec["select_ratio"] < best:
            best = rec["select_ratio"]
            rec["best"] = True
            checkpoint.save(best_path, "rl", conf, net.state_dict(), rec)
        history.append(rec)
        atomic_write_text(hist_path, json.dumps(history, indent=1))
        if progress is not None:
            progress(used(), rec)

    step = 0.0
    if not resume:  # cloning srjf-eft: one episode, then as many more as a third of the budget allows
        t = used()
        loss = behaviour_clone(env, net, train_seeds(1), cfg, rng)
        per_episode = used() - t
        more = min(cfg.ppo.bc_episodes - 1, int((budget_s / 3 - used()) / max(per_episode, 1e-9)))
        if more > 0:
            loss = behaviour_clone(env, net, train_seeds(more), cfg, rng)
        select({"phase": "clone", "episodes": 1 + max(more, 0), "bc_loss": loss, "real_steps": env.real_steps})
    it = len([h for h in history if h.get("phase") == "ppo"])
    while True:
        t = used()
        if t + step >= budget_s:
            break
        it += 1
        seeds = train_seeds(cfg.ppo.episodes_per_iter)
        net.train()
        tr = collect(env, net, seeds, cfg, gen)
        stats = ppo_update(net, opt, tr, cfg, rng)
        net.eval()
        select({"phase": "ppo", "iteration": it, "real_steps": env.real_steps,
                "train_return": float(np.mean(tr.episode_returns)), **stats})
        step = used() - t
    cand_path.unlink(missing_ok=True)
    report = evaluation_report(scenario_path, best_path, report_days)
    report.update(select_days=select_days, select_first_seed=selector.seeds[0], train_first_seed=first,
                  train_episodes=drawn, select_ratio=best, cpu_s=used(), budget_s=budget_s)
    atomic_write_text(out / "report.json", json.dumps(report, indent=1))
    return {"history": history, "best": best, "report": report}
