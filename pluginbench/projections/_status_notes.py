"""Status lines for what runs beside coding: the llm and rule checks' results per arm, the model
calls besides coding (reviews, llm-check votes) and the generated-guidance arms' generation.

Pure text from a ``status --json`` object (a dict), shared by the terminal view
(``cli/_watch.py``) and the dashboard's run page, so both say the same words. Each line is
``(text, tone)``; tone is ``""`` or ``"warn"`` (something unknown, cut off or failed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["side_lines"]

Line = tuple[str, str]


def _n(v: int | None) -> str:
    return "unknown" if v is None else f"{v:,}"


def check_lines(arms: Mapping[str, Any]) -> list[Line]:
    """Per arm with checks: how many complete attempts have check values, each check's passed /
    known (unknowns apart, never a fail), and the llm grader's tokens."""
    out: list[Line] = []
    for arm, info in arms.items():
        c = info.get("checks")
        if not c:
            continue
        parts = []
        for name, k in c["checks"].items():
            known = k["passed"] + k["failed"]
            parts.append(f"{name} {k['passed']}/{known}" + (f" (+{k['unknown']} unknown)" if k["unknown"] else ""))
        grader = ""
        if c.get("grader_tokens") is not None:
            grader = f"; llm grader {c['grader_tokens']:,} tokens"
        elif c.get("grader_tokens_reason") and "no llm check" not in c["grader_tokens_reason"]:
            grader = f"; llm grader tokens unknown ({c['grader_tokens_reason']})"
        tone = "warn" if any(k["unknown"] for k in c["checks"].values()) or "unknown" in grader else ""
        out.append((f"checks {arm}: {c['measured']}/{c['complete']} complete attempts checked"
                    + (": " + ", ".join(parts) if parts else "") + grader, tone))
    return out


def _tokens(t: Mapping[str, Any]) -> str:
    total = t.get("total_tokens")
    if total is None:
        return f"tokens unknown ({t['unknown_calls']} call(s) with unknown usage)" if t.get("unknown_calls") \
            else "tokens unknown"
    return f"{total:,} tokens" + (" (lower bound)" if t.get("lower_bound") else "")


def call_lines(calls: Mapping[str, Any] | None, owned: bool) -> list[Line]:
    """Review calls and llm-check votes: their counts and tokens (both count in cost_ceiling);
    votes still open show as in flight, or as cut off when no process owns the run."""
    if not calls:
        return []
    out: list[Line] = []
    r = calls["reviews"]
    if r["calls"]:
        out.append((f"review calls: {r['calls']}, {_tokens(r)}", "warn" if r["total_tokens"] is None else ""))
    v = calls["check_votes"]
    if v["started"]:
        text = (f"llm-check votes: {v['cast']} cast ({v['passed']} pass, {v['failed']} fail, "
                f"{v['no_verdict']} no verdict), {_tokens(v['tokens'])}")
        warn = v["tokens"]["total_tokens"] is None
        if v["discarded"]:
            text += f"; {v['discarded']} discarded (cut off by a killed worker, possibly paid, usage unknown; graded again)"
            warn = True
        if v["open"]:
            text += f"; {v['open']} " + ("in flight" if owned else "cut off (the next worker records them as discarded)")
            warn = warn or not owned
        out.append((text, "warn" if warn else ""))
    return out


def generation_lines(gen: Mapping[str, Any] | None, owned: bool) -> list[Line]:
    """Each generated-guidance arm: tasks generated, failed, not ended (generating, or cut off),
    sessions killed, tokens and seconds (unknown with the reason)."""
    if not gen:
        return []
    out: list[Line] = []
    for arm, g in gen["arms"].items():
        state = "generating" if owned else "cut off (generated again on resume)"
        text = (f"generation {arm}: {g['generated']} generated, {g['failed']} failed"
                + (f", {g['unfinished']} {state}" if g["unfinished"] else "")
                + (f", {g['killed']} killed session(s)" if g["killed"] else "")
                + f"; {_n(g['tokens'])} tokens"
                + (f" ({g['tokens_reason']})" if g["tokens"] is None and g.get("tokens_reason") else ""))
        warn = bool(g["failed"] or g["killed"] or g["tokens"] is None or (g["unfinished"] and not owned))
        out.append((text, "warn" if warn else ""))
    return out


def side_lines(status: Mapping[str, Any]) -> list[Line]:
    """Every line above for one ``status --json`` object."""
    owned = bool(status.get("active"))
    return (generation_lines(status.get("generation"), owned) + check_lines(status.get("arms") or {})
            + call_lines(status.get("model_calls"), owned))
