"""Checkpoints: ``torch.save`` of ``{"kind", "config", "state", "meta"}``; loaded with
``weights_only=True`` (no code runs on load).  A missing or corrupt file is a
:class:`~simsched.errors.SimschedError` (exit 2)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from simsched.checkpoints import check_archive
from simsched.errors import SimschedError
from simsched.fileio import atomic_path

SHIPPED = {"rl": "rl.pt", "rl-world": "rl_world.pt"}
RETRAIN = {"rl": "retrain it with `simsched train rl CONFIG`",
           "rl-world": "retrain it with `simsched train rl CONFIG --stage world`"}
WITHDRAWN = {"rl_online": "it observed jobs before they arrived, so the guard handed every decision to "
                          "srjf-eft: name srjf-eft for the same schedules"}
"""Checkpoints once shipped and since removed, by name -> what to name instead (said when one is named)."""


def shipped_path(kind: str) -> Path:
    """Path of the checkpoint shipped as package data for ``kind``."""
    return Path(str(resources.files("simsched.learned.rl") / "data" / SHIPPED[kind]))


def save(path: str | Path, kind: str, config: dict, state: dict, meta: dict | None = None) -> None:
    """Write atomically (temporary file + rename)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save({"kind": kind, "config": config, "state": state, "meta": meta or {}}, tmp)


def load(path: str | Path, kind: str) -> dict[str, Any]:
    """The checkpoint at ``path``, checked to be of ``kind``."""
    import torch

    path = Path(path)
    if path.exists():  # a FIFO or device is named as such; a zip bomb is refused before torch.load
        check_archive(path, what=kind, retrain="retrain it with `simsched train rl CONFIG.yaml`")
    if not path.is_file():
        if str(path).removesuffix(".pt") in WITHDRAWN:
            raise SimschedError(f"checkpoint {path} is no longer shipped: {WITHDRAWN[str(path).removesuffix('.pt')]}")
        raise SimschedError(f"checkpoint {path} not found; train one with `simsched train rl CONFIG.yaml`")
    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise SimschedError(f"checkpoint {path} is corrupt or not a simsched checkpoint: "
                            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    if not isinstance(ck, dict) or ck.get("kind") != kind or "state" not in ck:
        raise SimschedError(f"checkpoint {path} is not a {kind!r} checkpoint")
    return ck


def config_of(ck: dict[str, Any], path: str | Path, kind: str) -> Any:
    """The checkpoint's training configuration, validated by :class:`~simsched.learned.rl.config.TrainConfig`
    (a missing or foreign section is a :class:`SimschedError` naming the field)."""
    from simsched.checkpoints import checked_config
    from simsched.learned.rl.config import TrainConfig

    return checked_config(TrainConfig, ck.get("config"), file=path, what=kind, retrain=RETRAIN[kind],
                          drop=("base",))
