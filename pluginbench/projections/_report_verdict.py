"""The headline of report.html: each treatment's verdict first, then what the run could detect.

Renders ``results.json``'s ``verdicts`` and ``power`` (both from :mod:`pluginbench.stats`),
so the page says exactly what ``status``, ``compare`` and ``run`` print. Only a decided
verdict (better, worse, equivalent) is coloured; a partial run or an unexercised package
is shown plain, with no coloured verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from .. import stats

CSS = """
#verdict{border:2px solid #888;border-radius:6px;padding:.6em 1em;margin:0 0 1em 0}
#verdict h2{margin-top:0}
#verdict .verdict{font-size:1.15em;margin:.3em 0}
#verdict .verdict-better{color:#0a6b2a;font-weight:bold}
#verdict .verdict-worse{color:#a40000;font-weight:bold}
#verdict .verdict-equivalent{color:#1f3d7a;font-weight:bold}
#verdict .power{color:#444;font-size:.95em}
"""


def verdict_html(doc: Mapping[str, Any]) -> str:
    """The verdict section (first on the page)."""
    rows = []
    for v in doc.get("verdicts") or []:
        kind = v["kind"]
        cls = f"verdict verdict-{kind}" if kind in stats.DECIDED else "verdict verdict-plain"
        rows.append(f'<p class="{cls}" data-kind="{escape(kind)}" data-treatment="{escape(v["treatment"], quote=True)}">'
                    f"{escape(v['headline'])}</p>")
    if not rows:
        rows.append('<p class="verdict verdict-plain">No treatment arm: nothing to compare with vanilla.</p>')
    level = next((v["level"] for v in doc.get("verdicts") or []), stats.LEVEL)
    method = (f'<p class="power">Better or worse is the exact one-sided sign-flip test at 0, at '
              f"{stats.alpha_of(level) * 100:g}% each way. The pass-rate range is a {level * 100:g}% interval for a bounded "
              "mean (betting, no symmetry assumed: at least that coverage however the tasks spread); tokens: the "
              f"sign-flip interval of the log ratio. {escape(stats.power_sentence(doc.get('power')))}</p>")
    return f'<section id="verdict"><h2>Verdict</h2>{"".join(rows)}{method}</section>'


def tested_html(doc: Mapping[str, Any]) -> str:
    """What was tested: each arm's frozen files with bytes and sha256 (from results.json ``treatments``)."""
    arms = doc.get("treatments") or {}
    if not arms:
        return "<p>No frozen treatment recorded.</p>"
    parts = []
    generated_arms = set((doc.get("generated") or {}).get("arms") or {})
    for arm, t in arms.items():
        rows = "".join(f"<tr><td><code>{escape(f['path'])}</code></td><td>{f['bytes']:,}</td>"
                       f"<td><code>{escape(f['sha256'])}</code></td></tr>" for f in t["files"])
        extra = ", ".join(x for x in (("skills: " + ", ".join(t["skills"])) if t["skills"] else "",
                                      ("plugins: " + ", ".join(t["plugins"])) if t["plugins"] else "") if x)
        parts.append(
            f"<details><summary>{escape(arm)}: {len(t['files'])} file(s), fingerprint <code>{escape(t['fingerprint'][:16])}</code>"
            f"{(' — ' + escape(extra)) if extra else ''}</summary>"
            + (f"<table><thead><tr><th>path</th><th>bytes</th><th>sha256</th></tr></thead><tbody>{rows}</tbody></table>"
               if rows else "<p>guidance generated per task by the agent: see "
               '<a href="#generated">Generated guidance</a></p>' if arm in generated_arms
               else "<p>no files (nothing is added to this arm)</p>")
            + "</details>")
    return "".join(parts)
