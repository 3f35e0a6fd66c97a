"""Studies: parameter sweeps over scenario variants, schedulers and seeds, with resumable results.

* :mod:`~simsched.study.spec` — the study file, its expansion into points and runs (with ids);
* :mod:`~simsched.study.overrides` — dotted field paths applied to raw scenario data;
* :mod:`~simsched.study.work` — what a worker runs (a chunk of runs -> rows);
* :mod:`~simsched.study.executors` — a local process pool or a Dask cluster;
* :mod:`~simsched.study.store`, :mod:`~simsched.study.tables` — crash-safe CSV/Parquet results;
* :mod:`~simsched.study.sweep` — the loop tying them together;
* :mod:`~simsched.study.stats` — mean and 95% confidence intervals per scheduler and point.

dask/distributed and pyarrow are optional (``pip install -e '.[study]'``); CSV results and the
process pool need neither.
"""
