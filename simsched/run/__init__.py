"""Floor 5 — running a scenario: ``run_scenario`` for task-graph and autotuning scenarios, the
results document (``results``), the reader of results documents (``document``), capacity search.

Imports only from ``scenario`` and the floors below it; never from ``study``, ``learned``,
``report``, ``bench`` or ``cli``."""
