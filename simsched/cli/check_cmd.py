"""``simsched check IMPORT_PATH_OR_NAME [--examples N]``: run the scheduler contract and report.

Exit codes: 0 when every property holds, 1 when a defect was found (each printed with the smallest
failing example hypothesis found), 2 on bad input (an unknown name, a plug-in that does not import
or implements no interface, a bad parameter).  hypothesis is imported only when the command runs.
"""

from __future__ import annotations

from typing import Any

import typer

from simsched.cli.common import console as _console
from simsched.cli.common import user_errors


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict, each value read as YAML (``insertion=false`` -> False)."""
    from simsched.errors import SimschedError
    from simsched.yamlio import parse_yaml

    params: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SimschedError(f"--param {item!r}: write it as NAME=VALUE")
        try:
            params[key.strip()] = parse_yaml(value).data
        except SimschedError as exc:
            raise SimschedError(f"--param {item!r}: {exc.message}") from None
    return params


@user_errors
def check(
    target: str = typer.Argument(..., help="A registered scheduler name or an import path module:Class.",
                                 show_default=False),
    examples: int = typer.Option(50, "--examples", "-n", min=1, max=100_000, help="Examples per property."),
    seed: int = typer.Option(0, "--seed", help="Seed of the example search (reproducible runs)."),
    param: list[str] | None = typer.Option(None, "--param", "-p",
                                           help="Scheduler parameter NAME=VALUE (repeatable)."),
    prop: list[str] | None = typer.Option(None, "--property", "-P",
                                          help="Check only this property (repeatable): valid, bound, "
                                               "determinism, replay, no-mutation, infeasible, no-future; for "
                                               "an autotuning policy complete, conflict-free, determinism; "
                                               "for a batch policy complete, capacity, determinism."),
) -> None:
    """Check a scheduler against the contract every built-in meets; exit 1 on a defect."""
    from simsched.errors import SimschedError
    from simsched.report.contract import print_contract_report
    from simsched.schedulers import registry

    if examples < 1:
        raise SimschedError(f"--examples must be >= 1, got {examples}")
    spec = registry.spec(target)
    if spec is not None and spec.kind == "autotune":
        from simsched.testing.autotune_contract import check_autotune_policy as check_scheduler
    elif spec is not None and spec.kind == "batch":
        from simsched.testing.batch_contract import check_batch_policy as check_scheduler
    else:
        from simsched.testing.contract import check_scheduler
    from simsched.testing.contract_search import hypothesis_home_outside_cwd

    with hypothesis_home_outside_cwd():  # nothing written into the user's current folder
        report = check_scheduler(target, examples=examples, seed=seed, params=parse_params(param),
                                 properties=prop or None)
    print_contract_report(report, _console())
    if not report.passed:
        raise typer.Exit(1)

