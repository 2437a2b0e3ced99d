"""report.html's "Was the package exercised?" section, from results.json ``activation`` only (pure).

Per arm: its label (*exercised*, *not exercised*, *unknown*, *no components*), the share
of attempts that used any treatment component, one row per component with its share,
median first turn and label, and the pass rate of attempts that used the package against
those that did not, marked descriptive. Unknown reads "unknown", never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _share(c: Mapping[str, Any]) -> str:
    known = c["used"] + c["not_used"]
    if not known:
        return f"unknown ({c['unknown']} unknown)"
    text = f"{c['used']}/{known} ({c['rate'] * 100:.0f}%)"
    return text + (f", {c['unknown']} unknown" if c["unknown"] else "")


def _split(s: Mapping[str, Any]) -> str:
    if s["pass_rate"] is None:
        return f"unknown ({s['attempts']} attempts, none decided)"
    return f"{s['passes']}/{s['decided']} ({s['pass_rate'] * 100:.0f}%)"


def activation_html(doc: Mapping[str, Any]) -> str:
    """The section body ('' when the run did not select the activation measure)."""
    section = doc.get("activation")
    if not section:
        return ""
    out = []
    for arm, a in section["per_arm"].items():
        if a["label"] == "no components":
            out.append(f'<h3>{_e(arm)} <span class="activation-label">no components</span></h3>')
            continue
        reasons = "".join(f"<li>{_e(r)}</li>" for r in a["unknown_reasons"])
        rows = "".join(
            f'<tr><td>{_e(name)}</td><td>{_e(c["owner"])}</td><td>{_e(_share(c))}</td>'
            f'<td>{_e("unknown" if c["median_first_turn"] is None else c["median_first_turn"])}</td>'
            f'<td class="activation-label">{_e(c["label"])}</td></tr>'
            for name, c in a["components"].items())
        split = a["outcomes_by_activation"]
        out.append(
            f'<h3>{_e(arm)} <span class="activation-label">{_e(a["label"])}</span></h3>'
            f'<ul class="notes"><li>Attempts that used any treatment component: {_e(_share(a["any"]))}</li>'
            + (f"<li>Unknown because:<ul>{reasons}</ul></li>" if reasons else "")
            + f'<li>Pass rate when the package was used: {_e(_split(split["used"]))}; when it was not: '
            f'{_e(_split(split["not_used"]))}. {_e(split["note"])}</li></ul>'
            f'<table id="activation-{_e(arm)}"><thead><tr><th>Component</th><th>Owner</th><th>Attempts that used it</th>'
            f"<th>Median first turn</th><th>Label</th></tr></thead><tbody>{rows}</tbody></table>")
    return "".join(out)
