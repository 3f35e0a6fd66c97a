"""``python -m simsched.cli.hostile``: the hostile-input campaign (:mod:`simsched.testing.hostile`) over
this command line.  Not a ``simsched`` subcommand: it attacks the app, it is not part of it."""

from __future__ import annotations

import sys

from simsched.cli.main import app, main
from simsched.testing.hostile import main as campaign


def entry(argv: list[str]) -> None:
    """One ``simsched ARGV`` run, exactly as the console script does it."""
    sys.argv = ["simsched", *argv]
    main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(campaign(app, entry))
