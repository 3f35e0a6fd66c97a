"""Floor 5 — running scenarios: ``run_scenario`` for task-graph and autotuning scenarios (``runner``),
batch runs of cluster logs (``batch``), the results document (``results``) and its reader
(``document``); and many runs at once: ``executors`` (a local process pool or a Dask cluster, whose
workers die with their parent: ``lifeline``) and the crash-safe, resumable results store (``store``,
written as ``tables`` with the ``columns`` of a results row), which sweeps and capacity searches share.

Imports only from ``scenario`` and the floors below it; never from ``capacity``, ``study``,
``learned``, ``report``, ``bench`` or ``cli``."""
