"""The power model and energy accounting: what a run drew, computed after it from what the engine recorded.

A :class:`ProcessorPower` says what one processor draws in each state (watts):

* **busy** at P-state ``k`` (a task runs): ``pstates[k].busy_w``; a task run at P-state ``k`` takes
  ``speed_0 / speed_k`` times its nominal duration, the cost model's (P-state 0 is the nominal one);
* **idle** (switched on, nothing running): ``pstates[k].idle_w`` of the P-state it is in, that is the
  P-state of the last task it ran (P-state 0 before its first task) — a one-core SimGrid host keeps
  its P-state until told otherwise, and so does ours;
* **switching** P-state: ``switch_latency`` time units taken from the idle gap just before the task that
  needs the new P-state (clipped to that gap), drawing the idle watts of the old P-state, plus a lump
  ``switch_energy_j`` per switch;
* **off** (powered down by a policy): ``off_w``; the first ``off_delay`` of an off interval is powering
  down and its last ``on_delay`` is powering up (both count as *switching* and draw ``off_w``), plus lumps
  ``off_energy_j`` per power-down and ``on_energy_j`` per power-up completed within the horizon;
* **failed** (down after a failure, until repaired): ``failed_w``, by default ``off_w``.

Energy is the integral of that power over ``[0, horizon]`` (the run's makespan: processors that
finished early idle until the end, as SimGrid hosts do until the simulation ends), in joules once time
is converted to seconds (``time_unit_s`` seconds per simulated time unit), plus the lumps, plus
``link_j_per_unit`` joules per unit of data moved between two different processors.

The engine only records intervals (it already does: each task's start and finish, each killed
attempt, each down interval); :func:`account` turns them into time in each state and energy in one
vectorised pass (numpy sorts and bincounts, no Python loop over tasks), so the accounting costs
O(k log k) for k intervals.  Conservation holds by construction and is checked:
``busy + idle + off + switching + failed == horizon`` for every processor.

Carbon (:func:`carbon_g`) integrates the same power over time against an intensity trace (gCO2/kWh,
step or linear interpolation); money (:func:`cost_usd`) bills processor-hours and kWh.  Semantics
beside SimGrid's host energy plugin (Heinrich et al., "Predicting the Energy Consumption of MPI
Applications at Scale Using a Single Node", IEEE Cluster 2017): docs/energy.md.

The rooms: :mod:`~simsched.simulator.power.model` (what a processor draws: :class:`PState`,
:class:`ProcessorPower`, :class:`PowerModel`, :class:`PowerTables`),
:mod:`~simsched.simulator.power.intervals` (what a run recorded: :class:`Intervals`),
:mod:`~simsched.simulator.power.accounting` (:func:`account`: time in each state and joules),
:mod:`~simsched.simulator.power.profile` (power over time for reports: :func:`power_profile`),
:mod:`~simsched.simulator.power.costs` (:func:`carbon_g`, :func:`cost_usd`),
:mod:`~simsched.simulator.power.measure` (a scenario's :class:`EnergySetup` and its measurement).
"""

from simsched.simulator.power.accounting import EnergyAccount, account, energy_of_steps, step_function
from simsched.simulator.power.costs import J_PER_KWH, IntensityTrace, Price, carbon_g, cost_usd
from simsched.simulator.power.intervals import Intervals, without_down
from simsched.simulator.power.measure import EnergySetup
from simsched.simulator.power.model import PowerModel, PowerTables, ProcessorPower, PState
from simsched.simulator.power.profile import PROFILE_BINS, mean_power, power_profile, processor_steps

__all__ = ["J_PER_KWH", "PROFILE_BINS", "EnergyAccount", "EnergySetup", "IntensityTrace", "Intervals", "PState",
           "PowerModel", "PowerTables", "Price", "ProcessorPower", "account", "carbon_g", "cost_usd",
           "energy_of_steps", "mean_power", "power_profile", "processor_steps", "step_function", "without_down"]
