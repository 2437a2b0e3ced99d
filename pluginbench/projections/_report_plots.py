"""Self-contained SVG plots for report.html (no script, no external asset).

Pure functions of the results.json document: the same document gives the same bytes.
Every figure has a ``<title>`` and ``<desc>`` (screen-reader text, wired with
``aria-labelledby``) and a data table beside it in a ``<details>`` element, so nothing
is only visible as a picture. Unknown values are never drawn as 0: they are left out of
the picture and counted in the caption.

* :func:`forest_plot` — per-task pass-rate differences of one treatment against vanilla
  with Newcombe intervals, and the summary mean with its bounded-mean range (no symmetry assumed), all
  at the run's one level.
* :func:`distribution_plot` — one value per attempt (input + output tokens, or coding
  seconds) as dots per arm with the arm's median.
* :func:`cost_plot` — pass rate against dollars per attempt per arm, when the run has prices.

The dashboard may import these functions to draw the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from statistics import NormalDist
from typing import Any

from .. import stats
from ._report_cost import ATTEMPTS_LISTED_MAX, dollars_note

WIDTH = 680
LABEL_W = 190
RIGHT_PAD = 24
ROW_H = 24
TOP = 14
AXIS_H = 34
ARM_COLOURS = ("#5d6675", "#2f5fb3", "#b4541a", "#11713a", "#7a3fb0", "#a01d5d")


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _f(x: float) -> str:
    """A coordinate with two decimals and no ``-0.00``."""
    s = f"{x:.2f}"
    return "0.00" if s == "-0.00" else s


def _svg(fig_id: str, height: float, title: str, desc: str, body: str) -> str:
    return (
        f'<svg id="{_e(fig_id)}" class="plot" role="img" '
        f'viewBox="0 0 {WIDTH} {_f(height)}" width="{WIDTH}" height="{_f(height)}" '
        f'aria-labelledby="{_e(fig_id)}-title {_e(fig_id)}-desc">'
        f'<title id="{_e(fig_id)}-title">{_e(title)}</title>'
        f'<desc id="{_e(fig_id)}-desc">{_e(desc)}</desc>{body}</svg>'
    )


def _figure(fig_id: str, height: float, title: str, desc: str, body: str, caption: str, table: str) -> str:
    return (
        f'<figure class="plot-figure">{_svg(fig_id, height, title, desc, body)}'
        f"<figcaption>{_e(caption)}</figcaption>{table}</figure>"
    )


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values from 0 up to ``top`` (steps of 1, 2 or 5 × a power of ten)."""
    if top <= 0:
        return [0.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    n = int(top // step)
    return [round(k * step, 10) for k in range(n + 1)]


def _table(fig_id: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in rows)
    return (
        f'<details class="plot-data"><summary>Data table for this figure</summary>'
        f'<table id="{_e(fig_id)}-table"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></details>'
    )


def _pp(d: float | None) -> str:
    return "unknown" if d is None else f"{d * 100:+.0f} pp"


# ---------------------------------------------------------------- forest plot


def forest_rows(doc: Mapping[str, Any], arm: str) -> list[dict[str, Any]]:
    """Per task: the difference, its Newcombe interval at the page's level, or why the task is excluded."""
    delta = doc["deltas"][arm]
    base = delta["against"]
    z = NormalDist().inv_cdf((1 + float(delta["summary"]["pass_rate"].get("level") or stats.LEVEL)) / 2)
    out = []
    for task in doc["tasks"]:
        p = delta["per_task"].get(task) or {}
        d = p.get("pass_rate_difference")
        iv = None
        if d is not None:
            t, v = doc["per_task"][task][arm], doc["per_task"][task][base]
            # the same denominator as the plotted difference: an overlap pass is decided but
            # not a confirmed pass, so it is a trial that did not pass (issue 21)
            iv = stats.newcombe_difference(
                t["passes"], t["passes"] + t["overlap_passes"] + t["fails"] + t["empties"],
                v["passes"], v["passes"] + v["overlap_passes"] + v["fails"] + v["empties"], z,
            )
        out.append({
            "task": task, "difference": d, "low": iv.low if iv else None, "high": iv.high if iv else None,
            "excluded": p.get("pass_rate_excluded"),
        })
    return out


def forest_plot(doc: Mapping[str, Any], arm: str) -> str:
    """The forest plot of ``arm`` against vanilla, with its data table."""
    rows = forest_rows(doc, arm)
    summary = doc["deltas"][arm]["summary"]["pass_rate"]
    base = doc["deltas"][arm]["against"]
    fig_id = f"forest-{arm}"
    plot_w = WIDTH - LABEL_W - RIGHT_PAD
    height = TOP + ROW_H * (len(rows) + 1.5) + AXIS_H

    def x(v: float) -> float:
        return LABEL_W + (v + 1.0) / 2.0 * plot_w

    parts: list[str] = []
    caption = (f"Pass rate of {arm} minus {base}, per task: dot the difference, line its Newcombe {summary['level'] * 100:g}% interval; "
               f"diamond: the mean over tasks across its {summary['level'] * 100:g}% range, no symmetry assumed.")
    bottom = TOP + ROW_H * (len(rows) + 1.5)
    for tick in (-1.0, -0.5, 0.0, 0.5, 1.0):
        cls = "zero-line" if tick == 0 else "grid-line"
        parts.append(f'<line class="{cls}" x1="{_f(x(tick))}" y1="{TOP - 6}" x2="{_f(x(tick))}" y2="{_f(bottom)}"/>')
        parts.append(f'<text class="tick" x="{_f(x(tick))}" y="{_f(bottom + 16)}" text-anchor="middle">{tick * 100:+.0f} pp</text>')
    for i, r in enumerate(rows):
        y = TOP + ROW_H * i + ROW_H / 2
        parts.append(f'<g class="forest-task" data-task="{_e(r["task"])}">')
        parts.append(f'<text class="label" x="{LABEL_W - 8}" y="{_f(y + 4)}" text-anchor="end">{_e(r["task"])}</text>')
        if r["difference"] is None:
            parts.append(f'<text class="excluded" x="{_f(x(0) + 6)}" y="{_f(y + 4)}">excluded</text>')
        else:
            if r["low"] is not None:
                parts.append(f'<line class="ci" x1="{_f(x(r["low"]))}" y1="{_f(y)}" x2="{_f(x(r["high"]))}" y2="{_f(y)}"/>')
            parts.append(f'<circle class="estimate" cx="{_f(x(r["difference"]))}" cy="{_f(y)}" r="4"/>')
        parts.append("</g>")
    y = TOP + ROW_H * (len(rows) + 0.75)
    parts.append('<g class="forest-summary">')
    parts.append(f'<text class="label summary" x="{LABEL_W - 8}" y="{_f(y + 4)}" text-anchor="end">mean over tasks</text>')
    est = summary["estimate"]
    if est is not None and summary["status"] == "ok":
        lo, hi = x(summary["low"]), x(summary["high"])
        mid = x(est)
        parts.append(
            f'<polygon class="summary-diamond" points="{_f(lo)},{_f(y)} {_f(mid)},{_f(y - 7)} {_f(hi)},{_f(y)} {_f(mid)},{_f(y + 7)}"/>'
        )
    elif est is not None:
        parts.append(f'<circle class="estimate summary" cx="{_f(x(est))}" cy="{_f(y)}" r="4"/>')
        # the note goes on the side of the dot with room for it, so a large difference keeps it inside the plot
        side = f'x="{_f(x(est) - 8)}" text-anchor="end"' if est > 0 else f'x="{_f(x(est) + 8)}"'
        parts.append(f'<text class="excluded" {side} y="{_f(y + 4)}">too few tasks for an interval</text>')
    else:
        parts.append(f'<text class="excluded" x="{_f(x(0) + 6)}" y="{_f(y + 4)}">no usable task</text>')
    parts.append("</g>")
    shown = [r for r in rows if r["difference"] is not None]
    lvl = f"{summary['level'] * 100:g}%"
    if summary["status"] == "ok":
        summary_text = (f"mean {_pp(est)}, {lvl} range (no symmetry assumed) {_pp(summary['low'])} to {_pp(summary['high'])} "
                        f"over {summary['tasks']} tasks")
    elif est is not None:
        summary_text = f"mean {_pp(est)} over {summary['tasks']} tasks, too few for an interval"
    else:
        summary_text = "no usable task"
    desc = (
        f"Forest plot of {arm} against {base}: pass-rate difference per task. "
        + "; ".join(
            f"{r['task']}: {_pp(r['difference'])}"
            + (f" ({lvl} {_pp(r['low'])} to {_pp(r['high'])})" if r["low"] is not None else "")
            for r in shown
        )
        + (f". Excluded: {', '.join(r['task'] for r in rows if r['difference'] is None)}" if len(shown) < len(rows) else "")
        + f". Summary: {summary_text}."
    )
    table = _table(
        fig_id,
        ("Task", "Difference", f"{lvl} low", f"{lvl} high", "Excluded because"),
        [
            (r["task"], _pp(r["difference"]), _pp(r["low"]) if r["low"] is not None else "",
             _pp(r["high"]) if r["high"] is not None else "", r["excluded"] or "")
            for r in rows
        ]
        + [(f"mean over tasks ({lvl} range, no symmetry assumed)", _pp(est), _pp(summary["low"]) if summary["low"] is not None else "",
            _pp(summary["high"]) if summary["high"] is not None else "", "" if summary["status"] == "ok" else summary["status"])],
    )
    title = f"Pass-rate difference by task: {arm} − {base}"
    return _figure(fig_id, height + 4, title, desc, "".join(parts), caption, table)


# ---------------------------------------------------------------- distributions


def _io_tokens(row: Mapping[str, Any]) -> float | None:
    t = row["tokens"]
    if t["status"] not in ("exact", "unvalidated") or t["input"] is None or t["output"] is None:
        return None
    return float(t["input"] + t["output"])


def _seconds(row: Mapping[str, Any]) -> float | None:
    v = row["coding_seconds"]
    return None if v is None else float(v)


METRICS = {
    "tokens": ("Input + output tokens per attempt", _io_tokens, "tokens"),
    "time": ("Coding seconds per attempt", _seconds, "s"),
}


def distribution_plot(doc: Mapping[str, Any], metric: str) -> str:
    """Every complete attempt's value as a dot per arm, with the arm's median; and its table.
    Above :data:`ATTEMPTS_LISTED_MAX` attempts, each arm's range and quartiles instead of dots."""
    title, get, unit = METRICS[metric]
    fig_id = f"dist-{metric}"
    arms = list(doc["arms"])
    values: dict[str, list[float]] = {a: [] for a in arms}
    unknown: dict[str, int] = {a: 0 for a in arms}
    for r in doc["attempts"]:
        if r["state"] != "complete" or r["arm"] not in values:
            continue
        v = get(r)
        if v is None:
            unknown[r["arm"]] += 1
        else:
            values[r["arm"]].append(v)
    top = max((v for vs in values.values() for v in vs), default=0.0)
    top = top * 1.05 if top > 0 else 1.0
    plot_w = WIDTH - LABEL_W - RIGHT_PAD
    band = 34
    height = TOP + band * len(arms) + AXIS_H

    def x(v: float) -> float:
        return LABEL_W + v / top * plot_w

    parts: list[str] = []
    summarised = len(doc["attempts"]) > ATTEMPTS_LISTED_MAX
    caption = (f"{title} ({unit}), one dot per complete attempt; the bar is the arm's median." if not summarised else
               f"{title} ({unit}): each arm's range (line), middle half (box, quartiles) and median (bar); "
               f"above {ATTEMPTS_LISTED_MAX:,} attempts the dots are left out (every value is in results.csv).")
    bottom = TOP + band * len(arms)
    for tv in nice_ticks(top):
        parts.append(f'<line class="grid-line" x1="{_f(x(tv))}" y1="{TOP - 6}" x2="{_f(x(tv))}" y2="{_f(bottom)}"/>')
        label = f"{tv:,.0f}" if float(tv).is_integer() else f"{tv:g}"
        parts.append(f'<text class="tick" x="{_f(x(tv))}" y="{_f(bottom + 16)}" text-anchor="middle">{label}</text>')
    rows = []
    for i, arm in enumerate(arms):
        y = TOP + band * i + band / 2
        colour = ARM_COLOURS[i % len(ARM_COLOURS)]
        vs = sorted(values[arm])
        med = stats.median(vs)
        parts.append(f'<g class="dist-arm" data-arm="{_e(arm)}">')
        parts.append(f'<text class="label" x="{LABEL_W - 8}" y="{_f(y + 4)}" text-anchor="end">{_e(arm)}</text>')
        if summarised and vs:
            q1, q3 = vs[(len(vs) - 1) // 4], vs[3 * (len(vs) - 1) // 4]
            parts.append(f'<line class="range" x1="{_f(x(vs[0]))}" y1="{_f(y)}" x2="{_f(x(vs[-1]))}" y2="{_f(y)}" '
                         f'stroke="{colour}"/>')
            parts.append(f'<rect class="quartiles" x="{_f(x(q1))}" y="{_f(y - 7)}" width="{_f(x(q3) - x(q1))}" '
                         f'height="14" fill="{colour}" fill-opacity="0.35" stroke="{colour}"/>')
        for j, v in enumerate(vs if not summarised else ()):
            jitter = ((j * 7) % 5 - 2) * 2.5
            parts.append(f'<circle class="dot" cx="{_f(x(v))}" cy="{_f(y + jitter)}" r="3" fill="{colour}"/>')
        if med is not None:
            parts.append(f'<line class="median" x1="{_f(x(med))}" y1="{_f(y - 11)}" x2="{_f(x(med))}" y2="{_f(y + 11)}"/>')
        parts.append("</g>")
        rows.append((arm, str(len(vs)), "unknown" if med is None else f"{med:,.1f}",
                     "" if not vs else f"{vs[0]:,.1f}", "" if not vs else f"{vs[-1]:,.1f}", str(unknown[arm])))
    desc = f"{title} by arm ({unit}). " + "; ".join(
        f"{a}: {n} attempts, median {m}" + (f", range {lo} to {hi}" if lo else "") + (f", {u} without a value" if u != "0" else "")
        for a, n, m, lo, hi, u in rows
    ) + "."
    table = _table(fig_id, ("Arm", "Attempts plotted", f"Median ({unit})", "Min", "Max", "Without a value"), rows)
    return _figure(fig_id, height + 4, title, desc, "".join(parts), caption, table)


def cost_points(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per arm: dollars per attempt and the pass rate over all tasks (``None`` when unknown)."""
    costs = doc.get("costs") or {}
    out = []
    for arm in doc["arms"]:
        rows = [r for r in doc["attempts"] if r["arm"] == arm and r["state"] == "complete"]
        passes = sum(1 for r in rows if r["outcome"] == "pass")
        known = sum(1 for r in rows if r["outcome"] in ("pass", "fail", "empty"))
        total = (costs.get("arms") or {}).get(arm) or {}
        n = sum(1 for r in doc["attempts"] if r["arm"] == arm)
        usd = total.get("usd")
        out.append({
            "arm": arm, "usd_per_attempt": None if usd is None or not n else usd / n,
            "lower_bound": bool(total.get("lower_bound")), "pass_rate": passes / known if known else None,
            "reason": total.get("reason"),
        })
    return out


def cost_plot(doc: Mapping[str, Any]) -> str:
    """Pass rate against dollars per attempt, one point per arm (only with prices)."""
    points = cost_points(doc)
    fig_id = "cost-pass-rate"
    drawn = [p for p in points if p["usd_per_attempt"] is not None and p["pass_rate"] is not None]
    top = max((p["usd_per_attempt"] for p in drawn), default=0.0) * 1.15 or 1.0
    plot_w, plot_h = WIDTH - LABEL_W - RIGHT_PAD, 200
    height = TOP + plot_h + AXIS_H

    def x(v: float) -> float:
        return LABEL_W + v / top * plot_w

    def y(v: float) -> float:
        return TOP + (1.0 - v) * plot_h

    parts = []
    for tv in nice_ticks(top):
        parts.append(f'<line class="grid-line" x1="{_f(x(tv))}" y1="{TOP}" x2="{_f(x(tv))}" y2="{_f(TOP + plot_h)}"/>')
        parts.append(f'<text class="tick" x="{_f(x(tv))}" y="{_f(TOP + plot_h + 16)}" text-anchor="middle">${tv:g}</text>')
    for pv in (0.0, 0.5, 1.0):
        parts.append(f'<line class="grid-line" x1="{LABEL_W}" y1="{_f(y(pv))}" x2="{WIDTH - RIGHT_PAD}" y2="{_f(y(pv))}"/>')
        parts.append(f'<text class="tick" x="{LABEL_W - 8}" y="{_f(y(pv) + 4)}" text-anchor="end">{pv * 100:.0f}% pass</text>')
    for i, p in enumerate(points):
        if p not in drawn:
            continue
        colour = ARM_COLOURS[i % len(ARM_COLOURS)]
        cx, cy = x(p["usd_per_attempt"]), y(p["pass_rate"])
        right = cx > LABEL_W + plot_w * 0.6
        anchor = ' text-anchor="end"' if right else ""
        parts.append(
            f'<g class="cost-arm" data-arm="{_e(p["arm"])}"><circle class="cost-point" cx="{_f(cx)}" cy="{_f(cy)}" r="6" fill="{colour}"/>'
            f'<text class="label" x="{_f(cx - 9 if right else cx + 9)}" y="{_f(cy - 8)}"'
            f"{anchor}>{_e(p['arm'])}</text></g>"
        )

    def usd(p: dict[str, Any]) -> str:
        if p["usd_per_attempt"] is None:
            return "unknown"
        return ("at least " if p["lower_bound"] else "") + f"${p['usd_per_attempt']:.4f}"

    desc = "Pass rate against dollars per attempt by arm. " + "; ".join(
        f"{p['arm']}: {usd(p)} per attempt, pass rate " + ("unknown" if p["pass_rate"] is None else f"{p['pass_rate'] * 100:.0f}%")
        for p in points
    ) + "."
    table = _table(fig_id, ("Arm", "Dollars per attempt", "Pass rate", "Why unknown"), [
        (p["arm"], usd(p), "unknown" if p["pass_rate"] is None else f"{p['pass_rate'] * 100:.0f}%", p["reason"] or "")
        for p in points
    ])
    caption = "Pass rate over all tasks against mean dollars per attempt, one point per arm (arms with unknown dollars are not drawn)."
    return _figure(fig_id, height + 4, "Cost against pass rate", desc, "".join(parts), caption, table)


PLOT_CSS = """
figure.plot-figure { margin: 12px 0 20px; }
svg.plot { max-width: 100%; height: auto; font: 12px "DejaVu Sans", Helvetica, Arial, sans-serif; }
figure.plot-figure figcaption { color: var(--muted); font-size: 13px; margin: 2px 0 0; }
svg.plot .label { fill: var(--fg); }
svg.plot .label.summary { font-weight: 700; }
svg.plot .tick { fill: var(--muted); font-size: 11px; }
svg.plot .grid-line { stroke: var(--line); stroke-width: 1; }
svg.plot .zero-line { stroke: var(--fg); stroke-width: 1.2; }
svg.plot .ci { stroke: var(--accent); stroke-width: 2; }
svg.plot .estimate { fill: var(--accent); }
svg.plot .summary-diamond { fill: var(--fg); }
svg.plot .excluded { fill: var(--muted); font-style: italic; }
svg.plot .median { stroke: var(--fg); stroke-width: 2.5; }
svg.plot .dot { fill-opacity: .7; }
details.plot-data { margin-top: 4px; }
"""


def plots_section(doc: Mapping[str, Any]) -> str:
    """Every figure of the report: a forest plot per treatment, then the distributions."""
    parts = []
    for arm in doc["deltas"]:
        parts.append(f"<h3>{_e(arm)} against {_e(doc['deltas'][arm]['against'])}</h3>{forest_plot(doc, arm)}")
    if not parts:
        parts.append("<p>No treatment arm to plot against vanilla.</p>")
    parts.append("<h3>Tokens per attempt</h3>" + distribution_plot(doc, "tokens"))
    parts.append("<h3>Coding time per attempt</h3>" + distribution_plot(doc, "time"))
    if any(c.get("usd") is not None for c in ((doc.get("costs") or {}).get("arms") or {}).values()):
        parts.append(f"<h3>Cost against pass rate ({_e(dollars_note(doc))})</h3>" + cost_plot(doc))
    return "".join(parts)
