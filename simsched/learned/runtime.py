"""How learned schedulers run torch at inference: how many CPU threads and on which device.

Inference defaults to **one** torch thread: a DeepSched forward pass or an RL policy step is small,
and torch's default (one thread per core) makes it many times slower on a machine whose cores are
busy (oversubscription), and gains little on an idle one.  The count is configurable
per scheduler (parameter ``threads``) or for the whole process (environment variable
``SIMSCHED_TORCH_THREADS``); the parameter wins.  ``device: auto`` picks CUDA when torch sees a GPU,
else the CPU.  Cost: O(1).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

ENV_THREADS = "SIMSCHED_TORCH_THREADS"
DEVICES = ("cpu", "cuda", "auto")


def inference_threads(threads: int | None = None) -> int:
    """Torch CPU threads for inference: ``threads`` if given, else ``$SIMSCHED_TORCH_THREADS``, else 1.
    A bad value (not a positive integer) raises ``ValueError`` naming where it came from."""
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        return threads
    raw = os.environ.get(ENV_THREADS, "").strip()
    if not raw:
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"environment variable {ENV_THREADS} must be a positive integer, got {raw!r}")
    return value


def check_device(device: str) -> str:
    """``device`` itself if it is ``cpu``, ``cuda`` or ``auto``; otherwise ``ValueError``."""
    if device not in DEVICES:
        raise ValueError(f"device must be cpu, cuda or auto, got {device!r}")
    return device


def resolve_device(device: str, cuda_available: bool | None = None) -> str:
    """The torch device to run on: ``auto`` becomes ``cuda`` when a GPU is usable (``cuda_available``;
    None: ask torch), else ``cpu``; ``cpu`` and ``cuda`` are returned as given."""
    check_device(device)
    if device != "auto":
        return device
    if cuda_available is None:
        import torch

        cuda_available = bool(torch.cuda.is_available())
    return "cuda" if cuda_available else "cpu"


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the body with torch on ``threads`` intra-op CPU threads, restoring the previous count after."""
    import torch

    before = torch.get_num_threads()
    if before != threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
