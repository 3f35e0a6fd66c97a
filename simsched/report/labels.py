"""Point labels that do not overlap: each label is put at the first of a ring of offsets around its point
where it covers no label placed before it, no labelled point and stays inside the axes; a label with no
such place is left out (the caller's table names every point).  Greedy in the order given, so the most
important label (an answer) goes first and is never covered.  O(labels² x offsets), measured in pixels
on the figure's renderer (matplotlib is imported by the caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

OFFSETS = [(dx * r, dy * r) for r in (1, 2, 3.5) for dx, dy in
           ((6, 5), (6, -11), (-6, 5), (-6, -11), (0, 9), (0, -15), (9, -3), (-9, -3))]
"""Offsets in points from the point to the label's anchor, nearest first."""


def place_labels(ax: Any, xy: Sequence[tuple[float, float]], texts: Sequence[str],
                 styles: Sequence[dict[str, Any]] | None = None, fontsize: float = 7) -> list[bool]:
    """Annotate ``ax`` with ``texts[i]`` near data point ``xy[i]``, in order, each at the first offset of
    :data:`OFFSETS` where its box overlaps no earlier label, no point of ``xy`` and stays within the axes
    (beyond the first ring, with a thin leader line to its point); ``styles[i]`` adds keyword arguments
    (colour, weight).  Returns whether each label was placed."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    points = [ax.transData.transform(p) for p in xy]
    pad = 4.0  # pixels around each point kept clear
    taken: list[Any] = []
    placed = []
    for i, (p, text) in enumerate(zip(xy, texts)):
        style = dict(styles[i]) if styles is not None else {}
        done = False
        for dx, dy in OFFSETS:
            note = ax.annotate(text, p, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                               ha="left" if dx >= 0 else "right", **style)
            box = note.get_window_extent(renderer).expanded(1.05, 1.1)
            clear = (box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0 and box.y1 <= inside.y1
                     and not any(box.overlaps(other) for other in taken)
                     and not any(box.x0 - pad <= q[0] <= box.x1 + pad and box.y0 - pad <= q[1] <= box.y1 + pad
                                 for q in points))
            if clear:
                taken.append(box)
                done = True
                if abs(dx) > 6 or abs(dy) > 15:  # away from its point: a thin leader line says whose it is
                    note.remove()
                    ax.annotate(text, p, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                                ha="left" if dx >= 0 else "right", **style,
                                arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "#888", "shrinkA": 0,
                                            "shrinkB": 3})
                break
            note.remove()
        placed.append(done)
    return placed
