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
    """Scores a candidate network on select days as ``simsched run`` would run it; srjf-eft's days
    are run once.  ``days``: ``(scenario, stream or None, seed)``.  O(days) engine runs per candidate."""

    def __init__(self, days: list) -> None:
        from simsched.run.streams import simulate_stream

        self.days = list(days)
        self.seeds = [d[2] for d in self.days]
        self.rule = {i: float(simulate_stream(sc, "srjf-eft", s, st).metrics.summary["jct_mean"])
                     for i, (sc, st, s) in enumerate(self.days)}

    @classmethod
    def of_scenario(cls, scenario_path: Path, days: int) -> _Selector:
        """The first ``days`` days of the scenario's ``select`` space."""
        from simsched.run.seedspace import space_seeds
        from simsched.scenario import load_scenario

        sc = load_scenario(scenario_path)
        out = cls([(sc, None, s) for s in space_seeds(int(sc.seed), "select", days)])
        out.scenario = sc
        return out

    def score(self, checkpoint: Path) -> float:
        """Geometric mean over the select days of the candidate's mean JCT / srjf-eft's."""
        from simsched.learned.rl import policy
        from simsched.run.streams import simulate_stream
        from simsched.schedulers import registry
        from simsched.stats import paired_ratio

        policy._load.cache_clear()  # the candidate file is rewritten between calls
        ours = {}
        for i, (sc, st, s) in enumerate(self.days):
            agent = registry.create("rl", checkpoint=str(checkpoint))
            ours[i] = float(simulate_stream(sc, "rl", s, st, scheduler=agent).metrics.summary["jct_mean"])
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
    from simsched.fileio import atomic_write_text
    from simsched.run.seedspace import space_seeds

    cfg = config_for(scenario_path, out, seed)
    c0 = time.process_time()
    selector = _Selector.of_scenario(scenario_path, select_days)
    # this run's training days: a window of the train space per seed (1,024 windows of 1,024 episodes)
    first = space_seeds(int(selector.scenario.seed), "train", 1)[0] + (seed % 1024) * 1024
    history, best = clone_then_ppo(cfg, out, budget_s, selector, first, resume=resume, progress=progress, c0=c0)
    report = evaluation_report(scenario_path, out / "rl.pt", report_days)
    report.update(select_days=select_days, select_first_seed=selector.seeds[0], train_first_seed=first,
                  train_episodes=int(history[-1].get("train_seeds_used", 0)) if history else 0, select_ratio=best,
                  cpu_s=time.process_time() - c0, budget_s=budget_s)
    atomic_write_text(out / "report.json", json.dumps(report, indent=1))
    return {"history": history, "best": best, "report": report}


def clone_then_ppo(cfg, out: Path, budget_s: float, selector: _Selector, first: int, *, resume: bool = False,
                   progress: Callable[[float, dict], None] | None = None, meta: dict | None = None,
                   c0: float | None = None) -> tuple[list[dict], float]:
    """The training loop of :func:`train_within_budget` and :func:`train_across_worlds`: cloning
    ``srjf-eft`` (up to a third of the budget, at most ``cfg.ppo.bc_episodes`` episodes; skipped
    with ``resume``), then PPO iterations while the budget lasts, every candidate scored by
    ``selector`` and the best written to ``OUT/rl.pt`` (with ``meta`` in its metadata) and the
    history to ``OUT/train_history.json``.  Training episodes are the env family's seeds ``first``,
    ``first + 1``, ...  Returns ``(history, best selection score)``.  Budget: CPU seconds since
    ``c0`` (default: now).  Cost: as the module docstring."""
    import torch

    from simsched.errors import SimschedError
    from simsched.fileio import atomic_write_text
    from simsched.learned.rl import checkpoint
    from simsched.learned.rl.nets import network_for
    from simsched.learned.rl.ppo import behaviour_clone, collect, make_env, ppo_update

    seed = int(cfg.seed)
    conf = cfg.model_dump()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    c0 = time.process_time() if c0 is None else c0
    used = lambda: time.process_time() - c0  # noqa: E731
    env = make_env(cfg)
    net = network_for(cfg)
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
    drawn = int(history[-1].get("train_seeds_used", 0)) if history else 0

    def train_seeds(k: int) -> list[int]:
        nonlocal drawn
        drawn += k
        return list(range(first + drawn - k, first + drawn))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.ppo.lr)

    def select(rec: dict) -> None:
        nonlocal best
        checkpoint.save(cand_path, "rl", conf, net.state_dict(), {**rec, **(meta or {})})
        rec["select_ratio"] = selector.score(cand_path)
        rec["cpu_s"] = used()
        rec["train_seeds_used"] = drawn
        if rec["select_ratio"] < best:
            best = rec["select_ratio"]
            rec["best"] = True
            checkpoint.save(best_path, "rl", conf, net.state_dict(), {**rec, **(meta or {})})
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
    return history, best


WORLDS_RANGE_DRAWS = 48
"""Training worlds drawn to measure a worlds checkpoint's range (:func:`~simsched.learned.rl.policy.episodes_range`)."""


def worlds_config(out: Path, seed: int):  # -> TrainConfig
    """The config of :func:`train_across_worlds`: episodes from the worlds sampler
    (:class:`~simsched.learned.rl.worldfamily.WorldsFamily`), arrived-only observations with the world
    description (``world_obs``), the job-stream reward, cloning of srjf-eft, the network of
    ``rl_dynamic`` (hidden 64, 3 rounds).  Refuses a seed of the evaluate or fresh space.  O(1)."""
    from simsched.errors import SimschedError
    from simsched.learned.rl.config import TrainConfig
    from simsched.run.seedspace import training_refusal

    why = training_refusal(seed)
    if why is not None:
        raise SimschedError(why, field="--seed")
    return TrainConfig(worlds=True, world_obs=True, arrived_only=True, reward="jobs", seed=seed, output=str(out),
                       world={"enabled": False},
                       ppo={"iterations": 1, "episodes_per_iter": 4, "epochs": 3, "minibatch": 256, "lr": 3e-4,
                            "entropy": 0.003, "hidden": 64, "layers": 3, "bc_episodes": 48, "bc_epochs": 8,
                            "bc_teacher": "srjf"})


def train_across_worlds(out: Path, budget_s: float, *, seed: int = 0, select_days: int = 6,
                        bar_days: int | None = None, range_draws: int = WORLDS_RANGE_DRAWS,
                        bc_episodes: int = 48, bc_epochs: int = 8, episodes_per_iter: int = 4,
                        progress: Callable[[float, dict], None] | None = None) -> dict:
    """``rl`` trained across worlds (``OUT/rl.pt``; shipped as ``rl_worlds.pt``): cloning of srjf-eft
    then PPO on worlds of the ``train`` seed space (:func:`clone_then_ppo`, ``budget_s`` CPU seconds
    in all), every candidate scored on ``select_days`` worlds of the ``select`` space plus as many
    ``select`` days of ``scenarios/streams/rl_dynamic.yaml`` (``bar_days`` of them if given;
    :func:`simsched.learned.rl.worlds.world_days`, ``bar_days``).  The training range (for the guard)
    is measured on the first ``range_draws`` training worlds and stored in the checkpoint's metadata;
    training worlds start after :data:`WORLDS_RANGE_DRAWS` (a window per seed).  ``bc_episodes``,
    ``bc_epochs``, ``episodes_per_iter``: the config's cloning and PPO sizes.  Returns ``{"history", "best",
    "clone_ratio"}``.  Cost: the budget plus the selection's srjf-eft runs and range draws."""
    from simsched.learned.rl import worlds
    from simsched.learned.rl.policy import episodes_range
    from simsched.learned.rl.worldfamily import WorldsFamily

    world_days = worlds.world_days
    cfg = worlds_config(out, seed)
    cfg.ppo.bc_episodes, cfg.ppo.bc_epochs, cfg.ppo.episodes_per_iter = bc_episodes, bc_epochs, episodes_per_iter
    c0 = time.process_time()
    fam = WorldsFamily()
    span = episodes_range("rl_worlds", (fam.draw(k) for k in range(range_draws)))
    bar = select_days if bar_days is None else bar_days
    selector = _Selector(world_days("select", 0, select_days) + (worlds.bar_days("select", bar) if bar else []))
    first = WORLDS_RANGE_DRAWS + (seed % 1024) * 4096  # training worlds after the range's draws
    history, best = clone_then_ppo(cfg, out, budget_s, selector, first, progress=progress,
                                   meta={"range": span, "select_days": select_days}, c0=c0)
    clone = next((h["select_ratio"] for h in history if h.get("phase") == "clone"), None)
    return {"history": history, "best": best, "clone_ratio": clone}


def main(argv: list[str] | None = None) -> int:
    """``python -m simsched.learned.rl.budget worlds -o DIR [--budget-min M] [--select-days S] [--seed K]``:
    :func:`train_across_worlds`; one located line and exit 2 on bad input."""
    import argparse
    import math

    from simsched.errors import SimschedError

    p = argparse.ArgumentParser(prog="python -m simsched.learned.rl.budget",
                                description="train rl across worlds within a CPU budget")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worlds", help="clone srjf-eft, then PPO, across worlds of the train seed space")
    w.add_argument("-o", "--output", required=True)
    w.add_argument("--budget-min", type=float, default=20.0)
    w.add_argument("--select-days", type=int, default=6)
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--bar-days", type=int, default=None, help="select days of rl_dynamic.yaml (default: --select-days)")
    w.add_argument("--range-draws", type=int, default=WORLDS_RANGE_DRAWS)
    w.add_argument("--bc-episodes", type=int, default=48)
    w.add_argument("--bc-epochs", type=int, default=8)
    w.add_argument("--episodes-per-iter", type=int, default=4)
    a = p.parse_args(argv)
    for name, lo, hi in (("bar_days", 0, MAX_DAYS), ("range_draws", 1, 1000), ("bc_episodes", 1, 10000),
                         ("bc_epochs", 1, 1000), ("episodes_per_iter", 1, 1000)):
        v = getattr(a, name)
        if v is not None and not lo <= v <= hi:
            print(f"error: --{name.replace('_', '-')}: expected {lo} to {hi}, got {v}")
            return 2
    if not (math.isfinite(a.budget_min) and 0 < a.budget_min <= MAX_BUDGET_MIN):
        print(f"error: --budget-min: expected minutes in (0, {MAX_BUDGET_MIN:g}], got {a.budget_min}")
        return 2
    if not 1 <= a.select_days <= MAX_DAYS:
        print(f"error: --select-days: expected 1 to {MAX_DAYS}, got {a.select_days}")
        return 2
    if not 0 <= a.seed < 2**31:
        print(f"error: --seed: expected 0 to {2**31 - 1}, got {a.seed}")
        return 2

    def show(cpu: float, rec: dict) -> None:
        print(f"{rec['phase']} {rec.get('iteration', '')}: select ratio {rec['select_ratio']:.4f}"
              f"{' (best)' if rec.get('best') else ''}, {cpu:.0f} s CPU", flush=True)
    from simsched.outputs import output_files, release_outputs

    try:  # the folder and the files written into it, checked before any work (an existing file: refused)
        output_files(a.output, ("rl.pt", "candidate.pt", "train_history.json"), option="-o")
    except SimschedError as exc:
        release_outputs()
        print(f"error: {exc}")
        return 2
    import torch

    torch.set_num_threads(1)  # CPU seconds are the budget: one thread is the cheapest per update
    try:
        res = train_across_worlds(Path(a.output), 60.0 * a.budget_min, seed=a.seed, select_days=a.select_days,
                                  bar_days=a.bar_days, range_draws=a.range_draws, bc_episodes=a.bc_episodes,
                                  bc_epochs=a.bc_epochs, episodes_per_iter=a.episodes_per_iter, progress=show)
    except SimschedError as exc:
        print(f"error: {exc}")
        return 2
    finally:
        release_outputs()
    print(f"selection ratio to srjf-eft: after cloning {res['clone_ratio']:.4f}, best {res['best']:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
