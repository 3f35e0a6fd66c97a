"""``simsched capacity SCENARIO.yaml``: the fewest servers each autotuning policy needs.

Given jobs arriving over time (the ``autotuning.arrivals`` Poisson process, plus any fixed jobs) and
a service objective (``autotuning.objective``: ``quantile`` of the jobs tuned within ``within_h``
hours of their submission), find per policy the smallest number of copies of the first server that
meets it.  Meeting the objective is taken as monotone in the number of servers, so the search doubles
until it is met, then bisects between the last failure and the first success: O(log n) simulations,
and the answer ``n`` is always simulated together with ``n - 1`` (which fails).  ``dedicated`` needs
no search: every job gets its own server, so it needs as many as jobs are ever in the system at once.

Prints a table, with how many jobs each seed drew (a seed that draws few jobs needs few servers),
and with ``--plot`` writes a plot (PNG, written atomically; matplotlib imported only here).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from simsched.cli.common import console as common_console
from simsched.errors import SimschedError
from simsched.fileio import atomic_write_text, save_figure

if TYPE_CHECKING:  # the CLI imports this module at start-up: numpy and the models load on use
    from simsched.scenario.autotuning import AutotuningSection
    from simsched.workloads.autotuning import JobPlan


def _fraction(plans_per_rep: Sequence[Sequence[JobPlan]], cfg: AutotuningSection, policy: str,
              servers: int) -> tuple[float, list]:
    """Pooled fraction of jobs within the objective's deadline over repetitions, and the results."""
    from simsched.run.autotune import result_of
    within, total, results = 0, 0, []
    for plans in plans_per_rep:
        res = result_of(plans, cfg, policy, servers)
        within += round(res.fraction_within(cfg.objective.within_h * 3600) * len(res.jobs))
        total += len(res.jobs)
        results.append(res)
    return within / total, results


def _peak_concurrency(results: list) -> int:
    import numpy as np
    peak = 0
    for res in results:
        ev = sorted([(j.arrival, 1) for j in res.jobs] + [(j.finish, -1) for j in res.jobs], key=lambda e: (e[0], e[1]))
        peak = max(peak, int(np.max(np.cumsum([d for _, d in ev]))))
    return peak


def find_capacity(section: dict, *, seed: int = 0, policies: Sequence[str] | None = None, repetitions: int = 1,
                  line_of: Any = None) -> dict:
    """Smallest number of servers per policy meeting the section's objective (see module doc).

    Returns ``{"objective": {...}, "policies": [{"policy", "servers", "gpus", "fraction",
    "fraction_below", "evaluated": {servers: fraction}, "mean_latency_penalty", "device_hours",
    "simulations", "wall_s"}]}``; ``servers`` is ``None`` when even ``capacity.max_servers`` fails.
    """
    import numpy as np

    from simsched.run.autotune import plan_jobs, validate_section
    cfg = validate_section(section, line_of=line_of)
    if cfg.objective is None:
        raise SimschedError("capacity needs an objective, e.g. {quantile: 0.95, within_h: 8}",
                            field="autotuning.objective", line=line_of(("autotuning",)) if line_of else None)
    names = list(policies or cfg.capacity.policies or cfg.policies)
    from simsched.schedulers.registry import AUTOTUNE_POLICIES

    for n in names:
        if n not in AUTOTUNE_POLICIES:
            raise SimschedError(f"unknown autotuning policy {n!r}; known: {', '.join(AUTOTUNE_POLICIES)}",
                                field="policy")
    plans_per_rep = [plan_jobs(cfg, seed + r) for r in range(repetitions)]
    q, cap = cfg.objective.quantile, cfg.capacity.max_servers
    gpus_per = cfg.servers[0].gpus
    rows = []
    for name in names:
        t0 = time.perf_counter()
        evaluated: dict[int, float] = {}
        last: dict[int, list] = {}

        def meets(n: int, name: str = name, evaluated: dict = evaluated, last: dict = last) -> bool:
            frac, res = _fraction(plans_per_rep, cfg, name, n)
            evaluated[n], last[n] = frac, res
            return frac >= q - 1e-12

        answer: int | None
        if AUTOTUNE_POLICIES[name].one_server_per_job:
            ok = meets(1)  # the engine gives every job its own server whatever n is
            answer = _peak_concurrency(last[1]) if ok else None
            res = last[1]
            below = None
            frac1 = evaluated.pop(1)
            if answer is not None:
                evaluated[answer] = frac1
        else:
            lo, n = 0, 1
            while not meets(n):
                lo = n
                if n >= cap:
                    break
                n = min(2 * n, cap)
            if lo == n:
                answer, res, below = None, last[n], None
            else:
                hi = n
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if meets(mid):
                        hi = mid
                    else:
                        lo = mid
                answer, res = hi, last[hi]
                below = evaluated.get(hi - 1, 0.0 if hi == 1 else None)
        sims = 1 if AUTOTUNE_POLICIES[name].one_server_per_job else len(evaluated)
        rows.append({
            "policy": name, "servers": answer, "gpus": None if answer is None else answer * gpus_per,
            "fraction": float(np.mean([r.fraction_within(cfg.objective.within_h * 3600) for r in res])),
            "fraction_below": below, "evaluated": dict(sorted(evaluated.items())),
            "mean_latency_penalty": float(np.mean([r.mean_latency_penalty for r in res])),
            "distorted_measurements": float(np.mean([r.distorted_measurements for r in res])),
            "device_hours": float(np.mean([r.device_hours for r in res])),
            "jobs": len(plans_per_rep[0]), "simulations": sims * repetitions,
            "jobs_per_seed": {seed + r: len(plans) for r, plans in enumerate(plans_per_rep)},
            "wall_s": time.perf_counter() - t0,
        })
    return {"kind": "capacity", "objective": {"quantile": q, "within_h": cfg.objective.within_h},
            "server": cfg.servers[0].model_dump(), "seed": seed, "repetitions": repetitions, "policies": rows}


def print_capacity_table(result: dict, console: Any = None) -> None:
    """Print :func:`find_capacity`'s answer as a rich table."""
    from rich.table import Table

    obj = result["objective"]
    table = Table(title=f"capacity: {obj['quantile']:.0%} of jobs tuned within {obj['within_h']:g} h")
    for col in ("policy", "servers", "GPUs", "met", "one fewer", "penalty", "dev-h", "sims", "s"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for r in result["policies"]:
        below = r["fraction_below"]
        table.add_row(r["policy"], "not reachable" if r["servers"] is None else str(r["servers"]),
                      "-" if r["gpus"] is None else str(r["gpus"]), f"{r['fraction']:.0%}",
                      "-" if below is None else f"{below:.0%}", f"{r['mean_latency_penalty']:.1%}",
                      f"{r['device_hours']:.0f}", str(r["simulations"]), f"{r['wall_s']:.1f}")
    if result["policies"]:
        table.caption = jobs_simulated(result["policies"][0]["jobs_per_seed"])
    (console or common_console()).print(table)


def jobs_simulated(per_seed: dict[int, int]) -> str:
    """``"simulated 7 jobs (seed 4)"`` or ``"simulated 7, 9 jobs (seeds 4, 5)"``: what the answer rests on."""
    seeds, jobs = list(per_seed), list(per_seed.values())
    return (f"simulated {', '.join(map(str, jobs))} job{'s' if len(jobs) > 1 or jobs[0] != 1 else ''} "
            f"(seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})")


def write_capacity_plot(result: dict, path: str | Path) -> None:
    """Fraction of jobs within the objective against servers, one line per policy; atomic write."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in result["policies"]:
        pts = sorted((int(k), v) for k, v in r["evaluated"].items())
        if r["servers"] is not None and not any(k == r["servers"] for k, _ in pts):
            pts.append((r["servers"], r["fraction"]))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{r['policy']} ({r['servers']})")
    ax.axhline(result["objective"]["quantile"], color="grey", linestyle="--", label="objective")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("servers")
    ax.set_ylabel(f"jobs tuned within {result['objective']['within_h']:g} h")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=110)
    finally:
        plt.close(fig)


def load_section(scenario: str | Path) -> tuple[dict, Any, dict]:
    """(autotuning section, line_of, top-level data) of a scenario file, with line numbers when the
    line-aware loader is available."""
    try:
        from simsched.yamlio import load_yaml
    except ImportError:  # pragma: no cover - fallback before yamlio existed
        import yaml

        try:
            data = yaml.safe_load(Path(scenario).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise SimschedError(f"cannot read the scenario: {exc}", file=scenario) from None
        line_of = None
    else:
        doc = load_yaml(scenario)
        data, line_of = doc.data, doc.line_of
    if not isinstance(data, dict) or "autotuning" not in data:
        raise SimschedError("the scenario has no 'autotuning:' section", file=scenario)
    return data["autotuning"], line_of, data


def capacity_command(
    scenario: Path = typer.Argument(..., help="Scenario YAML with an 'autotuning:' section (arrivals + objective)."),
    policy: list[str] = typer.Option(None, "--policy", "-p", help="Policy to size (repeatable); default: all."),
    seed: int = typer.Option(None, "--seed", help="Seed (default: the scenario's, else 0)."),
    plot: Path = typer.Option(None, "--plot", help="Also write a plot of jobs on time against servers (PNG)."),
    json_path: Path = typer.Option(None, "--json", help="Also write the answer as JSON."),
) -> None:
    """Find the fewest servers/GPUs each autotuning policy needs to meet the service objective."""
    import json

    try:
        section, line_of, data = load_section(scenario)
        s = seed if seed is not None else int(data.get("seed", 0) or 0)
        reps = int(data.get("repetitions", 1) or 1)
        try:
            result = find_capacity(section, seed=s, policies=policy or None, repetitions=reps, line_of=line_of)
        except SimschedError as exc:
            raise exc.located(file=scenario) from None
        print_capacity_table(result)
        if plot is not None:
            write_capacity_plot(result, plot)
            typer.echo(f"plot written to {plot}")
        if json_path is not None:
            atomic_write_text(json_path, json.dumps(result, indent=2, default=str))
    except SimschedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(exc.exit_code) from None
