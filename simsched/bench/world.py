"""``simsched bench world``: the model-based agent ``rl-world``'s world-model step beside a real
simulator step, timed in the same run on the family each shipped ``rl-world`` checkpoint was
trained on.

Rows (ratio = seconds per real step / seconds per world-model step; > 1: the dream is cheaper):

* **real step**: the SimPy-driven env's step with the features of the next decision point, and
  with the GNN encoding V of the latent ``z`` a controller acts on (what a real step costs an agent);
* **world-model step, unbatched**: C scores the slots, every ensemble member of M advances, one
  member's mixture is sampled — once in torch (:func:`~simsched.learned.rl.world.imagine`) and once
  in the numpy inference path (:class:`~simsched.learned.rl.world_numpy.NumpyDream`, weights
  exported from torch, no autograd, preallocated buffers);
* **world-model step, batched**: the same in torch over ``dream_batch`` rows, per row.

``ok``: the world-model step is cheaper than the real step with encoding.  Torch on one thread.
"""

from __future__ import annotations

from pathlib import Path


def world_checkpoints() -> list[Path]:
    """The shipped ``rl-world`` checkpoints (``rl_world*.pt`` in the package data), sorted."""
    from simsched.learned.rl.checkpoint import shipped_path

    return sorted(shipped_path("rl-world").parent.glob("rl_world*.pt"))


def world_rows(path: Path, real_steps: int = 300, dream_steps: int = 500) -> list[dict]:
    """Rows for one checkpoint (see the module docstring).  Cost: ``real_steps`` env steps with
    encodings, ``dream_steps`` numpy steps, 200 unbatched and 40 batched torch steps."""
    from simsched.learned.rl.checkpoint import config_of, load
    from simsched.learned.rl.policy import _load
    from simsched.learned.rl.report import measure_steps
    from simsched.learned.rl.world_numpy import time_unbatched
    from simsched.learned.runtime import torch_threads

    cfg = config_of(load(path, "rl-world"), path, "rl-world")
    cfg.base = str(Path(__file__).resolve().parents[2] / "scenarios" / "rl")  # where its scenario ships
    agent = _load("rl-world", str(path))
    with torch_threads(1):
        t = measure_steps(cfg, agent, n=real_steps)
        numpy_s = time_unbatched(agent, dream_steps)
    fam = f"{path.name}: {cfg.scenario}, {cfg.jobs} job(s)"
    real, enc = t["real_step_s"], t["real_step_with_encoding_s"]
    batch = agent.w.dream_batch
    rows = [dict(what="real step (engine + features)", size=fam, measured=real, baseline=None, ratio=None,
                 target="-", ok=None, unit="ms"),
            dict(what="real step with V's encoding", size=fam, measured=enc, baseline=None, ratio=None,
                 target="-", ok=None, unit="ms")]
    for what, s in (("world-model step, numpy, unbatched", numpy_s),
                    ("world-model step, torch, unbatched", t["world_step_s_batch1"]),
                    (f"world-model step, torch, batch {batch} (per row)", t[f"world_step_s_batch{batch}"])):
        rows.append(dict(what=what, size=fam, measured=s, baseline=enc, ratio=enc / s,
                         target="cheaper than a real step", ok=bool(s < enc), unit="ms"))
    return rows


def bench_world(quick: bool = False) -> list[dict]:
    """Rows for every shipped ``rl-world`` checkpoint (fewer steps with ``quick``)."""
    rows = []
    for path in world_checkpoints():
        rows += world_rows(path, 100 if quick else 300, 200 if quick else 1000)
    return rows
