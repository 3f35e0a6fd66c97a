"""Checks shared by every learned scheduler's checkpoint loader (DeepSched, ``rl``, ``rl-world``).

A checkpoint is read with ``torch.load(..., weights_only=True)`` by its own module; these helpers
then check what was read, generically, so that fields added by a newer training run need no change
here:

* :func:`checked_config` validates the stored configuration with the scheduler's own pydantic
  model (unknown or missing keys and sections, wrong types) and names the first bad field;
* :func:`load_checked_state` compares the stored state's keys and tensor shapes with those of the
  freshly built network's ``state_dict()`` before loading it, so extra, missing or misshapen
  weights are one line instead of torch's multi-line ``RuntimeError``.

Both raise :class:`~simsched.errors.SimschedError` (exit 2) naming the file.  Cost: one pass over
the state's keys.

Before ``torch.load`` runs, :func:`check_archive` reads the checkpoint's zip directory (no
decompression) and refuses a file whose members declare more than ``max_unpacked_mb`` of data in all
(:mod:`simsched.limits`), or that is not a regular file: a 2.4 MB zip bomb would otherwise be
inflated to gigabytes before any check could run.

Every checkpoint *kind* (:data:`KINDS`: ``rl``, ``rl-world``, ``deepsched``, ``rl-gate``) is read by
one reader, :func:`read_checkpoint`, before its own module checks its fields: the path must be a
regular file (a directory or FIFO is named as such), the file's first bytes say what it is (a torch
archive, JSON text, other text, something else), a truncated archive is refused before torch sees
it, JSON is read within the depth and size limits, and the kind it holds must be the one asked for
(an ``rl`` file given where a DeepSched one is expected is refused by name, and the reverse).

A network is built from a checkpoint's configuration only after :func:`planned_weights` has built it
on torch's ``meta`` device (shapes, no memory), counted its weights against ``max_net_weights`` and
:func:`check_weights` has matched every name and shape with the stored state: the real network then
holds exactly what the file held.  Widths and layer counts are bounded earlier still, by the
configuration models (:func:`simsched.limits.net_width`), so even the ``meta`` build is small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from simsched import limits
from simsched.errors import SimschedError

M = TypeVar("M")


def checked_config(model: type[M], raw: Any, *, file: str | Path, what: str, retrain: str,
                   drop: tuple[str, ...] = ()) -> M:
    """``model`` validated from the checkpoint's config ``raw`` (keys in ``drop`` ignored)."""
    from pydantic import ValidationError

    if not isinstance(raw, Mapping):
        raise SimschedError(f"the {what} checkpoint has no configuration mapping (got {type(raw).__name__}); "
                            f"{retrain}", file=file, field="config")
    try:
        return model.model_validate({k: v for k, v in raw.items() if k not in drop})  # type: ignore[attr-defined]
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in ("config", *err["loc"]))
        if err["type"] in ("extra_forbidden", "missing"):
            raise SimschedError(f"the {what} checkpoint's configuration is from another version "
                                f"({err['msg']}); {retrain}", file=file, field=where) from None
        raise SimschedError(f"the {what} checkpoint's configuration cannot be used: "
                            f"{err['msg'].removeprefix('Value error, ')}; {retrain}", file=file, field=where) from None
    except (TypeError, ValueError) as exc:
        raise SimschedError(f"the {what} checkpoint's configuration is unreadable ({exc}); {retrain}",
                            file=file, field="config") from None


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def check_weights(expected: Mapping[str, tuple[int, ...]], state: Any, *, file: str | Path, what: str,
                  retrain: str, field: str = "state") -> None:
    """Check that ``state`` (the stored weights) holds exactly the names of ``expected`` (name -> shape of
    the network the configuration describes, e.g. from :func:`planned_weights`) with those shapes, before
    any network is built or loaded, every floating-point weight finite.  O(weights)."""
    if not isinstance(state, Mapping):
        raise SimschedError(f"the {what} checkpoint's weights are not a mapping of tensors; {retrain}",
                            file=file, field=field)
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing (e.g. {str(missing[0])[:80]!r})")
        if extra:
            parts.append(f"{len(extra)} unexpected (e.g. {str(extra[0])[:80]!r})")
        raise SimschedError(f"the {what} checkpoint's weights do not fit its network: {' and '.join(parts)} "
                            f"weight name(s); {retrain}", file=file, field=field)
    for key, shape in expected.items():
        value = state[key]
        got = _shape(value)
        if got != tuple(shape):
            raise SimschedError(f"the {what} checkpoint's weight {key!r} has shape {got}, which does not fit its "
                                f"network's {tuple(shape)}; {retrain}", file=file, field=field)
        if getattr(value, "is_floating_point", lambda: False)() and not bool(value.isfinite().all()):
            raise SimschedError(f"the {what} checkpoint's weight {key!r} holds NaN or infinite values; {retrain}",
                                file=file, field=field)


def planned_weights(factory: Callable[[], Any], states: Callable[[Any], Mapping[str, Any]] | None = None, *,
                    file: str | Path, what: str, field: str = "config") -> dict[str, tuple[int, ...]]:
    """Name -> shape of every weight of the network ``factory()`` builds, built on torch's ``meta`` device
    (shapes only, no memory), its weights counted against ``max_net_weights`` (:class:`LimitError` naming
    ``file`` and ``field``).  ``states(net)``: its state mapping (default ``net.state_dict()``).  Cost: the
    network's construction without its tensors, O(its modules)."""
    import torch

    with torch.device("meta"):
        net = factory()
    shapes = {k: tuple(v.shape) for k, v in (states(net) if states else net.state_dict()).items()}
    count = 0
    for shape in shapes.values():
        n = 1
        for d in shape:
            n *= int(d)
        count += n
    limits.check_net_weights(count, what=f"{what} checkpoint's", file=file, field=field)
    return shapes


def load_checked_state(module: Any, state: Any, *, file: str | Path, what: str, retrain: str,
                       field: str = "state") -> None:
    """Load ``state`` into ``module`` (a torch ``nn.Module``) after :func:`check_weights` against
    ``module.state_dict()``."""
    check_weights({k: tuple(v.shape) for k, v in module.state_dict().items()}, state, file=file, what=what,
                  retrain=retrain, field=field)
    try:
        module.load_state_dict(dict(state))
    except (RuntimeError, TypeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SimschedError(f"the {what} checkpoint's weights cannot be loaded ({first[:160]}); {retrain}",
                            file=file, field=field) from None


def check_archive(path: str | Path, *, what: str, retrain: str) -> int:
    """Check checkpoint ``path`` before it is loaded: a regular file within ``max_file_mb``, and, for
    a zip archive (what ``torch.save`` writes), members whose declared uncompressed sizes sum to at
    most ``max_unpacked_mb`` and whose compression ratios are possible for weights (at most 1000:1 for
    a member above 1 MB).  Returns the declared uncompressed bytes (the file size for a non-zip file,
    left to ``torch.load``).  Reads only the zip's central directory: O(members)."""
    import zipfile

    size = limits.check_file_size(path)
    if size == 0 and not Path(path).exists():
        raise SimschedError(f"no such {what} checkpoint; {retrain}", file=path)
    try:
        if not zipfile.is_zipfile(path):
            return size
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise SimschedError(f"the {what} checkpoint is not a readable archive ({exc}); {retrain}", file=path) from None
    declared = sum(m.file_size for m in members)
    cap = limits.current().max_unpacked_mb
    if declared > cap * 2**20:
        raise limits.LimitError(f"the {what} checkpoint would unpack to {declared / 2**20:,.0f} MB, more than the "
                                f"limit of {cap:g} MB (max_unpacked_mb; to allow more, set "
                                f"{limits.env_name('max_unpacked_mb')}); it may be a zip bomb — {retrain}",
                                file=path)
    for m in members:
        if m.file_size > 2**20 and m.file_size > 1000 * max(m.compress_size, 1):
            raise SimschedError(f"the {what} checkpoint's member {m.filename!r} is compressed "
                                f"{m.file_size // max(m.compress_size, 1):,}:1, impossible for weights (a zip "
                                f"bomb?); {retrain}", file=path)
    return declared


# --------------------------------------------------------------------------- one reader per kind
DEEPSCHED_FORMAT = "simsched-deepsched"
"""The ``format`` marker of a DeepSched checkpoint (its other kinds carry ``kind``)."""

KINDS: dict[str, tuple[str, str]] = {
    "rl": ("an rl checkpoint", "`simsched train rl`"),
    "rl-world": ("an rl-world (world-model) checkpoint", "`simsched train rl --stage world`"),
    "deepsched": ("a DeepSched checkpoint", "`simsched train deepsched`"),
    "rl-gate": ("an rl-gate checkpoint (JSON)", "`python -m simsched.learned.rl.worlds train`"),
}
"""Every checkpoint kind: how a message names it, and what writes it."""

TORCH_KINDS = ("rl", "rl-world", "deepsched")
"""Kinds stored as torch archives (``torch.save``); the others are JSON."""

_ZIP = b"PK\x03\x04"
_PICKLE = b"\x80"


def kind_of(doc: Any) -> str | None:
    """The kind (:data:`KINDS`) a loaded checkpoint document declares, or ``None``.  O(1)."""
    if not isinstance(doc, Mapping):
        return None
    if doc.get("format") == DEEPSCHED_FORMAT:
        return "deepsched"
    kind = doc.get("kind")
    return kind if isinstance(kind, str) and kind in KINDS else None


def read_checkpoint(path: str | Path, kind: str | tuple[str, ...], *, retrain: str) -> dict[str, Any]:
    """The checkpoint document at ``path``, checked to be of ``kind`` (:data:`KINDS`) before its module
    checks its fields.  Refused, each one line naming the file (:class:`SimschedError`, exit 2): a
    missing path, a directory, FIFO or device (said so, never opened), an empty file, a truncated or
    damaged torch archive, a zip bomb (:func:`check_archive`), a pickle holding anything but tensors and
    plain data (``torch.load(weights_only=True)``), JSON nested past ``max_depth`` or above
    ``max_file_mb`` (and a pickled document nested as deep), text that is neither, and a checkpoint of
    another kind (named: "is an rl
    checkpoint, not a DeepSched checkpoint").  ``kind``: one kind, or a tuple of the kinds accepted
    (:func:`kind_of` of the result says which).  Cost: one read of the file (the archive's directory
    first); torch is imported only for a torch archive."""
    path = Path(path)
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    want = " or ".join(KINDS[k][0] for k in kinds)
    writer = " or ".join(KINDS[k][1] for k in kinds)
    size = limits.check_file_size(path)
    if size == 0 and not path.exists():
        raise SimschedError(f"the file does not exist (expected {want}); {retrain}", file=path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise SimschedError(f"cannot read the {want} ({exc.strerror or exc})", file=path) from None
    if not head:
        raise SimschedError(f"the file is empty, not {want}; {retrain}", file=path)
    if head.startswith(_ZIP) or head.startswith(_PICKLE):
        doc = _torch_document(path, head, want, retrain)
        form = "a torch archive"
    elif _looks_like_text(head):
        if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] not in (b"{", b"["):
            raise SimschedError(f"this is a text file, not {want} (a file written by {writer}); "
                                f"{retrain}", file=path)
        try:
            doc = limits.read_json(path, what=want)
        except SimschedError as exc:  # the line goes into the words: the error stays at the field naming the file
            if exc.line is not None:
                exc.message, exc.line = f"line {exc.line}: {exc.message}", None
            raise
        form = "JSON"
    else:
        raise SimschedError(f"this file is neither a torch archive nor JSON, so not {want}; {retrain}", file=path)
    limits.check_depth(limits.data_depth(doc, limits.current().max_depth), file=path)  # a pickle nests freely
    found = kind_of(doc)
    if (found in TORCH_KINDS) != (form != "JSON"):  # a marker in the wrong form (JSON saying "rl") is no kind
        found = None
    if found not in kinds:
        if found is not None:
            raise SimschedError(f"this is {KINDS[found][0]}, not {want}; give a file written by {writer}", file=path)
        if form == "JSON" and "rl-gate" in kinds and isinstance(doc, Mapping):
            raise SimschedError(f"field 'kind': expected 'rl-gate', found {str(doc.get('kind'))[:40]!r}: this JSON "
                                f"is not {want}; {retrain}", file=path)
        raise SimschedError(f"this is {form} but not a simsched checkpoint (no 'kind' or 'format' marker), "
                            f"so not {want}; {retrain}", file=path)
    return doc


def _looks_like_text(head: bytes) -> bool:
    """Whether the first bytes of a file are UTF-8 text (a multi-byte character cut at the end allowed)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and len(head) == 4096
    return True


def _torch_document(path: Path, head: bytes, want: str, retrain: str) -> Any:
    """``torch.load(path, weights_only=True)`` of a torch file whose archive directory was checked first."""
    import zipfile

    if head.startswith(_ZIP) and not zipfile.is_zipfile(path):
        raise SimschedError(f"the file is truncated or damaged: a torch archive without its directory (corrupt), "
                            f"so not a readable {want.removeprefix('an ').removeprefix('a ')}; {retrain}",
                            file=path)
    check_archive(path, what=want.removeprefix("an ").removeprefix("a ").removesuffix(" checkpoint"),
                  retrain=retrain)
    try:
        import torch
    except ImportError:
        from simsched.extras import install_hint

        raise SimschedError(f"this is a torch archive, which needs torch ({install_hint('learned')}); "
                            f"not {want}", file=path) from None
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for damaged archives
        text = str(exc).strip()
        if "Weights only load failed" in text or "weights_only" in text:
            raise SimschedError(f"the file holds objects other than tensors and plain data (a pickle that could "
                                f"run code), which simsched never loads; {retrain}", file=path) from None
        first = text.splitlines()[0][:160] if text else type(exc).__name__
        raise SimschedError(f"the file is damaged or corrupt: torch cannot read it ({first}); {retrain}",
                            file=path) from None
