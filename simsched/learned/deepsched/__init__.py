"""DeepSched: a neural network trained to schedule like HEFT (see docs/deepsched.md).

Modules: ``features`` (problem → normalised inputs), ``config`` (YAML schema), ``data`` (HEFT-labelled
shards), ``model`` (torch network, imported lazily), ``checkpoint`` (save/load), ``train``,
``scheduler`` (the ``deepsched`` planner) and ``evaluate`` (paper reproduction).  Nothing here
imports torch at import time.
"""
