"""Reinforcement learning for scheduling: a gymnasium env on the SimPy engine, PPO + GNN (``rl``)
and a model-based agent with an MDN-RNN world model (``rl-world``).  See ``docs/rl.md``.

Importing this package registers ``simsched/Scheduling-v0`` with gymnasium when gymnasium is
installed (the ``rl`` extra).  torch is imported only by the modules that need it
(:mod:`simsched.learned.rl.nets`, :mod:`simsched.learned.rl.ppo`, :mod:`simsched.learned.rl.world`).
"""

from __future__ import annotations

ENV_ID = "simsched/Scheduling-v0"


def _register() -> None:
    try:
        import gymnasium
    except ImportError:  # the optional 'rl' extra is not installed
        return
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="simsched.learned.rl.env:SchedulingEnv")


_register()
