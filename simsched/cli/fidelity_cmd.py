"""``simsched calibrate CORPUS... -o PROFILE.yaml`` and ``simsched fidelity CORPUS... [--profile ...]``.

Thin commands over :mod:`simsched.fidelity`: check the options and outputs (nothing is written when
anything is wrong: exit 2 with one located line), call :func:`~simsched.fidelity.calibrate_corpus` or
:func:`~simsched.fidelity.fidelity_of` with a progress bar on stderr, print through
:mod:`simsched.report.fidelity` and write the profile, ``--json`` and ``--html`` atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from simsched.errors import SimschedError
from simsched.report.terminal import Progress, console

if TYPE_CHECKING:
    from simsched.fidelity.table import FidelityTable

CORPUS_HELP = "WfFormat instances: folders (walked for *.json) or files, e.g. a clone of WfInstances."
SKIP_HELP = "List instances that fail to import and go on (default: the first one is an error)."
REGRESSION_HELP = ("Start each search from the better of its start point and a linear fit of the training "
                   "makespans on the run's critical path, levels, tasks and bytes (default), or from the start alone.")
SPLIT_KIND_HELP = ("How each installation's runs are split: per-application (default: each application's runs "
                   "alternate on their own, from a seeded part) or alternate (the split before it, one alternation "
                   "along all applications: to reproduce numbers measured with it).")


def _found(corpus: list[Path]) -> list[tuple[Path, str]]:
    """Every instance file of the corpus with its name (an output may be none of them)."""
    from simsched.fidelity.corpus import find_instances

    return find_instances(corpus)


def calibrate(
    corpus: list[Path] = typer.Argument(..., help=CORPUS_HELP),
    output: Path = typer.Option(..., "-o", "--output", help="The calibrated profile to write (.yaml)."),
    installation: str = typer.Option(None, "--installation", help="Calibrate this installation only (its label, "
                                     "as `simsched fidelity` prints it); default: every one."),
    budget: float = typer.Option(600.0, "--budget", help="CPU seconds for all installations together."),
    seed: int = typer.Option(0, "--seed", help="Seed of the train/held-out split and of the optimiser."),
    bound: list[str] = typer.Option(None, "--bound", help="NAME=LOW,HIGH: the search range of one parameter "
                                    "(repeatable; LOW=HIGH fixes it), e.g. --bound slots=1,8."),
    hold_out: list[str] = typer.Option(None, "--hold-out", help="An application to hold out whole (repeatable): "
                                       "calibrate on the others, predict it."),
    per_application: bool = typer.Option(True, "--per-application/--per-installation",
                                         help="Refine each application's parameters within its installation "
                                         "(default), or fit one point per installation only."),
    min_runs: int = typer.Option(3, "--min-runs", help="Training runs an application needs for its own "
                                 "refinement (fewer: its installation's point)."),
    prior: float = typer.Option(None, "--prior", help="Weight of the pull towards the start point (the "
                                "documented defaults; an application: its installation's point), divided by the "
                                "training runs: 0 fits the runs alone."),
    search: str = typer.Option(None, "--search", help="The global search of each installation: cma (CMA-ES, "
                               "the default) or de (differential evolution); Nelder-Mead refines after either."),
    regression: bool = typer.Option(True, "--regression-start/--no-regression-start", help=REGRESSION_HELP),
    split_runs: bool = typer.Option(True, "--split/--no-split", help="Hold out about half of each "
                                    "installation's runs (default), or train on every run given (bar --hold-out): "
                                    "score runs brought later with `simsched fidelity RUNS --profile`."),
    evaluations: int = typer.Option(None, "--evaluations", help="Simulations of each installation's training "
                                    "runs (an application's refinement: half), --budget then only a ceiling: a "
                                    "profile that any machine reproduces to the bit."),
    split_kind: str = typer.Option(None, "--split-kind", help=SPLIT_KIND_HELP),
    skip_refused: bool = typer.Option(False, "--skip-refused", help=SKIP_HELP),
) -> None:
    """Fit the model's parameters per installation (and application) on its training runs; write a profile."""
    from simsched.fidelity import calibrate_corpus, write_profile
    from simsched.fidelity.calibrate import PRIOR_WEIGHT
    from simsched.fidelity.corpus import SPLIT
    from simsched.fidelity.search import SEARCH
    from simsched.limits import check_seed
    from simsched.outputs import check_output
    from simsched.report.fidelity import print_calibrations, print_identifiability

    check_seed(seed)
    prior = PRIOR_WEIGHT if prior is None else prior
    search = SEARCH if search is None else search
    check_output(output, option="-o", suffixes=(".yaml", ".yml"), inputs=[p for p, _ in _found(corpus)])
    bar = Progress()
    try:
        done = calibrate_corpus(corpus, budget_s=budget, seed=seed, installation=installation, bounds=bound or (),
                                skip_refused=skip_refused, hold_out=hold_out or (),
                                per_application=per_application, min_runs=min_runs, prior=prior, search=search,
                                regression=regression, split_runs=split_runs, evaluations=evaluations,
                                split_kind=split_kind or SPLIT, progress=bar)
    finally:
        bar.close()
    out = console()
    print_calibrations(done.calibrations, out)
    print_identifiability(done.diagnoses, out)
    write_profile(output, done.calibrations, done.corpus, budget_s=budget, prior=prior, search=search,
                  regression=regression, evaluations=evaluations)
    out.print(f"profile written to {output}", highlight=False)


def calibrate_curve(
    corpus: list[Path] = typer.Argument(..., help=CORPUS_HELP),
    sizes: str = typer.Option("2,4", "--sizes", help="Training runs per fit, comma-separated (e.g. 2,4)."),
    draws: int = typer.Option(3, "--draws", help="Random training sets of each size per installation."),
    priors: str = typer.Option("0,1", "--priors", help="Prior weights to compare on the same draws (e.g. 0,1)."),
    budget: float = typer.Option(8.0, "--budget", help="CPU seconds per fit."),
    score_runs: int = typer.Option(8, "--score-runs", help="Held-out runs each fit is scored on, per installation."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split, the draws and the optimiser."),
    search: str = typer.Option(None, "--search", help="Each fit's global search: cma (the default) or de."),
    regression: bool = typer.Option(True, "--regression-start/--no-regression-start", help=REGRESSION_HELP),
    json_path: Path = typer.Option(None, "--json", help="Also write every fit and the summary as JSON."),
    split_kind: str = typer.Option(None, "--split-kind", help=SPLIT_KIND_HELP),
) -> None:
    """How many runs an installation needs: calibrate on k random training runs, score on held-out runs."""
    from simsched.fidelity.corpus import SPLIT, read_corpus
    from simsched.fidelity.curve import as_dict, check_options, learning_curve
    from simsched.fidelity.search import SEARCH, check_search
    from simsched.fileio import atomic_write_text
    from simsched.limits import check_seed
    from simsched.outputs import check_output, strict_json
    from simsched.report.fidelity import print_curve

    check_seed(seed)
    numbers = []
    for text, option, kind in ((sizes, "--sizes", int), (priors, "--priors", float)):
        try:
            numbers.append([kind(v) for v in text.split(",")])
        except ValueError:
            raise SimschedError(f"must be {'whole ' if kind is int else ''}numbers separated by commas, got "
                                f"{text!r}", field=option) from None
    check_options(numbers[0], draws, numbers[1], budget, score_runs)
    search = SEARCH if search is None else search
    check_search(search)
    if json_path is not None:
        check_output(json_path, option="--json", suffixes=(".json",), inputs=[p for p, _ in _found(corpus)])
    bar = Progress()
    try:
        read = read_corpus(corpus, seed=seed, split_kind=split_kind or SPLIT)
        points = learning_curve(read, sizes=numbers[0], draws=draws, priors=numbers[1], budget_s=budget,
                                score_runs=score_runs, seed=seed, search=search,
                                regression=regression, progress=bar)
    finally:
        bar.close()
    print_curve(points, console(), seed=seed, budget_s=budget)
    if json_path is not None:
        atomic_write_text(json_path, strict_json(as_dict(points)))


def fidelity(
    corpus: list[Path] = typer.Argument(..., help=CORPUS_HELP),
    profile: Path = typer.Option(None, "--profile", help="A profile from `simsched calibrate`: adds the "
                                 "calibrated model (and uses its train/held-out split)."),
    json_path: Path = typer.Option(None, "--json", help="Also write every execution and aggregate as JSON."),
    html_path: Path = typer.Option(None, "--html", help="Also write an HTML report with Gantt charts."),
    gantt: list[str] = typer.Option(None, "--gantt", help="Execution (as in the table) whose Gantt chart the "
                                    "HTML report draws (repeatable; 'all': every one); default: the first "
                                    "held-out run of each installation."),
    seed: int = typer.Option(None, "--seed", help="Seed of the train/held-out split (default: the profile's, else 0)."),
    scheduler: str = typer.Option("recorded", "--scheduler", "-s", help="Online policy placing the tasks "
                                  "(default: the recorded placement)."),
    wide: bool = typer.Option(False, "--wide", help="Largest error and bias too, and a row per execution "
                              "(the default table fits 100 columns)."),
    split_kind: str = typer.Option(None, "--split-kind", help=SPLIT_KIND_HELP + " Default: the profile's."),
    skip_refused: bool = typer.Option(False, "--skip-refused", help=SKIP_HELP),
) -> None:
    """Simulate every recorded execution; the makespan error on held-out runs, per installation, system, app."""
    from simsched.fidelity import fidelity_of
    from simsched.fileio import atomic_write_text
    from simsched.limits import check_seed
    from simsched.outputs import check_output, strict_json
    from simsched.report.fidelity import print_fidelity
    from simsched.report.fidelity_html import write_fidelity_html

    check_seed(seed)
    if profile is not None:
        from simsched.fileio import not_a_file

        if (why := not_a_file(profile)) is not None:  # never opened: a FIFO or a device cannot block
            from simsched.errors import cut

            raise SimschedError(why, file=cut(str(profile), 100), field="--profile")
    found = _found(corpus)
    inputs = [*(p for p, _ in found), *([profile] if profile is not None else [])]
    for path, option, suffixes in ((json_path, "--json", (".json",)), (html_path, "--html", (".html", ".htm"))):
        if path is not None:
            check_output(path, option=option, suffixes=suffixes, inputs=inputs)
    if json_path is not None and html_path is not None and json_path.resolve() == html_path.resolve():
        raise SimschedError("--json and --html must name different files")
    if gantt and html_path is None:
        raise SimschedError("draws in the HTML report: give --html too", field="--gantt")
    _check_gantt(gantt or [], [name for _, name in found])
    bar = Progress()
    try:
        table = fidelity_of(corpus, profile=profile, seed=seed, scheduler=scheduler, keep=html_path is not None,
                            skip_refused=skip_refused, split_kind=split_kind, progress=bar)
    finally:
        bar.close()
    chosen = _gantt_choice(table, gantt or [])
    print_fidelity(table, console(), wide)
    if json_path is not None:
        atomic_write_text(json_path, strict_json(table.as_dict()))
    if html_path is not None:
        write_fidelity_html(table, html_path, chosen)


def _check_gantt(asked: list[str], names: list[str]) -> None:
    """:class:`SimschedError` naming the closest for an execution ``--gantt`` names that the corpus lacks."""
    from simsched.errors import did_you_mean

    for name in asked:
        if name != "all" and name not in names:
            raise SimschedError(f"no execution {name!r} in the corpus{did_you_mean(name, names)}", field="--gantt")


def _gantt_choice(table: FidelityTable, asked: list[str]) -> list[str]:
    """The executions whose Gantt charts the report draws (see ``--gantt``; a refused one is left out).
    O(executions)."""
    if "all" in asked:
        return [r.name for r in table.rows]
    if asked:
        return [name for name in dict.fromkeys(asked) if name in table.simulations]
    first: dict[str, str] = {}
    for r in table.rows:
        if r.part == "held-out":
            first.setdefault(r.installation, r.name)
    return list(first.values())
