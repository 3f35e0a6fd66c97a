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
"""

from __future__ import annotations

from collections.abc import Mapping
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
        raise SimschedError(f"the {what} checkpoint's configuration is from another version "
                            f"({err['msg']}); {retrain}", file=file, field=where) from None
    except (TypeError, ValueError) as exc:
        raise SimschedError(f"the {what} checkpoint's configuration is unreadable ({exc}); {retrain}",
                            file=file, field="config") from None


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def load_checked_state(module: Any, state: Any, *, file: str | Path, what: str, retrain: str,
                       field: str = "state") -> None:
    """Load ``state`` into ``module`` (a torch ``nn.Module``) after checking that its keys and
    shapes are exactly those of ``module.state_dict()``."""
    if not isinstance(state, Mapping):
        raise SimschedError(f"the {what} checkpoint's weights are not a mapping of tensors; {retrain}",
                            file=file, field=field)
    expected = module.state_dict()
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing (e.g. {missing[0]!r})")
        if extra:
            parts.append(f"{len(extra)} unexpected (e.g. {extra[0]!r})")
        raise SimschedError(f"the {what} checkpoint's weights do not fit its network: {' and '.join(parts)} "
                            f"weight name(s); {retrain}", file=file, field=field)
    for key, tensor in expected.items():
        got = _shape(state[key])
        if got != tuple(tensor.shape):
            raise SimschedError(f"the {what} checkpoint's weight {key!r} has shape {got}, which does not fit its "
                                f"network's {tuple(tensor.shape)}; {retrain}", file=file, field=field)
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
