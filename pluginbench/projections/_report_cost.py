"""The report's dollars: ``costs`` in results.json and the Cost section of report.html.

Prices come from ``prices.json`` beside the run's ``evaluation.json`` (dated, per model;
read by ``_prices``); the arithmetic is :mod:`pluginbench.stats._cost`. Without prices every dollar figure is
absent with the reason, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import msgspec

from ..stats import (
    Cost,
    Prices,
    attempt_cost,
    format_dollars,
    total_cost,
)
from ._prices import PRICES_FILE
from ._report_data import num

#: The most attempts report.html shows one by one (a row of the attempts table and of the
#: dollars per attempt, a dot of a distribution plot); above it the page summarises them
#: (counts by arm; each arm's range and quartiles) and points to results.csv and
#: results.json, which list every attempt at any size.
ATTEMPTS_LISTED_MAX = 5_000

def _table_name(source: str) -> str:
    return "the bundled price table" if source == "bundled" else PRICES_FILE


def _cost(c: Cost) -> dict[str, Any]:
    return {"usd": num(c.usd), "lower_bound": c.lower_bound, "basis": c.basis, "reason": c.reason}


def costs_section(
    prices: Prices | None, reason: str | None, model: str | None, rows: Sequence[Mapping[str, Any]],
    tasks: Sequence[str], arms: Sequence[str], *, source: str = "run", file: str = PRICES_FILE,
    age_warning: str | None = None, generation: Sequence[Mapping[str, Any]] = (),
    calls: Mapping[str, Sequence[tuple[str | None, Mapping[str, Any]]]] | None = None,
) -> dict[str, Any]:
    """``costs`` of results.json: which table priced the run (``source``, ``file``, its date
    and ``age_warning``), then dollars per attempt, per task × arm and per arm, each with its basis.
    ``generation`` (the generated-guidance sessions: arm, task, generation_id, model, tokens) is
    priced at each session's own model and counted in its task × arm and arm totals. ``calls``
    (kind -> (model, tokens) of each review call or llm-check vote) is priced at each call's model
    as ``beside_coding`` (in cost_ceiling, not in the arms' dollars); a call that used no token
    costs nothing."""
    table = {"source": source if prices is not None else "none", "file": file,
             "as_of": prices.as_of if prices is not None else None, "age_warning": age_warning}
    if prices is None:
        return {"prices": None, "reason": reason, "table": table, "attempts": {}, "per_task": {}, "arms": {},
                **({"generation": {}} if generation else {})}
    per_attempt = {r["attempt_id"]: attempt_cost(r["tokens"], model, prices, _table_name(source)) for r in rows}
    grouped: dict[tuple[str, str], list[Cost]] = {}
    for r in rows:
        grouped.setdefault((r["task"], r["arm"]), []).append(per_attempt[r["attempt_id"]])
    sessions: dict[str, list[Cost]] = {}
    for g in generation:
        c = attempt_cost(g["tokens"], g["model"] or model, prices, _table_name(source))
        grouped.setdefault((g["task"], g["arm"]), []).append(c)
        sessions.setdefault(g["arm"], []).append(c)
    extra = {"generation": {a: _cost(total_cost(cs, f"{a}'s guidance generation")) for a, cs in sorted(sessions.items())}
             } if generation else {}
    if calls:
        extra["beside_coding"] = {kind: _cost(total_cost([_call_cost(t, m or model, prices, _table_name(source))
                                                          for m, t in items], kind.replace("_", " ")))
                                  for kind, items in calls.items()}
    return {
        **extra,
        "prices": msgspec.to_builtins(prices),
        "reason": None,
        "table": table,
        "attempts": {a: _cost(c) for a, c in per_attempt.items()},
        "per_task": {
            t: {a: _cost(total_cost(grouped.get((t, a), []), f"{t} × {a}")) for a in arms} for t in tasks
        },
        "arms": {
            a: _cost(total_cost([c for (t, arm), cs in grouped.items() if arm == a for c in cs], a)) for a in arms
        },
    }


def _call_cost(tokens: Mapping[str, Any], model: str | None, prices: Prices, table: str) -> Cost:
    if tokens.get("status") == "exact" and not tokens.get("total") and not tokens.get("input") and not tokens.get("output"):
        return Cost(usd=0.0, lower_bound=False, basis=f"{table}: no token was used")
    return attempt_cost(tokens, model, prices, table)


def _usd(c: Mapping[str, Any]) -> str:
    if c["usd"] is None:
        return f'<span class="unknown" title="{escape(c["reason"] or "", quote=True)}">unknown</span>'
    return ("≥ " if c["lower_bound"] else "") + f"${c['usd']:,.4f}"


def dollars_note(doc: Mapping[str, Any]) -> str:
    """The date (and age warning) that goes beside every dollar figure outside the Cost
    section: "prices of 2026-12-01, bundled table", or "" when the run has no dollars."""
    table = (doc.get("costs") or {}).get("table") or {}
    if not table.get("as_of"):
        return ""
    note = f"prices of {table['as_of']}" + (", bundled table" if table.get("source") == "bundled" else "")
    return note + ("; stale: " + table["age_warning"] if table.get("age_warning") else "")


def _per(total: float | None, n: int) -> float | None:
    return None if total is None or n <= 0 else total / n


def spend_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per arm: attempts, passes, tokens and dollars in total, per attempt and per solved task
    (one definition each: total / attempts, total / passing attempts; unknown when any counted
    attempt's figure is unknown or only a bound, never a partial sum). A generated-guidance
    arm's total includes its generating sessions."""
    costs = doc.get("costs") or {}
    out = []
    for arm in doc["arms"]:
        rows = [r for r in doc["attempts"] if r["arm"] == arm]
        passes = sum(int((doc["per_task"][t].get(arm) or {}).get("passes") or 0) for t in doc["tasks"])
        toks = [r["tokens"]["total"] for r in rows]
        tokens = None if not rows or any(t is None or r["tokens"]["status"] != "exact" for t, r in zip(toks, rows, strict=True)) \
            else float(sum(toks))
        gen = ((doc.get("generated") or {}).get("arms") or {}).get(arm)
        if gen is not None and tokens is not None:  # a generated arm's sessions are part of its spend
            tokens = None if gen["tokens"] is None or gen["tokens_status"] != "exact" else tokens + gen["tokens"]
        usd_row = (costs.get("arms") or {}).get(arm) or {}
        usd = None if usd_row.get("usd") is None or usd_row.get("lower_bound") else float(usd_row["usd"])
        out.append({"arm": arm, "attempts": len(rows), "passes": passes,
                    "tokens_per_attempt": _per(tokens, len(rows)), "tokens_per_solved": _per(tokens, passes),
                    "usd_per_attempt": _per(usd, len(rows)), "usd_per_solved": _per(usd, passes)})
    return out


def _spend_html(doc: Mapping[str, Any]) -> str:
    def tok(v: float | None) -> str:
        return '<span class="unknown">unknown</span>' if v is None else f"{v:,.0f}"

    def usd(v: float | None) -> str:
        return '<span class="unknown">unknown</span>' if v is None else escape(format_dollars(v))

    body = "".join(
        f'<tr data-arm="{escape(r["arm"], quote=True)}"><td>{escape(r["arm"])}</td><td class="num">{r["attempts"]}</td>'
        f'<td class="num">{r["passes"]}</td><td class="num">{tok(r["tokens_per_attempt"])}</td>'
        f'<td class="num">{tok(r["tokens_per_solved"])}</td><td class="num">{usd(r["usd_per_attempt"])}</td>'
        f'<td class="num">{usd(r["usd_per_solved"])}</td></tr>'
        for r in spend_rows(doc))
    return ('<table id="spend-per-arm"><thead><tr><th>Arm</th><th>Attempts</th><th>Passes</th><th>Tokens per attempt</th>'
            "<th>Tokens per solved task</th><th>Dollars per attempt</th><th>Dollars per solved task</th></tr></thead>"
            f"<tbody>{body}</tbody></table>"
            '<p class="hint">Per attempt: the arm\'s total (input + output tokens, dollars) over its attempts; per solved '
            "task: the same total over its passing attempts. Unknown when any attempt's figure is unknown or only a "
            "lower bound, never a partial sum. The ratio against vanilla, with its interval, is in the paired "
            "comparison.</p>")


def cost_html(doc: Mapping[str, Any]) -> str:
    """The Cost section: per arm tokens and dollars per attempt and per solved task, the price
    row and date, dollars per arm, per task × arm and per attempt."""
    costs = doc["costs"]
    if costs["prices"] is None:
        return _spend_html(doc) + (
            f"<p>{escape(costs['reason'] or 'no prices')}. Put a dated prices.json beside evaluation.json and rebuild the report.</p>")
    p = costs["prices"]
    table = costs.get("table") or {}
    model = doc["run"]["model"]
    row = p["models"].get(model or "")
    which = ("the bundled price table (the run has no prices.json; put one beside evaluation.json to override it)"
             if table.get("source") == "bundled" else "the run's prices.json")
    warn = (f'<p class="warning" id="prices-age">Warning: {escape(table["age_warning"])}.</p>'
            if table.get("age_warning") else "")
    head = warn + (
        f"<p>Prices from {escape(which)}, as of <strong>{escape(p['as_of'])}</strong> ({escape(p['currency'])}), row "
        f"<code>{escape(str(model))}</code>: "
        + (f"input ${row['input_per_million']:g}, cached input ${row['cached_input_per_million']:g}, "
           f"output ${row['output_per_million']:g} per million tokens." if row else "no row for this model.")
        + " Dollars = uncached input × input + cached input × cached input + output × output. "
        "≥ marks a lower bound (some token counts are only a floor); unknown tokens give unknown dollars.</p>"
    )
    arms = doc["arms"]
    arm_rows = "".join(
        f"<tr><td>{escape(a)}</td><td>{_usd(costs['arms'][a])}</td>"
        f"<td>{_usd({**costs['arms'][a], 'usd': None if costs['arms'][a]['usd'] is None else costs['arms'][a]['usd'] / max(1, sum(1 for r in doc['attempts'] if r['arm'] == a))})}</td>"
        f"<td>{escape(costs['arms'][a]['basis'])}</td></tr>"
        for a in arms
    )
    task_rows = "".join(
        f'<tr data-task="{escape(t, quote=True)}"><td>{escape(t)}</td>' + "".join(f"<td>{_usd(costs['per_task'][t][a])}</td>" for a in arms) + "</tr>"
        for t in doc["tasks"]
    )
    attempt_rows = "" if len(doc["attempts"]) > ATTEMPTS_LISTED_MAX else "".join(
        f"<tr><td>{escape(r['attempt_id'])}</td><td>{_usd(costs['attempts'][r['attempt_id']])}</td>"
        f"<td>{escape(costs['attempts'][r['attempt_id']]['reason'] or costs['attempts'][r['attempt_id']]['basis'])}</td></tr>"
        for r in doc["attempts"]
    )
    th = "".join(f"<th>{escape(a)}</th>" for a in arms)
    beside = costs.get("beside_coding") or {}
    if beside:
        head += ('<p id="cost-beside">Beside coding (the reviewer\'s model row; counted in <code>cost_ceiling</code>, '
                 "not in the arms' dollars): " + ", ".join(
                     f"{escape(k.replace('_', ' '))} {_usd(c)}" for k, c in beside.items()) + ".</p>")
    return (
        _spend_html(doc) + head
        + '<table id="cost-arms"><thead><tr><th>Arm</th><th>Dollars</th><th>Per attempt</th><th>Basis</th></tr></thead>'
        f"<tbody>{arm_rows}</tbody></table>"
        f'<h3>By task</h3><table id="cost-tasks"><thead><tr><th>Task</th>{th}</tr></thead><tbody>{task_rows}</tbody></table>'
        + (f'<details><summary>Dollars per attempt</summary><table id="cost-attempts"><thead><tr><th>Attempt</th>'
           f"<th>Dollars</th><th>Basis or reason</th></tr></thead><tbody>{attempt_rows}</tbody></table></details>"
           if len(doc["attempts"]) <= ATTEMPTS_LISTED_MAX else
           f'<p class="small">Dollars per attempt: {len(doc["attempts"]):,} attempts, more than the '
           f"{ATTEMPTS_LISTED_MAX:,} this page lists; each attempt's dollars, basis and reason are in results.json "
           "(<code>costs.attempts</code>).</p>")
    )
