"""The cross-agent report: a package × harness matrix of verdicts (``report/`` of a
cross-agent evaluation's folder).

Each harness's run is folded exactly as its own report folds it (:func:`report_document`),
and its verdicts are that run's verdicts: every comparison is within one harness, against
that harness's vanilla; nothing is pooled across harnesses. The page reads the answer first
(one sentence per harness), then the matrix, then a table per harness. :func:`cross_document`
is pure; :func:`build_cross_report` reads the folder and writes ``results.json``,
``results.csv`` and ``report.html`` byte-identically on every rebuild (no clock, no
absolute path).
"""

import csv
import functools
import io
import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputError, RunDirError
from ..events import PASSING_OUTCOMES
from ..rundir import GroupDir, RunDir
from ..stats import DECIDED
from ._report_html_base import csp_meta

#: the cross-agent results.json schema version
CROSS_SCHEMA_VERSION = 1
CROSS_CSV_HEADER = ("harness", "model", "row", "package", "arm", "attempt_id", "task", "repeat", "state", "outcome",
                    "verdict", "effect_pp", "low_pp", "high_pp", "tasks", "total_tokens", "headline")
COMPARISON = ("within each harness only: each harness has its own vanilla, paired statistics, gates, stopping and "
              "verdicts; arms are never pooled across harnesses")


class CrossReportFiles(NamedTuple):
    """Where the cross-agent report files were written."""

    results_json: Path
    results_csv: Path
    report_html: Path


def _pp(x: Any) -> float | None:
    return None if x is None else round(float(x) * 100, 1)


def _arm_table(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per arm of one harness's run: attempts complete of planned, pass rate over graded
    attempts (unknown when none is graded), mean total tokens over attempts that report them."""
    out = []
    for arm in doc.get("arms") or []:
        rows = [r for r in doc.get("attempts") or [] if r["arm"] == arm]
        graded = [r for r in rows if r["state"] == "complete" and r["outcome"] != "unknown"]
        tokens = [r["tokens"]["total"] for r in rows if isinstance(r.get("tokens"), Mapping)
                  and r["tokens"].get("total") is not None]
        out.append({
            "arm": arm, "attempts": len(rows), "complete": sum(1 for r in rows if r["state"] == "complete"),
            "pass_rate": (sum(1 for r in graded if r["outcome"] in PASSING_OUTCOMES) / len(graded)) if graded else None,
            "mean_total_tokens": (sum(tokens) / len(tokens)) if tokens else None,
        })
    return out


def _status(doc: Mapping[str, Any] | None) -> str:
    """A harness run's status as its verdicts record it (complete, partial, running...)."""
    if doc is None:
        return "no result"
    verdicts = doc.get("verdicts") or []
    return str(verdicts[0]["run_status"]) if verdicts else "no verdict"


def _sentence(h: Mapping[str, Any]) -> str:
    """One harness's answer in one sentence: its verdicts, in its report's own words."""
    who = f"{h['harness']} ({h['model']})" if h.get("model") else str(h["harness"])
    if h["doc"] is None:
        return f"{who}: no result: {h['reason']}"
    verdicts = h["doc"].get("verdicts") or []
    if not verdicts:
        return f"{who}: no treatment arm to compare with vanilla"
    return f"{who}: " + "; ".join(v["headline"] for v in verdicts)


def cross_document(name: str, harnesses: Sequence[Mapping[str, Any]], packages: Sequence[str]) -> dict[str, Any]:
    """The cross-agent results document. ``harnesses`` holds, per harness in config order,
    ``harness``, ``model``, ``reasoning``, ``run`` (its folder) and ``doc`` (its run's
    results document, or None with ``reason``). Pure."""
    per: dict[str, Any] = {}
    sentences = []
    for h in harnesses:
        doc = h["doc"]
        sentences.append({"harness": h["harness"], "sentence": _sentence(h)})
        run = (doc or {}).get("run") or {}
        per[h["harness"]] = {
            "harness": h["harness"], "model": h.get("model"), "reasoning": h.get("reasoning"),
            "run": h["run"], "report": f"{h['run']}/report/report.html",
            "status": _status(doc),
            "reason": h.get("reason") if doc is None else None,
            "cli_version": run.get("cli_version"), "simulated": run.get("simulated"), "probe": run.get("probe"),
            "arms": _arm_table(doc) if doc is not None else [],
            "verdicts": list((doc or {}).get("verdicts") or []),
        }
    matrix = []
    for package in packages:
        cells = {}
        for h in harnesses:
            v = next((v for v in per[h["harness"]]["verdicts"] if v["treatment"] == package), None)
            cells[h["harness"]] = (
                {"verdict": "no result", "effect_pp": None, "low_pp": None, "high_pp": None, "tasks": 0,
                 "headline": f"no result: {h.get('reason') or 'the run has not reported this package'}",
                 "against": None, "harness": h["harness"]}
                if v is None else
                {"verdict": v["kind"], "effect_pp": _pp(v["effect"]), "low_pp": _pp(v["low"]), "high_pp": _pp(v["high"]),
                 "tasks": v["tasks"], "headline": v["headline"], "against": f"{h['harness']}/{v['against']}",
                 "harness": h["harness"]})
        matrix.append({"package": package, "cells": cells})
    return {"schema_version": CROSS_SCHEMA_VERSION, "kind": "cross-agent", "name": name,
            "harnesses": [h["harness"] for h in harnesses], "packages": list(packages), "comparison": COMPARISON,
            "sentences": sentences, "matrix": matrix, "per_harness": per}


def cross_json_text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


def cross_csv_text(doc: Mapping[str, Any], runs: Mapping[str, Mapping[str, Any] | None]) -> str:
    """One row per (harness, package) verdict, then one per attempt of each harness's run;
    every row names its harness."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CROSS_CSV_HEADER)
    for row in doc["matrix"]:
        for harness, c in row["cells"].items():
            model = doc["per_harness"][harness]["model"]
            w.writerow([harness, _cell(model), "verdict", row["package"], row["package"], "", "", "", "", "",
                        c["verdict"], _cell(c["effect_pp"]), _cell(c["low_pp"]), _cell(c["high_pp"]), c["tasks"], "",
                        c["headline"]])
    for harness in doc["harnesses"]:
        run = runs.get(harness)
        model = doc["per_harness"][harness]["model"]
        for a in (run or {}).get("attempts") or []:
            tokens = a.get("tokens") or {}
            w.writerow([harness, _cell(model), "attempt", "", a["arm"], a["attempt_id"], a["task"], a["repeat"], a["state"],
                        a["outcome"], "", "", "", "", "", _cell(tokens.get("total")), ""])
    return buf.getvalue()


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
.v-better{color:#0a6b2a;font-weight:bold}.v-worse{color:#a40000;font-weight:bold}.v-equivalent{color:#1f3d7a;font-weight:bold}
#answer p{font-size:1.05em;margin:.3em 0}.note{color:#555}
.banner{background:#fff3cd;border:1px solid #c9a227;padding:.4em .8em;font-weight:bold}
"""


def _fmt_cell(c: Mapping[str, Any]) -> str:
    cls = f' class="v-{escape(c["verdict"])}"' if c["verdict"] in DECIDED else ""
    effect = ""
    if c["effect_pp"] is not None:
        interval = (f" [{c['low_pp']:+.1f}, {c['high_pp']:+.1f}]" if c["low_pp"] is not None and c["high_pp"] is not None
                    else "")
        effect = f"<br>{c['effect_pp']:+.1f} pp{interval}, {c['tasks']} task(s)"
        if c["verdict"] in ("better", "worse") and interval and c["low_pp"] <= 0 <= c["high_pp"]:
            # the range assumes no symmetry and is wider than the exact test at 0 is sharp (stats._verdict)
            effect += '<br><span class="note">the range includes 0: it assumes nothing; the direction is the exact test\'s</span>'

    return (f'<td data-harness="{escape(c["harness"], quote=True)}" data-verdict="{escape(c["verdict"], quote=True)}" '
            f'title="{escape(c["headline"], quote=True)}"><span{cls}>{escape(c["verdict"])}</span>{effect}</td>')


def _num(x: Any, fmt: str) -> str:
    return "unknown" if x is None else format(x, fmt)


def render_cross_html(doc: Mapping[str, Any]) -> str:
    """The cross-agent page: the answer (one sentence per harness), the matrix, then one
    table per harness with a link to that harness's own report."""
    title = f"PluginBench cross-agent report: {doc['name']}"
    answer = "".join(f'<p data-harness="{escape(s["harness"], quote=True)}">{escape(s["sentence"])}</p>'
                     for s in doc["sentences"])
    head = "".join(f"<th>{escape(h)}</th>" for h in doc["harnesses"])
    rows = "".join(f"<tr><th>{escape(r['package'])}</th>{''.join(_fmt_cell(r['cells'][h]) for h in doc['harnesses'])}</tr>"
                   for r in doc["matrix"])
    tables = []
    for h in doc["harnesses"]:
        p = doc["per_harness"][h]
        label = " — SIMULATED AGENT" if p["simulated"] else (" — PROBE RUN (scripted model, no spend)" if p["probe"] else "")
        arms = "".join(f"<tr><td>{escape(a['arm'])}</td><td>{a['complete']} of {a['attempts']}</td>"
                       f"<td>{_num(a['pass_rate'], '.0%')}</td><td>{_num(a['mean_total_tokens'], ',.0f')}</td></tr>"
                       for a in p["arms"])
        verdicts = "".join(f"<li>{escape(v['headline'])}</li>" for v in p["verdicts"])
        tables.append(
            f'<section class="harness" id="harness-{escape(h, quote=True)}"><h3>{escape(h)}{escape(label)}</h3>'
            f"<p>model {escape(str(p['model']))}, reasoning {escape(str(p['reasoning'] or 'default'))}, "
            f"CLI {escape(str(p['cli_version'] or 'none'))}; status {escape(str(p['status']))}; "
            f'<a href="{escape(p["report"], quote=True)}">full report of this harness</a></p>'
            + (f"<p class=\"note\">{escape(p['reason'])}</p>" if p["reason"] else "")
            + "<table><thead><tr><th>arm</th><th>attempts complete</th><th>pass rate</th><th>mean tokens</th></tr></thead>"
            f"<tbody>{arms}</tbody></table><ul>{verdicts}</ul></section>")
    labels = [f"{h}: " + ("SIMULATED AGENT (no model)" if doc["per_harness"][h]["simulated"] else
                          "PROBE RUN (scripted model server, no spend)")
              for h in doc["harnesses"] if doc["per_harness"][h]["simulated"] or doc["per_harness"][h]["probe"]]
    banner = (f'<p class="banner" id="labels">{escape("; ".join(labels))}: these results say nothing about a real '
              "model's behaviour.</p>\n" if labels else "")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{csp_meta(_CSS)}'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>\n"
            f'<section id="answer"><h2>Answer, per harness</h2>{answer}'
            f'<p class="note">Compared {escape(doc["comparison"])}.</p></section>\n{banner}'
            f"<header><h1>{escape(title)}</h1></header>\n"
            f'<section id="matrix"><h2>Package × harness</h2><table><thead><tr><th>package</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></section>\n"
            f'<section id="per-harness"><h2>Per harness</h2>{"".join(tables)}</section>\n</body></html>\n')


def read_manifest(gd: GroupDir) -> dict[str, Any]:
    """``cross-agent.json``, or a RunDirError naming it."""
    try:
        manifest: dict[str, Any] = json.loads(gd.manifest.read_text(encoding="utf-8"))
        _ = [(e["harness"], e["run"]) for e in manifest["harnesses"]]
        _ = manifest["name"], manifest["evaluation"]["treatments"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunDirError(f"{gd.manifest.name} cannot be read as a cross-agent evaluation: {exc}", file=str(gd.manifest),
                          fix="pass a folder made by `pluginbench run` from a config with runner.harnesses") from None
    return manifest


def cross_inputs(group_root: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The manifest and, per harness, its run's results document (None with the reason when
    the run has no readable log yet)."""
    from ._report import report_document

    gd = GroupDir(Path(group_root))
    manifest = read_manifest(gd)
    harnesses = []
    for e in manifest["harnesses"]:
        entry = {"harness": str(e["harness"]), "model": e.get("model"), "reasoning": e.get("reasoning"),
                 "run": str(e["run"]), "doc": None, "reason": None}
        try:
            entry["doc"] = report_document(RunDir(gd.root / str(e["run"])))
        except InputError as exc:  # said relative to the folder: no absolute path in a report
            entry["reason"] = exc.message.replace(f"{gd.root}/", "").replace(str(gd.root), ".")
        harnesses.append(entry)
    return manifest, harnesses


def build_cross_report(group_root: Path) -> CrossReportFiles:
    """Rebuild a cross-agent evaluation's ``report/`` from its runs' logs; returns the paths."""
    from ._report import _write_all, _write_text

    gd = GroupDir(Path(group_root))
    manifest, harnesses = cross_inputs(gd.root)
    doc = cross_document(str(manifest["name"]), harnesses, list(manifest["evaluation"]["treatments"]))
    files = CrossReportFiles(gd.report_dir / "results.json", gd.report_dir / "results.csv", gd.report_dir / "report.html")
    texts = {files.results_json: cross_json_text(doc),
             files.results_csv: cross_csv_text(doc, {h["harness"]: h["doc"] for h in harnesses}),
             files.report_html: render_cross_html(doc)}
    _write_all({path: functools.partial(_write_text, text=text) for path, text in texts.items()})
    return files


__all__ = ["CROSS_SCHEMA_VERSION", "CrossReportFiles", "build_cross_report", "cross_csv_text", "cross_document",
           "cross_inputs", "cross_json_text", "render_cross_html"]
