"""Floor 7 — learned schedulers: ``deepsched`` (a network imitating HEFT) and ``rl`` (PPO over a
graph network, a World-Models agent), plus their training-range check.  PyTorch is imported only
here, lazily.  The registry reaches these classes by ``"module:Class"`` strings, never by import."""
