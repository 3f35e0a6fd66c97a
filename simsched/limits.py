"""Limits on what simsched will read and build, checked before the work starts.

Every file and every size a user hands to simsched is checked against a limit *before* memory is
allocated or parsing starts, so a typo (``tasks: 1000000000000``) or a hostile file (a 50 MB
scenario, YAML nested 100,000 deep) ends at once with exit code 2 and a message that names the
limit, instead of a crash, a MemoryError or minutes of silence.

===================  ==========  ============================================================
limit                default     what it bounds
===================  ==========  ============================================================
``max_file_mb``      64          size of any input file (workloads, baselines, configs)
``max_yaml_mb``      4           size of a YAML file (scenario, study, inline workload): YAML
                                 with line tracking is read at about 1.5 s per MB
``max_depth``        64          nesting depth of a YAML or JSON document
``max_tasks``        2,000,000   tasks in one workload (checked before a generator allocates)
``max_processors``   2,000       processors in one platform
``max_memory_mb``    4096        estimated memory of the (tasks x processors) and
                                 (processors x processors) matrices and the edges of a problem
``max_grid_points``  100,000     runs (points x schedulers x seeds) in one study
``max_runs``         100,000     runs (schedulers x repetitions) of one scenario
``max_unpacked_mb``  512         declared uncompressed size of a checkpoint archive (``.pt``),
                                 checked before it is decompressed (a zip bomb)
``max_seed``         2**63 - 1   largest seed (seeds are >= 0: numpy refuses negative ones)
``max_jobs``         100,000     autotuning jobs of one repetition (fixed ones plus the expected
                                 arrivals), checked before arrivals are sampled
``max_trials``       20,000,000  autotuning trial slots (rounds x batch size, over all jobs) of
                                 one repetition, checked before they are sampled
``max_time_limit_s`` 3,600       a scheduler's wall-time budget (``time_limit_s`` of search,
                                 optimal, ga, ...): an infinite one never ends
``max_events``       5,000,000   expected disruption episodes (failures, stragglers) of one run,
                                 and expected restarts of its tasks, checked before it starts
``max_objective``    4,096       characters of a capacity objective expression
``max_csv_field``    65,536      characters of one CSV cell (traces, task lists)
``max_net_width``    4,096       a width of a learned network (hidden units, embedding, slots)
                                 in a checkpoint's or a training config's configuration
``max_net_layers``   64          a count of layers (rounds, recurrent layers, ensemble members)
``max_net_weights``  100,000,000 weights of the network a configuration describes, counted
                                 before any tensor of it is made
``max_trace_rows``   500,000     rows of an input table (a down-interval or intensity trace);
                                 job traces are bounded by ``max_jobs``, task lists by ``max_tasks``
===================  ==========  ============================================================

Sizes that multiply are counted before anything is listed: a study's grid (:func:`check_grid`) and a
capacity search's mixes of processor counts (:func:`check_product`: every mix of ``cpu: [0, 10**6]`` and
``gpu: [0, 10**6]`` is 10^12 combinations, refused as such instead of a MemoryError).

Every input file is also checked to be a *regular* file before it is opened: a FIFO would block
the reader forever and ``/dev/zero`` would be read until memory runs out.

Where a user may really need more, the limit is raised with an environment variable named after
it (``SIMSCHED_MAX_TASKS=5000000``) or, for ``max_tasks``, ``max_processors`` and
``max_memory_mb``, in a scenario's own ``limits:`` section.  Numbers that cannot mean anything are
refused everywhere: NaN, infinities where no infinity is meaningful, and magnitudes above
:data:`MAX_VALUE` (which would overflow sums and products of times).

The exception is always :class:`LimitError` (a :class:`~simsched.errors.SimschedError`: exit 2).
"""

from __future__ import annotations

import contextlib
import contextvars
import csv
import dataclasses
import gc
import io
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError
from simsched.fileio import NotRegularFile, TooLarge, check_regular, read_bytes_capped

MAX_VALUE = 1e30
"""Largest magnitude of a finite number in any input (times, work, data, speeds, ...).  Far from
float overflow (1.8e308) even after sums over millions of tasks and ratios of two such numbers."""

MAX_POWER_BINS = 10_000
"""Most slices of a power-over-time profile a results document may carry per processor type (a run
writes :data:`simsched.simulator.power.profile.PROFILE_BINS`)."""

MAX_SIGMA = 10.0
"""Largest noise ``sigma`` (lognormal and normal): at 10 the lognormal median factor is already
e^-50 of the nominal time; beyond it every duration is noise, and factors start to overflow."""

MATRIX_BYTES_PER_CELL = 8 * 4
"""Bytes per (task, processor) cell the estimate charges: the float64 cost matrix, the eligibility
mask and the working copies schedulers keep (EFT rows, ranks per processor)."""


class LimitError(SimschedError):
    """An input is larger (or deeper, or more extreme) than a limit allows."""


@dataclass(frozen=True)
class Limits:
    """The active limits (see the module docstring for the meaning and defaults)."""

    max_file_mb: float = 64.0
    max_yaml_mb: float = 4.0
    max_depth: int = 64
    max_tasks: int = 2_000_000
    max_processors: int = 2_000
    max_memory_mb: float = 4096.0
    max_grid_points: int = 100_000
    max_runs: int = 100_000
    max_unpacked_mb: float = 512.0
    max_seed: int = 2**63 - 1
    max_jobs: int = 100_000
    max_trials: int = 20_000_000
    max_time_limit_s: float = 3600.0
    max_events: int = 5_000_000
    max_objective: int = 4096
    max_csv_field: int = 65_536
    max_net_width: int = 4096
    max_net_layers: int = 64
    max_net_weights: int = 100_000_000
    max_trace_rows: int = 500_000

    SCENARIO_FIELDS = ("max_tasks", "max_processors", "max_memory_mb")
    """The limits a scenario's ``limits:`` section may raise (or lower)."""

    def with_overrides(self, values: Mapping[str, Any]) -> Limits:
        """A copy with ``values`` (field name -> number) applied."""
        return dataclasses.replace(self, **{k: type(getattr(self, k))(v) for k, v in values.items()})


def env_name(field: str) -> str:
    """``max_tasks`` -> ``SIMSCHED_MAX_TASKS``."""
    return "SIMSCHED_" + field.upper()


def _from_env() -> Limits:
    base = Limits()
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Limits):
        raw = os.environ.get(env_name(f.name))
        if raw is None or raw.strip() == "":
            continue
        try:
            value = float(raw)
        except ValueError:
            raise LimitError(f"environment variable {env_name(f.name)} must be a number, got {raw!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise LimitError(f"environment variable {env_name(f.name)} must be a positive number, got {raw!r}")
        values[f.name] = value
    return base.with_overrides(values)


_ACTIVE: contextvars.ContextVar[Limits | None] = contextvars.ContextVar("simsched_limits", default=None)


def current() -> Limits:
    """The limits in force: the defaults, then ``SIMSCHED_MAX_*`` variables, then a scenario's
    ``limits:`` section while :func:`using` is active."""
    active = _ACTIVE.get()
    return active if active is not None else _from_env()


@contextlib.contextmanager
def using(overrides: Mapping[str, Any] | None) -> Iterator[Limits]:
    """Apply a scenario's ``limits:`` section (field -> value) for the duration of the block."""
    limits = _from_env().with_overrides(overrides or {})
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)


def _hint(field: str, scenario: bool) -> str:
    where = f"set {env_name(field)}"
    if scenario:
        where += f" or `limits: {{{field}: ...}}` in the scenario"
    return f"{field}; to allow more, {where}"


# --------------------------------------------------------------------------- checks
def check_file_size(path: str | Path, *, yaml: bool = False) -> int:
    """The size of ``path`` in bytes; :class:`LimitError` (naming the file) above ``max_file_mb``
    (``max_yaml_mb`` for YAML), :class:`SimschedError` for a FIFO, device, socket or directory
    (never opened, so it cannot block).  Missing files are left to the reader (size 0)."""
    try:
        st = check_regular(path)
    except NotRegularFile as exc:
        raise SimschedError(f"is {exc.kind}, not a regular file; give the path of a file", file=path) from None
    if st is None:
        return 0
    size = st.st_size
    lim = current()
    field = "max_yaml_mb" if yaml else "max_file_mb"
    limit_mb = getattr(lim, field)
    if size > limit_mb * 1024 * 1024:
        what = "YAML file" if yaml else "file"
        extra = "; give large workloads as CSV or JSON files" if yaml else ""
        raise LimitError(f"the {what} is {size / 2**20:.1f} MB, more than the limit of {limit_mb:g} MB "
                         f"({_hint(field, False)}){extra}", file=path)
    return size


def file_cap(*, yaml: bool = False) -> int:
    """The most bytes an input file may have: ``max_yaml_mb`` for YAML, else ``max_file_mb``."""
    lim = current()
    return int((lim.max_yaml_mb if yaml else lim.max_file_mb) * 1024 * 1024)


def read_input(path: str | Path, *, yaml: bool = False) -> bytes:
    """The bytes of input file ``path``, checked and capped: not a regular file, or longer than
    :func:`file_cap` (even if it grows while read) -> :class:`SimschedError` naming the file; a
    missing or unreadable file -> :class:`SimschedError` too.  O(size)."""
    check_file_size(path, yaml=yaml)
    try:
        return read_bytes_capped(path, file_cap(yaml=yaml))
    except NotRegularFile as exc:
        raise SimschedError(f"is {exc.kind}, not a regular file; give the path of a file", file=path) from None
    except TooLarge:
        field = "max_yaml_mb" if yaml else "max_file_mb"
        raise LimitError(f"the file is larger than the limit of {getattr(current(), field):g} MB "
                         f"({_hint(field, False)})", file=path) from None
    except FileNotFoundError:
        raise SimschedError("no such file", file=path) from None
    except IsADirectoryError:
        raise SimschedError("is a directory, expected a file", file=path) from None
    except OSError as exc:
        raise SimschedError(f"cannot read the file ({exc.strerror or exc})", file=path) from None


def check_seed(seed: int | None, *, option: str = "--seed", file: str | Path | None = None) -> None:
    """Refuse a seed below 0 or above ``max_seed`` (numpy's generators take 0 ... 2**63 - 1 here)."""
    if seed is None:
        return
    limit = current().max_seed
    field = None if option.startswith("-") else option
    if int(seed) < 0:
        raise LimitError(f"{option} must be >= 0, got {seed}; give a non-negative seed", file=file, field=field)
    if int(seed) > limit:
        raise LimitError(f"{option} must be <= {limit}, got {seed}; give a smaller seed", file=file, field=field)


def check_count(value: int, *, option: str, low: int = 1, high: int | None = None, hint: str = "") -> None:
    """Refuse a count (``--tries``, ``--processors``, ...) outside ``low`` ... ``high`` before any work."""
    if value < low or (high is not None and value > high):
        bound = f"between {low:,} and {high:,}" if high is not None else f">= {low:,}"
        raise LimitError(f"{option} must be {bound}, got {value:,}" + (f"; {hint}" if hint else ""))


def check_amount(value: float, field: str, *, what: str, where: str | None = None, line: int | None = None) -> None:
    """Refuse ``value`` (an estimate of jobs, trials, ...) above the limit ``field`` before the work
    that would allocate or simulate it starts; ``where`` is the input field that drives it."""
    limit = getattr(current(), field)
    if value > limit:
        shown = f"{value:,.0f}" if value < 1e15 else f"{value:.3g}"
        raise LimitError(f"{what}: about {shown}, more than the limit of {limit:,} ({_hint(field, False)}); "
                         f"make the input smaller", field=where, line=line)


def net_width(value: int) -> int:
    """``value`` if it is at most ``max_net_width``, else ``ValueError`` (a pydantic ``AfterValidator`` of
    a learned network's width: a training config or a checkpoint's configuration asking for 10^6 hidden
    units is refused before any tensor is made).  O(1)."""
    return _net_size(value, "max_net_width", "units wide")


def net_layers(value: int) -> int:
    """``value`` if it is at most ``max_net_layers``, else ``ValueError`` (see :func:`net_width`)."""
    return _net_size(value, "max_net_layers", "layers")


def _net_size(value: int, field: str, what: str) -> int:
    limit = getattr(current(), field)
    if isinstance(value, int) and value > limit:
        raise ValueError(f"{value:,} {what} is more than the limit of {limit:,} ({_hint(field, False)})")
    return value


def check_net_weights(weights: int, *, what: str, file: str | Path | None = None, field: str | None = None) -> None:
    """Refuse a network of more than ``max_net_weights`` weights (counted from its configuration before any
    tensor is made)."""
    limit = current().max_net_weights
    if weights > limit:
        raise LimitError(f"the {what} configuration describes a network of {weights:,} weights, more than the "
                         f"limit of {limit:,} ({_hint('max_net_weights', False)})", file=file, field=field)


def check_depth(depth: int, *, file: str | Path | None = None, line: int | None = None) -> None:
    """:class:`LimitError` when a document nests deeper than ``max_depth``."""
    limit = current().max_depth
    if depth > limit:
        raise LimitError(f"the document is nested more than {limit} levels deep ({_hint('max_depth', False)})",
                         file=file, line=line)


def data_depth(data: Any, limit: int) -> int:
    """Nesting depth of plain data (lists and dicts; 0 for a scalar), without recursion; stops just past
    ``limit``.  Walks one level at a time; a container whose values are all scalars is recognised by the
    set of their types (built at C speed), so the Python loop runs over containers only: O(values) with a
    small constant (a 20,000-task WfFormat file, 360,000 values, in a fraction of ``json.load``'s time)."""
    level = [data] if isinstance(data, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return depth
        deeper: list[Any] = []
        for value in level:
            children = value.values() if isinstance(value, dict) else value
            if set(map(type, children)) <= _SCALARS:
                continue
            deeper += [c for c in children if isinstance(c, (dict, list))]
        level = deeper
    return depth


_SCALARS = frozenset({str, int, float, bool, type(None)})


# --------------------------------------------------------------------------- JSON within limits
_NOT_A_JSON_TOKEN = bytes(sorted(set(range(256)) - set(b'"[]{}')))


def json_depth(text: str) -> int:
    """Nesting depth of the containers of JSON ``text`` (0 for a scalar): what :func:`data_depth` gives
    for its data, computed from the text at C speed instead of a walk over every value (a 20,000-task
    WfFormat file: ~10x faster), and **before** parsing (``json.loads`` recurses: text nested 100,000 deep
    would end in a ``RecursionError``).  Escaped backslashes and quotes are dropped first, then every byte
    but quotes and brackets (only the order of those tokens matters); a bracket counts when an even
    number of quotes precede it (outside strings).  UTF-8 multi-byte characters hold no ASCII byte.
    Exact for valid JSON; for text that is not, a bound that the parser's own error follows.
    O(len(text)) time and memory."""
    import numpy as np

    if "\\" in text:
        text = text.replace("\\\\", "").replace('\\"', "")
    tokens = np.frombuffer(text.encode("utf-8", "surrogatepass").translate(None, _NOT_A_JSON_TOKEN), dtype=np.uint8)
    quotes = tokens == ord('"')
    outside = (np.cumsum(quotes) - quotes) % 2 == 0
    opens = (tokens == ord("[")) | (tokens == ord("{"))
    steps = np.where(opens, 1, -1)[outside & ~quotes]
    return int(np.cumsum(steps).max(initial=0)) if steps.size else 0


def parse_json(text: str, *, file: str | Path | None = None) -> Any:
    """Parse JSON ``text`` within the limits: nesting past ``max_depth`` is refused before the parser
    runs, and the non-standard ``NaN``/``Infinity`` constants, integers of more digits than Python
    converts and syntax errors are refused, each a :class:`SimschedError` with the file and line.
    O(len(text))."""

    def at(offset: int) -> int:
        return text.count("\n", 0, max(offset, 0)) + 1

    def no_constant(name: str) -> Any:
        raise SimschedError(f"invalid JSON: {name} is not a number JSON allows", file=file, line=at(text.find(name)))

    check_depth(json_depth(text), file=file)
    try:
        return json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as e:
        what = "the file ends too early (truncated?)" if e.pos >= len(text.rstrip()) else e.msg
        raise SimschedError(f"invalid JSON: {what} (column {e.colno})", file=file, line=e.lineno) from None
    except RecursionError:  # deeper than the interpreter allows although within max_depth (a raised limit)
        raise LimitError("the JSON is nested too deeply to read (max_depth)", file=file) from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        import re

        long = re.search(r"\d{4301,}", text)
        raise SimschedError("invalid JSON: a number of more than 4300 digits", file=file,
                            line=at(long.start()) if long else None) from None


def read_json(path: str | Path, *, what: str) -> Any:
    """The JSON document in input file ``path``, read within the limits: a regular file within
    ``max_file_mb`` (:func:`read_input`), UTF-8 text, then :func:`parse_json`.  ``what`` names the
    document in the refusal of a file that is not text (``"an rl-gate checkpoint"``).  O(size)."""
    return parse_json(read_text(path, what=f"{what} is a JSON text file"), file=path)


def read_text(path: str | Path, *, what: str) -> str:
    """Input file ``path`` as UTF-8 text (a leading byte-order mark dropped), read by :func:`read_input`;
    bytes that are not UTF-8 are refused with their line and ``what`` the file should be.  O(size)."""
    raw = read_input(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SimschedError(f"not UTF-8 text (byte {exc.start}): {what}", file=path,
                            line=raw[: exc.start].count(b"\n") + 1) from None


def check_tasks(n: int, *, processors: int | None = None, field: str = "tasks",
                file: str | Path | None = None) -> None:
    """Refuse a workload of ``n`` tasks (and, with ``processors``, its cost matrix) before it is
    built: above ``max_tasks``, or above ``max_memory_mb`` for the matrices."""
    lim = current()
    if n > lim.max_tasks:
        raise LimitError(f"{n:,} tasks is more than the limit of {lim.max_tasks:,} ({_hint('max_tasks', True)})",
                         field=field, file=file)
    if processors is not None:
        check_matrix(n, processors, field=field)


def check_processors(m: int, *, field: str = "platform.processors") -> None:
    """Refuse a platform of more than ``max_processors`` processors, or whose (m, m) network
    matrices alone exceed ``max_memory_mb``."""
    lim = current()
    if m > lim.max_processors:
        raise LimitError(f"{m:,} processors is more than the limit of {lim.max_processors:,} "
                         f"({_hint('max_processors', True)})", field=field)
    check_matrix(0, m, field=field)


def matrix_bytes(n: int, m: int, structured: bool = False) -> int:
    """Estimated bytes of one problem's matrices: (n, m) cells at :data:`MATRIX_BYTES_PER_CELL`
    (one cell per task when ``structured``: costs computed on demand, no (n, m) matrix) plus four
    float64 (m, m) network matrices."""
    return int(n) * (1 if structured else int(m)) * MATRIX_BYTES_PER_CELL + 4 * 8 * int(m) * int(m)


EDGE_BYTES = 40
"""Bytes an edge costs (source, destination, data and the two CSR index arrays)."""


def check_matrix(n: int, m: int, *, field: str | None = None, edges: float = 0.0, structured: bool = False) -> None:
    """Refuse ``n`` tasks (with about ``edges`` edges) on ``m`` processors when the matrices and
    edge arrays would exceed ``max_memory_mb`` (``structured``: see :func:`matrix_bytes`)."""
    lim = current()
    need = matrix_bytes(n, m, structured) + int(min(float(edges), 1e18)) * EDGE_BYTES
    if need > lim.max_memory_mb * 2**20:
        shape = f"{n:,} tasks x {m:,} processors" if n else f"{m:,} processors"
        if edges:
            shape += f" with about {int(edges):,} edges"
        raise LimitError(f"{shape} needs about {need / 2**20:,.0f} MB of matrices, more than the limit of "
                         f"{lim.max_memory_mb:g} MB ({_hint('max_memory_mb', True)})", field=field)


def check_grid(runs: int, *, field: str = "grid") -> None:
    """Refuse a study of more than ``max_grid_points`` runs before its points are expanded."""
    lim = current()
    if runs > lim.max_grid_points:
        raise LimitError(f"the study has {runs:,} runs (points x schedulers x seeds), more than the limit of "
                         f"{lim.max_grid_points:,} ({_hint('max_grid_points', False)})", field=field)


def check_product(sizes: Iterable[int], limit: int, *, what: str, hint: str, field: str | None = None,
                  file: str | Path | None = None, line: int | None = None) -> int:
    """The number of combinations of axes of ``sizes`` values each (their exact product, Python
    integers), refused with :class:`LimitError` when it passes ``limit`` — before any combination is
    listed (every mix of two ranges of 10^6 counts is 10^12 tuples: a MemoryError, not an answer).
    ``what`` names the combinations in the message, ``hint`` says how to ask for fewer.  O(axes)."""
    total = math.prod(max(int(size), 0) for size in sizes)
    if total > limit:
        shown = f"{total:,}" if total < 10**15 else f"about {float(total):.3g}"
        raise LimitError(f"{shown} {what} is more than the limit of {limit:,}; {hint}", field=field, file=file,
                         line=line)
    return total


def check_runs(runs: int, *, field: str = "repetitions") -> None:
    """Refuse a scenario run of more than ``max_runs`` (schedulers x repetitions) runs."""
    lim = current()
    if runs > lim.max_runs:
        raise LimitError(f"{runs:,} runs (schedulers x repetitions) is more than the limit of {lim.max_runs:,} "
                         f"({_hint('max_runs', False)})", field=field)


def finite_value(x: float) -> bool:
    """True for a number whose magnitude is at most :data:`MAX_VALUE` (so not NaN or infinite)."""
    return math.isfinite(x) and abs(x) <= MAX_VALUE


GC_FIRST_GENERATION = 50_000
"""Allocations between first-generation collections while a big run works (CPython's default: 700)."""


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with the cyclic garbage collector's first threshold at
    :data:`GC_FIRST_GENERATION`, restoring the thresholds after.  A run builds millions of small
    objects without cycles (SimPy events, result records, edge lists); at the default threshold the
    collector re-walks the ones alive hundreds of times, ~15% of ``simsched run``'s CPU at 100k tasks, and
    a third of importing a 20,000-task WfFormat file.
    Garbage in cycles is still collected, only less often.  O(1)."""
    before = gc.get_threshold()
    gc.set_threshold(GC_FIRST_GENERATION, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


MAX_INT = 2**63 - 1
"""Largest integer any field takes (numpy's int64): larger ones are refused where they are read."""


def not_a_number_check(value: Any, *, integer: bool = False, allow_inf: bool = False) -> None:
    """The shared number rule of every input number: a bool is not a number (YAML ``true`` is not 1);
    NaN is never a value; an infinity only where ``allow_inf``; a finite magnitude at most
    :data:`MAX_VALUE` (:data:`MAX_INT` for integers).  Raises ``ValueError`` with the
    reason (pydantic turns it into a located error).  O(1)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number, not {str(value).lower()} (a boolean)")
    if isinstance(value, int) and abs(value) > (MAX_INT if integer else MAX_VALUE):
        raise ValueError(f"must be at most {f'{MAX_INT:,}' if integer else f'{MAX_VALUE:g}'} in magnitude")
    if isinstance(value, float):
        if math.isnan(value):
            raise ValueError("must be a number, not NaN")
        if math.isinf(value) and not allow_inf:
            raise ValueError("must be finite, not infinite")
        if math.isfinite(value) and abs(value) > MAX_VALUE:
            raise ValueError(f"must be a finite number no larger than {MAX_VALUE:g}")


def read_csv_records(path: str | Path, *, required: tuple[str, ...], optional: tuple[str, ...] = (), what: str,
                     delimiter: str = ",", extra_ok: bool = False, fold_case: bool = False,
                     max_rows: tuple[int, str] | None = None, take: int | None = None
                     ) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The one capped CSV reader of input tables (arrival traces, down-interval traces, task lists):
    ``(header, [(line, {column: stripped cell}), ...])``.  Refused with a :class:`SimschedError` naming
    the file, the line and the column: not a regular file or over ``max_file_mb`` (:func:`read_input`),
    bytes that are not UTF-8 or a NUL (a binary file), a cell over ``max_csv_field`` characters, an
    empty file, a column twice in the header, a ``required`` column missing, a column neither
    ``required`` nor ``optional`` (unless ``extra_ok``), a row with more or fewer cells than the header.
    Blank lines are skipped; ``fold_case``: header names are compared in lower case (and returned so).
    Rows are bounded while they are read: ``max_rows = (count, limit field)`` (default ``max_trace_rows``)
    refuses row ``count + 1`` with the limit's name, and ``take`` stops after that many rows with a
    cell (a trace's ``limit``), so a 60 MB file of tiny rows costs at most that many rows, never minutes.
    O(size of the file), whatever its content (the csv module is linear)."""
    top, field = max_rows if max_rows is not None else (current().max_trace_rows, "max_trace_rows")
    text = read_text(path, what=f"{what} is a UTF-8 CSV file")
    if "\x00" in text:
        at = text.index("\x00")
        raise SimschedError(f"a NUL byte: this is a binary file, not {what} (a CSV text file)", file=path,
                            line=text.count("\n", 0, at) + 1)
    cap = current().max_csv_field
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    old_cap = csv.field_size_limit()
    csv.field_size_limit(cap)
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        first = next(reader, None)
        if first is None or not any(c.strip() for c in first):
            first_col = required[0] if required else None
            if not required:
                raise SimschedError(f"the file is empty: {what} needs a header row", file=path, line=1)
            raise SimschedError(f"the file is empty (no {first_col!r} column): {what} needs the header "
                                f"{','.join(required)}", file=path, line=1, field=first_col)
        header = [c.strip().lower() if fold_case else c.strip() for c in first]
        for k, column in enumerate(header):
            if column in header[:k]:
                raise SimschedError(f"the column {column!r} appears twice in the header", file=path, line=1,
                                    field=column)
        missing = [c for c in required if c not in header]
        if missing:
            also = f" (and optionally {', '.join(optional)})" if optional else ""
            raise SimschedError(f"the header has no {missing[0]!r} column: {what} needs the columns "
                                f"{','.join(required)}{also}", file=path, line=1, field=missing[0])
        if not extra_ok:
            known = (*required, *optional)
            unknown = [c for c in header if c not in known]
            if unknown:
                raise SimschedError(f"unknown column {unknown[0][:40]!r}; {what} has the columns {', '.join(known)}",
                                    file=path, line=1, field=unknown[0][:40])
        for cells in reader:
            line = reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != len(header):
                if len(cells) > len(header):
                    raise SimschedError(f"the row has {len(cells)} fields: more cells than the header's "
                                        f"{len(header)} columns",
                                        file=path, line=line, field=header[-1])
                raise SimschedError(f"the row has {len(cells)} fields: no cell for this column (the header has "
                                    f"{len(header)} columns)",
                                    file=path, line=line, field=header[len(cells)])
            if len(rows) >= top:
                raise LimitError(f"{what} has more than {top:,} rows ({_hint(field, False)}; or take a slice)",
                                 file=path, line=line)
            rows.append((line, {h: c.strip() for h, c in zip(header, cells)}))
            if take is not None and any(c.strip() for c in cells):
                take -= 1  # rows of empty cells (",,,") are not counted: their readers skip them
                if take <= 0:
                    break
    except csv.Error as exc:
        line = max(1, reader.line_num)  # the csv module has counted the line it stopped on (a +1 here named the next)
        if "field larger" in str(exc):
            raise LimitError(f"a cell is longer than {cap:,} characters ({_hint('max_csv_field', False)})",
                             file=path, line=line) from None
        raise SimschedError(f"malformed CSV ({exc})", file=path, line=line) from None
    finally:
        csv.field_size_limit(old_cap)
    return header, rows
