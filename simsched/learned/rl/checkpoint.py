"""Checkpoints: ``torch.save`` of ``{"kind", "config", "state", "meta"}``; read by the one reader of
checkpoints (:func:`simsched.checkpoints.read_checkpoint`: weights only, no code runs on load, the kind
checked).  A missing, corrupt or foreign file is a :class:`~simsched.errors.SimschedError` (exit 2)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from simsched.checkpoints import read_checkpoint
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
    """The checkpoint at ``path``, read by :func:`simsched.checkpoints.read_checkpoint` (a regular file, a
    readable torch archive loaded as weights only, of ``kind``: an rl-world or DeepSched file given for
    ``rl`` is refused by name) with a ``state`` mapping."""
    path = Path(path)
    if not path.exists() and not path.is_symlink() and str(path).removesuffix(".pt") in WITHDRAWN:
        raise SimschedError(f"checkpoint {path} is no longer shipped: {WITHDRAWN[str(path).removesuffix('.pt')]}")
    ck = read_checkpoint(path, kind, retrain=RETRAIN[kind])
    if not isinstance(ck.get("state"), dict):
        raise SimschedError(f"the {kind} checkpoint has no 'state' mapping of weights; {RETRAIN[kind]}",
                            file=path, field="state")
    return ck


def config_of(ck: dict[str, Any], path: str | Path, kind: str) -> Any:
    """The checkpoint's training configuration, validated by :class:`~simsched.learned.rl.config.TrainConfig`
    (a missing or foreign section is a :class:`SimschedError` naming the field)."""
    from simsched.checkpoints import checked_config
    from simsched.learned.rl.config import TrainConfig

    return checked_config(TrainConfig, ck.get("config"), file=path, what=kind, retrain=RETRAIN[kind],
                          drop=("base",))
