"""The report's "Generated guidance" section: per generated-guidance arm, each task's generating
session (outcome, the frozen file with its link and SHA-256, tokens, seconds, dollars), and the
arm's totals. Pure: a function of results.json's ``generated`` and ``costs``."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any


def _e(v: object) -> str:
    return escape(str(v), quote=True)


def _tokens(t: Mapping[str, Any]) -> str:
    if t.get("total") is None:
        return f'<span class="unknown" title="{_e(t.get("reason") or "")}">unknown</span>'
    return ("≥ " if t.get("status") == "lower_bound" else "") + f"{t['total']:,}"


def _num(v: float | None, fmt: str) -> str:
    return '<span class="unknown">unknown</span>' if v is None else format(v, fmt)


def generated_html(doc: Mapping[str, Any]) -> str:
    """The section body; links are relative to ``report/`` (the run directory is its parent)."""
    gen = doc["generated"]
    usd = ((doc.get("costs") or {}).get("generation")) or {}
    arm_rows = "".join(
        f'<tr data-arm="{_e(arm)}"><td>{_e(arm)}</td><td class="num">{a["sessions"]}</td>'
        f'<td class="num">{a["generated"]}</td><td class="num">{a["failed"]}</td><td class="num">{a["killed"]}</td>'
        f'<td class="num">{_tokens({"total": a["tokens"], "status": a["tokens_status"], "reason": a["tokens_reason"]})}</td>'
        f'<td class="num">{_num(a["seconds"], ",.1f")}</td>'
        f'<td class="num">{_dollars(usd.get(arm))}</td></tr>'
        for arm, a in gen["arms"].items())
    rows = "".join(_session_row(r) for r in gen["sessions"])
    return (
        "<p>Each generated-guidance arm's agent wrote its instruction file for each task's starting repository "
        "in its own sandbox before coding (no hidden tests, no verifier); only that file was kept, frozen and "
        "bound by its SHA-256, and delivered natively to every attempt of the arm on that task. A failed "
        "generation means the arm did not run on that task (its attempts have no submission). Generation usage "
        "is counted in the arm's cost below and in the cost ceiling.</p>"
        '<table id="generated-arms"><thead><tr><th>Arm</th><th>Sessions</th><th>Generated</th><th>Failed</th>'
        "<th>Killed</th><th>Tokens</th><th>Seconds</th><th>Dollars</th></tr></thead>"
        f"<tbody>{arm_rows}</tbody></table>"
        '<table id="generated-sessions"><thead><tr><th>Arm</th><th>Task</th><th>Outcome</th><th>File</th>'
        "<th>SHA-256</th><th>Bytes</th><th>Tokens</th><th>Seconds</th><th>Left behind</th><th>Reason</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _dollars(c: Mapping[str, Any] | None) -> str:
    if not c or c.get("usd") is None:
        return f'<span class="unknown" title="{_e((c or {}).get("reason") or "no prices")}">unknown</span>'
    return ("≥ " if c.get("lower_bound") else "") + f"${c['usd']:,.4f}"


def _session_row(r: Mapping[str, Any]) -> str:
    link = (f'<a href="../{_e(r["path"])}">{_e(r["file"])}</a>' if r.get("path") else _e(r["file"]))
    sha = f'<code title="{_e(r["sha256"])}">{_e(r["sha256"][:12])}</code>' if r.get("sha256") else ""
    left = ", ".join(r.get("discarded_changes") or [])
    return (f'<tr data-arm="{_e(r["arm"])}" data-task="{_e(r["task"])}" data-outcome="{_e(r["outcome"])}">'
            f'<td>{_e(r["arm"])}</td><td>{_e(r["task"])}</td><td>{_e(r["outcome"])}</td><td>{link}</td><td>{sha}</td>'
            f'<td class="num">{"" if r.get("bytes") is None else r["bytes"]}</td><td class="num">{_tokens(r["tokens"])}</td>'
            f'<td class="num">{_num(r.get("seconds"), ",.1f")}</td><td>{_e(left)}</td><td>{_e(r.get("reason") or "")}</td></tr>')
