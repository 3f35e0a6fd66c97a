"""Replay an SWF file through AccaSim and print every job's start.

AccaSim (Galleguillos, Kiziltan, Netti, Soto, "AccaSim: a customizable workload management simulator
for job dispatching research in HPC systems", Cluster Computing 23, 2020) is the PyPI package
``accasim``; this adapter was run with version 1.1.3 (``pip install accasim==1.1.3`` in a separate
virtual environment).  It builds a system of M nodes of one core each, reads the SWF file with
AccaSim's own default reader, dispatches with its FirstInFirstOut, ShortestJobFirst or
EASYBackfilling scheduler and the FirstFit allocator, and writes the dispatching plan with integer
times.  accasim 1.1.3 imports ``collections.Mapping`` (gone since Python 3.10): the aliases are put
back before it is imported.

Usage: python accasim_adapter.py FILE.swf M fifo|sjf|ebf OUTDIR
Writes OUTDIR/sched-FILE.swf, one line per job: job queued start end cores expected.
"""

import collections
import collections.abc
import json
import os
import sys

for _name in ("Mapping", "MutableMapping", "Iterable", "Sequence", "Callable"):
    setattr(collections, _name, getattr(collections.abc, _name))

from accasim.base.allocator_class import FirstFit  # noqa: E402
from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut, ShortestJobFirst  # noqa: E402
from accasim.base.simulator_class import Simulator  # noqa: E402


def main() -> None:
    path, m, policy, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    os.makedirs(out, exist_ok=True)
    config = os.path.join(out, "system.json")
    with open(config, "w") as f:
        json.dump({"groups": {"g0": {"core": 1}}, "resources": {"g0": m},
                   "equivalence": {"processor": {"core": 1}}, "start_time": 0}, f)
    allocator = FirstFit()
    dispatcher = {"fifo": FirstInFirstOut, "sjf": ShortestJobFirst, "ebf": EASYBackfilling}[policy](allocator)
    plan = {"format": "{job_id} {queue_time} {start_time} {end_time} {cores} {expected}\n",
            "attributes": {"job_id": ("id", "str"), "queue_time": ("queued_time", "int"),
                           "start_time": ("start_time", "int"), "end_time": ("end_time", "int"),
                           "cores": ("core", "int"), "expected": ("expected_duration", "int")}}
    sim = Simulator(path, config, dispatcher, RESULTS_FOLDER_PATH=out, SCHEDULE_OUTPUT=plan,
                    statistics_output=False, show_statistics=False, pprint_output=False)
    sim.start_simulation()


if __name__ == "__main__":
    main()
