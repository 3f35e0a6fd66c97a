#!/usr/bin/env python3
"""Print a pip constraints file that pins every dependency we declare to its floor.

    python .ci/lowest_constraints.py [EXTRA ...] > lowest.txt
    pip install -c lowest.txt -e '.[EXTRA,...]'

Reads ``pyproject.toml``'s ``project.dependencies`` and the named optional-dependency groups; each
requirement with a lower bound (``>=X`` or ``==X``) becomes ``name==X``; one without a floor is left out
(pip then takes the newest).  CI's lowest-versions lane installs with this file, so a floor that does not
hold (``typer>=0.12`` when the code needs 0.15) fails CI instead of a user's fresh install.  Markers
(``; python_version < '3.12'``) are kept.  Needs Python 3.11+ (tomllib); prints to stdout, no file written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?$")


def floor_pins(requirements: list[str]) -> list[str]:
    """``name==floor`` for each requirement string that has a ``>=`` or ``==`` bound (first one wins per
    package; a package named twice with different floors keeps the higher).  O(requirements).

    >>> floor_pins(["simpy>=4.1,<5", "dask[distributed]>=2024.1", "ruff", "numpy>=1.26"])
    ['dask==2024.1', 'numpy==1.26', 'simpy==4.1']
    """
    floors: dict[str, tuple[tuple[int, ...], str, str]] = {}
    for req in requirements:
        m = _REQ.match(req)
        if not m:
            raise SystemExit(f"error: cannot read requirement {req!r}")
        name, spec, marker = m.group(1).lower().replace("_", "-"), m.group(3), m.group(4) or ""
        bound = re.search(r"(?:>=|==)\s*([0-9][0-9A-Za-z.]*)", spec)
        if not bound:
            continue
        version = bound.group(1)
        key = tuple(int(x) for x in re.findall(r"\d+", version))
        if name not in floors or key > floors[name][0]:
            floors[name] = (key, version, marker.strip())
    return [f"{n}=={v}" + (f" {mk}" if mk else "") for n, (_, v, mk) in sorted(floors.items())]


def main(argv: list[str]) -> int:
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    unknown = [e for e in argv if e not in extras]
    if unknown:
        print(f"error: no extra {unknown[0]!r} in {pyproject.name}; extras: {', '.join(extras)}", file=sys.stderr)
        return 2
    reqs = list(project.get("dependencies", []))
    for extra in argv:
        reqs += extras[extra]
    print(f"# floors of simsched's dependencies{' + ' + ', '.join(argv) if argv else ''}, from pyproject.toml")
    print("\n".join(floor_pins(reqs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
