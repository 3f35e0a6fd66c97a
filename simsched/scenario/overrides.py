"""Dotted field paths (``workload.ccr``, ``platform.processors[1].count``) and applying them to raw
scenario data.

A path is a sequence of mapping keys separated by dots, each optionally followed by list indices in
brackets.  :func:`parse_path` turns the text into a tuple of keys and indices (the ``loc`` format of
:mod:`simsched.scenario`), :func:`apply_overrides` returns a copy of the data with the
values set.  Overrides work on the plain data *before* validation, so the scenario parser checks the
result exactly as it checks a file.  A study's grid (:mod:`simsched.study.spec`) and a capacity
search's ``--over`` (:mod:`simsched.capacity.question`) both set fields this way.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from simsched.errors import SimschedError
from simsched.scenario.locate import dotted

Loc = tuple[Any, ...]

_SEGMENT = re.compile(r"([A-Za-z_][\w-]*)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")


def parse_path(text: str) -> Loc:
    """``"platform.processors[1].count"`` -> ``("platform", "processors", 1, "count")``.  Raises
    :class:`SimschedError` for malformed text.  O(len(text))."""
    if not isinstance(text, str) or not text:
        raise SimschedError(f"a field path must be a non-empty string like workload.ccr, got {text!r}")
    loc: list[Any] = []
    for part in text.split("."):
        match = _SEGMENT.fullmatch(part)
        if match is None:
            raise SimschedError(f"malformed field path {text!r}: expected names separated by dots, each "
                                f"optionally followed by [index], e.g. platform.processors[1].count")
        loc.append(match.group(1))
        loc.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(loc)


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``data`` with each ``path: value`` of ``overrides`` set.  Missing mapping keys
    are created (so a generator parameter the base scenario omits can be swept); a list index must
    exist.  Raises :class:`SimschedError` (field = the path) when a path cannot be followed.
    O(size of data + total path length)."""
    out = copy.deepcopy(dict(data))
    for text, value in overrides.items():
        loc = parse_path(text)
        node: Any = out
        for depth, key in enumerate(loc[:-1]):
            node = _step(node, key, loc[depth + 1], text, loc[: depth + 1])
        _set(node, loc[-1], copy.deepcopy(value), text)
    return out


def _where(loc: Loc) -> str:
    return dotted(loc) or "the top level"


def _step(node: Any, key: Any, next_key: Any, text: str, loc: Loc) -> Any:
    """The child of ``node`` at ``key``, created as an empty mapping when missing and the next key is
    a name."""
    if isinstance(key, int):
        if not isinstance(node, list):
            raise SimschedError(f"{_where(loc[:-1])} is not a list, cannot take [{key}]", field=text)
        if key >= len(node):
            raise SimschedError(f"{_where(loc[:-1])} has {len(node)} entries, no [{key}]", field=text)
        return node[key]
    if not isinstance(node, dict):
        raise SimschedError(f"{_where(loc[:-1])} is not a mapping, cannot set {key!r} in it", field=text)
    if node.get(key) is None:
        if isinstance(next_key, int):
            raise SimschedError(f"{_where(loc)} is not in the scenario, so it has no [{next_key}]", field=text)
        node[key] = {}
    return node[key]


def _set(node: Any, key: Any, value: Any, text: str) -> None:
    if isinstance(key, int):
        if not isinstance(node, list) or key >= len(node):
            raise SimschedError(f"no list entry [{key}] to set", field=text)
        node[key] = value
    elif isinstance(node, dict):
        node[key] = value
    else:
        raise SimschedError(f"cannot set {key!r}: its parent is not a mapping", field=text)
