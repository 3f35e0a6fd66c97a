"""The generalisation report of every learned checkpoint: paired ratios against the best heuristic
per shift, the shifted families it builds, and a bad argument as one line with exit code 2."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("gymnasium")

from simsched.learned.generalise_report import (  # noqa: E402
    deepsched_shifts,
    paired,
    single_dag_shifts,
    summarise,
    table_lines,
)


def test_paired_ratio_is_the_mean_of_per_seed_ratios_with_a_normal_interval():
    a, b = np.array([2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0])
    mean, half = paired(a, b)
    r = a / b
    assert mean == pytest.approx(r.mean())
    assert half == pytest.approx(1.96 * r.std(ddof=1) / np.sqrt(3))
    assert paired(np.array([5.0]), np.array([5.0])) == (1.0, 0.0)  # one seed: no interval


def test_summary_picks_the_best_heuristic_and_flags_a_significant_loss_only():
    learned = np.array([11.0, 12.0, 13.0, 14.0])
    per = {"x": learned, "heft": learned / 1.1, "mct": learned / 1.05}
    row = summarise("s", per, "x")
    assert row["best"] == "heft" and row["ratio"] == pytest.approx(1.1) and row["ci95"] == pytest.approx(0.0)
    assert row["breaks"] and row["wins"] == 0
    tie = summarise("s", {"x": np.array([1.0, 2.0]), "a": np.array([2.0, 1.0]), "b": np.array([2.0, 1.0])}, "x")
    assert tie["best"] == "a" and not tie["breaks"]  # equal means: the first name; a wide interval is no break
    with pytest.raises(ValueError):
        summarise("s", {"x": learned}, "x")
    lines = table_lines([row], "x", "makespan")
    assert len(lines) == 3 and "**yes**" in lines[2] and "1.100 ± 0.000" in lines[2]


def test_single_dag_shifts_change_one_thing_each():
    from simsched.learned.rl.checkpoint import config_of, load, shipped_path
    from simsched.learned.rl.ppo import make_family

    path = shipped_path("rl")
    cfg = config_of(load(path, "rl"), path, "rl")
    from pathlib import Path

    cfg.base = str(Path(__file__).resolve().parents[1] / "scenarios" / "rl")
    base = make_family(cfg)
    shifts = single_dag_shifts(base)
    names = list(shifts)
    assert names[0].startswith("trained family") and shifts[names[0]] is base
    two_x = shifts[names[1]]
    assert two_x.tasks == (2 * base.tasks[0], 2 * base.tasks[1]) and two_x.platform is base.platform
    procs = shifts[names[2]]
    assert procs.platform.n_processors == 2 * base.platform.n_processors and procs.tasks == base.tasks
    assert shifts[names[3]].options["ccr"] == pytest.approx(5 * base.options["ccr"])
    assert shifts["sigma 1.5"].sigma_range == (1.5, 1.5) and base.sigma_range is None
    unseen = [n for n in names if n.startswith("unseen")]
    assert unseen and all(shifts[n].generator != base.generator for n in unseen)
    ep = shifts[unseen[-1]].draw(3)  # the options kept are ones its generator accepts
    assert ep.problem.n_tasks >= 1


def test_deepsched_shifts_go_beyond_the_trained_ranges():
    from simsched.learned.deepsched.checkpoint import load_checkpoint
    from simsched.learned.deepsched.config import config_from_dict

    _, meta = load_checkpoint(None)
    cfg = config_from_dict(meta["config"], source="checkpoint")
    shifts = deepsched_shifts(cfg)
    fams = [v[0] for v in shifts.values()]
    t_hi = max(f.tasks[1] for f in cfg.data.seen)
    p_hi = max(f.processors[1] for f in cfg.data.seen)
    assert any(f.tasks[0] == 2 * t_hi for f in fams) and any(f.processors[0] == 2 * p_hi for f in fams)
    assert sorted(v[2] for v in shifts.values() if v[2] > 0) == [0.2, 1.5]
    assert {f.name for f in cfg.data.unseen} <= {f.name for f in fams}


@pytest.mark.parametrize("args,field", [(["--seeds", "1"], "seeds"), (["--first", "0"], "first")])
def test_bad_counts_are_refused_with_one_line_and_exit_code_2(args, field):
    r = subprocess.run([sys.executable, "-m", "simsched.learned.generalise_report", "rl", *args],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and field in r.stderr and "Traceback" not in r.stderr


def test_a_tiny_online_report_runs_end_to_end():
    from simsched.learned.generalise_report import online_rows

    rows = online_rows("rl-world", 2, first=2)
    assert [r["shift"][:9] for r in rows] == ["trained f", "2x tasks "]
    assert all(r["seeds"] == 2 and r["best"] != "rl-world" for r in rows)
    assert all(r["learned"] > 0 and r["ratio"] > 0 for r in rows)
