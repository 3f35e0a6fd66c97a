"""Kinds and hostile values: the kind of a field read from its annotation (:func:`kind_of`), the hostile
values of each kind (:data:`VALUES`, :data:`CSV_CASES`), and whether a value must be refused by the
field's own declaration (:func:`expected_refusal`).
"""

from __future__ import annotations

import math
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from simsched import limits
from simsched.testing.hostile.documents import JOBS_SWF, NON_UTF8
from simsched.testing.hostile.schema_walk import FieldTarget

FIELD_KINDS: dict[str, str] = {
    "ArrivalsSpec.trace": "csv-arrivals",
    "FailuresSection.trace": "csv-down",
    "BatchTraceSection.swf": "csv-swf",
    "BatchTraceSection.gpu_trace": "csv-gpu",
    "BatchTraceSection.sacct": "csv-sacct",
    "CarbonSection.trace": "csv-carbon",
    "StudyModel.scenario": "path",
}
"""Kinds the annotation cannot tell: strings that are paths to files of a given shape."""


def kind_of(annotation: Any, key: str = "") -> str:
    """The kind of a field from its annotation: ``float``, ``int``, ``bool``, ``str``, ``choice``,
    ``list``, ``map``, ``model`` or ``any`` (:data:`FIELD_KINDS` first).  O(size of the annotation)."""
    if key in FIELD_KINDS:
        return FIELD_KINDS[key]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return kind_of(args[0])
    if origin in (typing.Union, types.UnionType):
        kinds = [kind_of(a) for a in args if a is not type(None)]
        for k in ("float", "int", "model", "list", "map", "choice", "str", "bool"):
            if k in kinds:
                return k
        return "any"
    if origin is typing.Literal:
        return "choice"
    if annotation is bool:
        return "bool"
    if annotation is float:
        return "float"
    if annotation is int:
        return "int"
    if annotation is str:
        return "str"
    if origin in (list, tuple) or annotation in (list, tuple):
        return "list"
    if origin is dict or annotation is dict:
        return "map"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model"
    return "any"


_NUMBERS: list[tuple[str, Any]] = [("zero", 0), ("minus one", -1), ("NaN", math.nan), ("+inf", math.inf),
                                   ("-inf", -math.inf), ("1e300", 1e300), ("2**63", 2**63), ("bool", True),
                                   ("string", "x"), ("list", [1]), ("1e9", 1e9), ("fraction", 2.5)]
_INTS: list[tuple[str, Any]] = [*[(k, v) for k, v in _NUMBERS if k != "1e9"], ("10**9", 10**9),
                                ("just over max_jobs", limits.Limits().max_jobs + 1),
                                ("just over max_tasks", limits.Limits().max_tasks + 1)]
_STRINGS: list[tuple[str, Any]] = [("empty", ""), ("1 MB", "x" * 1_000_000), ("control characters", "\x00\x07\x1b[31m"),
                                   ("superscript digits", "²x³"), ("300 bytes", "a" * 300), ("non-UTF-8", NON_UTF8),
                                   ("number", 12), ("list", ["a"]), ("mapping", {"a": 1})]
VALUES: dict[str, list[tuple[str, Any]]] = {
    "float": _NUMBERS,
    "int": _INTS,
    "bool": [("string", "yes"), ("number", 2), ("list", [True])],
    "str": _STRINGS,
    "choice": [("unknown", "nope"), ("empty", ""), ("number", 1), ("null", None), ("non-UTF-8", NON_UTF8)],
    "list": [("empty", []), ("string", "x"), ("number", 1), ("nulls", [None, None]),
             ("200k numbers", [0] * 200_000), ("nested", [[[[[]]]]])],
    "map": [("list", []), ("string", "x"), ("number", 1), ("empty", {}), ("deep", {"a": {"b": {"c": {"d": 1}}}})],
    "model": [("null", None), ("string", "x"), ("list", []), ("number", 1), ("empty", {})],
    "any": [("string", "x"), ("number", 1), ("list", []), ("empty map", {}), ("null", None)],
}
"""Hostile values per kind (scenario fields; the option values are
:data:`~simsched.testing.hostile.commands.OPTION_VALUES`)."""

PATH_CASES = ["missing", "directory", "fifo", "/dev/zero", "300-byte name", "symlink loop", "binary",
              "non-UTF-8"]
CSV_CASES = {
    "csv-arrivals": {"binary": b"\x00\x01\x02time,job\n\xff\xfe", "non-UTF-8": b"time,job\n0,j\xff\n",
                     "huge field": b"time,job\n0," + b"j" * 200_000 + b"\n",
                     "duplicated header": b"time,job,time\n0,j,0\n", "extra column": b"time,job,colour\n0,j,red\n",
                     "unsorted rows": b"time,job\n5,j\n1,j\n", "1e300 time": b"time,job\n1e300,j\n",
                     "1e300 deadline": b"time,job,deadline\n0,j,1e300\n", "empty": b"",
                     "only header": b"time,job\n", "200k rows": b"time,job\n" + b"0,j\n" * 200_000,
                     "job path 300 bytes": b"time,job\n0," + b"a" * 300 + b".json\n"},
    "csv-down": {"binary": b"\x00\x01processor,start,end\n", "non-UTF-8": b"processor,start,end\nP0,\xff,1\n",
                 "huge field": b"processor,start,end\n" + b"P" * 200_000 + b",0,1\n",
                 "duplicated header": b"processor,start,end,end\nP0,0,1,2\n",
                 "extra column": b"processor,start,end,why\nP0,0,1,x\n",
                 "unsorted rows": b"processor,start,end\nP0,5,6\nP0,1,2\n",
                 "1e300 end": b"processor,start,end\nP0,0,1e300\n",
                 "empty": b"", "inf end": b"processor,start,end\nP0,0,inf\n"},
}
CSV_CASES["csv-swf"] = {
    "binary": b"\x00\x01\x02 1 0 0 10 2\n", "non-UTF-8": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 \xff\n",
    "empty": b"", "only comments": b"; MaxProcs: 4\n",
    "wrong field count": b"1 0 0 10 2\n", "text field": b"1 0 0 ten 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "negative submit": b"1 -5 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "unsorted submits": b"1 9 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n2 1 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "duplicate ids": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n1 1 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "MaxProcs below a request": b"; MaxProcs: 2\n1 0 0 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "1e300 run time": b"1 0 0 1e300 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "huge field": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 " + b"9" * 200_000 + b"\n",
    "200k rows": b"".join(b"%d %d 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n" % (i + 1, i) for i in range(200_000)),
    # what editors and other tools write around valid lines: the file must read as without them
    "byte-order mark": b"\xef\xbb\xbf" + JOBS_SWF.encode(), "CRLF and tabs": JOBS_SWF.replace(" ", "\t").replace(
        "\n", "\r\n").encode(),
    "10**6 processors": (b"1 0 0 10 1000000 -1 -1 1000000 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
                         b"2 1 0 5 1 -1 -1 1 5 -1 1 1 1 -1 -1 -1 -1 -1\n"),
    "2**60 job number": b"1152921504606846976 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n",
    "comment after fields": b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1 ; late\n",
}
CSV_CASES["csv-gpu"] = {
    "binary": b"\x00\x01job,submit,gpus,duration\n", "non-UTF-8": b"job,submit,gpus,duration\n1,0,\xff,1\n",
    "empty": b"", "duplicated header": b"job,submit,gpus,duration,gpus\n1,0,1,1,1\n",
    "extra column": b"job,submit,gpus,duration,colour\n1,0,1,1,red\n",
    "unsorted rows": b"job,submit,gpus,duration\n1,5,1,1\n2,1,1,1\n",
    "1e300 duration": b"job,submit,gpus,duration\n1,0,1,1e300\n", "text gpus": b"job,submit,gpus,duration\n1,0,x,1\n",
    "huge field": b"job,submit,gpus,duration\n" + b"1" * 200_000 + b",0,1,1\n",
    "byte-order mark": b"\xef\xbb\xbfjob,submit,gpus,duration\r\n1,0,1,1\r\n",
    "1e20 gpus": b"job,submit,gpus,duration\n1,0,1e20,1\n",
    "2**53+2 gpus": b"job,submit,gpus,duration\n1,0,9007199254740994,1\n",
    "quoted cells and a row of empty ones": b'"job","submit","gpus","duration","user"\n"a,1",0,1,1,"x ""y"""\n,,,,\n',
    "unterminated quote": b'job,submit,gpus,duration,user\n1,0,1,1,"x\n2,1,1,1,y\n',
    "NUL in a cell": b"job,submit,gpus,duration,user\n1,0,1,1,a\x00b\n",
}
_SACCT_HEAD = b"JobID|Submit|Start|End|Elapsed|Timelimit|AllocCPUS|State\n"
_SACCT_JOB = b"7|2026-03-02T08:00:00|2026-03-02T08:00:05|2026-03-02T08:10:05|00:10:00|01:00:00|4|COMPLETED\n"
CSV_CASES["csv-sacct"] = {
    "binary": b"\x00\x01JobID|Submit|State\n", "non-UTF-8": _SACCT_HEAD + _SACCT_JOB.replace(b"COMPLETED", b"\xff"),
    "empty": b"", "only header": _SACCT_HEAD, "missing columns": b"JobID|JobName|Partition|Account|AllocCPUS|State\n"
    b"7|x|cpu|acct|4|COMPLETED\n", "no run time": b"JobID|Submit|AllocCPUS|State\n7|2026-03-02T08:00:00|4|COMPLETED\n",
    "bad time": _SACCT_JOB.replace(b"2026-03-02T08:00:05", b"yesterday").join([_SACCT_HEAD, b""]),
    "unknown state": _SACCT_HEAD + _SACCT_JOB.replace(b"COMPLETED", b"EXPLODED"),
    "bad job id": _SACCT_HEAD + _SACCT_JOB.replace(b"7|", b"7x|", 1),
    "bad time limit": _SACCT_HEAD + _SACCT_JOB.replace(b"01:00:00", b"1:99:99"),
    "duplicate job": _SACCT_HEAD + _SACCT_JOB + _SACCT_JOB,
    "short row": _SACCT_HEAD + b"7|2026-03-02T08:00:00|COMPLETED\n",
    "huge field": _SACCT_HEAD + b"7|" + b"9" * 200_000 + b"|x|x|x|x|4|COMPLETED\n",
    "only pending and running": _SACCT_HEAD + b"8|2026-03-02T08:00:00|Unknown|Unknown|00:00:00|UNLIMITED|0|PENDING\n"
    b"9_[1-50%5]|2026-03-02T08:00:00|Unknown|Unknown|00:00:00|01:00:00|0|PENDING\n",
    "10**6 cpus": _SACCT_HEAD + _SACCT_JOB.replace(b"|4|", b"|1000000|"),
    "200k rows": _SACCT_HEAD + b"".join(b"%d|2026-03-02T08:00:00|2026-03-02T08:00:00|2026-03-02T08:00:01|00:00:01|"
                                        b"UNLIMITED|1|COMPLETED\n" % i for i in range(200_000)),
    "byte-order mark and CRLF": b"\xef\xbb\xbf" + (_SACCT_HEAD + _SACCT_JOB).replace(b"\n", b"\r\n"),
    "steps, arrays and a het job": _SACCT_HEAD + _SACCT_JOB + _SACCT_JOB.replace(b"7|", b"7.batch|", 1)
    + _SACCT_JOB.replace(b"7|", b"8_3|", 1) + _SACCT_JOB.replace(b"7|", b"9+0|", 1)
    + _SACCT_JOB.replace(b"7|", b"9+1|", 1),
}
CSV_CASES["csv-carbon"] = {
    "binary": b"\x00\x01time,intensity\n", "non-UTF-8": b"time,intensity\n0,\xff\n", "empty": b"",
    "unsorted rows": b"time,intensity\n5,100\n1,100\n", "negative": b"time,intensity\n0,-1\n",
    "NaN": b"time,intensity\n0,nan\n", "huge field": b"time,intensity\n0," + b"1" * 200_000 + b"\n",
    "duplicated header": b"time,intensity,time\n0,1,0\n",
    "byte-order mark": b"\xef\xbb\xbftime,intensity\r\n0,100\r\n", "1e300 intensity": b"time,intensity\n0,1e300\n",
}
"""CSV contents per CSV kind (each also gets the :data:`PATH_CASES`)."""


_ADAPTERS: dict[str, TypeAdapter[Any]] = {}
"""One pydantic adapter per field (built once: building one costs milliseconds)."""


def expected_refusal(target: FieldTarget, value: Any) -> bool:
    """Whether ``value`` breaks the field's own declared constraints (its annotation and metadata,
    checked by pydantic alone, plus the shared number rule for numeric kinds): then only exit 2 is
    right.  A value the declaration admits may also run (exit 0) if it stays inside the bounds."""
    if value is NON_UTF8:
        return True
    kind = kind_of(target.annotation, target.key)
    if kind in ("float", "int"):
        try:
            limits.not_a_number_check(value, integer=kind == "int", allow_inf=True)
        except ValueError:
            return True
        if isinstance(value, float) and math.isinf(value):
            return False  # some fields take .inf (memory, bandwidth)
    try:
        adapter = _ADAPTERS.get(target.key)
        if adapter is None:
            ann = Annotated[(target.annotation, *target.metadata)] if target.metadata else target.annotation
            adapter = _ADAPTERS[target.key] = TypeAdapter(ann)
        # a huge list or string is judged by its head: no declared constraint here is on a length
        adapter.validate_python(value[:10] if isinstance(value, (list, str)) and len(value) > 1000 else value)
    except ValidationError:
        return True
    except Exception:  # an annotation pydantic cannot adapt alone: decide nothing
        return False
    return False
