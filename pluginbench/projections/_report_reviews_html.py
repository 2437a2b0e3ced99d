"""The report page's review section: who reviewed, findings per arm and task by severity
and category, failed reviews with their reasons, reviewer usage (apart from coding)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _n(v: Any) -> str:
    if v is None:
        return "unknown"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _table(table_id: str, head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table id="{table_id}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def reviews_html(doc: Mapping[str, Any]) -> str:
    r = doc.get("reviews")
    if not r:
        return ""
    who = r["reviewer"]
    label = " (SIMULATED reviewer: deterministic findings, not a real review)" if who["simulated"] else ""
    head = (f"<p>Revision <strong>{_e(r['selected_revision'])}</strong> by {_e(who['harness'])} "
            f"{_e(who['model'])}" + (f" ({_e(who['reasoning'])})" if who["reasoning"] else "")
            + (f", CLI {_e(who['cli_version'])}" if who["cli_version"] else "")
            + f"; criteria sha256 {_e(who['review_criteria_sha256'][:12])}{_e(label)}.</p>")
    sev, cat = r["severities"], r["categories"]
    arm_rows = [[_e(arm), _n(v["tasks_reviewed"]), _n(v["mean_of_task_medians"]["findings"]),
                 *(_n(v["mean_of_task_medians"]["by_severity"][s]) for s in sev),
                 *(_n(v["mean_of_task_medians"]["by_category"][c]) for c in cat)]
                for arm, v in r["per_arm"].items()]
    arms = _table("review-arms", ["arm", "tasks reviewed", "findings (mean of task medians)", *sev, *cat], arm_rows)
    task_rows = [[_e(t), _e(arm), _n(v["reviewed"]), _n(v["failed"]), _n(v["median"]["findings"]),
                  *(_n(v["median"]["by_severity"][s]) for s in sev)]
                 for t, per in r["per_task"].items() for arm, v in per.items()]
    tasks = _table("review-tasks", ["task", "arm", "reviewed", "failed or pending", "median findings", *sev], task_rows)
    failed = [[_e(aid), _e(v["status"]), _e(v["reason"] or "")] for aid, v in r["per_attempt"].items()
              if v["status"] != "complete"]
    failed_html = (_table("review-failed", ["attempt", "status", "reason"], failed) if failed
                   else "<p>Every submission has a valid review.</p>")
    u = r["usage"]
    usage = (f"<p>Reviewer usage (not in coding tokens): {_n(u['calls'])} call(s), input {_n(u['input'])}, "
             f"output {_n(u['output'])}, total {_n(u['total'])} ({_e(u['status'])}"
             + (f", {u['unknown_calls']} call(s) unknown" if u["unknown_calls"] else "") + ").</p>")
    revisions = ", ".join(f"{_e(x['revision'])} ({_e(x['reviewer']['harness'])} {_e(x['reviewer']['model'])}"
                          + (", selected" if x["selected"] else "")
                          + (f", failed: {_e(x['failed_reason'])}" if x.get("failed_reason") else "") + ")"
                          for x in r["revisions"])
    return head + arms + tasks + "<h3>Failed reviews</h3>" + failed_html + usage + f"<p>Revisions: {revisions}.</p>"
