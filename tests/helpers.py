"""Helpers that several test files share (not a test module: pytest collects nothing here; tests/ is on
``sys.path``, so a test file writes ``from helpers import refused``).

* :data:`SMALL_STREAM`: a small job-stream scenario (two job sources, Poisson arrivals, deadlines,
  failures with a per-type rate, stragglers) that runs in about a second;
* :func:`refused`: run a command and assert the user-input rule (exit 2, one located ``error:`` line,
  inputs unchanged, nothing written, no hang).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from typer.testing import CliRunner

from simsched.cli.main import app

SMALL_STREAM = """\
name: small-stream
seed: 4
repetitions: 2
platform:
  processors: [{name: cpu, count: 3}, {name: gpu, type: gpu, speed: 2}]
  network: {bandwidth: 5.0, latency: 0.1}
workload:
  stream:
    jobs:
      - {weight: 2, generator: random, tasks: [3, 12], ccr: 0.3}
      - {weight: 1, generator: fork_join, priority: 1}
    arrivals: {poisson: 0.05}
    count: 6
    deadline: {slack: 3}
noise: {model: lognormal, sigma: 0.2}
failures: {mtbf: 150, mttr: 10, types: {gpu: {mtbf: 80, mttr: 20}}}
stragglers: {rate: 0.01, duration: 20, slowdown: 3}
schedulers: [mct, srjf-eft, fair-eft, heft]
"""
"""A job stream of six jobs on three CPUs and a GPU, failures (the GPU's more often) and stragglers: every
stream figure (JCT, slowdown, deadline misses, lost work) has something to show."""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(args: list[str], *, inputs: tuple[Path, ...] = (), absent: tuple[Path, ...] = (),
            says: str = "", seconds: float = 120.0) -> str:
    """Run ``simsched ARGS``; assert exit 2, one located error line, inputs unchanged, ``absent``
    not created.  ``seconds`` is a liveness bound, not a speed target: reading a FIFO or /dev/zero, or
    building a 10^9-job day, would never end, so a refusal that is not up front shows as a hang
    (like the sweep-kill test's bound); it is generous so a loaded machine does not fail it.
    Returns the error line."""
    before = {p: digest(p) for p in inputs}
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, args)
    took = time.perf_counter() - t0
    assert result.exit_code == 2, (args, result.exit_code, result.output[-1500:])
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
    assert says in lines[0], (says, lines[0])
    assert took < seconds, (args, took)
    for p, d in before.items():
        assert digest(p) == d, f"{p} changed"
    for p in absent:
        assert not p.exists(), f"{p} was written"
    return lines[0]
