"""Rules several scenario sections share, each checked by one validator of ``scenario.schema``:

* ``busy_not_below_idle``: every power table's busy draw is at least its idle one (a processor type, one
  of its P-states, the autotuning servers' GPUs);
* ``exactly_one``: a section with alternative sources names exactly one (a carbon intensity or trace,
  an autotuning job's model or task list, a stream's arrival process, a cluster log's format).

A section that breaks one is refused like any bad input: exit 2, one line naming the file, the field and
its line, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import refused  # tests/ is on sys.path (rootdir-less test modules)

ROOT = Path(__file__).resolve().parent.parent
GPU_CLUSTER = ROOT / "scenarios" / "cluster" / "gpu_cluster.yaml"
STREAM = (ROOT / "scenarios" / "streams" / "capacity_stream.yaml").read_text()
DVFS = (ROOT / "scenarios" / "energy" / "dvfs.yaml").read_text()
AUTOTUNING = (ROOT / "scenarios" / "energy" / "autotuning_power.yaml").read_text()


@pytest.mark.parametrize("text, old, new, says", [
    (DVFS, "{speed: 0.8, busy: 62, idle: 22}", "{speed: 0.8, busy: 12, idle: 22}",
     ":15: platform.power.types.cpu.pstates[1]: busy power 12 W is below idle power 22 W"),
    (DVFS, "pstates: [{speed: 1.0, busy: 300, idle: 50}, {speed: 0.75, busy: 190, idle: 45}, "
           "{speed: 0.5, busy: 110, idle: 40}]", "{busy: 30, idle: 50}",
     ":16: platform.power.types.gpu: busy power 30 W is below idle power 50 W"),
    (AUTOTUNING, "gpu_idle: 40, gpu_busy: 250", "gpu_idle: 40, gpu_busy: 25",
     ":13: autotuning.power: gpu_busy 25 W is below gpu_idle 40 W"),
])
def test_busy_below_idle_is_refused_in_one_located_line(tmp_path: Path, text: str, old: str, new: str,
                                                        says: str) -> None:
    assert text.count(old) == 1
    path = tmp_path / "s.yaml"
    path.write_text(text.replace(old, new))
    line = refused(["validate", str(path)], inputs=(path,), says=says)
    assert str(path) in line


@pytest.mark.parametrize("text", [DVFS, AUTOTUNING])
def test_equal_busy_and_idle_draws_are_accepted(tmp_path: Path, text: str) -> None:
    """The rule is busy >= idle: a processor whose draw does not change with work is legal."""
    from typer.testing import CliRunner

    from simsched.cli.main import app

    path = tmp_path / "s.yaml"
    path.write_text(text.replace("{speed: 0.8, busy: 62, idle: 22}", "{speed: 0.8, busy: 22, idle: 22}")
                    .replace("gpu_busy: 250", "gpu_busy: 40"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("text, old, new, says", [
    (DVFS, "carbon: {intensity: 350}", "carbon: {intensity: 350, trace: c.csv}",
     "platform.carbon: give exactly one of intensity (a constant gCO2/kWh) or trace (a CSV file)"),
    (DVFS, "carbon: {intensity: 350}", "carbon: {interpolation: linear}",
     "platform.carbon: give exactly one of intensity (a constant gCO2/kWh) or trace (a CSV file)"),
    (AUTOTUNING, "{model: resnet18, count: 2,", "{model: resnet18, tasks: [{name: a}], count: 2,",
     "autotuning.jobs[0]: give exactly one of model (a DL model name) or tasks (a list)"),
    (STREAM, "arrivals: {poisson: 0.015}", "arrivals: {poisson: 0.015, trace: a.csv}",
     "workload.stream.arrivals: give exactly one of poisson, rates or trace"),
    (STREAM, "arrivals: {poisson: 0.015}", "arrivals: {}",
     "workload.stream.arrivals: give exactly one of poisson, rates or trace"),
    (GPU_CLUSTER.read_text(), "gpu_trace: ../data/traces/gpu_jobs_300.csv",
     "gpu_trace: ../data/traces/gpu_jobs_300.csv\n    swf: ../data/traces/lublin_256.swf",
     "workload.stream: give exactly one of swf, sacct or gpu_trace"),
])
def test_alternative_sources_take_exactly_one(tmp_path: Path, text: str, old: str, new: str, says: str) -> None:
    assert text.count(old) == 1, old
    folder = tmp_path / "cluster"  # relative trace paths resolve as beside the bundled scenario
    folder.mkdir()
    path = folder / "s.yaml"
    path.write_text(text.replace(old, new))
    line = refused(["validate", str(path)], inputs=(path,), says=says)
    assert line.startswith(f"error: {path}:")
