"""What ``simsched calibrate`` and ``simsched fidelity`` print (:mod:`simsched.fidelity`).

* :func:`print_calibrations`: one row per installation — training runs, the objective (mean
  ``|log(simulated / recorded makespan)|``) at the start and after, the fitted parameters, the
  simulations and CPU seconds it took and why it stopped;
* :func:`print_identifiability`: per unit, the mechanisms its training runs cannot tell apart and the
  fitted parameters at the edge of their box (:mod:`~simsched.fidelity.identify`);
* :func:`print_fidelity`: the held-out errors by installation, workflow system and application, each
  model side by side (median / mean ``|relative error|``; ``wide`` adds the largest and the bias,
  and a row per execution), the run-to-run spread where the corpus repeats a workflow
  (:func:`print_spread`), then the runs and CPU time.  The default table fits 100 columns.

Errors are shown as signed or absolute percentages (:func:`percent`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from simsched.fidelity.calibrate import Calibration
from simsched.fidelity.curve import CurvePoint
from simsched.fidelity.identify import Diagnosis
from simsched.fidelity.table import FidelityTable, Stats
from simsched.report.fit import fit_width, print_natural, print_table

_KIND_TITLE = {"installation": "installation", "wms": "workflow system", "application": "application", "all": "all"}


def percent(x: float, signed: bool = False) -> str:
    """``x`` (a fraction) as a percentage with one decimal (``-`` for NaN); ``signed`` shows ``+``."""
    if not math.isfinite(x):
        return "-"
    return f"{x:+.1%}" if signed else f"{x:.1%}"


def _params(c: Calibration) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in c.parameters.as_dict().items())


def print_calibrations(calibrations: Sequence[Calibration], console: Console) -> None:
    """The calibration table (see the module docstring)."""
    table = Table(title="calibration on the training runs (objective: mean |log(simulated/recorded)|)",
                  title_justify="left")
    for name, justify in (("installation / application", "left"), ("runs", "right"), ("before", "right"),
                          ("after", "right"), ("simulations", "right"), ("CPU s", "right"), ("stopped", "left")):
        table.add_column(name, justify=justify, overflow="fold", max_width=40)  # type: ignore[arg-type]
    for c in calibrations:
        table.add_row(escape(c.label), str(len(c.train)), f"{c.start_error:.3f}", f"{c.train_error:.3f}",
                      str(c.evaluations), f"{c.cpu_s:.1f}", c.stopped)
    print_table(console, table)
    for c in calibrations:
        console.print(f"{escape(c.label)}: {escape(_params(c))}", highlight=False, width=100)


def print_identifiability(diagnoses: Sequence[Diagnosis], console: Console) -> None:
    """What each unit's training runs cannot pin down (:mod:`~simsched.fidelity.identify`): a row per unit
    with something to say, or one line when none has."""
    rows = [d for d in diagnoses if not d.clean]
    if not rows:
        console.print("every unit's training runs tell its mechanisms apart; no parameter ended at the edge of "
                      "its box", highlight=False, width=100)
        return
    table = Table(title="what the training runs cannot pin down", title_justify="left")
    for name, justify, width in (("installation / application", "left", 30), ("runs", "right", None),
                                 ("told apart", "right", None), ("cannot tell apart", "left", 30),
                                 ("at the edge of its box", "left", 22)):
        table.add_column(name, justify=justify, overflow="fold", max_width=width)  # type: ignore[arg-type]
    for d in rows:
        apart = ", ".join(d.confounded) + (f"; never exercised: {', '.join(d.absent)}" if d.absent else "")
        table.add_row(escape(d.label), str(d.runs), f"{d.exercised} of {d.mechanisms}", escape(apart or "-"),
                      escape(", ".join(d.at_edge) or "-"))
    print_table(console, table)
    for d in rows:
        if d.together:
            console.print(f"{escape(d.label)}: over its {d.runs} training runs these barely vary: "
                          f"{', '.join(d.together)}", highlight=False, width=100)
    console.print("A run that varies what cannot be told apart in another proportion than the training runs, or "
                  "needs a parameter beyond its box, is predicted by a split of its time that nothing measured.",
                  highlight=False, width=100)


def print_fidelity(table: FidelityTable, console: Console, wide: bool = False) -> None:
    """The held-out table (see the module docstring)."""
    out = Table(title="relative makespan error on HELD-OUT runs (|simulated/recorded - 1|)", title_justify="left")
    out.add_column("group", overflow="fold", max_width=None if wide else 34)
    out.add_column("runs", justify="right")
    for m in table.models:
        if wide:
            for stat in ("median", "mean", "max", "bias"):
                out.add_column(f"{m}\n{stat}", justify="right")
        else:
            out.add_column(f"{m}\nmedian / mean", justify="right")
    kind = None
    for g in table.groups:
        if g.kind != kind and kind is not None:
            out.add_section()
        kind = g.kind
        cells = [escape(g.key if g.kind == "all" else f"{_KIND_TITLE[g.kind]}: {g.key}"), str(g.runs)]
        for s in g.stats:
            if wide:
                cells += [percent(s.median), percent(s.mean), percent(s.max), percent(s.bias, signed=True)]
            else:
                cells.append(f"{percent(s.median)} / {percent(s.mean)}")
        out.add_row(*cells)
    if wide:  # every cell whole at its natural width, as --wide promises
        print_natural(console, out)
    else:
        console.print(out)
    print_spread(table, console)
    print_intervals(table, console)
    print_extent(table, console)
    if wide:
        print_executions(table, console)
    held = sum(r.part == "held-out" for r in table.rows)
    starts = sum(any(s is not None for s in r.start_error) for r in table.rows)
    console.print(f"{len(table.rows)} executions ({held} held out, {len(table.rows) - held} trained on), "
                  f"{len(table.refused)} refused; {starts} with task start times"
                  f"{'' if starts else ' (no start-time error to report)'}; simulated in "
                  f"{table.cpu_s:.1f} CPU s; split seed {table.seed}"
                  + (f"; profile {escape(table.profile)}" if table.profile else ""), highlight=False, width=100)
    for name, reason in table.refused:
        console.print(f"refused: {escape(name)}: {escape(reason)}", highlight=False, width=100)


def print_spread(table: FidelityTable, console: Console) -> None:
    """The run-to-run spread (:mod:`simsched.fidelity.repeats`): per installation with repeated
    workflows, the repeats' prediction error beside the last model's on the same held-out runs; one
    line when the corpus has no repeats."""
    if not table.spread:
        console.print("run-to-run spread: no held-out run has a repeat (same workflow, same installation, "
                      "file names differing only in a trailing run number)", highlight=False, width=100)
        return
    model = table.models[-1]
    out = Table(title="run-to-run spread: each held-out run predicted from its repeats' overheads (an oracle)",
                title_justify="left")
    out.add_column("installation", overflow="fold", max_width=40)
    out.add_column("runs", justify="right")
    out.add_column("repeats\nmedian / mean", justify="right")
    out.add_column(f"{model}\nmedian / mean", justify="right")
    out.add_column("spread\nmakespan / input", justify="right")
    for g in table.spread:
        out.add_row(escape(g.installation), str(g.runs), f"{percent(g.repeats_median)} / {percent(g.repeats_mean)}",
                    f"{percent(g.model_median)} / {percent(g.model_mean)}",
                    f"{percent(g.makespan_spread)} / {percent(g.input_spread)}")
    print_table(console, out)
    console.print("spread: the median distance of a run's recorded makespan, and of today's simulation of it "
                  "(its input), from the median of its workflow's runs; where the inputs agree and the makespans "
                  "do not, no deterministic model of a run comes closer on the median", highlight=False, width=100)


def interval_text(radius: float) -> str:
    """A log-scale radius as the interval's ends relative to the simulation (``-11% / +13%``), or "too
    few training runs" when infinite."""
    if not math.isfinite(radius):
        return "too few training runs"
    return f"{math.exp(-radius) - 1:+.0%} / {math.exp(radius) - 1:+.0%}"


def print_intervals(table: FidelityTable, console: Console) -> None:
    """The last model's prediction intervals per installation (:mod:`simsched.fidelity.intervals`) and
    how many held-out runs each covered, then the total over installations with a finite interval."""
    from simsched.fidelity.intervals import COVERAGE

    if not table.intervals:
        return
    out = Table(title=f"{COVERAGE:.0%} interval of the {table.models[-1]} makespan, from its training runs' errors "
                      "(split conformal)", title_justify="left")
    out.add_column("installation", overflow="fold", max_width=40)
    for name in ("training runs", "interval", "held-out covered"):
        out.add_column(name, justify="right")
    for g in table.intervals:
        covered = f"{g.covered} / {g.held_out}" if math.isfinite(g.radius) else f"- / {g.held_out}"
        out.add_row(escape(g.installation), str(g.train_runs), interval_text(g.radius), covered)
    finite = [g for g in table.intervals if math.isfinite(g.radius)]
    if finite:
        held = sum(g.held_out for g in finite)
        covered = sum(g.covered for g in finite)
        out.add_section()
        out.add_row("all with an interval", str(sum(g.train_runs for g in finite)), "",
                    f"{covered} / {held} ({covered / held:.0%})")
    print_table(console, out)


def print_extent(table: FidelityTable, console: Console) -> None:
    """The last model's held-out errors on the runs within the range their calibration was trained on,
    on those beyond it in size only and on those of another shape (:mod:`simsched.fidelity.extent`), with
    how many lie beyond in each feature; then on the runs whose mix those training runs pinned down and on
    the others (:data:`~simsched.fidelity.identify.UNPINNED`, :mod:`simsched.fidelity.identify`).  Each
    part only where the profile recorded what it needs; nothing when it recorded neither.  Beside each
    group, how many of its runs with a finite interval (:func:`print_intervals`) fell inside it: the
    intervals come from the training runs' errors and say nothing of a run unlike them."""
    from simsched.fidelity.extent import FEATURES, KINDS, LABELS, SLACK, kind
    from simsched.fidelity.identify import UNPINNED
    from simsched.fidelity.intervals import COVERAGE

    held = [r for r in table.rows if r.part == "held-out" and (r.beyond is not None or r.unexercised is not None)]
    if not held:
        return
    k = len(table.models) - 1
    out = Table(title=f"held-out runs against their calibration's training runs: the range they span ({SLACK:g}x "
                      f"slack; larger, smaller: in size only, another shape: in work or bytes per task) and the "
                      f"mix they pinned down (unpinned: {UNPINNED:.0%} or more of the run's mix in directions they "
                      f"did not exercise)", title_justify="left")
    out.add_column("runs")
    out.add_column("count", justify="right")
    out.add_column(f"{table.models[k]}\nmedian / mean", justify="right")
    out.add_column(f"in its {COVERAGE:.0%}\ninterval", justify="right")
    out.add_column("beyond in", overflow="fold", max_width=44)
    radius = {g.installation: g.radius for g in table.intervals}

    def row(label: str, members: list, note: str) -> None:
        s = Stats.of(np.array([r.error(k) for r in members], dtype=np.float64))
        judged = [r for r in members if math.isfinite(radius.get(r.installation, math.inf))
                  and math.isfinite(r.simulated[k]) and r.simulated[k] > 0]
        inside = sum(abs(math.log(r.simulated[k] / r.recorded)) <= radius[r.installation] for r in judged)
        out.add_row(label, str(len(members)), f"{percent(s.median)} / {percent(s.mean)}",
                    f"{inside} / {len(judged)}" if judged else "-", note)

    ranged = [r for r in held if r.beyond is not None]
    for label in KINDS if ranged else ():
        members = [r for r in ranged if kind(r.beyond or (), r.below) == label]
        if members or label == "within":
            counts = [f"{LABELS[f]} {sum(f in (r.beyond or ()) for r in members)}" for f in FEATURES
                      if any(f in (r.beyond or ()) for r in members)]
            row(label, members, ", ".join(counts) or "-")
    mixed = [r for r in held if r.unexercised is not None]
    if mixed:
        if ranged:
            out.add_section()
        for label, members in (("pinned", [r for r in mixed if (r.unexercised or 0.0) < UNPINNED]),
                               ("unpinned", [r for r in mixed if (r.unexercised or 0.0) >= UNPINNED])):
            if members or label == "pinned":
                row(label, members, "-" if label == "pinned" else "the mix (a share of it outside: median "
                    f"{np.median([r.unexercised for r in members]):.0%})")
    print_table(console, out)


def print_executions(table: FidelityTable, console: Console) -> None:
    """One row per execution: part, tasks, recorded makespan, each model's simulated makespan and error,
    the start-time error (median/p95 seconds) where starts are recorded, and what lies beyond its
    calibration's training range and how much of its mix lies outside what its training runs exercised."""
    from simsched.fidelity.extent import LABELS

    out = Table(title="every execution", title_justify="left")
    for name, justify in (("execution", "left"), ("installation", "left"), ("part", "left"), ("tasks", "right"),
                          ("recorded s", "right")):
        out.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for m in table.models:
        out.add_column(f"{m} s", justify="right")
        out.add_column(f"{m} error", justify="right")
        out.add_column(f"{m} starts", justify="right")
    out.add_column("beyond its training range")
    out.add_column("unexercised", justify="right")
    for r in table.rows:
        cells = [escape(r.name), escape(r.installation), r.part, str(r.tasks),
                 "-" if r.recorded is None else f"{r.recorded:.0f}"]
        for k in range(len(table.models)):
            s = r.start_error[k]
            cells += ["-" if not math.isfinite(r.simulated[k]) else f"{r.simulated[k]:.0f}",
                      percent(r.error(k), signed=True), "-" if s is None else f"{s[0]:.1f}/{s[1]:.1f}"]
        out.add_row(*cells, "-" if not r.beyond else ", ".join(LABELS[f] for f in r.beyond),
                    "-" if r.unexercised is None else f"{r.unexercised:.0%}")
    print_natural(console, out)


def print_curve(points: Sequence[CurvePoint], console: Console, *, seed: int, budget_s: float) -> None:
    """``simsched calibrate-curve``'s table: per training-set size and prior, the fits and the median,
    mean and 90th percentile of the absolute held-out errors (:func:`~simsched.fidelity.curve.summary`)."""
    from simsched.fidelity.curve import summary

    installs = sorted({p.installation for p in points})
    draws = len({p.draw for p in points})
    console.print(f"held-out |relative makespan error| after calibrating on k runs (seed {seed}, "
                  f"{len(installs)} installations x {draws} draws, {budget_s:g} CPU s per fit)",
                  highlight=False, width=fit_width(console))
    table = Table()
    for name in ("k", "prior", "fits", "median", "mean", "p90"):
        table.add_column(name, justify="right")
    for k, prior, fits, med, mean, p90 in summary(points):
        table.add_row(str(k), f"{prior:g}", str(fits), percent(med), percent(mean), percent(p90))
    print_table(console, table)
