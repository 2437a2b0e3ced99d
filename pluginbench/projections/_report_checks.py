"""results.json ``checks`` and report.html's "Checks beside the verifier" (pure, from the attempt rows).

Folded from the ``checks`` measure's values (``measures.check:<name>``) in each complete,
eligible attempt row; present only when the run selected that measure. Per arm and check:
``passed``, ``failed``, ``unknown`` (never counted as a fail), ``rate`` = passed / (passed +
failed) (null when none is known) and the distinct reasons of the unknowns. A check never
changes an attempt's outcome: this section sits beside the verifier's pass rates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from ..measures import CHECK_GRADER_TOKENS as GRADER_TOKENS
from ..measures import CHECK_PREFIX as PREFIX

MEASURE = "checks"
NOTE = "Graders beside the hidden verifier: they never change correctness or pass/fail."


def _cell(row: Mapping[str, Any], key: str) -> tuple[float | int | None, str | None]:
    m = (row.get("measures") or {}).get(key)
    if not isinstance(m, Mapping) or m.get("status") == "unknown" or m.get("value") is None:
        return None, str(m.get("reason")) if isinstance(m, Mapping) and m.get("reason") else "not measured"
    return m["value"], None


def checks_section(rows: Iterable[Mapping[str, Any]], arms: Iterable[str],
                   measurements: Iterable[str]) -> dict[str, Any] | None:
    """results.json ``checks`` (see the module docstring); None when the run did not select it."""
    if MEASURE not in set(measurements):
        return None
    by_arm: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("state") == "complete" and not r.get("ineligible"):
            by_arm.setdefault(str(r.get("arm")), []).append(r)
    names = sorted({k[len(PREFIX):] for rs in by_arm.values() for r in rs for k in (r.get("measures") or {})
                    if k.startswith(PREFIX)})
    per_arm: dict[str, Any] = {}
    for arm in arms:
        out = {}
        for name in names:
            cells = [_cell(r, PREFIX + name) for r in by_arm.get(arm, [])]
            passed = sum(1 for v, _ in cells if v is not None and v > 0)
            failed = sum(1 for v, _ in cells if v is not None and v == 0)
            unknown = [why for v, why in cells if v is None]
            known = passed + failed
            out[name] = {"passed": passed, "failed": failed, "unknown": len(unknown),
                         "rate": round(passed / known, 6) if known else None,
                         "unknown_reasons": sorted({str(w) for w in unknown})[:5]}
        per_arm[arm] = out
    out_doc: dict[str, Any] = {"names": names, "per_arm": per_arm, "note": NOTE}
    grader = _grader(by_arm, arms)
    if grader is not None:
        out_doc["grader"] = grader
    return out_doc


def _grader(by_arm: Mapping[str, list[Mapping[str, Any]]], arms: Iterable[str]) -> dict[str, Any] | None:
    """Per arm: the llm checks' grader tokens over the attempts that had one; None when none did."""
    out: dict[str, Any] = {}
    for arm in arms:
        rows = [r for r in by_arm.get(arm, []) if GRADER_TOKENS in (r.get("measures") or {})]
        if not rows:
            continue
        cells = [_cell(r, GRADER_TOKENS) for r in rows]
        unknown = sorted({str(why) for v, why in cells if v is None})
        out[arm] = {"attempts": len(rows), "total_tokens": None if unknown else int(sum(v or 0 for v, _ in cells)),
                    "unknown_reasons": unknown[:5]}
    return out or None


def checks_html(doc: Mapping[str, Any]) -> str:
    """The section body: one row per check, one column per arm (share passed, unknowns apart)."""
    sec = doc.get("checks") or {}
    names, arms = sec.get("names") or [], list(doc.get("arms") or [])
    if not names:
        return '<p class="note">No check value was recorded.</p>'
    head = "".join(f"<th>{escape(a)}</th>" for a in arms)
    body = []
    for name in names:
        cells = []
        for a in arms:
            c = sec["per_arm"].get(a, {}).get(name)
            if c is None:
                cells.append("<td></td>")
                continue
            known = c["passed"] + c["failed"]
            shown = (f"{c['rate']:.0%} ({c['passed']}/{known})" if c["rate"] is not None
                     else '<span class="unknown">unknown</span>')
            if c["unknown"]:
                why = "; ".join(c["unknown_reasons"])
                shown += f' <span class="unknown" title="{escape(why)}">+{c["unknown"]} unknown</span>'
            cells.append(f"<td>{shown}</td>")
        body.append(f"<tr><th>check:{escape(name)}</th>{''.join(cells)}</tr>")
    grader = sec.get("grader") or {}
    if grader:
        def tokens(g: Mapping[str, Any] | None) -> str:
            if g is None:
                return "<td></td>"
            if g["total_tokens"] is None:
                why = "; ".join(g["unknown_reasons"])
                return f'<td><span class="unknown" title="{escape(why)}">unknown</span></td>'
            return f'<td class="num">{g["total_tokens"]:,} ({g["attempts"]} attempts)</td>'
        body.append('<tr class="grader"><th title="the reviewer CLI\'s calls for the llm checks; counted apart from '
                    'coding usage, and in the cost ceiling">llm grader tokens</th>'
                    + "".join(tokens(grader.get(a)) for a in arms) + "</tr>")
    return (f'<p class="note">{escape(NOTE)} Share of attempts that passed each check (passed/known); '
            "an unknown is never a fail.</p>"
            f'<table class="checks"><thead><tr><th>check</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')
