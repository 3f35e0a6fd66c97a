"""``python -m simsched.cli.hostile``: the hostile-input campaign (:mod:`simsched.testing.hostile`) over
this command line.  Not a ``simsched`` subcommand: it attacks the app, it is not part of it.  It hands
the campaign what lives above the testing floor: the app, its entry point, the study file's model."""

from __future__ import annotations

import sys

from simsched.cli.main import app, main
from simsched.testing.hostile.campaign import main as campaign


def roots() -> list[tuple[type, str]]:
    """Top-level input models beside the scenario's: the study file (base ``study``)."""
    from simsched.study.spec import StudyModel

    return [(StudyModel, "study")]


def warm() -> None:
    """Import what the commands import lazily, once, before the campaign forks its children."""
    import simsched.capacity  # noqa: F401
    import simsched.run.runner  # noqa: F401
    import simsched.study.sweep  # noqa: F401
    import simsched.workloads.generators  # noqa: F401
    from simsched.schedulers import registry

    for name in ("heft", "mct", "cpop", "peft", "minmin"):
        registry.load_class(name)


def entry(argv: list[str]) -> None:
    """One ``simsched ARGV`` run, exactly as the console script does it (``main`` names the program
    itself, so ``sys.argv`` is not needed)."""
    main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(campaign(app, entry, roots=roots(), warm=warm))
