"""Fingerprints of simsched objects, to tell whether a scheduler modified its input.

:func:`fingerprint` walks a :class:`~simsched.simulator.problem.Problem` (and the graph and platform
inside it) attribute by attribute: arrays by dtype, shape, writeable flag and a hash of their bytes,
nested simsched objects by identity and content, anything else by ``repr``.  :func:`changes` lists
what differs.  Private attributes that were ``None`` before (lazy caches such as
``Problem._mean_cost``) may be filled in.  O(total size of the arrays).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


def _slots(obj: Any) -> list[str]:
    names: list[str] = []
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in names and name not in ("__dict__", "__weakref__"):
                names.append(name)
    names.extend(k for k in getattr(obj, "__dict__", {}) if k not in names)
    return names


def _walk(prefix: str, value: Any, out: dict[str, str], depth: int) -> None:
    if isinstance(value, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(value).tobytes(), digest_size=12).hexdigest()
        out[prefix] = f"array {value.dtype} {value.shape} writeable={value.flags.writeable} {digest}"
        return
    module = type(value).__module__ or ""
    if module.startswith("simsched.") and depth < 4 and not isinstance(value, type):
        out[prefix] = f"{type(value).__name__} object id {id(value)}"
        for name in _slots(value):
            _walk(f"{prefix}.{name}", getattr(value, name, "<unset>"), out, depth + 1)
        return
    if isinstance(value, dict):
        out[prefix] = f"dict id {id(value)}"
        for key in sorted(value, key=repr):
            _walk(f"{prefix}[{key!r}]", value[key], out, depth + 1)
        return
    out[prefix] = repr(value)


def fingerprint(obj: Any, name: str = "problem") -> dict[str, str]:
    """``{attribute path: description}`` of ``obj`` and everything simsched-owned inside it."""
    out: dict[str, str] = {}
    _walk(name, obj, out, 0)
    return out


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Readable differences between two fingerprints (empty when nothing changed), ignoring lazy
    caches: private attributes whose value before was ``None``."""
    found = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        cache_root = next((k for k in before if key.startswith(k) and before[k] == "None"
                           and k.rsplit(".", 1)[-1].startswith("_")), None)
        if cache_root is not None:
            continue
        if old is None:
            found.append(f"{key} was added")
        elif new is None:
            found.append(f"{key} was removed")
        elif old.startswith("array") and new.startswith("array"):
            what = "writeable flag" if old.split(" writeable=")[1][:4] != new.split(" writeable=")[1][:4] \
                else "contents"
            found.append(f"{key}: its {what} changed")
        else:
            found.append(f"{key} changed from {old[:60]} to {new[:60]}")
    return found
