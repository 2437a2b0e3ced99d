"""``pluginbench show <run> [<attempt-id>]``: the attempts of a run, or one attempt's facts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..viewer import (
    AttemptFacts,
    AttemptRow,
    Step,
    Thread,
    attempt_facts,
    attempt_rows,
    facts_json,
    opened_run,
)
from ._common import console, errors_to_exit_codes, print_json, visible

_MARK = {"pass": "green", "overlap_pass": "green", "fail": "red", "empty": "yellow", "unknown": "magenta"}
#: Timeline steps printed in the terminal (the dashboard pages through all of them).
SHOW_STEPS = 60


def _fmt(v: Any, reason: str | None = None) -> str:
    if v is None:
        return f"unknown ({reason})" if reason else "unknown"
    if isinstance(v, float):
        return f"{v:,.6g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def rows_table(rows: list[AttemptRow]) -> Table:
    """The attempts with their ids (task, arm and repeat are in the id; --json has them apart)."""
    t = Table(title=f"{len(rows)} attempts", title_justify="left")
    t.add_column("attempt id", no_wrap=True)
    t.add_column("state")
    t.add_column("outcome")
    t.add_column("tokens", justify="right", no_wrap=True)
    for r in rows:
        outcome = Text(r.outcome or "", style=_MARK.get(r.outcome or "", ""))
        if r.outcome_reason and r.outcome not in ("pass",):
            outcome.append(f" ({r.outcome_reason})", style="dim")
        tokens = "" if r.tokens is None else f"{r.tokens:,}" + (" (reused)" if r.reused else "")
        if r.tokens is None and r.state == "complete":
            tokens = "unknown"
        t.add_row(r.attempt_id, r.state, outcome, tokens)
    return t


def _thread_tree(tree: Tree, thread: Thread, budget: list[int]) -> None:
    for s in thread.steps:
        if budget[0] <= 0:
            tree.add(Text("… more steps (pluginbench dashboard shows them all; --json has them)", style="dim"))
            return
        budget[0] -= 1
        node = tree.add(_step_text(s))
        for child in s.children:
            _thread_tree(node.add(Text(f"subagent {child.name}", style="bold")), child, budget)


def _step_text(s: Step) -> Text:
    turn = f"#{s.turn} " if s.turn is not None else ""
    tok = ""
    if s.tokens:
        inp = sum(v for k, v in s.tokens.items() if "input" in k and "cached" not in k and "cache_" not in k)
        tok = f"  [{inp:,} in · {s.tokens.get('output_tokens', 0):,} out]"
    if s.kind == "tool":
        mark = {True: ("✗", "red"), False: ("✓", "green"), None: ("·", "dim")}[s.is_error]
        t = Text(f"{turn}", style="dim")
        t.append(mark[0] + " ", style=mark[1])
        t.append(f"{s.name} ", style="bold cyan")
        t.append(s.summary)
    elif s.kind == "retry":
        t = Text(f"{turn}↻ {s.summary}", style="yellow")
    else:
        t = Text(f"{turn}", style="dim")
        t.append(s.summary, style="italic")
    t.append(tok, style="dim")
    return t


def facts_view(f: AttemptFacts) -> Group:
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    outcome = Text(f.outcome or "not graded", style=_MARK.get(f.outcome or "", ""))
    if f.outcome_reason:
        outcome.append(f" — {f.outcome_reason}")
    tokens = f.tokens or {}
    tok = "unknown" if tokens.get("total", tokens.get("total_tokens")) is None else (
        f"{_fmt(tokens.get('total', tokens.get('total_tokens')))} total · {_fmt(tokens.get('input', tokens.get('input_tokens')))} in"
        f" · {_fmt(tokens.get('output', tokens.get('output_tokens')))} out ({tokens.get('status')})")
    if tokens.get("reason"):
        tok += f" — {tokens['reason']}"
    rows: list[tuple[str, Any]] = [
        ("attempt", f"{f.attempt_id} · {f.task} · {f.arm} · repeat {_fmt(f.repeat)}"),
        ("agent", f"{f.harness} · {f.model} · effort {f.reasoning}"),
        ("state", _fmt(f.state)),
        ("outcome", outcome),
        ("reward", _fmt(f.reward, "no reward file")),
        ("tokens", tok),
        ("dollars", "unknown" + (f" ({f.usd_reason})" if f.usd_reason else "") if f.usd is None else f"${f.usd:,.4f}"),
        ("coding time", "unknown" if f.coding_seconds is None else f"{f.coding_seconds:,.1f} s"),
        ("exit", f"code {_fmt(f.exit_code)}" + (" · timed out" if f.timed_out else "")
         + (f" · error: {f.error}" if f.error else "") + (f" · provider stop: {f.provider_stop}" if f.provider_stop else "")),
    ]
    if f.native_grading:
        rows.append(("native grading", ", ".join(f"{k} {_fmt(v)}" for k, v in sorted(f.native_grading.items()))))
    if f.verifier_result:
        lists = {k: v for k, v in f.verifier_result.items() if isinstance(v, list)}
        for k, v in sorted(lists.items()):
            rows.append((k, ", ".join(map(str, v)) or "none"))
    if f.activation:
        rows.append(("activation", json.dumps(f.activation, sort_keys=True)[:300]))
    if f.reused_from:
        rows.append(("reused from", json.dumps(f.reused_from, sort_keys=True)[:300]))
    for k, v in rows:
        head.add_row(k, v)
    parts: list[Any] = [Panel(head, title=f"{f.run} · {f.attempt_id}", title_align="left")]
    for n in f.notes:
        parts.append(Text(f"note: {n}", style="yellow"))
    if f.measures:
        mt = Table(title="measures", title_justify="left")
        for c in ("measure", "value", "status / reason"):
            mt.add_column(c)
        for m in f.measures:
            mt.add_row(m.name, "" if m.value is None else f"{_fmt(m.value)} {m.unit or ''}".strip(),
                       m.status or "" if not m.reason else f"{m.status}: {m.reason}")
        parts.append(mt)
    for r in f.reviews:
        if r.findings is None:
            parts.append(Text(f"review {r.revision}: no valid findings ({r.reason})", style="magenta"))
        else:
            parts.append(Text(f"review {r.revision}: {len(r.findings)} finding(s)", style="bold"))
            for x in r.findings:
                parts.append(Text(f"  [{x.get('severity')}/{x.get('category')}] {x.get('title')} "
                                  f"({x.get('file')}:{x.get('line')})"))
    files = ", ".join(f"{p.path} (+{p.added} −{p.removed}{', binary' if p.binary else ''})" for p in f.patch_files)
    parts.append(Text(f"patch: {len(f.patch_files)} file(s)" + (f": {files}" if files else " (empty)"), style="bold"))
    if f.patch:
        parts.append(Syntax(f.patch, "diff", word_wrap=True))
    if f.patch_dropped:
        parts.append(Text(f"left out of the patch: {f.patch_dropped.strip()}", style="yellow"))
    tt = f.timeline_totals
    tree = Tree(Text(f"transcript ({f.timeline.harness or 'none'}: {tt['turns']} model turns, {tt['tool_calls']} tool "
                     f"calls, {tt['subagents']} subagents, {len(f.timeline.retries)} provider retries)", style="bold"))
    if f.timeline.root is not None:
        _thread_tree(tree, f.timeline.root, [SHOW_STEPS])
    for n in f.timeline.notes:
        tree.add(Text(n, style="yellow"))
    parts.append(tree)
    if f.apply_failure:
        parts.append(Panel(f.apply_failure.strip(), title="the patch did not apply", title_align="left"))
    parts.append(Panel(Text(f.verifier_tail or "no verifier output saved"), title="verifier output (tail)",
                       title_align="left"))
    receipt = json.dumps(f.receipt, indent=1, sort_keys=True)[:3000] if f.receipt else "no discovery receipt saved"
    parts.append(Panel(Text(receipt), title="discovery receipt (native-treatment.json)", title_align="left"))
    delivered = ", ".join(f.delivered_files) or "nothing"
    parts.append(Text(f"delivered: {delivered}"))
    parts.append(Text(f"evidence: {f.evidence}/ ({len(f.files)} files)", style="dim"))
    return Group(*parts)


def _printable(value: Any) -> Any:
    """``value`` with every control character but newline and tab in every string shown as
    ``\\x1b``: transcripts, verifier output and patches are the agent's and the task's
    text, and an escape sequence in them must not retitle, clear or recolour the terminal."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list | tuple):
        return type(value)(_printable(v) for v in value)
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    return value


def _printable_struct(value: Any) -> Any:
    import msgspec

    return msgspec.convert(_printable(msgspec.to_builtins(value)), type(value))


@errors_to_exit_codes
def show_command(
    run: Annotated[Path, typer.Argument(help="A run directory, or a bundle (.tar.gz) made by `pluginbench bundle`.")],
    attempt_id: Annotated[str | None, typer.Argument(help="An attempt id (without it: the attempts and their ids).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON (schema: docs/viewer.md).")] = False,
) -> None:
    """Show the attempts of a run, or one attempt: outcome and why, grading, tokens, dollars,
    time, measures, review findings, activation, the patch, the transcript, the verifier's
    output and the discovery receipt. Reads only; a bundle is opened read-only."""
    with opened_run(run) as root:
        if attempt_id is None:
            rows = attempt_rows(root)
            if json_out:
                print_json({"schema_version": 1, "attempts": rows})
            else:
                console.print(rows_table([_printable_struct(r) for r in rows]))
                console.print(Text(f"pluginbench show {run} <attempt id> shows one", style="dim"))
            return
        facts = attempt_facts(root, attempt_id)
        if json_out:
            import sys

            sys.stdout.buffer.write(facts_json(facts) + b"\n")
            sys.stdout.flush()
        else:
            console.print(facts_view(_printable_struct(facts)))
