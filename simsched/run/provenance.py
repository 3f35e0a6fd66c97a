"""Who computed a stored result, and from what: the code version and content digests.

A result read back (a capacity day in a results store, a row of a sweep) can only be trusted as far as
what it records about its making.  Two facts are recorded here:

* :func:`code_version` — the simsched release *and* a digest of the package's own source files
  (``0.1.0+3f9a1c0b2d4e``): two checkouts that report the same release but simulate differently (an
  edited engine, another branch) give different versions, so a store never mixes their days;
* :func:`digest` — 16 hex digits of the SHA-256 of a value's canonical JSON (sorted keys, no spaces,
  ``NaN``/``Infinity`` as JSON writes them), the identity of a scenario's content or of a stored row;
  :func:`file_digests` adds the content of the files a scenario reads (job files, traces, checkpoints),
  named relative to the scenario, so that moving the files together keeps the identity and editing one
  changes it.

SHA-256 detects every change to what it covers; it is an integrity check, not a signature (someone who
recomputes the digest after an edit is not stopped by it).  O(size of what is hashed).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DIGEST_HEX = 16
"""Hex digits kept of a SHA-256 digest (64 bits: no accidental collision among a store's rows)."""


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``"<release>+<12 hex digits>"``: the release (``simsched.__version__``) and the SHA-256 of every
    ``.py`` file of the installed package (relative name and bytes, in name order), computed once per
    process.  The release alone where no source file can be read.  O(size of the package), ~40 ms."""
    from simsched import __version__

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    found = False
    for path in sorted(root.rglob("*.py")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found = True
        h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0" + data + b"\0")
    return f"{__version__}+{h.hexdigest()[:12]}" if found else __version__


def canonical(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys, compact separators, non-finite floats as JSON's
    ``NaN``/``Infinity`` tokens, other objects through ``str``).  O(size of the value)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def digest(value: Any) -> str:
    """:data:`DIGEST_HEX` hex digits of the SHA-256 of :func:`canonical` ``value``."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()[:DIGEST_HEX]


def file_digests(paths: Iterable[str | Path], base: str | Path | None) -> dict[str, str]:
    """``{name: SHA-256 of the content}`` of each file of ``paths`` (``"missing"`` for one that can no
    longer be read, or is no longer a regular file), named relative to the directory ``base`` (absolute
    when ``base`` is None): the identity of the files a scenario reads, independent of where the scenario
    and its files were moved together.  O(total size of the files)."""
    out: dict[str, str] = {}
    for path in paths:
        name = os.path.relpath(path, base) if base is not None else os.path.abspath(path)
        h = hashlib.sha256()
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # replaced by a FIFO or a device since: never opened
                raise OSError
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            out[Path(name).as_posix()] = h.hexdigest()
        except OSError:
            out[Path(name).as_posix()] = "missing"
    return out
