"""simsched: a discrete-event testbed for scheduling work on heterogeneous distributed systems.

Layers (dependencies point one way):

* :mod:`simsched.workloads` — what is run (task graphs, generators, importers); imports neither
  of the others.
* :mod:`simsched.simulator` — the ground truth: platform and cost model, problems, plans and
  schedules, the SimPy engine and the fast evaluator, scenario loading.  It defines the interfaces
  a policy must meet and never imports :mod:`simsched.schedulers`.
* :mod:`simsched.schedulers` — interchangeable policies behind one registry.
* :mod:`simsched.cli` — the runner and the command line, the one place that connects them.
"""

__version__ = "0.1.0"
