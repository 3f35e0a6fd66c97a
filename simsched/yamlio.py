"""Safe YAML loading that remembers where every value came from.

:func:`load_yaml` reads a file with PyYAML's *safe* loader (no Python objects), builds plain Python
data (dicts, lists, scalars) by walking the composed node tree itself, and records for each field
path — a tuple of mapping keys and sequence indices, e.g. ``("platform", "processors", 0, "speed")``
— the 1-based line it is written on.  Validation errors can then say *where* a bad value is.

Safety:

* only the safe tags (``!!python/...`` and other custom tags are refused with their line);
* duplicate keys in a mapping are an error (PyYAML silently keeps the last one);
* nesting deeper than :func:`simsched.limits.current`'s ``max_depth`` is refused from the parser's
  event stream *before* the (recursive, C-level) composer runs, so a document nested 100,000
  deep is an error with its line, not a segmentation fault; files above ``max_yaml_mb`` are
  refused before they are read;
* aliases are shared, not copied, and before anything is built the size the document *would* have
  once every alias is expanded is computed (linear in the document, memoised per node); past
  :data:`MAX_NODES` the file is refused as a likely "billion laughs" alias bomb.  Recursive aliases
  are refused too.  Treat the returned data as read-only, since aliased parts are shared.

Every problem is raised as a :class:`~simsched.errors.SimschedError` carrying the file and line.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from simsched import limits
from simsched.errors import SimschedError

MAX_NODES = 2_000_000
"""Largest number of values (after alias expansion) a document may contain."""

Path_ = tuple[Hashable, ...]

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"


_FLOAT_TAG = "tag:yaml.org,2002:float"
_EXPONENT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)[eE][-+]?[0-9]+$")
"""A number with an exponent as YAML 1.2 writes it.  YAML 1.1, which PyYAML follows, reads ``1e6``
and ``1.0e29`` as strings (its floats need a dot and a signed exponent: ``1.0e+29``), so a user's
``scale: 1e6`` or a job file's ``A: 1.0e29`` reached the checks as text."""


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """The safe loader with a memoised scalar resolver: PyYAML resolves every plain scalar by trying
    regular expressions in Python, the largest cost of reading a big file; repeated values (keys,
    small numbers) are resolved once.  Quoted scalars are strings without any regex.  Plain scalars
    with an exponent are floats, as in YAML 1.2 (:data:`_EXPONENT`)."""

    _memo: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode and isinstance(value, str):
            if not implicit[0]:
                if implicit[1] or not self.yaml_path_resolvers:
                    return _STR_TAG
            elif not self.yaml_path_resolvers:
                tag = self._memo.get(value)
                if tag is None:
                    tag = super().resolve(kind, value, implicit)
                    if tag == _STR_TAG and _EXPONENT.match(value):
                        tag = _FLOAT_TAG
                    if len(self._memo) > 200_000:
                        self._memo.clear()
                    self._memo[value] = tag
                return tag
        return super().resolve(kind, value, implicit)
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class YamlDocument:
    """A loaded YAML file: its plain data and the line (1-based) of each field path."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)
    file: Path | None = None

    def line_of(self, path: tuple[Any, ...]) -> int | None:
        """Line of ``path``, or of its longest prefix that has one (values inside an expanded alias
        report the alias's line; a missing field reports its parent's line)."""
        path = tuple(path)
        for k in range(len(path), -1, -1):
            line = self.lines.get(path[:k])
            if line is not None:
                return line
        return None


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _expanded_size(root: Node, limit: int, file: Path | None) -> int:
    """Number of nodes the document has once every alias is expanded (stops past ``limit``).

    Iterative post-order walk with memoisation, so a shared (aliased) node is sized once: O(nodes
    in the file).  Raises on recursive aliases and on documents larger than ``limit``."""
    size: dict[int, int] = {}
    in_progress: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            children = _children(node)
            total = 1 + sum(size[id(c)] for c in children)
            in_progress.discard(key)
            size[key] = total
            if total > limit:
                raise SimschedError(
                    f"the document expands to too many nodes (more than {limit:,}; YAML alias bomb?)",
                    file=file, line=_line(node))
            continue
        if key in size:
            continue
        if key in in_progress:
            raise SimschedError("recursive YAML alias: a value contains itself", file=file, line=_line(node))
        in_progress.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in in_progress:
                raise SimschedError("recursive YAML alias: a value contains itself", file=file,
                                    line=_line(child))
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


class _Builder:
    """Turns composed nodes into plain data, recording lines of nodes that appear in the text."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self.lines: dict[Path_, int] = {}
        self._constructor = yaml.constructor.SafeConstructor()
        self._built: dict[int, Any] = {}

    def build(self, node: Node, path: Path_) -> Any:
        """Plain data for ``node`` found at ``path``.  A node met again (an alias) returns the object
        already built, so nothing below it is recorded twice and the line map stays small."""
        self.lines.setdefault(path, _line(node))
        if id(node) in self._built:
            return self._built[id(node)]
        if isinstance(node, ScalarNode):
            value = self._scalar(node)
        elif isinstance(node, SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                raise SimschedError(f"unsupported YAML tag {node.tag!r}", file=self.file, line=_line(node))
            value = [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        elif isinstance(node, MappingNode):
            value = self._mapping(node, path)
        else:  # pragma: no cover - PyYAML has only these three node kinds
            raise SimschedError(f"unsupported YAML node {type(node).__name__}", file=self.file, line=_line(node))
        self._built[id(node)] = value
        return value

    def _scalar(self, node: ScalarNode) -> Any:
        try:
            return self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise SimschedError(f"cannot read value {node.value!r}: {problem}", file=self.file,
                                line=_line(node)) from None

    def _mapping(self, node: MappingNode, path: Path_) -> dict:
        if node.tag not in ("tag:yaml.org,2002:map",):
            raise SimschedError(f"unsupported YAML tag {node.tag!r}", file=self.file, line=_line(node))
        out: dict = {}
        merged: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for src in sources:
                    data = self.build(src, path)
                    if not isinstance(data, dict):
                        raise SimschedError("a '<<' merge needs a mapping or a list of mappings",
                                            file=self.file, line=_line(src))
                    for k, v in data.items():
                        merged.setdefault(k, v)
                continue
            if not isinstance(key_node, ScalarNode):
                raise SimschedError("a mapping key must be a plain value, not a list or mapping",
                                    file=self.file, line=_line(key_node))
            key = self._scalar(key_node)
            if not isinstance(key, Hashable):  # pragma: no cover - scalars are hashable
                raise SimschedError(f"unhashable key {key!r}", file=self.file, line=_line(key_node))
            if key in out:
                raise SimschedError(f"duplicate key {key!r} (first on line {self.lines.get((*path, key), '?')})",
                                    file=self.file, line=_line(key_node))
            child_path = (*path, key)
            self.lines.setdefault(child_path, _line(key_node))
            out[key] = self.build(value_node, child_path)
        for k, v in merged.items():
            out.setdefault(k, v)
        return out


def _check_depth(text: str, file: Path | None) -> bool:
    """Walk the parser's events (iterative, no recursion) and refuse nesting past ``max_depth``.
    Returns whether the document uses aliases."""
    limit = limits.current().max_depth
    depth = 0
    aliases = False
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            aliases = True
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > limit:
                limits.check_depth(depth, file=file, line=event.start_mark.line + 1)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return aliases


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing makes millions of small acyclic objects, and the
    collections they trigger cost three quarters of the time of reading a large file."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_yaml(text: str, *, file: Path | None = None, max_nodes: int = MAX_NODES) -> YamlDocument:
    """Parse YAML ``text`` into a :class:`YamlDocument` (see the module docstring for the
    guarantees).  An empty document gives ``data=None``."""
    with _gc_paused():
        return _parse_yaml(text, file, max_nodes)


def _parse_yaml(text: str, file: Path | None, max_nodes: int) -> YamlDocument:
    try:
        aliases = _check_depth(text, file)
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        raise SimschedError(f"YAML syntax error: {what}{context}", file=file,
                            line=mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as exc:
        raise SimschedError(f"YAML error: {exc}", file=file) from None
    if root is None:
        return YamlDocument(None, {}, file)
    if aliases:  # without aliases the document is as large as its text
        _expanded_size(root, max_nodes, file)
    builder = _Builder(file)
    data = builder.build(root, ())
    return YamlDocument(data, builder.lines, file)


def load_yaml(path: str | Path, *, max_nodes: int = MAX_NODES, require_mapping: bool = True) -> YamlDocument:
    """Read and parse the YAML file at ``path``.

    Raises :class:`SimschedError` (with file and, where known, line) for a missing or unreadable
    file, invalid UTF-8, a syntax error, an unsafe tag, a duplicate key, an alias bomb, and — with
    ``require_mapping`` — an empty document or one whose top level is not a mapping.
    """
    p = Path(path)
    raw = limits.read_input(p, yaml=True)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SimschedError("the file is not valid UTF-8 text", file=p, line=line) from None
    doc = parse_yaml(text, file=p, max_nodes=max_nodes)
    if require_mapping:
        if doc.data is None:
            raise SimschedError("the file is empty; expected a mapping of fields (name: ..., platform: ...)", file=p)
        if not isinstance(doc.data, dict):
            raise SimschedError(
                f"the top level must be a mapping of fields (name: ..., platform: ...), "
                f"not a {type(doc.data).__name__}", file=p, line=doc.line_of(()))
    return doc


BOOL_MESSAGE = "must be true or false (a YAML boolean)"
"""What a ``bool`` parameter given anything but a YAML boolean is told (see :func:`strict_bools`)."""


def strict_bools(annotation: Any) -> Any:
    """``annotation`` with every ``bool`` in it (alone, in a union, an ``Optional``, a ``list[...]``,
    ``Annotated[...]``) replaced by pydantic's ``StrictBool``, for checking a parameter read from YAML
    with a ``TypeAdapter``: pydantic's lax mode turns ``"yes"``, ``"off"``, ``1`` and ``0`` into booleans,
    so a typo or a number would silently become a switch; a YAML ``true``/``false`` is already a
    ``bool``, so nothing legal is lost.  Returns ``annotation`` itself when it holds no ``bool``.
    O(size of the annotation)."""
    import types
    import typing

    from pydantic import StrictBool

    if annotation is bool:
        return StrictBool
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if not args or origin is typing.Literal:
        return annotation
    if origin is typing.Annotated:
        inner = strict_bools(args[0])
        return annotation if inner is args[0] else typing.Annotated[(inner, *annotation.__metadata__)]
    new = tuple(strict_bools(a) for a in args)
    if all(n is a for n, a in zip(new, args)):
        return annotation
    if origin in (typing.Union, types.UnionType):
        return typing.Union[new]  # noqa: UP007 - built from a tuple of arguments
    try:
        return origin[new if len(new) > 1 else new[0]]
    except TypeError:  # a generic that cannot be rebuilt from its arguments: checked as written
        return annotation
