"""Hostile *contents* of the files simsched reads back: the mutations of one valid file.

Each function takes the bytes of a valid file of its family and returns ``what -> Attack``: the
hostile file (bytes, or a directory or FIFO in its place) and what is right for it (``refuse``: only a
located exit 2; ``refuse-or-warn``: exit 2, or exit 0 with a ``warning:`` line saying what was done).
Families: every file (:func:`file_attacks`: truncated, empty, text, binary, directory, FIFO), torch
checkpoints (:func:`torch_attacks`: wrong kind, foreign, huge widths and layer counts, tampered shapes
and values, a pickle nested 100,000 deep or holding a class), JSON (:func:`json_attacks`), CSV traces
(:func:`trace_attacks`: 60 MB of tiny rows, huge integers, NaN, text, NUL) and results tables
(:func:`table_attacks`: edited metrics, duplicates, NaN, text, null, list and nested cells, a missing
identity column).  torch is imported only to build the checkpoint attacks.  O(size of the valid file)
per attack.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Attack:
    """One hostile file: its ``data`` (bytes, or a function making them when the case runs: a 14 MB world
    model is not held per case) or ``special`` (``"directory"``, ``"fifo"``) in its place, and what is
    right for it (see the module docstring)."""

    data: bytes | Callable[[], bytes] = b""
    special: str = ""
    expect: str = "refuse"

    def content(self) -> bytes:
        """The hostile file's bytes."""
        return self.data() if callable(self.data) else self.data


DEEP = 100_000
"""Nesting of the deep attacks (JSON text, a pickle): far past ``max_depth`` and Python's recursion limit."""

TINY_MB = 60
"""Size of the "many tiny rows" trace attacks, under ``max_file_mb`` (64 MB)."""


def file_attacks(valid: bytes) -> dict[str, Attack]:
    """What every read-back file meets: cut in half, empty, prose, random bytes, a directory, a FIFO."""
    return {"truncated": Attack(valid[: max(1, len(valid) // 2)]), "empty": Attack(b""),
            "text": Attack(b"this is a note, not the file you wanted\n"),
            "binary": Attack(bytes(range(1, 256)) * 8), "directory": Attack(special="directory"),
            "fifo": Attack(special="fifo")}


# --------------------------------------------------------------------------- torch checkpoints
def _torch_bytes(doc: Any) -> bytes:
    import torch

    out = io.BytesIO()
    torch.save(doc, out)
    return out.getvalue()


def _torch_doc(valid: bytes) -> dict[str, Any]:
    import torch

    return torch.load(io.BytesIO(valid), map_location="cpu", weights_only=True)


def _deep_pickle(valid: bytes) -> bytes:
    """The valid archive with its ``data.pkl`` replaced by a protocol-2 pickle of ``{"kind": "rl", "config":
    [[[...]]] (DEEP levels), "state": {}}``: torch's unpickler builds it without recursion; a reader that
    walks it recursively does not survive."""
    body = b"]" * DEEP + b"a" * (DEEP - 1)
    pickle = (b"\x80\x02}(X\x04\x00\x00\x00kindX\x02\x00\x00\x00rlX\x06\x00\x00\x00config" + body
              + b"X\x05\x00\x00\x00state}u.")
    src = zipfile.ZipFile(io.BytesIO(valid))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info, pickle if info.filename.endswith("data.pkl") else src.read(info.filename))
    return out.getvalue()


def _set(doc: Any, path: Sequence[str], value: Any) -> Any:
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def made_apart(make: Callable[[], bytes]) -> bytes:
    """``make()`` run in a forked child, its bytes handed back through a temporary file: torch is then
    imported and used only there, never in the campaign's own process, whose children it forks (a child
    forked after torch started its thread pools can hang).  O(size of the bytes)."""
    import os
    import tempfile

    with tempfile.NamedTemporaryFile(prefix="simsched-hostile-", delete=False) as tmp:
        path = tmp.name
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                data = make()
                with open(path, "wb") as fh:
                    fh.write(data)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WEXITSTATUS(status) != 0:
            raise RuntimeError("an attack's file could not be made")
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.unlink(path)


def torch_attacks(valid: bytes, *, weights: str, width: Sequence[str], layers: Sequence[str],
                  others: Mapping[str, Callable[[], bytes]]) -> dict[str, Attack]:
    """The attacks of a torch checkpoint whose weights sit under ``weights`` (``"state"``, ``"model"``),
    whose configuration's width and layer count sit at the key paths ``width`` and ``layers``; ``others``:
    the valid files of the other kinds (a wrong kind each)."""
    def tampered(change: Callable[[dict[str, Any]], Any]) -> Callable[[], bytes]:
        def make() -> bytes:
            doc = _torch_doc(valid)
            change(doc)
            return _torch_bytes(doc)
        return make

    def first_weight(doc: dict[str, Any]) -> str:
        """The first weight matrix (a key naming a weight, not a stored extra such as a world model's
        dream start states)."""
        return next(k for k, v in doc[weights].items() if getattr(v, "ndim", 0) >= 1 and "weight" in str(k))

    def reshape(doc: dict[str, Any]) -> None:
        import torch

        k = first_weight(doc)
        doc[weights][k] = torch.zeros(doc[weights][k].shape[0] + 3)

    def nan(doc: dict[str, Any]) -> None:
        import torch

        k = first_weight(doc)
        doc[weights][k] = torch.full_like(doc[weights][k], float("nan"))

    def plain() -> bytes:
        import torch

        return _torch_bytes({"weight": torch.zeros(3, 3)})

    def code() -> bytes:
        from pathlib import Path

        return _torch_bytes({"kind": "rl", "config": {}, "state": {}, "meta": {"path": Path("x")}})

    makers: dict[str, Callable[[], bytes]] = {  # each run in made_apart's child: torch stays out of this process
        "huge: width 10^6 (4 TB of weights)": tampered(lambda d: _set(d, width, 10**6)),
        "huge: 10^5 layers": tampered(lambda d: _set(d, layers, 10**5)),
        "tampered: a weight of another shape": tampered(reshape),
        "tampered: NaN weights": tampered(nan),
        "foreign: a torch file of plain tensors": plain,
        "deep: a pickle nested 100,000 deep": lambda: _deep_pickle(valid),
        "code: a pickle holding a class": code,
    }
    return {**file_attacks(valid), **{what: Attack(lambda m=make: made_apart(m)) for what, make in makers.items()},
            **{f"wrong kind: {kind}": Attack(make) for kind, make in others.items()}}


# --------------------------------------------------------------------------- JSON
def deep_json(key: str = "x") -> bytes:
    """A JSON object whose ``key`` nests :data:`DEEP` lists."""
    return ('{"' + key + '": ' + "[" * DEEP + "]" * DEEP + "}").encode()


def _replace_all(doc: Any, key: str, value: Any) -> int:
    """Set ``key`` to ``value`` wherever a mapping of ``doc`` has it; how many were set."""
    count, stack = 0, [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if key in node:
                node[key] = value
                count += 1
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def json_attacks(valid: bytes, *, fields: Mapping[str, Any] = (), others: Mapping[str, Callable[[], bytes]] = (),
                 expect: str = "refuse") -> dict[str, Attack]:
    """The attacks of a JSON file: deep, NaN, the kind of another file, and each ``fields`` entry
    ``"what" -> (key, value)`` set wherever ``key`` occurs (a text ``per_user``, ``processors: 0``, a
    400-digit weight, a weight list of 10^6 numbers), with ``expect``."""
    doc = json.loads(valid)
    out = file_attacks(valid)
    out["deep: nested 100,000 deep"] = Attack(deep_json())
    out["tampered: NaN (not JSON)"] = Attack(valid.replace(b"{", b'{"nan": NaN, ', 1))
    for what, (key, value) in dict(fields).items():
        changed = json.loads(json.dumps(doc))
        if _replace_all(changed, key, value):
            out[what] = Attack(json.dumps(changed).encode(), expect=expect)
    for kind, make in dict(others).items():
        out[f"wrong kind: {kind}"] = Attack(make)
    return out


# --------------------------------------------------------------------------- CSV traces
def tiny_rows(header: str, row: str, megabytes: int = TINY_MB) -> bytes:
    """``header`` then ``row`` repeated to about ``megabytes`` MB (a valid file of millions of rows)."""
    block = (row * 4096).encode()
    return header.encode() + block * (megabytes * 2**20 // len(block))


def trace_attacks(valid: bytes, *, tiny: tuple[str, str], number_cell: Callable[[str], bytes],
                  others: Mapping[str, Callable[[], bytes]] = (), header: Callable[[str], bytes] | None = None
                  ) -> dict[str, Attack]:
    """The attacks of a trace: 60 MB of tiny rows (``tiny = (header, row)``), a number cell that is a
    400-digit integer, NaN, infinite, text or has a NUL byte (``number_cell(text)``: the valid file with
    its first number cell replaced), a header number the same way (``header(text)``, for formats with
    numbers in their header: SWF's ``MaxProcs``), and the valid files of other kinds."""
    out = file_attacks(valid)
    if header is not None:
        out["huge: a 400-digit header number"] = Attack(header("9" * 400))
        out["tampered: a header number as text"] = Attack(header("many"))
    out["huge: 60 MB of tiny rows"] = Attack(lambda: tiny_rows(*tiny))
    for what, text in (("huge: a 400-digit integer", "9" * 400), ("tampered: NaN", "nan"),
                       ("tampered: infinite", "inf"), ("tampered: text for a number", "many"),
                       ("tampered: a NUL byte", "1\x00")):
        out[what] = Attack(number_cell(text))
    for kind, make in dict(others).items():
        out[f"wrong kind: {kind}"] = Attack(make)
    return out


# --------------------------------------------------------------------------- results tables
def _table(valid: bytes) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(valid.decode("utf-8"), newline="")))
    return rows[0], rows[1:]


def _write(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue().encode()


def table_attacks(valid: bytes, *, metric: str, identity: Sequence[str], json_cell: str | None = None,
                  expect: str = "refuse-or-warn") -> dict[str, Attack]:
    """The attacks of a results table (a capacity store, a sweep's CSV): ``metric`` edited to look
    better (halved), a row twice, NaN, text, null, a list and a deeply nested value in the metric's cell
    (and in the ``json_cell`` column of metrics as JSON, when there is one), the ``identity`` columns
    dropped one at a time."""
    header, rows = _table(valid)
    out = file_attacks(valid)

    def cells(value: str, json_value: str | None) -> bytes:
        changed = [list(r) for r in rows]
        for r in changed[:1]:
            if metric in header:
                r[header.index(metric)] = value
            if json_cell in header and json_value is not None:
                r[header.index(json_cell)] = json_value
        return _write(header, changed)

    def better(r: list[str]) -> list[str]:
        r = list(r)
        if metric in header and r[header.index(metric)]:
            r[header.index(metric)] = repr(float(r[header.index(metric)]) / 2)
        if json_cell in header and r[header.index(json_cell)]:
            metrics = json.loads(r[header.index(json_cell)])
            metrics[metric] = metrics.get(metric, 1.0) / 2
            r[header.index(json_cell)] = json.dumps(metrics)
        return r

    out["tampered: metrics edited to look better"] = Attack(_write(header, [better(r) for r in rows]), expect=expect)
    out["tampered: a row twice"] = Attack(_write(header, [*rows, rows[0]]), expect=expect)
    nested = "[" * DEEP + "]" * DEEP
    key = json.dumps(metric)
    for what, value, as_json in (("NaN", "nan", f"{{{key}: NaN}}"), ("text", "fast", f'{{{key}: "fast"}}'),
                                 ("null", "", f"{{{key}: null}}"), ("a list", "[1, 2]", f"{{{key}: [1, 2]}}"),
                                 ("nested 100,000 deep", nested, f"{{{key}: {nested}}}"),
                                 ("metrics not JSON", "1.0", "{not json")):
        if json_cell is not None or value != "1.0":  # without a JSON column the last one is a valid number
            out[f"tampered: {what} in a metric cell"] = Attack(cells(value, as_json), expect=expect)
    for column in identity:
        if column in header:
            k = header.index(column)
            out[f"identity: no {column} column"] = Attack(
                _write(header[:k] + header[k + 1:], [r[:k] + r[k + 1:] for r in rows]), expect=expect)
    return out
