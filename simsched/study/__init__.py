"""Studies: parameter sweeps over scenario variants, schedulers and seeds, with resumable results.

* :mod:`~simsched.study.spec` — the study file, its expansion into points and runs (with ids), each
  point's fields set with :mod:`simsched.scenario.overrides`;
* :mod:`~simsched.study.work` — what a worker runs (a chunk of runs -> rows);
* :mod:`~simsched.study.sweep` — the loop tying them together, on a :mod:`simsched.run.executors`
  executor (a local process pool or a Dask cluster), into a :mod:`simsched.run.store` results store
  (crash-safe CSV/Parquet, :mod:`simsched.run.tables`);
* :mod:`~simsched.study.stats` — mean and 95% confidence intervals per scheduler and point.

dask/distributed and pyarrow are optional (``pip install -e '.[study]'``); CSV results and the
process pool need neither.
"""
