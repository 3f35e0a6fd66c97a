"""DeepSched checkpoints: save and load a trained network with its configuration, feature
normalisation and versions.

A checkpoint is a plain dict of tensors, numbers, strings and lists, so it loads with
``torch.load(..., weights_only=True)`` (no pickled code runs).  Anything wrong — not a file, not a
torch file, truncated, another format, another feature version, weights that do not fit the
architecture — raises :class:`~simsched.errors.SimschedError` (exit 2) saying what and what to do.
Loaded networks are cached per (path, modification time).  Cost: one file read.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from simsched.checkpoints import DEEPSCHED_FORMAT, check_weights, planned_weights, read_checkpoint
from simsched.errors import SimschedError
from simsched.fileio import atomic_path
from simsched.learned.deepsched.features import FEATURE_VERSION, MACHINE_FEATURES, PAIR_FEATURES, TASK_FEATURES

FORMAT = DEEPSCHED_FORMAT
FORMAT_VERSION = 1
SHIPPED = "deepsched-general.pt"
RETRAIN = "retrain it with `simsched train deepsched CONFIG.yaml` (or omit `checkpoint` for the shipped one)"
_CACHE: dict[tuple[str, float], tuple[Any, dict]] = {}


def shipped_checkpoint() -> Path:
    """Path of the small pretrained checkpoint shipped with simsched."""
    return Path(str(resources.files("simsched.learned.deepsched") / "checkpoints" / SHIPPED))


def save_checkpoint(path: Path, net: Any, config: dict, metrics: dict[str, float],
                    training_range: dict | None = None) -> None:
    """Write ``net`` (a DeepSchedNet) with its config, metrics and the range its training data
    spans (:func:`~simsched.learned.deepsched.data.training_range`), atomically."""
    import torch

    from simsched import __version__

    doc = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "feature_version": FEATURE_VERSION,
        "simsched_version": __version__, "torch_version": str(torch.__version__),
        "features": {"task": list(TASK_FEATURES), "machine": list(MACHINE_FEATURES), "pair": list(PAIR_FEATURES)},
        "config": config, "metrics": {k: float(v) for k, v in metrics.items()},
        "training_range": training_range or {},
        "normalisation": {k: v.detach().cpu().tolist() for k, v in net.state_dict().items()
                          if k.endswith("_mean") or k.endswith("_std")},
        "model": {k: v.detach().cpu() for k, v in net.state_dict().items()},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(doc, tmp)


def _read(path: Path) -> dict:
    doc = read_checkpoint(path, "deepsched", retrain=RETRAIN)
    if doc.get("format_version") != FORMAT_VERSION or doc.get("feature_version") != FEATURE_VERSION:
        raise SimschedError(
            f"DeepSched checkpoint {path} has format {str(doc.get('format_version'))[:20]} / features "
            f"{str(doc.get('feature_version'))[:20]}, this simsched reads format {FORMAT_VERSION} / features "
            f"{FEATURE_VERSION}; {RETRAIN}")
    want = {"task": list(TASK_FEATURES), "machine": list(MACHINE_FEATURES), "pair": list(PAIR_FEATURES)}
    if doc.get("features") != want:
        raise SimschedError(f"DeepSched checkpoint {path} was trained on other input features; retrain it")
    return doc


def _warm_up(net: Any, device: str) -> None:
    """One forward pass on a 3-task, 2-processor dummy batch, so that torch's one-off kernel set-up
    is not charged to the first plan."""
    import numpy as np
    import torch

    from simsched.learned.deepsched.model import collate

    n, m = 3, 2
    rec = dict(task=np.zeros((n, len(TASK_FEATURES)), np.float32),
               machine=np.zeros((m, len(MACHINE_FEATURES)), np.float32),
               pair=np.zeros((n, m, len(PAIR_FEATURES)), np.float32), eligible=np.ones((n, m), bool),
               edges=np.array([[0, 1], [1, 2]]), edge_data=np.zeros(2, np.float32))
    with torch.inference_mode():
        net(collate([rec], device=device, labels=False))


def load_checkpoint(path: str | Path | None = None, device: str = "cpu") -> tuple[Any, dict]:
    """(network in eval mode on ``device``, checkpoint metadata without the weights).  ``None``:
    the shipped checkpoint."""
    from simsched.learned.deepsched.config import config_from_dict
    from simsched.learned.deepsched.model import DeepSchedNet

    p = Path(path) if path is not None else shipped_checkpoint()
    try:
        key = (f"{p.resolve()}@{device}", p.stat().st_mtime if p.is_file() else -1.0)
    except (OSError, RuntimeError):  # a symbolic-link loop: the reader says what the path is
        key = (f"{p}@{device}", -1.0)
    if key in _CACHE and key[1] >= 0:
        return _CACHE[key]
    doc = _read(p)
    cfg = config_from_dict(doc.get("config"), source=f"checkpoint {p}")
    try:  # shapes first, on the meta device: the real network is built only once they match the file's
        shapes = planned_weights(lambda: DeepSchedNet(**cfg.model.model_dump()), file=p, what="DeepSched",
                                 field="config.model")
        check_weights(shapes, doc.get("model"), file=p, what="DeepSched", field="model", retrain=RETRAIN)
        net = DeepSchedNet(**cfg.model.model_dump())
        net.load_state_dict(dict(doc["model"]))
    except (TypeError, ValueError, RuntimeError) as exc:
        raise SimschedError(f"DeepSched checkpoint {p}: its model configuration cannot build a network "
                            f"({(str(exc).splitlines() or [type(exc).__name__])[0][:160]}); retrain it") from None
    net.to(device).eval()
    _warm_up(net, device)
    meta = {k: v for k, v in doc.items() if k != "model"}
    _CACHE[key] = (net, meta)
    return net, meta
