"""``status``, ``events``, ``stop`` and ``report``: commands that read a run (or signal it)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Span, Text

from ..errors import LockHeldError, RunDirError
from ..events import (
    encode,
    follow,
    live_owner,
    lock_is_held,
    read_owner_record,
    read_run_log,
)
from ..projections import side_lines
from ..rundir import RunDir, refuse_lost_settings
from ..status import terminal_snapshot, watch_snapshot, write_status_json
from ._common import console, errors_to_exit_codes, group_harnesses, print_json, refuse_group
from ._verdict_lines import verdict_text, verdicts_beside

_CELL = {
    "pass": ("✓", "green"),
    "overlap_pass": ("◐", "green"),
    "fail": ("✗", "red"),
    "empty": ("∅", "yellow"),
    "unknown": ("?", "magenta"),
    "running": ("…", "cyan"),
    "pending": ("·", "dim"),
    "interrupted": ("!", "bold red"),
}
ENDED = ("complete", "stopped", "failed", "interrupted", "not_started")


def _require_run(path: Path) -> RunDir:
    rd = RunDir(path.resolve())
    refuse_group(path, "this command reads one harness's run")
    if not rd.is_run():
        refuse_lost_settings(rd)
        raise RunDirError(
            f"{path} is not a run directory", file=str(path),
            fix="pass a folder made by `pluginbench run` (it holds evaluation.json)",
        )
    return rd


def _node_lines(snap: dict[str, Any]) -> list[Text]:
    """On a cluster backend: each worker node, its jobs and the attempts running on it."""
    nodes = snap.get("nodes")
    if not nodes:
        return []
    running: dict[str, list[str]] = {}
    for a in snap["attempts"]:
        if a["state"] == "running" and a.get("node"):
            running.setdefault(a["node"], []).append(a["id"])
    return [Text(f"node {n['name']} ({n['jobs']} jobs): " + (", ".join(sorted(running.get(n["name"], []))) or "idle"))
            for n in nodes]


def so_far_tokens(t: dict[str, Any], owned: bool = True) -> str | None:
    """``12,345 so far (4 complete, 2 running)`` for a total that is unknown only because
    attempts are still running and whose complete attempts are all measured; else None.
    With no live owner those attempts are ``interrupted``, as the grid and counts call them."""
    if t.get("total_tokens") is not None or not t.get("running_attempts") or t.get("complete_total_tokens") is None:
        return None
    return (f"{t['complete_total_tokens']:,} so far ({t['complete_attempts']} complete, "
            f"{t['running_attempts']} {'running' if owned else 'interrupted'})")


def _measure_lines(measures: dict[str, Any], owned: bool) -> list[Text]:
    """The selected measures, the measurement and review revisions (a collecting or running
    one that no process owns shows as interrupted; a failed review revision, its reason), and each (task, measure) pair the run
    does not measure with its reason."""
    lines: list[Text] = []
    if measures.get("selected"):
        lines.append(Text("measures: " + ", ".join(measures["selected"])))
    revisions = []
    for r in measures.get("measurement_revisions") or []:
        state = "interrupted" if r["status"] == "collecting" and not owned else r["status"]
        revisions.append(f"{r['revision']} ({state})")
    if revisions:
        lines.append(Text("measurement revisions: " + ", ".join(revisions)))
    reviews = []
    for r in measures.get("review_revisions") or []:
        state = "interrupted" if r["status"] == "running" and not owned else r["status"]
        if r.get("reason"):
            state += f": {r['reason']}"
        reviewer = r["harness"] if r["model"] in (None, r["harness"]) else f"{r['harness']} {r['model']}"
        reviews.append(f"{r['revision']} ({reviewer}, {r['reviewed']}/{r['assigned']} reviewed, {state}"
                       + (", selected)" if r["selected"] else ")"))
    if reviews:
        lines.append(Text("review revisions: " + ", ".join(reviews)))
    for n in measures.get("not_measured") or []:
        lines.append(Text(f"not measured: {n['measure']} on {n['task']}: {n['reason']}", style="yellow"))
    return lines


def _seq_value(v: float, pp: bool) -> str:
    return f"{v * 100:+.0f}" if pp else f"{v:.2f}"


def sequence_lines(seq: dict[str, Any] | None) -> list[Text]:
    """A sequential run's sentence, then per gate its interval after each usable task so far
    (the last eight), the narrowing the dashboard plots."""
    if not seq:
        return []
    lines = [Text(f"sequential: {seq['sentence']}", style="bold" if seq.get("decided") else "")]
    for g in seq.get("gates") or ():
        pp = g["metric"] == "pass_rate"
        steps = " ".join(f"{p['tasks']}:[{_seq_value(p['low'], pp)},{_seq_value(p['high'], pp)}]"
                         for p in (g.get("points") or [])[-8:])
        own = f" at {float(g['level']) * 100:.4g}%" if int(seq.get("family") or 1) > 1 and g.get("level") else ""
        left = f", {g['left_out']} left out (unknown)" if g.get("left_out") else ""
        lines.append(Text(f"  {g['arm']} {g['metric'].replace('_', ' ')}{' (pp)' if pp else ''}{own}: "
                          f"{steps or 'no usable task yet'} → {g.get('decision') or 'undecided'}{left}"))
    return lines


def _shown_tasks(snap: dict[str, Any], max_tasks: int | None) -> tuple[list[str], int]:
    """The tasks the attempts table shows and how many it leaves out: every task, or (a live
    view of a run with more than ``max_tasks``) the first ``max_tasks`` and those running."""
    tasks = sorted({a["task"] for a in snap["attempts"]})
    total = int(snap.get("tasks_total") or len(tasks))
    if max_tasks is None or total <= max_tasks:
        return tasks, 0
    running = {a["task"] for a in snap["attempts"] if a["state"] == "running"}
    shown = sorted(set(tasks[:max_tasks]) | running)
    return shown, total - len(shown)


def render_status(snap: dict[str, Any], *, max_tasks: int | None = None) -> Group:
    """The terminal view of a status snapshot; ``max_tasks``: a live view's limit on the
    attempts table (:func:`_shown_tasks`), said in a line under it."""
    owned = snap["active"]
    header = Text()
    header.append(f"{snap['name']}  ", style="bold")
    header.append(f"phase {snap['phase']}", style="bold cyan")
    header.append(f"  ·  {snap['harness']} {snap['model'] or ''}  ·  {snap['backend']} ({snap['isolation']})")
    # the answer first: the report's own verdicts (stats.verdicts), so status says what
    # report.html says, above everything that explains them
    lines: list[Any] = [verdict_text(v) for v in verdicts_beside(Path(snap["report"]))] if snap["report"] else []
    lines.append(header)
    if snap.get("settings_warning"):
        lines.append(Text(f"warning: {snap['settings_warning']}", style="bold yellow"))
    if snap.get("simulated"):
        lines.append(Text("SIMULATED AGENT: a deterministic stand-in, not a real coding agent", style="bold yellow"))
    if snap.get("probe"):
        lines.append(Text("PROBE RUN: the model is PluginBench's loopback server", style="bold yellow"))
    owner = snap["owner"]
    hb = snap["heartbeat"]
    lines.append(Text(
        (f"owner pid {owner['pid']} (pgid {owner['pgid']}, since {owner['started_at']})" if owner else "no live owner")
        + (f"  ·  last activity {hb['age_seconds']} s ago" if hb else "")
    ))
    states = dict(snap["states"])
    if not owned and states.get("running"):
        states["interrupted"] = states.get("interrupted", 0) + states.pop("running")
    lines.append(Text(
        f"attempts {snap['attempts_total']}: " + ", ".join(f"{v} {k}" for k, v in states.items() if v)
        + "  ·  outcomes: " + (", ".join(f"{v} {k}" for k, v in snap["outcomes"].items() if v) or "none yet")
    ))
    lines.extend(_node_lines(snap))
    tasks, hidden = _shown_tasks(snap, max_tasks)
    arms = list(snap["arms"])
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("task")
    for arm in arms:
        table.add_column(arm)
    shown_keys: set[str] = set()
    cell_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}  # one pass, not one per cell
    for a in snap["attempts"]:
        cell_rows.setdefault((a["task"], a["arm"]), []).append(a)
    for task in tasks:
        cells = []
        for arm in arms:
            rows = sorted(cell_rows.get((task, arm), ()), key=lambda a: a["repeat"])
            marks: list[str] = []
            spans: list[Span] = []  # one span a mark, as Text.append makes them (no control codes to strip)
            at = 0
            for a in rows:
                key = a["outcome"] if a["state"] == "complete" else a["state"]
                if key == "running" and not owned:
                    key = "interrupted"
                key = key if key in _CELL else "unknown"
                shown_keys.add(key)
                mark, style = _CELL[key]
                marks.append(mark + " ")
                spans.append(Span(at, at + len(mark) + 1, style))
                at += len(mark) + 1
            cells.append(Text("".join(marks), spans=spans))
        table.add_row(task, *cells)
    lines.append(table)
    if hidden:
        lines.append(Text(f"… and {hidden:,} more tasks (the first tasks and the running ones are shown; "
                          "`pluginbench status --json` lists every attempt)", style="dim"))
    if shown_keys:
        legend = Text("", style="dim")
        for key in (k for k in _CELL if k in shown_keys):
            legend.append(f"{_CELL[key][0]} {key.replace('_', ' ')}   ")
        lines.append(legend)
    tok = Table(show_edge=False, pad_edge=False, title="coding tokens by arm")
    tok.add_column("arm")
    tok.add_column("input", justify="right")
    tok.add_column("cached", justify="right")
    tok.add_column("output", justify="right")
    tok.add_column("total", justify="right")
    def shown(v: object) -> str:
        return "unknown" if v is None else (f"{v:,}" if isinstance(v, int) else str(v))

    for arm, info in snap["arms"].items():
        t = info["tokens"]
        suffix = " (lower bound)" if t["lower_bound"] and t["total_tokens"] is not None else ""
        tok.add_row(arm, shown(t["input_tokens"]), shown(t["cached_input_tokens"]), shown(t["output_tokens"]),
                    so_far_tokens(t, owned) or shown(t["total_tokens"]) + suffix)
    lines.append(tok)
    waiting = [arm for arm, info in snap["arms"].items()
               if info["tokens"]["total_tokens"] is None and (info.get("states") or {}).get("running")]
    if owned and waiting:
        lines.append(Text(f"while attempts run ({', '.join(waiting)}): tokens of complete attempts only; "
                          "the total waits for every attempt's usage", style="dim"))
    reuse = snap.get("reuse") or {}
    if reuse.get("planned_hits") or reuse.get("reused"):
        spent = snap["tokens"].get("total_tokens")
        lines.append(Text(
            f"vanilla cache: {reuse['reused']} of {reuse['vanilla_attempts']} vanilla attempts reused "
            f"({reuse['planned_hits']} planned hits); this run spent {shown(spent)} tokens (reused attempts excluded)"))
    exercised = [(arm, info["activation"]) for arm, info in snap["arms"].items() if info.get("activation")]
    if exercised:
        def share(a: dict[str, Any]) -> str:
            known = a["used"] + a["not_used"]
            return f"{a['used']}/{known}" + (f", {a['unknown']} unknown" if a["unknown"] else "")
        lines.append(Text("package exercised: " + "; ".join(
            f"{arm} {a['label']}" + ("" if a["label"] == "no components" else f" ({share(a)})")
            for arm, a in exercised)))
    lines.extend(_measure_lines(snap.get("measures") or {}, owned))
    lines.extend(Text(text, style="yellow" if tone else "") for text, tone in side_lines(snap))
    for d in snap["discarded"]:
        lines.append(Text(f"discarded {d['id']} (slot {d['slot']}) → {d['replaced_by']}: {d['reason']}", style="yellow"))
    if snap.get("stopping") and snap["phase"] not in ("stopped", "failed"):
        lines.append(Text(f"stopping: {snap['stopping']}", style="yellow"))
    if snap.get("torn_tail_bytes"):
        lines.append(Text(
            f"events.jsonl ends in a torn line ({snap['torn_tail_bytes']} bytes, ignored: "
            + ("being written by the owner, or torn)" if owned else "the next resume drops it and records log.repaired)"),
            style="yellow",
        ))
    if snap["error"]:
        lines.append(Text(f"error: {snap['error']}", style="bold red"))
    left = snap.get("left_running")
    if left is not None and not left.get("checked"):
        lines.append(Text(f"could not check for sandboxes left running: {left.get('error')}", style="yellow"))
    elif left:
        for c in left.get("containers", []):
            lines.append(Text(f"left running: container {c['name']} ({c['id'][:12]}) of attempt {c['attempt']}", style="yellow"))
        if left.get("stop_command"):
            lines.append(Text(f"  stop them with: {left['stop_command']} (resume stops them too)", style="yellow"))
        for f in left.get("folders", []):
            lines.append(Text(f"left behind: sandbox folder {f} (resume removes it)", style="yellow"))
    lines.extend(sequence_lines(snap.get("sequential")))
    if snap["resume_command"]:
        lines.append(Text(f"resume: {snap['resume_command']}"))
    if snap["report"]:
        lines.append(Text(f"report: {snap['report']}"))
    return Group(*lines)


@errors_to_exit_codes
def status_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory, or a cross-agent evaluation's folder.")],
    watch: Annotated[bool, typer.Option("--watch", "-w", help="Redraw every 2 s; exit when the run ends or is stopped.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object (schema_version 2) for dashboards.")] = False,
) -> None:
    """Show a run's phase, owner, attempts, tokens and discarded attempts.

    Also the last activity, attempts by arm and task, and sandboxes a killed worker left
    running. Only reads: the ledger read-only, else a fold of events.jsonl. A cross-agent
    evaluation's folder shows one line per harness, then its matrix answer."""
    if watch and json_out:
        raise RunDirError("--watch and --json cannot be combined: --json prints one object and ends", field="--json",
                          fix="use status --json for one machine-readable snapshot (poll it), or --watch alone to follow the run")
    if group_harnesses(run_dir) is not None:
        from . import _cross

        _cross.status(run_dir.resolve(), watch=watch, json_out=json_out)
        return
    rd = _require_run(run_dir)
    if json_out:
        write_status_json(rd.root, sys.stdout.buffer)
        sys.stdout.flush()
        return
    if not watch:
        console.print(render_status(terminal_snapshot(rd.root)))
        return
    tasks = watch_tasks()
    snap = watch_snapshot(rd.root, tasks=tasks)
    if not console.is_terminal:
        _watch_into_a_pipe(rd.root, snap, tasks)
        return
    with Live(render_status(snap, max_tasks=snap["tasks_limit"]), console=console, refresh_per_second=4, auto_refresh=False) as live:
        while True:
            if snap["phase"] in ENDED and not snap["active"]:
                break
            time.sleep(2)
            try:
                snap = watch_snapshot(rd.root, tasks=tasks)
            except (OSError, ValueError):
                continue  # caught a file mid-write: skip this redraw
            live.update(render_status(snap, max_tasks=snap["tasks_limit"]), refresh=True)


def watch_tasks() -> int:
    """How many tasks ``status --watch`` lists (a row each, beside the running ones): half the
    terminal's height, at least 10, so the summary under the table stays on screen. Each
    redraw reads the counts from the ledger's groups and decodes only those tasks' rows."""
    return max(10, console.size.height // 2)


def _progress_key(snap: dict[str, Any]) -> tuple[Any, ...]:
    return (snap["phase"], snap["active"], sorted(snap["states"].items()), sorted(snap["outcomes"].items()))


def _watch_into_a_pipe(root: Path, snap: dict[str, Any], tasks: int) -> None:
    """``status --watch`` into a file or pipe (``| tee``, a CI log): a live redraw cannot be
    shown there, so the whole view is printed again, newline-terminated, each time the phase or
    the attempt counts change, and once more at the end."""
    console.print(render_status(snap, max_tasks=snap["tasks_limit"]))
    shown = _progress_key(snap)
    while not (snap["phase"] in ENDED and not snap["active"]):
        time.sleep(2)
        try:
            snap = watch_snapshot(root, tasks=tasks)
        except (OSError, ValueError):
            continue  # caught a file mid-write: skip this redraw
        if _progress_key(snap) != shown:
            shown = _progress_key(snap)
            console.print()
            console.print(render_status(snap, max_tasks=snap["tasks_limit"]))


@errors_to_exit_codes
def events_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    follow_: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new events while a live process owns the run; stop once none does.")] = False,
) -> None:
    """Print the run's events as JSON lines, for tooling (jq, your own dashboards)."""
    rd = _require_run(run_dir)
    contents = read_run_log(rd.events)  # a missing, empty or corrupt log is refused, never printed as nothing
    if not follow_:
        for event in contents.events:
            sys.stdout.buffer.write(encode(event) + b"\n")
        sys.stdout.flush()
        return

    def ended() -> bool:
        return live_owner(rd.root) is None

    for event in follow(rd.events, stop=ended):
        sys.stdout.buffer.write(encode(event) + b"\n")
        sys.stdout.flush()


@errors_to_exit_codes
def stop_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory, or a cross-agent evaluation's folder.")],
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the worker has released run.lock.")] = False,
) -> None:
    """Ask the run's worker to stop; running attempts finish and are kept.

    No new attempt starts; reviews not begun are left for the resume. Signals only the
    process group recorded in run.lock, and only when that process is proven the owner:
    it holds the lock's flock, has the recorded start time and is in that group. A record
    that proves less is refused (exit 2) and nothing is signalled. A cross-agent
    evaluation's folder: its running harness run is stopped, and no later harness starts."""
    harnesses = group_harnesses(run_dir)
    if harnesses is not None:
        owned = [RunDir(run_dir.resolve() / h) for h in harnesses if live_owner(run_dir.resolve() / h) is not None]
        if not owned:
            console.print("no harness run of this cross-agent evaluation has a live owner; nothing to stop")
        for rd in owned:
            console.print(f"{rd.root.name}:", end=" ")
            _stop_run(rd, wait)
        return
    _stop_run(_require_run(run_dir), wait)


def _stop_run(rd: RunDir, wait: bool) -> None:
    owner = live_owner(rd.root)
    if owner is None:
        record = read_owner_record(rd.root)
        if lock_is_held(rd.lock):
            # Someone holds the lock, but run.lock does not prove who: signalling the
            # recorded pid could hit a bystander that reuses it.
            raise LockHeldError(
                "run.lock is held, but its record does not identify the holder"
                + (f" (it names pid {record.pid} with start time {record.start_ticks})" if record else "")
                + "; nothing was signalled",
                file=str(rd.lock),
                fix=f"find the holder with: fuser -v {rd.lock}, and stop that process yourself",
            )
        console.print("the run has no live owner; nothing to stop" + (f" (last owner pid {record.pid})" if record else ""))
        return
    try:
        same_group = os.getpgid(owner.pid) == owner.pgid
    except OSError:
        same_group = False
    if not same_group:
        raise LockHeldError(
            f"the run's owner pid {owner.pid} is no longer in the recorded process group {owner.pgid}; nothing was signalled",
            file=str(rd.lock), fix=f"stop pid {owner.pid} yourself (kill -TERM {owner.pid})")
    os.killpg(owner.pgid, signal.SIGTERM)
    console.print(f"stop requested (SIGTERM to process group {owner.pgid}); running attempts finish and are kept")
    if wait:
        while live_owner(rd.root) is not None:
            time.sleep(0.2)
        console.print("stopped")


@errors_to_exit_codes
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory, a cross-agent evaluation's folder (its matrix), or a bundle (.tar.gz: its report as bundled, read-only).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the paths as JSON (a bundle: its results.json).")] = False,
) -> None:
    """Rebuild report/ from the log and frozen evidence, without any model call.

    Writes results.json, results.csv and report.html; the same run gives identical bytes.
    A cross-agent evaluation's folder gets its package × harness matrix."""
    from ..projections import build_report
    from ..viewer import is_bundle

    if group_harnesses(run_dir) is not None:
        from . import _cross

        _cross.report(run_dir.resolve(), json_out=json_out)
        return
    if is_bundle(run_dir):
        _report_of_bundle(run_dir, json_out)
        return
    rd = _require_run(run_dir)
    files = build_report(rd.root)
    paths = {"results_json": str(files.results_json), "results_csv": str(files.results_csv), "report_html": str(files.report_html)}
    if json_out:
        print_json(paths)
    else:
        console.print(f"report: {files.report_html}", highlight=False)
    _warn_unusable_prices(rd.root)


def _report_of_bundle(bundle: Path, json_out: bool) -> None:
    """A bundle is opened read-only: its report as bundled (the frozen tasks it would be rebuilt
    from stay out of a bundle); --json prints its results.json."""
    import json

    from ..viewer import opened_run
    from ._verdict_lines import verdicts_beside

    with opened_run(bundle) as root:
        results = RunDir(root).report_dir / "results.json"
        if not results.is_file():
            raise RunDirError(f"{bundle} holds no report/results.json", file=str(bundle),
                              fix="bundle the run after `pluginbench report` built its report")
        if json_out:
            print_json(json.loads(results.read_text()))
            return
        console.print(f"report of bundle {bundle} (as bundled, read-only; "
                      f"`pluginbench dashboard {bundle}` shows it):", highlight=False, markup=False)
        for v in verdicts_beside(results.parent / "report.html"):
            console.print(verdict_text(v), highlight=False)


def _warn_unusable_prices(run_root: Path) -> None:
    """A prices.json the user put there but the report could not use is said on stderr, not
    only inside results.json: the report is still built (dollars unknown), so the exit stays 0."""
    from ..projections import PRICES_FILE, load_prices

    if not (run_root / PRICES_FILE).is_file():
        return
    prices, reason = load_prices(run_root)
    if prices is None and reason:
        sys.stderr.write(f"warning: {reason}; every dollar figure is unknown\n")

