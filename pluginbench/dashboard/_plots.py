"""Self-contained SVG plots for the dashboard (no script, no external resource).

Pure functions from numbers to markup. An unknown value draws nothing and says
"unknown"; it is never drawn as zero.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any


def _color(rate: float) -> str:
    """Red (0) through amber to green (1)."""
    r = int(198 + (46 - 198) * rate)
    g = int(40 + (125 - 40) * rate) if rate < 0.5 else int(82 + (125 - 82) * rate)
    b = int(40 + (50 - 40) * rate)
    return f"rgb({r},{max(g, 0)},{b})"


def heat_grid(tasks: Sequence[str], arms: Sequence[str], grid: Mapping[str, Mapping[str, tuple[int, int]]]) -> str:
    """Pass rate per task (rows) and arm (columns); a cell with no known outcome is blank."""
    if not tasks or not arms:
        return ""
    cw, ch, lw, top = 120, 26, 190, 24
    w, h = lw + cw * len(arms), top + ch * len(tasks)
    out = [f'<svg class="plot heat" role="img" aria-label="pass rate per task and arm" '
           f'xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">']
    for j, arm in enumerate(arms):
        out.append(f'<text x="{lw + j * cw + cw / 2}" y="16" text-anchor="middle" class="lbl">{escape(arm)}</text>')
    for i, task in enumerate(tasks):
        y = top + i * ch
        out.append(f'<text x="{lw - 6}" y="{y + ch / 2 + 4}" text-anchor="end" class="lbl">{escape(task)}</text>')
        for j, arm in enumerate(arms):
            x = lw + j * cw
            passes, known = grid.get(task, {}).get(arm, (0, 0))
            if known:
                rate = passes / known
                out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{ch - 2}" fill="{_color(rate)}" '
                           f'data-task="{escape(task)}" data-arm="{escape(arm)}"><title>{escape(task)} · {escape(arm)}: '
                           f'{passes} of {known} passed</title></rect>')
                out.append(f'<text x="{x + cw / 2}" y="{y + ch / 2 + 4}" text-anchor="middle" class="val">'
                           f'{rate:.0%} ({passes}/{known})</text>')
            else:
                out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cw - 2}" height="{ch - 2}" class="blank">'
                           f'<title>{escape(task)} · {escape(arm)}: no graded attempt yet</title></rect>')
    out.append("</svg>")
    return "".join(out)


def token_bars(totals: Mapping[str, Mapping[str, Any]]) -> str:
    """Coding tokens per arm as horizontal bars; an unknown total is a label, not a bar."""
    if not totals:
        return ""
    values = {arm: (info.get("tokens") or {}) for arm, info in totals.items()}
    known = [t["total_tokens"] for t in values.values() if t.get("total_tokens") is not None]
    top = max(known, default=0) or 1
    bw, bh, lw = 360, 22, 120
    w, h = lw + bw + 150, bh * len(values) + 8
    out = [f'<svg class="plot tokens" role="img" aria-label="coding tokens per arm" '
           f'xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">']
    for i, (arm, t) in enumerate(values.items()):
        y = 4 + i * bh
        out.append(f'<text x="{lw - 6}" y="{y + 15}" text-anchor="end" class="lbl">{escape(arm)}</text>')
        total = t.get("total_tokens")
        if total is None:
            out.append(f'<text x="{lw}" y="{y + 15}" class="unknown">unknown</text>')
            continue
        width = max(1.0, bw * total / top)
        prefix = "≥ " if t.get("lower_bound") else ""
        out.append(f'<rect x="{lw}" y="{y + 3}" width="{width:.1f}" height="{bh - 6}" class="bar">'
                   f'<title>{escape(arm)}: {prefix}{total:,} tokens</title></rect>')
        out.append(f'<text x="{lw + width + 6:.1f}" y="{y + 15}" class="val">{prefix}{total:,}</text>')
    out.append("</svg>")
    return "".join(out)


def _parse(at: str) -> float | None:
    try:
        return _dt.datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def attempts_over_time(completed_at: Sequence[str], total: int) -> str:
    """Completed attempts (cumulative) against minutes since the first completion."""
    times = sorted(t for t in (_parse(a) for a in completed_at) if t is not None)
    if not times:
        return '<p class="muted">no attempt has completed yet</p>'
    t0 = times[0]
    span = max(times[-1] - t0, 1.0)
    ymax = max(total, len(times), 1)
    w, h, left, bottom = 520, 180, 44, 26
    pw, ph = w - left - 10, h - bottom - 10
    pts = []
    for i, t in enumerate(times, start=1):
        x = left + pw * (t - t0) / span
        pts.append(f"{x:.1f},{10 + ph - ph * (i - 1) / ymax:.1f} {x:.1f},{10 + ph - ph * i / ymax:.1f}")
    out = [f'<svg class="plot timeline" role="img" aria-label="attempts completed over time" '
           f'xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">',
           f'<line x1="{left}" y1="{10 + ph}" x2="{left + pw}" y2="{10 + ph}" class="axis"/>',
           f'<line x1="{left}" y1="10" x2="{left}" y2="{10 + ph}" class="axis"/>',
           f'<polyline points="{" ".join(pts)}" class="line" fill="none"/>',
           f'<text x="{left - 4}" y="14" text-anchor="end" class="lbl">{ymax}</text>',
           f'<text x="{left - 4}" y="{10 + ph}" text-anchor="end" class="lbl">0</text>',
           f'<text x="{left + pw}" y="{h - 6}" text-anchor="end" class="lbl">{span / 60:.1f} min</text>',
           f'<text x="{left}" y="{h - 6}" class="lbl">{len(times)} of {total} complete</text>',
           "</svg>"]
    return "".join(out)
