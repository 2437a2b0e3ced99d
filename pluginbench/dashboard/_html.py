"""HTML for the dashboard's pages: pure functions from page models to markup.

Every value from a run is escaped. The page loads one script from this server
(``/app.js``, no CDN) that swaps ``<main>`` when the server pushes a new rendering of
the same page over server-sent events; without the script the pages still work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..projections import PLOT_CSS, plots_section, sequential_html
from ._plots import attempts_over_time, heat_grid, token_bars
from ._views import FILTERS, CrossMatrix, ResultsPage, RunPage, RunsRow, report_verdicts

CSS = """
:root{--fg:#1d2330;--muted:#6b7485;--line:#dde1e8;--accent:#2f5fb3}
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:8px 16px;display:flex;gap:18px;align-items:center}
header a{color:#cfe0ff;text-decoration:none;font-weight:600}header .live{margin-left:auto;font-size:12px;color:#9fb0c8}
main{padding:12px 16px}h1{font-size:20px;margin:6px 0}h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;background:#fff;margin:4px 0}td,th{border:1px solid #dde1e8;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef1f5}td.num{text-align:right;font-variant-numeric:tabular-nums}td.blank{background:#fafafa}
.running{color:#0b6bcb;font-weight:600}.muted{color:#6b7485}.warn{background:#fff4d6;border:1px solid #e0b84c;padding:6px 10px;margin:6px 0}
.stale{background:#fde2e1;border:1px solid #d36b67;padding:6px 10px;margin:6px 0}.err{color:#b42318}
.m-pass,.m-overlap_pass{color:#1a7f37}.m-fail{color:#b42318}.m-empty{color:#9a6700}.m-unknown{color:#8250df}
.m-running{color:#0b6bcb}.m-pending{color:#8c959f}.m-interrupted{color:#b42318;font-weight:700}
.rep{display:inline-block;margin-right:8px;white-space:nowrap}code{background:#eef1f5;padding:1px 4px}
form.filters label{margin-right:10px}svg.plot{background:#fff;border:1px solid #dde1e8;margin:4px 0}
svg .lbl{font-size:12px;fill:#1d2330}svg .val{font-size:12px;fill:#fff;font-weight:600}svg .blank{fill:#eef1f5}
svg.tokens .val{fill:#1d2330}svg .unknown{font-size:12px;fill:#8250df}svg .bar{fill:#4c78a8}
svg .axis{stroke:#8c959f}svg .line{stroke:#0b6bcb;stroke-width:2}
""" + PLOT_CSS

APP_JS = """
(function(){
  var main=document.getElementById('live'); var badge=document.getElementById('live-state');
  document.addEventListener('change',function(e){var f=e.target.form;
    if(f&&f.classList.contains('filters')){f.submit();}});
  if(!main||!main.dataset.live||!window.EventSource){badge.textContent='';return;}
  var src=new EventSource('/live?v='+main.dataset.v+'&page='+encodeURIComponent(location.pathname+location.search));
  src.addEventListener('page',function(e){main.innerHTML=JSON.parse(e.data).html;
    badge.textContent='live · updated '+new Date().toLocaleTimeString();});
  src.onopen=function(){badge.textContent='live';};
  src.onerror=function(){badge.textContent='live updates paused: reconnecting';};
})();
"""


def _cell(v: Any, reason: str | None = None, *, num: bool = False) -> str:
    if v is None:
        title = f' title="{escape(reason)}"' if reason else ""
        return f'<td class="blank"{title}></td>'
    text = f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
    return f'<td{" class=num" if num else ""}>{escape(text)}</td>'


def fragment_version(fragment: str) -> str:
    """A short hash of a rendering: the live stream skips what the page already shows."""
    import hashlib

    return hashlib.sha256(fragment.encode()).hexdigest()[:16]


def page(title: str, fragment: str, *, live: bool = True) -> str:
    """A whole page around the ``<main>`` fragment; a live one is updated in place."""
    badge = "live updates need JavaScript" if live else ""
    live_attr = f' data-live="1" data-v="{fragment_version(fragment)}"' if live else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(title)} · PluginBench</title><style>{CSS}</style></head><body>"
        '<header><a href="/">Runs</a><a href="/results">Results</a>'
        f'<span class="live" id="live-state">{badge}</span></header>'
        f'<main id="live"{live_attr}>{fragment}</main><script src="/app.js"></script></body></html>'
    )


def _stale(reason: str | None) -> str:
    if not reason:
        return ""
    return f'<div class="stale">stale: the last read failed ({escape(reason)}); showing the last good view and trying again</div>'


def cross_fragment(matrices: list[CrossMatrix]) -> str:
    """Each cross-agent evaluation's package × harness matrix (every cell names its harness)."""
    out = []
    for m in matrices:
        head = "".join(f'<th><a href="/run/{quote(m.runs[h][0])}">{escape(h)}</a>'
                       f'<div class="muted">{escape(m.runs[h][1])}</div></th>' for h in m.harnesses)
        rows = "".join(
            f"<tr><th>{escape(p)}</th>" + "".join(
                f'<td data-harness="{escape(h)}" data-verdict="{escape(m.cells[p][h][0])}" title="{escape(m.cells[p][h][1])}">'
                f'<span class="{_VERDICT_CLASS.get(m.cells[p][h][0], "")}">{escape(m.cells[p][h][0])}</span></td>'
                for h in m.harnesses) + "</tr>" for p in m.packages)
        out.append(f'<h2>Cross-agent: {escape(m.name)}</h2><div class="muted">{escape(m.folder)}: each harness compared '
                   f"with its own vanilla, never pooled</div>"
                   f'<table class="cross" data-folder="{escape(m.folder)}"><tr><th>package</th>{head}</tr>{rows}</table>')
    return "".join(out)


def runs_fragment(rows: list[RunsRow], matrices: list[CrossMatrix] | None = None) -> str:
    out = [f"<h1>Runs <span class=muted>({len(rows)})</span></h1>", cross_fragment(matrices or [])]
    if not rows:
        out.append('<p class="muted">no run directory found yet (one holds evaluation.json and '
                   "evaluation-binding.json); the folders are searched again every 10 s</p>")
        return "".join(out)
    out.append('<table id="runs"><tr><th>run</th><th>phase</th><th>completed</th><th>outcomes</th>'
               '<th title="what this run spent: attempts reused from the vanilla cache are excluded (their origin run '
               'paid for them)">coding tokens spent</th><th>harness</th><th>model</th><th>effort</th>'
               "<th>last activity</th><th>verdict</th></tr>")
    for r in rows:
        outcomes = ", ".join(f'<span class="m-{escape(k)}">{v} {escape(k)}</span>' for k, v in r.outcomes.items())
        phase = f'<span class="{"running" if r.running else ""}">{escape(r.phase)}</span>'
        if r.stale:
            phase += f' <span class="err">(stale)</span><div class="err">{escape(r.stale)}</div>'
        if r.error:
            phase += f'<div class="err">{escape(r.error)}</div>'
        completed = None if r.completed is None else f"{r.completed} of {r.total}"
        tokens = None if r.tokens is None else (f"≥ {r.tokens:,}" if r.tokens_lower_bound else f"{r.tokens:,}")
        if tokens is None and r.running and r.tokens_so_far is not None:
            tokens = _so_far(r.tokens_so_far, r.tokens_so_far_attempts)
        out.append(
            f'<tr data-run="{escape(r.key)}"><td><a href="/run/{quote(r.key)}">{escape(r.name)}</a>'
            f'<div class="muted">{escape(r.path)}</div></td><td>{phase}</td>'
            + _cell(completed, "status could not be read", num=True) + f"<td>{outcomes}</td>"
            + _cell(tokens, "unknown: an attempt's usage was not measured", num=True)
            + _cell(r.harness) + _cell(r.model) + _cell(r.effort, "not requested") + _cell(r.last_activity)
            + f"<td>{verdict_lines(r.verdicts) or '<span class=muted>no report</span>'}</td>"
            + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


RESULT_COLUMNS = (
    ("run", "run"), ("harness", "harness"), ("cli_version", "CLI version"), ("model", "model"),
    ("effort", "requested effort"), ("effective_effort", "effective effort"), ("task", "task"),
    ("repeat", "repeat"), ("arm", "arm"), ("source", "coded or reused"), ("correctness", "correctness"),
    ("input_tokens", "input tokens"),
    ("output_tokens", "output tokens"), ("coding_seconds", "coding time (s)"),
    ("source_lines_added", "source lines added"), ("test_lines_added", "test lines added"),
)
_NUMERIC = {"repeat", "input_tokens", "output_tokens", "coding_seconds", "source_lines_added", "test_lines_added"}


def results_fragment(p: ResultsPage) -> str:
    out = [f'<h1>Results <span class=muted>(<span id="shown">{len(p.rows)}</span> of {p.total} attempts)</span></h1>',
           '<form class="filters" method="get" action="/results">']
    for name, label in FILTERS:
        opts = ['<option value="">all</option>'] + [
            f'<option value="{escape(v)}"{" selected" if p.filters.get(name) == v else ""}>{escape(v)}</option>'
            for v in p.options.get(name, []) if v
        ]
        out.append(f'<label>{escape(label)} <select name="{name}">{"".join(opts)}</select></label>')
    out.append('<button type="submit">apply</button> <a href="/results">clear</a></form>')
    if p.mixed:
        combos = "; ".join(" · ".join(c or "?" for c in combo) for combo in p.combinations)
        out.append(f'<div class="warn" id="mixed">These rows span more than one harness, model and effort '
                   f"({escape(combos)}): compare arms within one combination.</div>")
    if not p.total:
        out.append('<p class="muted">no run has a report yet (pluginbench report runs/&lt;run&gt; builds one)</p>')
        return "".join(out)
    if p.reused:
        out.append(f'<div class="warn" id="reused-note">{p.reused} of these rows are vanilla attempts reused '
                   "from the vanilla cache (marked reused); the run that coded each one may list it too, so "
                   "pooled counts can include it twice. Choose \u201ccoded\u201d under coded or reused to count "
                   "every attempt once.</div>")
    tasks = list(p.grid)
    out.append("<h2>Pass rate by task and arm</h2>" + heat_grid(tasks, p.arms, p.grid))
    out.append('<table id="results"><tr>' + "".join(f"<th>{escape(label)}</th>" for _, label in RESULT_COLUMNS) + "</tr>")
    for r in p.rows:
        cells = []
        for col, _ in RESULT_COLUMNS:
            v = getattr(r, col)
            if col == "run":
                folder = r.run_dir.rstrip("/").rsplit("/", 1)[-1]
                where = f' <span class=muted title="{escape(r.run_dir)}">{escape(folder)}</span>' if folder and folder != v else ""
                cells.append(f'<td><a href="/run/{quote(r.run_key)}">{escape(str(v))}</a>{where}</td>')
            elif col == "source":
                title = f' title="from {escape(r.origin_cohort)}"' if r.origin_cohort else ""
                cells.append(f'<td class="src-{escape(str(v))}"{title}>{escape(str(v))}</td>')
            elif col == "correctness" and v is not None:
                link = (f'<a href="/run/{quote(r.run_key)}/attempt/{quote(r.attempt_id)}">{escape(v)}</a>'
                        if r.attempt_id else escape(v))
                cells.append(f'<td class="m-{escape(v)}">{link}</td>')
            else:
                cells.append(_cell(v, r.reasons.get(col), num=col in _NUMERIC))
        out.append(f'<tr data-arm="{escape(r.arm)}" data-task="{escape(r.task)}">' + "".join(cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _owner(m: RunPage) -> str:
    if m.owner:
        o = m.owner
        return f"pid {o.get('pid')} (process group {o.get('pgid')}, since {escape(str(o.get('started_at')))})"
    return "no live owner"


def _so_far(total: int, attempts: int) -> str:
    """The spend of the complete attempts while others still run (never called the total)."""
    return f"{total:,} so far ({attempts} complete)"


def _tokens(t: Mapping[str, Any]) -> str:
    total = t.get("total_tokens")
    if total is None:
        so_far = t.get("complete_total_tokens")
        if t.get("running_attempts") and so_far is not None:
            return _so_far(so_far, int(t.get("complete_attempts") or 0))
        return "unknown"
    return ("≥ " if t.get("lower_bound") else "") + f"{total:,}"


_VERDICT_CLASS = {"better": "m-pass", "worse": "m-fail", "equivalent": "m-equivalent"}


def verdict_lines(verdicts: Sequence[tuple[str, str]]) -> str:
    """The report's verdict headlines; only decided ones coloured (partial runs stay plain)."""
    return "".join(f'<div class="verdict {_VERDICT_CLASS.get(kind, "")}" data-kind="{escape(kind)}">{escape(text)}</div>'
                   for kind, text in verdicts)


def run_fragment(m: RunPage) -> str:
    key = quote(m.key)
    out = [f'<h1>{escape(m.name)} <span class="{"running" if m.running else ""}" id="phase">{escape(m.phase)}</span></h1>',
           f'<div id="verdict">{verdict_lines(report_verdicts(m.report))}</div>',
           f'<div class="muted">{escape(m.path)}</div>', _stale(m.stale)]
    out += [f'<div class="warn">{escape(n)}</div>' for n in m.notes]
    if m.error:
        out.append(f'<div class="stale err">error: {escape(m.error)}</div>')
    hb = m.heartbeat or {}
    out.append(f'<p>owner: <span id="owner">{escape(_owner(m))}</span>'
               + (f" · last activity {escape(str(hb.get('at')))}" if hb else "") + "</p>")
    if m.resume_command:
        out.append(f'<p>resume: <code id="resume">{escape(m.resume_command)}</code></p>')
    links = []
    if m.has_report:
        links.append(f'<a id="report-link" href="/run/{key}/report.html">report.html</a>')
    if m.has_csv:
        links.append(f'<a href="/run/{key}/results.csv">results.csv</a>')
    if not m.running:
        links.append(f'<a id="left-running" href="/run/{key}/left-running">Check for containers left running</a>')
    if links:
        out.append("<p>" + " · ".join(links) + "</p>")
    summary = ", ".join(f"{v} {escape(k)}" for k, v in m.states.items() if v and k != "complete")
    outcomes = ", ".join(f'<span class="m-{escape(k)}">{v} {escape(k)}</span>' for k, v in m.outcomes.items())
    complete = m.states.get("complete", 0)
    out.append(f'<p id="counts">attempts {m.attempts_total}: <span id="complete-count">{complete}</span> complete'
               f"{' · ' + summary if summary else ''} · outcomes: {outcomes or 'none yet'}</p>")
    reuse = m.reuse
    if reuse.get("vanilla_attempts"):
        out.append(f'<p id="reuse">vanilla cache: {reuse.get("reused", 0)} of {reuse.get("vanilla_attempts")} vanilla '
                   f'attempts reused (planned hits {reuse.get("planned_hits", 0)})</p>')
    out.append("<h2>Settings</h2><table id=settings>" + "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in m.settings) + "</table>")
    out.append('<h2>Attempts by task and arm</h2><table id="attempts"><tr><th>task</th>'
               + "".join(f"<th>{escape(a)}</th>" for a in m.arms) + "</tr>")
    for task in m.tasks:
        row = [f"<td>{escape(task)}</td>"]
        for arm in m.arms:
            reps = []
            for r in m.cells.get(task, {}).get(arm, []):
                tok = "" if r.tokens is None else f" {r.tokens:,} tok"
                if r.tokens is None and r.state in ("complete", "interrupted"):
                    tok = " tokens unknown"
                title = f"{r.id}: {r.state}" + (f" · {r.reason}" if r.reason else "")
                if r.reused:
                    tok += " (reused)"
                reps.append(f'<a class="rep m-{escape(r.mark)}" data-state="{escape(r.state)}" title="{escape(title)}" '
                            f'href="/run/{key}/attempt/{quote(r.id)}">#{r.repeat} {escape(r.mark)}{escape(tok)}</a>')
            row.append(f"<td>{''.join(reps)}</td>")
        out.append(f'<tr data-task="{escape(task)}">' + "".join(row) + "</tr>")
    out.append("</table>")
    if m.sequential is not None:  # the live confidence sequence of a sequential run, as the report draws it
        out.append('<h2>Sequential decision</h2><div id="sequential">' + sequential_html({"sequential": m.sequential}) + "</div>")
    out.append("<h2>Pass rate</h2>" + heat_grid(m.tasks, m.arms, m.grid))
    activation = any(info.get("activation") for info in m.totals.values())
    out.append('<h2>Totals per arm</h2><table id="totals"><tr><th>arm</th><th>attempts</th><th>states</th>'
               "<th>outcomes</th><th>coding tokens</th>" + ("<th>package exercised</th>" if activation else "") + "</tr>")
    for arm, info in m.totals.items():
        st = ", ".join(f"{v} {escape(k)}" for k, v in (info.get("states") or {}).items() if v)
        oc = ", ".join(f"{v} {escape(k)}" for k, v in (info.get("outcomes") or {}).items() if v)
        out.append(f"<tr><td>{escape(arm)}</td><td class=num>{info.get('attempts')}</td><td>{st}</td><td>{oc}</td>"
                   f"<td class=num>{escape(_tokens(info.get('tokens') or {}))}</td>"
                   + (_exercised_cell(info.get("activation")) if activation else "") + "</tr>")
    out.append("</table>" + token_bars(m.totals))
    if m.side:  # generation, checks, review calls and llm-check votes (status says the same lines)
        out.append('<h2>Beside coding</h2><ul id="beside-coding">' + "".join(
            f'<li{" class=warn" if tone else ""}>{escape(text)}</li>' for text, tone in m.side) + "</ul>")
    if m.running:
        out.append("<h2>Attempts over time</h2>" + attempts_over_time(m.completed_at, m.attempts_total))
    if m.report is not None:
        out.append('<h2>From the report</h2><div id="report-plots">' + _report_figures(m.report) + "</div>")
    out.append("<h2>Discarded attempts</h2>")
    if m.discarded:
        out.append('<table id="discarded"><tr><th>attempt</th><th>slot</th><th>task</th><th>arm</th><th>repeat</th>'
                   "<th>replaced by</th><th>tokens</th><th>reason</th></tr>")
        for d in m.discarded:
            out.append("<tr>" + "".join(_cell(d.get(k)) for k in ("id", "slot", "task", "arm", "repeat", "replaced_by"))
                       + _cell(d.get("tokens"), d.get("tokens_status"), num=True) + _cell(d.get("reason")) + "</tr>")
        out.append("</table>")
    else:
        out.append('<p class="muted">none</p>')
    out.append("<h2>Revisions</h2>")
    for kind, revs in m.revisions.items():
        if revs:
            out.append(f"<p>{kind}: " + ", ".join(
                escape(f"{r.get('revision')} ({r.get('status')}{': ' + r['reason'] if r.get('reason') else ''}"
                       f"{', selected' if r.get('selected') else ''})") for r in revs) + "</p>")
        else:
            out.append(f'<p class="muted">{kind}: none</p>')
    return "".join(out)


def _exercised_cell(a: Mapping[str, Any] | None) -> str:
    """Was the arm's package exercised (status ``arms.<arm>.activation``): its label and share."""
    if not a:
        return '<td class="activation muted">unknown</td>'
    known = a["used"] + a["not_used"]
    share = "" if a["label"] == "no components" else f" ({a['used']}/{known}" + (
        f", {a['unknown']} unknown)" if a["unknown"] else ")")
    return f'<td class="activation">{escape(a["label"] + share)}</td>'


def _report_figures(doc: Mapping[str, Any]) -> str:
    """The report's own figures (forest plot per treatment, token and time distributions),
    drawn by the report's plotting code from results.json; a report too old or too new for
    it says so instead."""
    try:
        return plots_section(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f'<p class="muted">this report\'s figures cannot be drawn here ({escape(type(exc).__name__)}: {escape(str(exc))}); open report.html</p>'


def left_running_fragment(key: str, name: str, result: Mapping[str, Any] | None, reason: str | None = None) -> str:
    out = [f'<h1>Containers left running · <a href="/run/{quote(key)}">{escape(name)}</a></h1>']
    if result is None:
        out.append(f'<p id="left-result">{escape(reason or "not checked")}</p>')
        return "".join(out)
    if not result.get("checked"):
        out.append(f'<p id="left-result" class="err">could not check: {escape(str(result.get("error")))}</p>')
        return "".join(out)
    containers = result.get("containers") or []
    folders = result.get("folders") or []
    if not containers and not folders:
        out.append('<p id="left-result">nothing left running</p>')
    for c in containers:
        out.append(f"<p>container {escape(str(c.get('name')))} ({escape(str(c.get('id'))[:12])})</p>")
    if result.get("stop_command"):
        out.append(f'<p>stop them with <code>{escape(result["stop_command"])}</code> (resume stops them too)</p>')
    for f in folders:
        out.append(f"<p>sandbox folder left behind: {escape(str(f))} (resume removes it)</p>")
    return "".join(out)


def results_href(filters: Mapping[str, str]) -> str:
    return "/results" + ("?" + urlencode(sorted(filters.items())) if filters else "")
