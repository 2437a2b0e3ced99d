"""The sequential section of report.html and the dashboard: the decision sentence and, per
treatment and gate, the confidence sequence narrowing over tasks with its decision
boundaries (an SVG drawn with the report's plot helpers, plus its data table). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._report_plots import AXIS_H, LABEL_W, RIGHT_PAD, TOP, WIDTH, _e, _f, _figure, _table

PLOT_H = 180


def _fmt(metric: str, v: float) -> str:
    return f"{v * 100:+.1f} pp" if metric == "pass_rate" else f"{v:.2f}×"


def sequence_plot(gate: Mapping[str, Any], level: float) -> str:
    """One gate's sequence: the band of [low, high] after each usable task, the estimate, and
    the boundaries (0 / the smallest effect for pass rate, the factor for tokens)."""
    metric, arm = gate["metric"], gate["arm"]
    points = gate["points"]
    fig_id = f"sequence-{arm}-{metric}"
    pass_rate = metric == "pass_rate"
    lines = [gate["limit"]] + ([gate["futility"]] if gate.get("futility") is not None else [])
    values = [v for p in points for v in (p["low"], p["high"])] + lines
    lo, hi = (min(values), max(values)) if values else (-1.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    n = max(1, len(points))
    plot_w = WIDTH - LABEL_W - RIGHT_PAD

    def x(i: float) -> float:
        return LABEL_W + (i - 1) / max(1, n - 1) * plot_w

    def y(v: float) -> float:
        return TOP + (hi - v) / (hi - lo) * PLOT_H

    parts: list[str] = []
    if points:
        upper = " ".join(f"{_f(x(p['tasks']))},{_f(y(p['high']))}" for p in points)
        lower = " ".join(f"{_f(x(p['tasks']))},{_f(y(p['low']))}" for p in reversed(points))
        parts.append(f'<polygon class="band" points="{upper} {lower}" fill="#2f5fb3" fill-opacity=".18"/>')
        est = " ".join(f"{_f(x(p['tasks']))},{_f(y(p['estimate']))}" for p in points)
        parts.append(f'<polyline class="estimate" points="{est}" fill="none" stroke="#2f5fb3" stroke-width="2"/>')
    names = ["no difference" if pass_rate else "factor", "smallest effect"]
    top = max(lines)
    for name, v in zip(names, lines, strict=False):
        # the higher boundary's label sits above its line, the lower one's below, so close ones never overlap
        dy = -3 if v == top and len(lines) > 1 else 11
        parts.append(f'<line class="boundary" x1="{_f(LABEL_W)}" x2="{_f(LABEL_W + plot_w)}" y1="{_f(y(v))}" '
                     f'y2="{_f(y(v))}" stroke="#b4541a" stroke-dasharray="4 3"/>'
                     f'<text x="{_f(LABEL_W - 6)}" y="{_f(y(v) + dy)}" text-anchor="end">{_e(name)} {_e(_fmt(metric, v))}</text>')
    for v, dy in ((hi, 11), (lo, -3)):  # the axis's extent, inside the plot's top and bottom edges
        parts.append(f'<text class="tick" x="{_f(LABEL_W + 4)}" y="{_f(y(v) + dy)}">{_e(_fmt(metric, v))}</text>')
    if gate.get("decided_at"):
        dx = x(gate["decided_at"])
        parts.append(f'<line class="decided" x1="{_f(dx)}" x2="{_f(dx)}" y1="{_f(TOP)}" y2="{_f(TOP + PLOT_H)}" '
                     f'stroke="#11713a" stroke-width="2"/>')
    parts.append(f'<text x="{_f(LABEL_W + plot_w / 2)}" y="{_f(TOP + PLOT_H + AXIS_H - 8)}" text-anchor="middle">'
                 f"usable tasks (1 to {len(points)})</text>")
    what = "pass-rate difference" if pass_rate else "token ratio" if metric == "tokens" else "dollars-per-attempt ratio"
    decision = gate.get("decision") or "undecided"
    own = float(gate.get("level") or level)
    share = f" ({own * 100:.4g}% alone, its Bonferroni share)" if own != level else ""
    caption = (f"{arm}: the {level * 100:g}% anytime-valid confidence sequence{share} of the {what} after each task "
               f"(band), the running estimate (line) and the decision boundaries (dashed); {decision}"
               + (f" after {gate['decided_at']} usable task(s) (green line)." if gate.get("decided_at") else "."))
    table = _table(fig_id, ("task", "usable tasks", "estimate", "low", "high"),
                   [(p["task"], str(p["tasks"]), _fmt(metric, p["estimate"]), _fmt(metric, p["low"]),
                     _fmt(metric, p["high"])) for p in points])
    return _figure(fig_id, TOP + PLOT_H + AXIS_H, f"{arm} {what} sequence", caption, "".join(parts), caption, table)


def sequential_html(doc: Mapping[str, Any]) -> str:
    """The section body: the sentence, the method, then one plot per gate."""
    seq = doc["sequential"]
    level = float(seq["rule"]["level"])
    rule = seq["rule"]
    lines = [f'<p class="sequential-sentence">{_e(seq["sentence"])}</p>',
             f"<p>Method: {_e(seq['method'])}; min_tasks {rule['min_tasks']}, max_tasks "
             f"{_e(rule['max_tasks'] if rule['max_tasks'] is not None else 'the whole pool')}, smallest effect of interest "
             f"{float(rule['smallest_effect']) * 100:g} pp"
             + (f"; the cost gate prices every attempt with the {_e(seq['price']['model'])} row of "
                f"{'the bundled price table' if seq['price']['source'] == 'bundled' else 'the config&#x27;s prices table'}"
                f" as of {_e(seq['price']['as_of'])}, frozen when the run was created (a later prices.json changes the "
                "dollar tables, not this sequence)" if seq.get("price") else "")
             + ". Tasks were taken in a seeded random order; the verdict and every pass-rate interval above use this "
             "sequence, not a fixed-N interval.</p>"]
    family = int(seq.get("family") or 1)
    if family > 1:
        lines.append(f"<p>Multiplicity: {family} sequences (treatments × gates) share the run's error; each holds at "
                     f"{_e(f'{1 - (1 - level) / family:.4g}')} alone (Bonferroni), so all of them hold together at "
                     f"{level * 100:g}% at every task, and a false success or failure anywhere in the family has "
                     f"probability at most {100 - level * 100:g}%.</p>")
    for gate in seq["gates"]:
        lines.append(f"<h3>{_e(gate['arm'])}: {_e(gate['metric'].replace('_', ' '))}</h3>{sequence_plot(gate, level)}")
    return "".join(lines)
