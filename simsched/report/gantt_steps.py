"""A Gantt chart shown decision by decision: one self-contained HTML page with a slider, one frame per
decision, for a lecture.

Frame k shows the first k decisions: every task placed so far as a bar on its processor (start to finish),
the task placed at step k framed by a dashed black box (its red critical-path outline stays), and a caption
naming it ("step 3: task 7 on P1, 39-46").  Tasks of
the critical path (CPOP's definition, as in :mod:`simsched.report.taskgraph_picture`) carry a red outline
and a red marker above the bar, in every frame; the legend says so.  Every bar is labelled with its task:
inside when the name fits, otherwise above the bar in a smaller font with a short tick (narrow bars stay
readable).  The chart is an SVG written here (one ``<g class="task" data-step=k>`` per task), so tests read
it as text; the page's script only shows the groups with ``data-step <= k`` when the slider (or the
arrow keys / buttons) moves.  No external files, no network.

The decision order is the scheduler's own: HEFT's and CPOP's/PEFT's placement order
(:mod:`simsched.analysis.teaching` traces), Min-Min's mapping order over its decision points, and for any
other scheduler the order of start times.  O(n) to build, O(n) elements in the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simsched.outputs import atomic_write
from simsched.report.taskgraph_picture import CP_COLOUR, describe_graph
from simsched.simulator.problem import Problem
from simsched.simulator.schedule import Schedule

ROW = 34
"""Pixels per processor row."""
LEFT = 60
WIDTH = 900
CHAR_PX = 7.0
"""Width of one label character at the inside font size, in pixels."""


@dataclass(frozen=True)
class Frame:
    """Decision ``step`` (1-based): ``task`` placed on ``processor`` from ``start`` to ``finish``."""

    step: int
    task: str
    processor: str
    start: float
    finish: float


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def frames(problem: Problem, schedule: Schedule, order: Sequence[int]) -> list[Frame]:
    """One frame per decision, in ``order`` (task indices, each once).  O(n)."""
    g, procs = problem.graph, problem.platform.names
    order = [int(t) for t in order]
    if sorted(order) != list(range(g.n_tasks)):
        raise ValueError("order must list every task exactly once")
    return [Frame(k + 1, g.names[t], procs[int(schedule.processor[t])], float(schedule.start[t]),
                  float(schedule.finish[t])) for k, t in enumerate(order)]


def gantt_svg(problem: Problem, schedule: Schedule, order: Sequence[int]) -> str:
    """The chart as SVG text: processors as rows, one ``<g class="task">`` per task with ``data-step``,
    ``data-task`` and ``data-cp`` attributes, its bar and its label (class ``inside`` or ``outside``).  O(n)."""
    g, procs = problem.graph, problem.platform.names
    m = len(procs)
    end = max(float(np.max(schedule.finish, initial=0.0)), 1e-12)
    scale = WIDTH / end
    cp = set(describe_graph(problem).critical_path)
    step_of = {int(t): k + 1 for k, t in enumerate(order)}
    top = 36
    height = top + m * ROW + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 30}" height="{height}" '
           f'font-family="sans-serif" id="gantt">']
    for p, name in enumerate(procs):
        y = top + p * ROW
        out.append(f'<text x="{LEFT - 8}" y="{y + ROW / 2 + 4}" text-anchor="end" font-size="12">'
                   f'{html.escape(name)}</text>')
        out.append(f'<line x1="{LEFT}" y1="{y + ROW}" x2="{LEFT + WIDTH}" y2="{y + ROW}" stroke="#eee"/>')
    raw = end / 5
    base = 10 ** np.floor(np.log10(raw))
    step = base * min((k for k in (1, 2, 2.5, 5, 10) if k * base >= raw), default=10)  # round tick spacing
    ticks = np.arange(0.0, end + step * 1e-9, step)
    for x in ticks:
        px = LEFT + x * scale
        out.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{top + m * ROW}" stroke="#ddd"/>')
        out.append(f'<text x="{px:.1f}" y="{top + m * ROW + 16}" text-anchor="middle" font-size="11">{_fmt(x)}</text>')
    out.append(f'<text x="{LEFT + WIDTH / 2}" y="{top + m * ROW + 32}" text-anchor="middle" font-size="11">'
               f'time</text>')
    for t in range(g.n_tasks):
        p = int(schedule.processor[t])
        s, f = float(schedule.start[t]), float(schedule.finish[t])
        x, w = LEFT + s * scale, max((f - s) * scale, 1.0)
        y = top + p * ROW + 5
        name = html.escape(g.names[t])
        on_cp = t in cp
        stroke = f'stroke="{CP_COLOUR}" stroke-width="2.5"' if on_cp else 'stroke="#333" stroke-width="0.8"'
        out.append(f'<g class="task" data-step="{step_of[t]}" data-task="{name}" data-cp="{int(on_cp)}">')
        out.append(f'<title>{name}: {html.escape(procs[p])}, {_fmt(s)}-{_fmt(f)} (step {step_of[t]})</title>')
        out.append(f'<rect class="halo" x="{x - 3:.2f}" y="{y - 3}" width="{w + 6:.2f}" height="{ROW - 4}" '
                   f'fill="none" stroke="#000" stroke-width="2" stroke-dasharray="4 2"/>')
        out.append(f'<rect class="bar" x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 10}" '
                   f'fill="{"#fde0dd" if on_cp else "#c6dbef"}" {stroke}/>')
        if on_cp:
            out.append(f'<polygon points="{x + w / 2 - 4:.1f},{y - 5} {x + w / 2 + 4:.1f},{y - 5} '
                       f'{x + w / 2:.1f},{y - 1}" fill="{CP_COLOUR}"/>')
        if w >= CHAR_PX * (len(g.names[t]) + 1):
            out.append(f'<text class="label inside" x="{x + w / 2:.2f}" y="{y + (ROW - 10) / 2 + 4}" '
                       f'text-anchor="middle" font-size="12">{name}</text>')
        else:  # a narrow bar: the name above it (above the critical-path marker), with a tick down to the bar
            lift = 6 if on_cp else 0
            out.append(f'<line x1="{x + w / 2:.2f}" y1="{y - 1}" x2="{x + w / 2:.2f}" y2="{y - 6 - lift}" '
                       f'stroke="#333"/>')
            out.append(f'<text class="label outside" x="{x + w / 2:.2f}" y="{y - 7 - lift}" text-anchor="middle" '
                       f'font-size="9">{name}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; }}
.controls {{ margin: 12px 0; font-size: 15px; }}
input[type=range] {{ width: 520px; vertical-align: middle; }}
#caption {{ font-size: 16px; margin: 8px 0 12px; min-height: 1.3em; }}
rect.halo {{ display: none; }}
g.task.current rect.halo {{ display: inline; }}
.legend span {{ display: inline-block; margin-right: 18px; }}
.swatch {{ display: inline-block; width: 14px; height: 12px; vertical-align: middle; margin-right: 4px; }}
</style></head><body>
<h2>{title}</h2>
<div class="legend"><span><i class="swatch" style="background:#c6dbef;border:1px solid #333"></i>task</span>
<span><i class="swatch" style="background:#fde0dd;border:2px solid {cp_colour}"></i>critical path {cp}</span>
<span><i class="swatch" style="background:#fff;border:2px dashed #000"></i>the decision of this step</span></div>
<div class="controls"><button id="prev">&#9664;</button>
<input type="range" id="step" min="0" max="{n}" value="{n}"> <button id="next">&#9654;</button>
<span id="counter"></span></div>
<div id="caption"></div>
{svg}
<script id="frames" type="application/json">{frames}</script>
<script>
const frames = JSON.parse(document.getElementById("frames").textContent);
const slider = document.getElementById("step");
function show(k) {{
  slider.value = k;
  for (const g of document.querySelectorAll("g.task")) {{
    const s = Number(g.dataset.step);
    g.style.display = s <= k ? "" : "none";
    g.classList.toggle("current", s === k);
  }}
  document.getElementById("counter").textContent = "step " + k + " of " + frames.length;
  const f = frames[k - 1];
  document.getElementById("caption").textContent = k === 0 ? "before the first decision" :
    "step " + f.step + ": task " + f.task + " on " + f.processor + ", " + f.start + "\\u2013" + f.finish;
}}
slider.addEventListener("input", () => show(Number(slider.value)));
document.getElementById("prev").onclick = () => show(Math.max(0, Number(slider.value) - 1));
document.getElementById("next").onclick = () => show(Math.min(frames.length, Number(slider.value) + 1));
document.addEventListener("keydown", (e) => {{
  if (e.key === "ArrowLeft") show(Math.max(0, Number(slider.value) - 1));
  if (e.key === "ArrowRight") show(Math.min(frames.length, Number(slider.value) + 1));
}});
const start = Number(new URLSearchParams(location.search).get("step") ?? frames.length);
show(Math.max(0, Math.min(frames.length, start)));
</script></body></html>
"""


def gantt_steps_html(problem: Problem, schedule: Schedule, order: Sequence[int], *, title: str) -> str:
    """The whole page (see the module docstring); ``?step=k`` in its URL opens it at frame k.  O(n)."""
    fr = frames(problem, schedule, order)
    cp = describe_graph(problem).critical_path
    data = [{"step": f.step, "task": f.task, "processor": f.processor, "start": _fmt(f.start),
             "finish": _fmt(f.finish)} for f in fr]
    return _PAGE.format(title=html.escape(title), n=len(fr), svg=gantt_svg(problem, schedule, order),
                        frames=json.dumps(data).replace("</", "<\\/"), cp_colour=CP_COLOUR,
                        cp=html.escape("–".join(problem.graph.names[t] for t in cp)))


def write_gantt_steps(problem: Problem, schedule: Schedule, order: Sequence[int], path: str | Path, *,
                      title: str) -> Path:
    """Write :func:`gantt_steps_html` to ``path`` atomically."""
    text = gantt_steps_html(problem, schedule, order, title=title)
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
