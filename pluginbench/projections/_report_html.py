"""report.html: a self-contained, readable rendering of the results.json document.

One page, inline CSS, no script and no external asset. It renders only what the
document holds, so it can never disagree with results.json. Every piece of text goes
through :func:`html.escape`; an unknown value reads "unknown", never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from statistics import NormalDist
from typing import Any

from .. import stats
from ..harness_registry import runs_no_agent_cli
from ._report_activation_html import activation_html
from ._report_attempts_html import attempts_html, discarded_html, missing_html, reused_html
from ._report_checks import checks_html
from ._report_code import PLAIN_COLUMNS
from ._report_cost import cost_html, dollars_note
from ._report_css import CSS
from ._report_generated import generated_html
from ._report_html_base import (
    UNKNOWN,
    _e,
    _or_unknown,
    _pct,
    _pp,
    _shown_columns,
    _signed,
    _table,
    _tokens,
)
from ._report_links import CSS as LINK_CSS
from ._report_links import side_pairs
from ._report_plots import PLOT_CSS, plots_section
from ._report_quality import code_quality_html, not_measured_html, revisions_html
from ._report_refs import references_html
from ._report_reviews_html import reviews_html
from ._report_sequential import sequential_html
from ._report_verdict import CSS as VERDICT_CSS
from ._report_verdict import tested_html, verdict_html

# ---------------------------------------------------------------- sections


def _identity(run: Mapping[str, Any]) -> str:
    items = [
        ("Harness", run["harness"]),
        ("Model", run["model"]),
        ("Reasoning", run["reasoning"]),
        ("CLI version", run["cli_version"]),
        ("Backend", run["backend"]),
        ("Isolation", run["isolation"]),
        ("Repeats", run["repeats"]),
        ("Jobs", run["jobs"]),
        ("Seed", run["seed"]),
        ("Attempts complete", f"{run['attempts_complete']} of {run['attempts_total']}"),
        ("PluginBench", run["pluginbench_version"]),
    ]
    # Identity fields are settings, not measurements: an absent one was not set, except
    # a CLI version for a harness that runs no agent CLI, where it does not apply.
    absent = {k: '<span class="flat">not set</span>' for k, _ in items}
    if runs_no_agent_cli(str(run["harness"] or "")):
        absent["CLI version"] = f'<span class="flat">none: the {_e(run["harness"])} harness runs no agent CLI</span>'
    cells = "".join(
        f"<div><dt>{_e(k)}</dt><dd>{absent[k] if v is None else _e(v)}</dd></div>" for k, v in items
    )
    dataset = run.get("task_dataset")
    if dataset:  # tasks.dataset, pinned when the run was created
        cells += (f"<div><dt>Dataset</dt><dd>{_e(dataset['name'])}@{_e(dataset['version'])} "
                  f"({_e(dataset['content_hash'])})</dd></div>")
    for source in run.get("task_sources") or []:  # tasks.urls / tasks.dataset, pinned when the run was created
        cells += f"<div><dt>Task {_e(source['task_id'])}</dt><dd>{_e(source['pinned_url'])}</dd></div>"
    return f'<dl class="identity">{cells}</dl>'


def _banners(doc: Mapping[str, Any]) -> str:
    run, out = doc["run"], []
    flags = (
        ("simulated", run["simulated"], "SIMULATED AGENT"),
        ("probe", run["probe"], "PROBE RUN"),
        ("unisolated", not run["isolated"], "UNISOLATED RUN"),
    )
    for key, on, title in flags:
        if not on:
            continue
        text = next((n for n in doc["notes"] if n.startswith(title)), title)
        body = text[len(title) :].lstrip(": ")
        out.append(
            f'<div class="banner" role="alert" id="banner-{key}">'
            f"<strong>{_e(title)}</strong>{_e(body)}</div>"
        )
    return "".join(out)


def _pass_cell(s: Mapping[str, Any]) -> str:
    overlap = s.get("overlap_passes", 0)
    known = s["passes"] + overlap + s["fails"] + s["empties"]
    if s["pass_rate"] is None:
        text = UNKNOWN if s["complete"] else '<span class="excluded">no results</span>'
    else:
        text = f"{s['passes']}/{known} ({_pct(s['pass_rate'])})"
    extra = []
    if overlap:
        extra.append(f"+{overlap} overlap pass{'es' if overlap != 1 else ''}")
    if s["unknowns"]:
        extra.append(f"+{s['unknowns']} unknown")
    if s["complete"] < s["attempts"]:
        extra.append(f"{s['complete']} of {s['attempts']} done")
    if extra:
        text += f' <span class="small">({_e(", ".join(extra))})</span>'
    return f'<td class="num pass-rate">{text}</td>'


def page_level(doc: Mapping[str, Any]) -> float:
    """The page's one confidence level: the run's, as its paired summaries carry it."""
    for d in (doc.get("deltas") or {}).values():
        return float(d["summary"]["pass_rate"].get("level") or stats.LEVEL)
    return stats.LEVEL


def _wilson_cell(s: Mapping[str, Any], level: float) -> str:
    # the page's one level, not results.json's fixed wilson_95, so every interval reads alike
    known = s["passes"] + s["overlap_passes"] + s["fails"] + s["empties"]
    w = stats.wilson_interval(s["passes"], known, NormalDist().inv_cdf((1 + level) / 2)) if known else None
    text = UNKNOWN if w is None else f'<span class="interval">{_pct(w[0])} – {_pct(w[1])}</span>'
    return f'<td class="num">{text}</td>'


def coloured(doc: Mapping[str, Any]) -> bool:
    """Whether the page may colour effects green/red: not while any verdict is partial (a
    stopped or unfinished run shows its numbers so far, plain)."""
    return not any(v.get("kind") == "partial" for v in doc.get("verdicts") or [])


def _delta_cells(p: Mapping[str, Any], colour: bool = True) -> list[str]:
    d, r = p["pass_rate_difference"], p["token_ratio"]
    dt = (
        f'<span class="excluded" title="{_e(p["pass_rate_excluded"])}">excluded</span>'
        if d is None
        else _signed(d, _pp(d), coloured=colour)
    )
    rt = (
        f'<span class="excluded" title="{_e(p["tokens_excluded"])}">excluded</span>'
        if r is None
        else _signed(r - 1, f"×{r:.2f}", higher_is_better=False, coloured=colour)
    )
    return [f'<td class="num delta">{dt}</td>', f'<td class="num ratio">{rt}</td>']


def _interval_text(s: Mapping[str, Any], fmt: Callable[[Any], str], *, higher_is_better: bool, centre: float,
                   colour: bool = True) -> str:
    if s["estimate"] is None:
        return '<span class="excluded">no usable tasks</span>'
    # coloured only when the decision excludes no-difference, never by the point alone: a pass-rate
    # difference by its exact sign-flip test at 0 (the verdict's), any other interval by its ends
    zero_p = _zero_p(s)
    if zero_p is not None:
        decided = zero_p <= stats.alpha_of(float(s["level"]))
    else:
        decided = s["status"] == "ok" and s["low"] is not None and s["high"] is not None and (
            s["low"] > centre or s["high"] < centre)
    est = _signed(s["estimate"] - centre, fmt(s["estimate"]), higher_is_better=higher_is_better,
                  coloured=colour and decided)
    if s["status"] != "ok":
        return (
            f'{est} <span class="excluded">too few tasks (n &lt; {s["min_tasks"]})</span> '
            f'<span class="small">{s["tasks"]} usable</span>'
        )
    if zero_p is None:
        return (
            f'{est} <span class="interval">[{fmt(s["low"])}, {fmt(s["high"])}] '
            f"{_pct(s['level'])} CI, {s['tasks']} tasks</span>"
        )
    note = "; the range includes 0 as it assumes nothing" if decided and s["low"] <= centre <= s["high"] else ""
    return (
        f'{est} <span class="interval">[{fmt(s["low"])}, {fmt(s["high"])}] '
        f"{_pct(s['level'])} range, no symmetry assumed, {s['tasks']} tasks; sign-flip test at 0: "
        f"p = {stats.format_p(zero_p)}{note}</span>"
    )


def _zero_p(s: Mapping[str, Any]) -> float | None:
    """A pass-rate summary's one-sided sign-flip p at 0 in the direction of its estimate (the
    verdict's test); ``None`` for other summaries and for reports made before it was recorded."""
    greater, less = s.get("p_greater"), s.get("p_less")
    if greater is None or less is None:
        return None
    return float(min(greater, less))


def _per_task(doc: Mapping[str, Any]) -> str:
    arms, tasks = doc["arms"], doc["tasks"]
    level = page_level(doc)
    base = arms[0]
    top = ['<th rowspan="2">Task</th>'] + [
        f'<th class="arm" colspan="{3 if a == base else 5}">{_e(a)}</th>' for a in arms
    ]
    sub = []
    for a in arms:
        sub += ["<th>pass</th>", f"<th>Wilson {level * 100:g}%</th>", "<th>median tokens</th>"]
        if a != base:
            sub += [f"<th>Δ pass vs {_e(base)}</th>", "<th>token ratio</th>"]
    body = []
    for t in tasks:
        cells = [f'<th scope="row">{_e(t)}</th>']
        for a in arms:
            s = doc["per_task"][t][a]
            cells += [
                _pass_cell(s),
                _wilson_cell(s, level),
                f'<td class="num">{_or_unknown(s["median_total_tokens"], _tokens)}</td>',
            ]
            if a != base:
                cells += _delta_cells(doc["deltas"][a]["per_task"][t], coloured(doc))
        body.append(f'<tr data-task="{_e(t)}">' + "".join(cells) + "</tr>")
    foot = ['<th scope="row">Summary</th>']
    for a in arms:
        foot.append('<td colspan="3"></td>')
        if a != base:
            s = doc["deltas"][a]["summary"]
            foot.append(
                '<td class="summary-pass">'
                + _interval_text(s["pass_rate"], stats.format_pp, higher_is_better=True, centre=0, colour=coloured(doc))
                + "</td>"
            )
            foot.append(
                '<td class="summary-tokens">'
                + _interval_text(
                    s["tokens"], lambda r: f"×{r:.2f}", higher_is_better=False, centre=1, colour=coloured(doc)
                )
                + "</td>"
            )
    return (
        '<table id="per-task-table"><thead><tr>'
        + "".join(top)
        + "</tr><tr>"
        + "".join(sub)
        + "</tr></thead><tbody>"
        + "".join(body)
        + '</tbody><tfoot><tr class="summary">'
        + "".join(foot)
        + "</tr></tfoot></table>"
    )


def _change_columns(doc: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Coding time, then the median of every plain diff-count summary column shown (registry
    order); code measures have their own section, grouped by language and analyzer."""
    present = {k.removeprefix("median_") for arms in doc["per_task"].values() for s in arms.values() for k in s}
    return (("median_coding_seconds", "coding s"),
            *((f"median_{c.metric}", c.label) for c in _shown_columns(doc, present)
              if c.summary and c.metric in PLAIN_COLUMNS))


def _changes(doc: Mapping[str, Any]) -> str:
    """Medians per task and arm of coding time and of each selected measure's summary columns."""
    arms, tasks = doc["arms"], doc["tasks"]
    change_columns = _change_columns(doc)
    top = ['<th rowspan="2">Task</th>'] + [
        f'<th class="arm" colspan="{len(change_columns)}">{_e(a)}</th>' for a in arms
    ]
    sub = [f"<th>{_e(label)}</th>" for _ in arms for _, label in change_columns]
    body = []
    for t in tasks:
        cells = [f'<th scope="row">{_e(t)}</th>']
        for a in arms:
            s = doc["per_task"][t][a]
            cells += [f'<td class="num">{_or_unknown(s.get(field), _tokens)}</td>' for field, _ in change_columns]
        body.append(f'<tr data-changes-task="{_e(t)}">' + "".join(cells) + "</tr>")
    return (
        '<table id="changes-table"><thead><tr>' + "".join(top) + "</tr><tr>" + "".join(sub)
        + "</tr></thead><tbody>" + "".join(body) + "</tbody></table>"
        + '<p class="hint">Medians over complete attempts. Smaller numbers alone do not establish better work.</p>'
    )


def _paired(doc: Mapping[str, Any]) -> str:
    out = []
    pairs = side_pairs(doc)
    for arm, d in doc["deltas"].items():
        s = d["summary"]
        sign = s["pass_rate"]["sign_test"]
        p = _or_unknown(sign["p"], stats.format_p)
        out.append(
            f'<h3>{_e(arm)} vs {_e(d["against"])}</h3><ul class="notes">'
            "<li>Mean pass-rate difference: "
            + _interval_text(s["pass_rate"], stats.format_pp, higher_is_better=True, centre=0, colour=coloured(doc))
            + "</li>"
            f"<li class=\"small\">Secondary, not a decision: exact two-sided sign test: {sign['positives']} better, {sign['negatives']} "
            f"worse, {sign['ties']} tied, p = {p}</li>"
            "<li>Geometric-mean token ratio (input + output): "
            + _interval_text(s["tokens"], lambda r: f"×{r:.2f}", higher_is_better=False, centre=1, colour=coloured(doc))
            + "</li>" + _dollars_item(doc, arm, s.get("dollars")) + "</ul>" + pairs.get(arm, "")
        )
        for kind, label in (("pass_rate", "pass-rate"), ("tokens", "token")):
            ex = d["excluded"][kind]
            if ex:
                out.append(f"<p>Excluded from {label} statistics:</p>")
                out.append(
                    _table(
                        ("Task", "Reason"),
                        ((_e(x["task"]), _e(x["reason"])) for x in ex),
                        f"excluded-{kind}-{_e(arm)}",
                    )
                )
    if not out:
        return "<p>No treatment arm to compare.</p>"
    return "".join(out)


def _dollars_item(doc: Mapping[str, Any], arm: str, d: Mapping[str, Any] | None) -> str:
    """The dollars line of a paired block: the ratio of mean dollars per attempt with its
    interval, and dollars per solved task of both arms (the verdict's figures), dated."""
    if d is None:
        return ""
    if d["estimate"] is None:
        why = ("no price table" if d["status"] == "no_prices"
               else "unknown: " + (d["excluded"][0]["reason"] if d["excluded"] else "no task with dollars on both arms"))
        return f'<li class="dollars">Dollars per attempt ratio: <span class="excluded">{_e(why)}</span></li>'
    v = next((v for v in doc.get("verdicts") or [] if v["treatment"] == arm), None)
    solved = ""
    if v is not None and v.get("usd_per_solved") is not None and v.get("usd_per_solved_against") is not None:
        solved = (f"; per solved task {_e(stats.format_dollars(v['usd_per_solved']))} vs "
                  f"{_e(stats.format_dollars(v['usd_per_solved_against']))}")
    note = dollars_note(doc)
    return ('<li class="dollars" title="' + _e(d["definition"]) + '">Ratio of mean dollars per attempt: '
            + _interval_text(d, stats.format_ratio, higher_is_better=False, centre=1, colour=coloured(doc)) + solved
            + (f' <span class="small">({_e(note)})</span>' if note else "") + "</li>")


def render_html(doc: Mapping[str, Any]) -> str:
    """The whole report page for a results.json document."""
    run = doc["run"]
    banner_titles = ("SIMULATED AGENT", "PROBE RUN", "UNISOLATED RUN")
    notes = "".join(f"<li>{_e(n)}</li>" for n in doc["notes"] if not n.startswith(banner_titles))
    title = f"PluginBench report: {run['name']}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}{PLOT_CSS}{VERDICT_CSS}{LINK_CSS}</style></head><body>\n"
        f"{verdict_html(doc)}\n"
        f"<header><h1>{_e(title)}</h1>"
        f'<p class="subtitle">{len(doc["tasks"])} tasks × {len(doc["arms"])} arms '
        f"({_e(', '.join(doc['arms']))}), each arm compared with {_e(doc['arms'][0])}</p>"
        f"{_identity(run)}</header>\n{_banners(doc)}\n"
        # a person reads the answer first: the paired comparison and its plot, then per task
        f'<section id="paired"><h2>Paired comparison</h2>{_paired(doc)}</section>\n'
        + (f'<section id="sequential"><h2>Sequential decision</h2>{sequential_html(doc)}</section>\n'
           if doc.get("sequential") else "")
        + f'<section id="plots"><h2>Plots</h2>{plots_section(doc)}</section>\n'
        f'<section id="per-task"><h2>Pass rates by task</h2>{_per_task(doc)}</section>\n'
        + (f'<section id="activation"><h2>Was the package exercised?</h2>{activation_html(doc)}</section>\n'
           if doc.get("activation") else "")
        + (f'<section id="checks"><h2>Checks beside the verifier</h2>{checks_html(doc)}</section>\n'
           if doc.get("checks") else "")
        + f'<section id="tested"><h2>What was tested</h2>{tested_html(doc)}</section>\n'
        + (f'<section id="generated"><h2>Generated guidance</h2>{generated_html(doc)}</section>\n'
           if doc.get("generated") else "")
        + f'<section id="notes"><h2>Notes</h2><ul class="notes">{notes}</ul></section>\n'
        f'<section id="cost"><h2>Cost</h2>{cost_html(doc)}</section>\n'
        + (f'<section id="reviews"><h2>Independent review</h2>{reviews_html(doc)}</section>\n' if doc.get("reviews") else "")
        + f'<section id="changes"><h2>Time and code changes by task</h2>{_changes(doc)}</section>\n'
        f'<section id="code-quality"><h2>Code quality</h2>{code_quality_html(doc)}</section>\n'
        f'<section id="references"><h2>Against the reference solution</h2>{references_html(doc)}</section>\n'
        f'<section id="measurement-revisions"><h2>Measurement revisions</h2>{revisions_html(doc)}</section>\n'
        f'<section id="not-measured"><h2>Not measured</h2>{not_measured_html(doc)}</section>\n'
        f'<section id="missing-values"><h2>Missing values</h2>{missing_html(doc)}</section>\n'
        f'<section id="reused"><h2>Reused vanilla attempts</h2>{reused_html(doc)}</section>\n'
        f'<section id="discarded"><h2>Discarded attempts</h2>{discarded_html(doc)}</section>\n'
        f'<section id="attempts"><h2>Attempts</h2>{attempts_html(doc)}</section>\n'
        f"<footer>Built by PluginBench from events.jsonl and evaluation.json; results.json "
        f'schema version {_e(doc["schema_version"])}. Unknown values read "unknown", never 0.'
        "</footer>\n</body></html>\n"
    )
