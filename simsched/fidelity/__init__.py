"""How far is the simulator from reality: recorded executions, the model of a run, calibration per
installation on training runs, and the fidelity table on held-out runs.  Floor 6, above ``run/``.

One room per concern:

* :mod:`~simsched.fidelity.corpus` — WfFormat instances found in folders, read with their records,
  grouped into installations, split into training and held-out runs (seeded, by file name);
* :mod:`~simsched.fidelity.model` — a recorded run as a problem (its machines as hosts of slots, its
  runtimes), the free :class:`~simsched.fidelity.model.Parameters`, one simulation in the online engine
  under the ``recorded`` policy or a named one;
* :mod:`~simsched.fidelity.calibrate` — the parameters fitted per installation on its training runs
  (a global search then Nelder-Mead, bounded, seeded, within a CPU budget);
* :mod:`~simsched.fidelity.search` — the searches: CMA-ES from a Latin hypercube sample (the default),
  differential evolution, the Nelder-Mead refinement;
* :mod:`~simsched.fidelity.bottleneck` — a start point read off the training runs by a linear fit of
  their makespans (start-up, critical path, levels, tasks, bytes), which every search tries first;
* :mod:`~simsched.fidelity.extent` — the range a unit's training runs span, and the runs beyond it;
* :mod:`~simsched.fidelity.identify` — what a unit's training runs cannot pin down: the mechanisms they
  vary together, the parameters fitted to the edge of their box (said by ``simsched calibrate``);
* :mod:`~simsched.fidelity.curve` — the learning curve of calibration (``simsched calibrate-curve``);
* :mod:`~simsched.fidelity.profile` — the calibrated profile file, written and read (checked: it is input);
* :mod:`~simsched.fidelity.table` — every execution simulated under each model, errors on held-out runs;
* :mod:`~simsched.fidelity.ask` — the calls of ``simsched calibrate`` and ``simsched fidelity``.

Printing and pictures: :mod:`simsched.report.fidelity`, :mod:`simsched.report.fidelity_html`.
"""

from simsched.fidelity.ask import Calibrated, calibrate_corpus, fidelity_of
from simsched.fidelity.calibrate import Bound, Calibration, calibrate, objective
from simsched.fidelity.corpus import HELD_OUT, TRAIN, Corpus, Execution, read_corpus, split
from simsched.fidelity.model import Parameters, Simulated, build_problem, simulate
from simsched.fidelity.profile import Profile, read_profile, write_profile
from simsched.fidelity.table import FidelityTable, fidelity_table

__all__ = ["HELD_OUT", "TRAIN", "Bound", "Calibrated", "Calibration", "Corpus", "Execution", "FidelityTable",
           "Parameters", "Profile", "Simulated", "build_problem", "calibrate", "calibrate_corpus", "fidelity_of",
           "fidelity_table", "objective", "read_corpus", "read_profile", "simulate", "split", "write_profile"]
