"""Training DeepSched: data generation (or reuse), Adam with a halving learning rate, checkpoints.

Paper defaults (Adam, lr 1e-5 halved every 20 epochs, 100 epochs) come from
:class:`~simsched.learned.deepsched.config.TrainConfig`; every value is set by the YAML config.
The model with the best validation loss is kept; test and unseen-test accuracy against HEFT, and
the untrained network's accuracy on the same data, go into the checkpoint's metrics.

Cost per epoch: O(training instances x forward/backward), O(n (H^2 + m H)) per instance.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from simsched.errors import SimschedError
from simsched.learned.deepsched import data as dsdata
from simsched.learned.deepsched.config import DeepSchedConfig


def prepare_data(cfg: DeepSchedConfig, progress: Callable[[str, int, int], None] | None = None,
                 force: bool = False) -> Path:
    """The data folder of ``cfg``, generating every split whose shards are missing or were made with
    another data configuration.  ``manifest.json`` records the configuration *and the shard files
    this function wrote*; regenerating removes only those files, never another ``*.npz`` a user keeps
    in the folder (issue 24: never delete what the command did not write)."""
    from simsched.fileio import atomic_write_text

    out = cfg.path(cfg.data.dir)
    manifest = out / "manifest.json"
    want = cfg.data.model_dump(mode="json")
    previous = read_manifest(out) or {}
    if not force and previous.get("data") == want and all((out / f).is_file() for f in previous.get("files", [])):
        return out
    if out.exists() and not out.is_dir():
        raise SimschedError(f"data.dir {out}: is a file, not a directory; choose a folder for the training data")
    out.mkdir(parents=True, exist_ok=True)
    for name in previous.get("files", []):
        old = out / Path(str(name)).name  # only plain names inside the folder: a manifest cannot point outside
        if old.suffix == ".npz" and old.is_file():
            old.unlink()
    written: list[str] = []
    for split in dsdata.SPLITS:
        paths = dsdata.generate_split(cfg.data, split, out,
                                      (lambda d, t, s=split: progress(s, d, t)) if progress else None)
        written += [p.name for p in paths]
    atomic_write_text(manifest, json.dumps({"data": want, "files": written}, indent=1))
    return out


def read_manifest(data_dir: Path) -> dict[str, Any] | None:
    """``manifest.json`` of the data folder ``data_dir`` (``None`` when there is none), read by
    :func:`simsched.limits.read_json` (a regular file within ``max_file_mb``, at most ``max_depth`` deep;
    a FIFO is never opened): an object whose ``data`` is an object and ``files`` a list of shard names
    (text).  :class:`SimschedError` naming the file and the field otherwise (delete it: the data is
    generated again).  O(size of the file)."""
    import os

    from simsched import limits
    from simsched.errors import shown

    path = data_dir / "manifest.json"
    if not os.path.lexists(path):
        return None
    fix = "; delete it (the training data is generated again)"
    try:
        doc = limits.read_json(path, what="a DeepSched data manifest")
    except SimschedError as exc:
        raise SimschedError(exc.message + fix, file=exc.file, line=exc.line, field=exc.field) from None
    if not isinstance(doc, dict):
        raise SimschedError(f"a data manifest is an object {{data, files}}{fix}", file=path)
    if "data" in doc and not isinstance(doc["data"], dict):
        raise SimschedError(f"{shown(doc['data'], 40)} is not an object{fix}", file=path, field="data")
    files = doc.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise SimschedError(f"{shown(files, 40)} is not a list of shard names{fix}", file=path, field="files")
    return doc


def shard_files(data_dir: Path) -> list[str] | None:
    """The shard names ``manifest.json`` of ``data_dir`` lists (:func:`read_manifest`), or ``None``
    without a manifest."""
    doc = read_manifest(data_dir)
    return None if doc is None else list(doc.get("files", []))


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SimschedError("train.device is cuda but torch sees no CUDA device; use device: cpu or auto")
    return device


def batches(records: list[dict], size: int, rng: np.random.Generator | None = None) -> list[list[dict]]:
    """Records in batches of ``size`` of similar task counts (less padding); with ``rng`` the sizes
    are jittered and the batch order shuffled, else in size order."""
    n = np.array([r["task"].shape[0] for r in records], dtype=np.float64)
    if rng is not None:
        n = n * rng.uniform(0.8, 1.25, n.size)
    idx = np.argsort(n, kind="stable")
    out = [[records[i] for i in idx[k:k + size]] for k in range(0, len(records), size)]
    if rng is not None:
        out = [out[i] for i in rng.permutation(len(out))]
    return out


def evaluate_records(net: Any, records: list[dict], batch_size: int = 64, device: str = "cpu",
                     mse_weight: float = 1.0) -> dict[str, float]:
    """Task-weighted loss, CE, MSE and processor-choice accuracy against the labels."""
    import torch

    from simsched.learned.deepsched.model import collate, loss_fn

    if not records:
        return {}
    tot: dict[str, float] = {"loss": 0.0, "ce": 0.0, "mse": 0.0, "acc": 0.0}
    count = 0
    net.eval()
    with torch.inference_mode():
        for chunk in batches(records, batch_size):
            b = collate(chunk, device)
            logits, times = net(b)
            loss, parts = loss_fn(logits, times, b, mse_weight)
            k = int(b["task_mask"].sum())
            tot["loss"] += float(loss) * k
            for key in ("ce", "mse", "acc"):
                tot[key] += parts[key] * k
            count += k
    return {k: v / count for k, v in tot.items()}


def train(cfg: DeepSchedConfig, *, log: Callable[[str], None] | None = None, show_progress: bool = True,
          data_dir: Path | None = None) -> dict[str, float]:
    """Generate/reuse the data, train, save the checkpoint (``cfg.checkpoint``); returns the metrics."""
    import torch

    from simsched.learned.deepsched.checkpoint import save_checkpoint
    from simsched.learned.deepsched.dagger import relabel
    from simsched.learned.deepsched.model import DeepSchedNet, collate, loss_fn

    log = log or (lambda s: None)
    tc = cfg.train
    device = resolve_device(tc.device)
    if tc.threads:
        torch.set_num_threads(tc.threads)
    torch.manual_seed(tc.seed)
    rng = np.random.default_rng(tc.seed)
    t0 = time.perf_counter()
    folder = data_dir or prepare_data(cfg)
    log(f"data ready in {time.perf_counter() - t0:.1f} s ({folder})")
    listed = shard_files(folder)
    split = {s: dsdata.load_split(folder, s, listed) for s in dsdata.SPLITS}
    if not split["train"] or not split["val"]:
        raise SimschedError("the training data is empty: data.train and data.val must be >= 1")
    net = DeepSchedNet(**cfg.model.model_dump())
    net.to(device)
    train_set = list(split["train"])
    problems: list[Any] = []
    untrained = evaluate_records(net, split["val"], device=device, mse_weight=tc.mse_weight)
    opt = torch.optim.Adam(net.parameters(), lr=tc.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=tc.lr_halve_every, gamma=0.5)
    best, best_state, history = float("inf"), copy.deepcopy(net.state_dict()), []
    deadline = t0 + 60 * tc.max_minutes if tc.max_minutes else float("inf")
    t_train = time.perf_counter()
    phases = tc.dagger_rounds + 1
    done_rounds = 0
    progress = _progress(show_progress)
    task = progress.add_task("training", total=tc.epochs) if progress else None
    epoch = 0
    metrics_dagger: list[float] = []
    try:
        for epoch in range(1, tc.epochs + 1):
            due = max(int(epoch - 1 >= (done_rounds + 1) * tc.epochs / phases),
                      int(time.perf_counter() - t_train >= (done_rounds + 1) * (deadline - t_train) / phases))
            if done_rounds < tc.dagger_rounds and due:
                if not problems:
                    problems = [dsdata.make_problem(dsdata.family_of(cfg.data, r["family"]), cfg.data.platform,
                                                    r["seed"]) for r in split["train"]]
                net.load_state_dict(best_state)
                extra, agree = relabel(net, problems, split["train"], tc.dagger_top_k, device)
                train_set += extra
                done_rounds += 1
                log(f"DAgger round {done_rounds}: decode agreed with the expert on {agree:.3f} of the tasks; "
                    f"{len(train_set)} training records")
                metrics_dagger.append(agree)
            net.train()
            for chunk in batches(train_set, tc.batch_size, rng):
                b = collate(chunk, device)
                logits, times = net(b)
                loss, _ = loss_fn(logits, times, b, tc.mse_weight)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
                opt.step()
                if time.perf_counter() > deadline:  # the budget ends mid-epoch too
                    break
            sched.step()
            val = evaluate_records(net, split["val"], device=device, mse_weight=tc.mse_weight)
            history.append(val)
            if val["loss"] < best:
                best, best_state = val["loss"], copy.deepcopy(net.state_dict())
            text = f"epoch {epoch}: val loss {val['loss']:.4f}, ce {val['ce']:.4f}, acc {val['acc']:.3f}"
            if progress:
                progress.update(task, advance=1, description=text)
            if not progress or epoch % 10 == 0 or epoch == tc.epochs:
                log(text)
            if time.perf_counter() > deadline:
                log(f"stopping after epoch {epoch}: train.max_minutes ({tc.max_minutes}) reached")
                break
    finally:
        if progress:
            progress.stop()
    net.load_state_dict(best_state)
    metrics = {"epochs": float(epoch), "train_s": time.perf_counter() - t0, "untrained_val_acc": untrained["acc"],
               "untrained_val_loss": untrained["loss"],
               "instances": float(len(split["train"])), "dagger_rounds": float(done_rounds)}
    for i, a in enumerate(metrics_dagger, 1):
        metrics[f"dagger_{i}_agreement"] = a
    for name in ("val", "test", "unseen"):
        for k, v in evaluate_records(net, split[name], device=device, mse_weight=tc.mse_weight).items():
            metrics[f"{name}_{k}"] = v
    save_checkpoint(cfg.path(cfg.checkpoint), net.cpu(), cfg.model_dump(mode="json"), metrics,
                    training_range=dsdata.training_range(cfg.data, split["train"]))
    log(f"checkpoint written to {cfg.path(cfg.checkpoint)}")
    return metrics


def _progress(show: bool) -> Any:
    if not show:
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        return None
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console, transient=True)
    bar.start()
    return bar
