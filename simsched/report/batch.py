"""The table ``simsched run`` prints for a cluster log (one row per batch policy), narrow enough
for 100 columns."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table


def print_batch_report(report: Any, console: Any) -> None:
    """Print ``report`` (a :class:`~simsched.run.batch.BatchReport`): wait (mean, p95), bounded
    slowdown (mean, p95), utilisation and lost capacity per policy; the best mean bounded slowdown in
    green; with failures, one line per policy: failures, requeued and lost jobs, wasted work and
    down capacity."""
    what = report.scenario.workload.describe()
    table = Table(title=escape(f"{report.scenario.name}: {what} on {report.processors} processors"),
                  caption=escape("; ".join([*report.notes, "bsld: bounded slowdown, tau = 10 s"])))
    table.add_column("policy", style="bold")
    for name in ("wait mean", "wait p95", "bsld mean", "bsld p95", "util.", "lost cap."):
        table.add_column(name, justify="right")
    best = min((r["bsld_mean"] for r in report.rows), default=float("nan"))
    for r in report.rows:
        bsld = f"{r['bsld_mean']:.4g}"
        table.add_row(escape(r["scheduler"]), f"{r['wait_mean']:.5g}", f"{r['wait_p95']:.5g}",
                      f"[green]{bsld}[/green]" if r["bsld_mean"] <= best else bsld, f"{r['bsld_p95']:.4g}",
                      f"{100 * r['utilisation']:.1f}%", f"{100 * r['lost_capacity']:.1f}%")
    console.print(table)
    for r in report.rows:  # with failures: what they cost each policy
        if "lost_jobs" in r:
            console.print(escape(f"  {r['scheduler']}: {r['failures']} processor failures, {r['requeues']} jobs "
                                 f"requeued, {r['lost_jobs']} lost; work wasted {100 * r['wasted_work']:.1f}%, "
                                 f"capacity down {100 * r['down_capacity']:.1f}%"), highlight=False)
