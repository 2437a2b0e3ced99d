"""HTML of the attempt page and the side-by-side page: pure functions of
:class:`~pluginbench.viewer.AttemptFacts` (the same facts ``pluginbench show`` prints).

The timeline is paged (:data:`PAGE_STEPS` root steps a page, ``?page=N``) and folded: a
tool call's input and output, a long text and a subagent's thread are ``<details>`` the
reader opens, so a 5,000-turn transcript renders one page of rows, with no script. A
subagent thread (a Claude Code subagent, a Codex child) shows its first page inside its fold;
a longer one is paged on its own (``?thread=i.j&page=N``: child ``j`` of main step ``i``,
``-`` a level deeper), so a thread of thousands of steps renders one page too. Every
value is escaped; no highlighter library is used (the diff is coloured per line by CSS).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from ..viewer import AttemptFacts, Step, Thread, divergence, patch_delta, tool_sequence

PAGE_STEPS = 200
#: Characters of a step's input or output shown unfolded in its summary line.
SHORT = 160

CSS = """
.facts th{width:11em}.diff{font:12px/1.35 ui-monospace,monospace;white-space:pre;overflow-x:auto;background:#fff;
border:1px solid #dde1e8;padding:4px 8px;margin:2px 0 10px}.diff span{display:block;min-height:1.35em}.diff .add{background:#e6ffec}
.diff .del{background:#ffebe9}.diff .hunk{color:#6b7485}
.step{margin:1px 0;padding:2px 6px;background:#fff;border-left:3px solid #dde1e8}.step.tool{border-color:#4c78a8}
.step.err{border-color:#b42318}.step.retry{border-color:#e0b84c;background:#fff8e6}.step.text{border-color:#8c959f}
.step .turn{color:#6b7485;display:inline-block;min-width:3.5em}.step .tok{color:#6b7485;font-size:12px;margin-left:8px}
.step pre,.tail,.receipt{font:12px/1.35 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;
background:#f6f7f9;border:1px solid #dde1e8;padding:4px 6px;margin:2px 0;max-height:40em;overflow:auto}
.children{margin-left:22px;border-left:2px dashed #c3cad5;padding-left:6px}.pager a,.pager span{margin-right:8px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}.side>div{min-width:0}.diverge{background:#fff4d6}
"""


def _v(v: Any, reason: str | None = None) -> str:
    if v is None:
        return '<span class="muted">unknown' + (f" ({escape(reason)})" if reason else "") + "</span>"
    if isinstance(v, float):
        return escape(f"{v:,.6g}")
    if isinstance(v, int) and not isinstance(v, bool):
        return escape(f"{v:,}")
    return escape(str(v))


def attempt_href(key: str, attempt_id: str) -> str:
    return f"/run/{quote(key)}/attempt/{quote(attempt_id)}"


def _tokens(t: dict[str, Any] | None) -> str:
    if not t:
        return _v(None, "not recorded")
    total = t.get("total", t.get("total_tokens"))
    if total is None:
        return _v(None, t.get("reason"))
    inp, out = t.get("input", t.get("input_tokens")), t.get("output", t.get("output_tokens"))
    cached = t.get("cached_input", t.get("cached_input_tokens"))
    return (f'<span id="tokens-total">{_v(total)}</span> total · {_v(inp)} input ({_v(cached)} cached) · {_v(out)} output'
            f" · {escape(str(t.get('status')))}" + (f" — {escape(str(t['reason']))}" if t.get("reason") else ""))


def facts_table(f: AttemptFacts) -> str:
    rows = [
        ("attempt", f"{escape(f.attempt_id)} · task {escape(str(f.task))} · arm {escape(str(f.arm))} · repeat {_v(f.repeat)}"),
        ("agent", f"{_v(f.harness)} · {_v(f.model)} · effort {_v(f.reasoning)}"),
        ("state", _v(f.state)),
        ("outcome", f'<span id="outcome" class="m-{escape(str(f.outcome))}">{_v(f.outcome, "not graded")}</span>'
                    + (f' — <span id="outcome-reason">{escape(f.outcome_reason)}</span>' if f.outcome_reason else "")),
        ("reward", _v(f.reward, "no reward file")),
        ("tokens", _tokens(f.tokens)),
        ("dollars", _v(None, f.usd_reason) if f.usd is None else escape(f"${f.usd:,.4f}")),
        ("coding time", _v(None, "not recorded") if f.coding_seconds is None else escape(f"{f.coding_seconds:,.1f} s")),
        ("exit", f"code {_v(f.exit_code)}" + (" · timed out" if f.timed_out else "")
         + (f" · error: {escape(f.error)}" if f.error else "")
         + (f" · provider stop: {escape(f.provider_stop)}" if f.provider_stop else "")),
    ]
    if f.native_grading:
        rows.append(("native grading", escape(", ".join(f"{k} {v}" for k, v in sorted(f.native_grading.items())))))
    for k, v in sorted((f.verifier_result or {}).items()):
        if isinstance(v, list):
            rows.append((escape(k), escape(", ".join(map(str, v))) or "none"))
    if f.activation:
        rows.append(("activation", f'<pre class="receipt">{escape(json.dumps(f.activation, indent=1, sort_keys=True))}</pre>'))
    if f.reused_from:
        rows.append(("reused from", escape(json.dumps(f.reused_from, sort_keys=True))))
    return '<table class="facts" id="facts">' + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def diff_html(text: str) -> str:
    """A diff, one block line per diff line, coloured by its first character."""
    lines = []
    for line in text.split("\n"):
        cls = ("add" if line.startswith("+") and not line.startswith("+++") else
               "del" if line.startswith("-") and not line.startswith("---") else
               "hunk" if line.startswith("@@") else "ctx")
        lines.append(f'<span class="{cls}">{escape(line)}</span>')
    return '<div class="diff">' + "".join(lines) + "</div>"


def _fold(label: str, body: str | None, cls: str) -> str:
    if body is None:
        return ""
    return f'<details class="{cls}"><summary>{escape(label)} ({len(body):,} chars)</summary><pre>{escape(body)}</pre></details>'


def _pager(href: str, n: int, page: int, thread: str | None) -> str:
    """Links to every page of a thread of ``n`` steps (``thread`` None: the main timeline)."""
    pages = -(-n // PAGE_STEPS)
    if pages <= 1:
        return ""
    query = "" if thread is None else f"thread={thread}&amp;"
    anchor = "timeline" if thread is None else "thread"
    links = [f'<span class="cur">page {p}</span>' if p == page else f'<a href="{href}?{query}page={p}#{anchor}">{p}</a>'
             for p in range(1, pages + 1)]
    return f'<div class="pager" data-thread="{escape(thread or "")}">{n:,} steps, {PAGE_STEPS} a page: {" ".join(links)}</div>'


def _step(s: Step, depth: int, path: str, href: str) -> str:
    """One step; ``path`` is its place (``i`` in the main timeline, ``i.j-k`` in a subagent thread)."""
    cls = s.kind + (" err" if s.is_error else "")
    turn = f'<span class="turn">#{s.turn}</span>' if s.turn is not None else '<span class="turn"></span>'
    tok = ""
    if s.tokens:
        tok = '<span class="tok">' + escape(" · ".join(f"{k.replace('_tokens', '')} {v:,}" for k, v in sorted(s.tokens.items()))) + "</span>"
    if s.kind == "tool":
        mark = {True: "✗", False: "✓", None: "·"}[s.is_error]
        head = f'{turn}{mark} <b class="tool-name">{escape(str(s.name))}</b> <code class="tool-summary">{escape(s.summary)}</code>'
        body = _fold("input", s.input, "in") + _fold("output", s.output, "out")
    elif s.kind == "retry":
        head, body = f"{turn}↻ {escape(s.summary)}", ""
    else:
        long = s.output is not None and len(s.output) > SHORT
        head = f"{turn}<i>{escape(s.summary)}</i>"
        body = _fold("full text", s.output, "txt") if long else ""
    kids = []
    for j, c in enumerate(s.children):
        tp = f"{path}.{j}"
        more = len(c.steps) > PAGE_STEPS
        kids.append(f'<details class="children" data-thread="{tp}"><summary>subagent {escape(c.name)} ({c.turns:,} turns, '
                    f"{len(c.steps):,} steps)</summary>"
                    + (_pager(href, len(c.steps), 0, tp) if more else "")
                    + _thread(c, depth + 1, tp, href, c.steps[:PAGE_STEPS]) + "</details>")
    return f'<div class="step {cls}" data-kind="{escape(s.kind)}">{head}{tok}{body}{"".join(kids)}</div>'


def _thread(t: Thread, depth: int, path: str, href: str, steps: Sequence[Step] | None = None, first: int = 0) -> str:
    """The steps of thread ``path`` ("" for the main timeline), numbered from ``first``."""
    if depth > 12:
        return '<p class="muted">nested too deep to show</p>'
    prefix = f"{path}-" if path else ""
    return "".join(_step(s, depth, f"{prefix}{first + i}", href) for i, s in enumerate(t.steps if steps is None else steps))


_THREAD_PATH = re.compile(r"[0-9]{1,7}\.[0-9]{1,4}(?:-[0-9]{1,7}\.[0-9]{1,4}){0,11}")


def find_thread(root: Thread, path: str) -> tuple[Thread, list[tuple[Thread, int]]] | None:
    """The subagent thread at ``path`` (``i.j``: child ``j`` of step ``i``; ``-`` goes a level
    deeper) and the (thread, step index) pairs on the way, or None when there is none."""
    if not _THREAD_PATH.fullmatch(path):
        return None
    thread, trail = root, []
    for part in path.split("-"):
        i, j = (int(x) for x in part.split("."))
        if i >= len(thread.steps) or j >= len(thread.steps[i].children):
            return None
        trail.append((thread, i))
        thread = thread.steps[i].children[j]
    return thread, trail


def thread_html(f: AttemptFacts, href: str, path: str, page: int) -> str:
    """One subagent thread, paged like the main timeline, with the way back to its parents."""
    got = None if f.timeline.root is None else find_thread(f.timeline.root, path)
    if got is None:
        return f'<p id="thread" class="warn">no subagent thread {escape(path)} in this transcript</p>'
    thread, trail = got
    crumbs, parts = [], path.split("-")
    for depth, (_parent, i) in enumerate(trail):
        where = "-".join(parts[:depth])
        if depth == 0:
            crumbs.append(f'<a href="{href}?page={i // PAGE_STEPS + 1}#timeline">main timeline</a> (step {i + 1})')
        else:
            crumbs.append(f'<a href="{href}?thread={where}&amp;page={i // PAGE_STEPS + 1}#thread">subagent '
                          f"{escape(_parent.name)}</a> (step {i + 1})")
    n = len(thread.steps)
    pages = max(1, -(-n // PAGE_STEPS))
    page = min(max(page, 1), pages)
    start = (page - 1) * PAGE_STEPS
    return (f'<p id="thread" data-thread="{escape(path)}">{" › ".join(crumbs)} › subagent <b>{escape(thread.name)}</b>: '
            f"{thread.turns:,} model turns, {n:,} steps</p>" + _pager(href, n, page, path)
            + f'<div id="steps">{_thread(thread, len(trail), path, href, thread.steps[start:start + PAGE_STEPS], start)}</div>')


def timeline_html(f: AttemptFacts, href: str, page: int) -> str:
    tl, tt = f.timeline, f.timeline_totals
    out = [f'<p id="timeline-summary">{escape(tl.harness or "no trace")}: {tt["turns"]:,} model turns, '
           f'{tt["tool_calls"]:,} tool calls, {tt["subagents"]:,} subagents, {len(tl.retries):,} provider retries'
           + (f' · from {escape(tl.source)}' if tl.source else "") + "</p>"]
    out += [f'<div class="warn">{escape(n)}</div>' for n in tl.notes]
    if tl.root is None:
        return "".join(out)
    steps = tl.root.steps
    pages = max(1, -(-len(steps) // PAGE_STEPS))
    page = min(max(page, 1), pages)
    pager = _pager(href, len(steps), page, None)
    if pager:
        out.append(pager.replace('<div class="pager"', '<div class="pager" id="pager"', 1))
    start = (page - 1) * PAGE_STEPS
    out.append(f'<div id="steps">{_thread(tl.root, 0, "", href, steps[start: start + PAGE_STEPS], start)}</div>')
    return "".join(out)


def attempt_fragment(key: str, run_name: str, f: AttemptFacts, page: int = 1, others: Sequence[tuple[str, str]] = (),
                     thread: str | None = None) -> str:
    href = attempt_href(key, f.attempt_id)
    out = [f'<h1><a href="/run/{quote(key)}">{escape(run_name)}</a> · <span id="attempt-id">{escape(f.attempt_id)}</span></h1>']
    out += [f'<div class="warn">{escape(n)}</div>' for n in f.notes]
    out.append(facts_table(f))
    if others:
        out.append('<p id="compare">side by side with: ' + " · ".join(
            f'<a href="/run/{quote(key)}/side/{quote(f.attempt_id)}/{quote(o)}">{escape(o)} ({escape(arm)})</a>'
            for o, arm in others) + "</p>")
    if f.measures:
        out.append('<h2>Measures</h2><table id="measures"><tr><th>measure</th><th>value</th><th>status</th><th>reason</th></tr>')
        for m in f.measures:
            val = "" if m.value is None else f"{m.value} {m.unit or ''}".strip()
            out.append(f"<tr><td>{escape(m.name)}</td><td class=num>{escape(str(val))}</td>"
                       f"<td>{escape(str(m.status))}</td><td>{escape(m.reason or '')}</td></tr>")
        out.append("</table>")
    if f.reviews:
        out.append('<h2>Review findings</h2><div id="reviews">')
        for r in f.reviews:
            if r.findings is None:
                out.append(f"<p>{escape(r.revision)}: no valid findings ({escape(str(r.reason))})</p>")
                continue
            out.append(f"<p>{escape(r.revision)}: {len(r.findings)} finding(s)</p><ul>" + "".join(
                f"<li>[{escape(str(x.get('severity')))}/{escape(str(x.get('category')))}] {escape(str(x.get('title')))} "
                f"<code>{escape(str(x.get('file')))}:{escape(str(x.get('line')))}</code> {escape(str(x.get('detail') or ''))}</li>"
                for x in r.findings) + "</ul>")
        out.append("</div>")
    out.append(f'<h2>Patch <span class="muted">({len(f.patch_files)} files)</span></h2><div id="patch">')
    if not f.patch_files:
        out.append('<p class="muted">empty patch</p>' if f.patch is not None else '<p class="muted">no model.patch saved</p>')
    for p in f.patch_files:
        out.append(f'<details open class="patch-file" data-path="{escape(p.path)}"><summary><code>{escape(p.path)}</code> '
                   f"+{p.added} −{p.removed}{' binary' if p.binary else ''}</summary>{diff_html(p.text)}</details>")
    out.append("</div>")
    if f.patch_dropped:
        out.append(f'<div class="warn">left out of the patch: {escape(f.patch_dropped)}</div>')
    out.append('<h2 id="timeline">Transcript</h2>' + (timeline_html(f, href, page) if thread is None
                                                       else thread_html(f, href, thread, page)))
    if f.apply_failure:
        out.append(f'<h2>The patch did not apply</h2><pre class="tail">{escape(f.apply_failure)}</pre>')
    out.append(f'<h2>Verifier output (tail)</h2><pre class="tail" id="verifier-tail">{escape(f.verifier_tail or "no verifier output saved")}</pre>')
    receipt = json.dumps(f.receipt, indent=1, sort_keys=True) if f.receipt else "no discovery receipt saved (native-treatment.json)"
    out.append(f'<h2>Discovery receipt</h2><pre class="receipt" id="receipt">{escape(receipt)}</pre>')
    delivery = json.dumps(f.delivery, indent=1, sort_keys=True) if f.delivery else "no delivery.json"
    out.append(f'<h2>Delivered</h2><pre class="receipt" id="delivery">{escape(delivery)}</pre>')
    base = f"{href}/file/"
    if f.delivered_files:
        out.append('<p id="delivered">' + " · ".join(
            f'<a href="{base}{quote("delivery/" + d)}">{escape(d)}</a>' for d in f.delivered_files) + "</p>")
    out.append(f'<h2>Evidence files <span class="muted">({escape(f.evidence)}/)</span></h2><ul id="files">' + "".join(
        f'<li><a href="{base}{quote(p)}">{escape(p)}</a> <span class="muted">{n:,} bytes</span></li>' for p, n in f.files) + "</ul>")
    return "".join(out)


def side_fragment(key: str, run_name: str, left: AttemptFacts, right: AttemptFacts) -> str:
    ls, rs = tool_sequence(left.timeline.root), tool_sequence(right.timeline.root)
    at = divergence(ls, rs)
    out = [f'<h1><a href="/run/{quote(key)}">{escape(run_name)}</a> · side by side</h1>']
    if left.task != right.task:
        out.append(f'<div class="warn">these attempts are of different tasks ({escape(str(left.task))}, {escape(str(right.task))})</div>')
    where = ("the tool calls are the same" if at is None else
             f"the tool calls part ways at call {at + 1} (left made {len(ls)}, right {len(rs)})")
    out.append(f'<p id="divergence">{escape(where)}</p><div class="side">')
    for f, seq in ((left, ls), (right, rs)):
        rows = "".join(f'<li class="{"diverge" if at is not None and i >= at else ""}"><code>{escape(c)}</code></li>'
                       for i, c in enumerate(seq[:PAGE_STEPS]))
        more = f"<li class=muted>… {len(seq) - PAGE_STEPS:,} more</li>" if len(seq) > PAGE_STEPS else ""
        out.append(f'<div class="side-col" data-attempt="{escape(f.attempt_id)}"><h2><a href="{attempt_href(key, f.attempt_id)}">'
                   f"{escape(f.attempt_id)}</a> ({escape(str(f.arm))})</h2>{facts_table(f)}"
                   f"<h2>Tool calls</h2><ol class=calls>{rows}{more}</ol></div>")
    out.append("</div>")
    delta = patch_delta(left.patch or "", right.patch or "", f"{left.attempt_id}/model.patch", f"{right.attempt_id}/model.patch")
    out.append('<h2>The two patches compared</h2><div id="patch-delta">'
               + (diff_html(delta) if delta else '<p class="muted">the two patches are the same</p>') + "</div>")
    return "".join(out)
