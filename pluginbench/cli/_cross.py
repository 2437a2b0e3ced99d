"""Cross-agent evaluations on the command line (``runner.harnesses``): the plan per harness,
starting and resuming the harness runs, their status side by side, the matrix report.

Each harness's run is an ordinary run folder under the evaluation's folder, run one after
another by one owner (a foreground terminal or one background worker); ``status``,
``report`` and ``run`` take the whole folder, the other commands one harness's run.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.markup import escape

from ..errors import LockHeldError, RunDirError
from ..events import live_owner
from ..harness_registry import harness_class
from ._common import console, err_console, print_json


def print_cross_plan(plan: dict[str, Any], json_out: bool) -> None:
    """The cross-agent plan (``run --dry-run``): per harness its attempts and cost, the total,
    then each harness's slots."""
    from ..plan import cross_agent_lines

    if json_out:
        print_json(plan)
        return
    console.print(f"[bold]{escape(str(plan['name']))}[/]", highlight=False)
    for line in cross_agent_lines(plan):
        console.print(line, highlight=False, markup=False)
    for name, p in plan["per_harness"].items():
        ids = ", ".join(s["attempt_id"] for s in p["slots"][:6]) + (" …" if len(p["slots"]) > 6 else "")
        console.print(f"{name} slots ({len(p['slots'])}, seed order): {ids}", highlight=False, markup=False)
    console.print("dry run: nothing was started", highlight=False)


def plan_of_config(loaded: Any) -> dict[str, Any]:
    """Every harness's foreground checks (refusals name the harness), then the plan."""
    from ..actors import check_group_inputs, read_prices, resolve_paths
    from ..plan import cross_agent_plan

    tasks = check_group_inputs(loaded)
    ev = resolve_paths(loaded)
    return cross_agent_plan(ev, ev.tasks.task_ids() or sorted(tasks), read_prices(ev))


def start(loaded: Any, output: Path | None, *, yes: bool, foreground: bool, verbose: bool) -> None:
    """Check every harness, ask before paid attempts, create the folder of harness runs and
    run them (in this terminal, or one background worker)."""
    from ..actors import check_group_inputs, create_group, read_prices, resolve_paths
    from ..plan import cross_agent_plan
    from ._run import _confirm, _default_output, refuse_output_inside_inputs

    ev = resolve_paths(loaded)
    plan = cross_agent_plan(ev, ev.tasks.task_ids(), read_prices(ev))
    paid = any(harness_class(h).real for h in plan["harnesses"]) and loaded.evaluation.runner.probe is None
    if paid:
        check_group_inputs(loaded)  # a missing CLI or token is said before asking to pay
    _confirm(paid, plan["coding_attempts"], yes)
    target = output if output is not None else _default_output()
    refuse_output_inside_inputs(loaded, target)
    group = create_group(loaded, target, checked=paid)
    console.print(f"cross-agent evaluation {group.dir.root}: " + ", ".join(
        f"{r.harness} → {r.run.root.name}/" for r in group.runs), highlight=False)
    go(group.dir.root, foreground=foreground, verbose=verbose)


def resume(target: Path, *, flags: dict[str, object], foreground: bool, verbose: bool) -> None:
    """``run <folder>``: refuse the flags that apply to one run, check every harness run as a
    resume checks one, then run what has not ended."""
    from ..actors import load_group
    from ._run import resume_checks

    for flag, value in flags.items():
        if value is not None:
            raise RunDirError(f"{flag} applies to one harness's run, not to a cross-agent evaluation's folder",
                              file=str(target), field=flag,
                              fix=f"pass one harness's run (e.g. {target}/<harness>) with {flag}, or drop {flag}")
    for r in load_group(target).runs:
        resume_checks(r.run)
    go(target, foreground=foreground, verbose=verbose)


def go(root: Path, *, foreground: bool, verbose: bool = False) -> None:
    """Run (or resume) every harness run of the folder that has not ended, in config order."""
    from ..actors import load_group

    group = load_group(root)
    for r in group.runs:
        owner = live_owner(r.run.root)
        if owner is not None:
            raise LockHeldError(f"the {r.harness} run is owned by live pid {owner.pid}", file=str(r.run.lock),
                                fix=f"watch it with: pluginbench status {root} --watch")
    if foreground:
        raise SystemExit(run_all(root, foreground=True, verbose=verbose))
    log = open(group.dir.root / "run.log", "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        # -P: not the working folder first on the import path (see pluginbench._worker_start)
        child = subprocess.Popen([sys.executable, "-P", "-m", "pluginbench", "worker", str(group.dir.root)],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True, close_fds=True)
    finally:
        log.close()
    time.sleep(0.2)
    if child.poll() not in (None, 0):
        raise RunDirError(f"the background worker exited ({child.returncode}) at once; see {group.dir.root / 'run.log'}",
                          file=str(group.dir.root / "run.log"))
    console.print(f"cross-agent evaluation {group.dir.root} started in the background (pid {child.pid}); "
                  "the harnesses run one after another", highlight=False)
    console.print(f"watch it:  pluginbench status {shlex.quote(str(group.dir.root))} --watch", highlight=False)


def _ended(rd: Any) -> bool:
    """Whether a harness run is over: finished, failed, or decided by sequential stopping."""
    from ..projections import SEQUENTIAL, fold, read_checked_log

    state = fold(read_checked_log(rd).events)
    return bool(state.finished or state.failed is not None or state.extension_record(SEQUENTIAL) is not None)


def run_all(root: Path, *, foreground: bool, verbose: bool = False) -> int:
    """Each harness run that has not ended, one after another (a failed one does not stop the
    next: the matrix shows it failed), then the matrix report. Returns the worst exit code."""
    from ..actors import load_group, run_worker
    from ..projections import build_cross_report
    from ._progress import log_line
    from ._run import _finish, _run_foreground

    group = load_group(root)
    code = 0
    for r in group.runs:
        if _ended(r.run):
            console.print(f"{r.harness}: already ended, not run again", highlight=False)
            continue
        console.print(f"— {r.harness}" + (f" ({r.model})" if r.model else "") + " —", highlight=False)
        if foreground:
            code = max(code, _run_foreground(r.run, notify=False, verbose=verbose))
        else:
            state = run_worker(r.run.root, observer=log_line)
            code = max(code, _finish(r.run, state, False))
        if not _ended(r.run):  # stopped (stop, a signal, a cost ceiling): no later harness starts
            console.print(f"the {r.harness} run stopped; later harnesses were not started. Resume them all with: "
                          f"pluginbench run {shlex.quote(str(group.dir.root))}", highlight=False, markup=False)
            break
    files = build_cross_report(group.dir.root)
    print_sentences(group.dir.root)
    console.print(f"cross-agent report: {escape(str(files.report_html))}", highlight=False)
    return code


def print_sentences(root: Path) -> None:
    """The matrix report's answer: one sentence per harness."""
    import json

    try:
        doc = json.loads((root / "report" / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for s in doc.get("sentences") or []:
        console.print(s["sentence"], highlight=False, markup=False)


def status_lines(root: Path) -> tuple[list[str], dict[str, Any]]:
    """One line per harness run (its phase, attempts, outcomes, tokens) and the JSON view."""
    from ..actors import load_group
    from ..status import status_snapshot

    group = load_group(root)
    lines, snaps = [], {}
    for r in group.runs:
        snap = status_snapshot(r.run.root)
        snaps[r.harness] = snap
        states = snap.get("states") or {}
        done = states.get("complete", 0)
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted((snap.get("outcomes") or {}).items()) if v) or "none graded"
        tok = snap.get("tokens") or {}
        total, so_far = tok.get("total_tokens"), tok.get("complete_total_tokens")
        tokens = (f"{total:,} tokens" if isinstance(total, int) else
                  f"{so_far:,} tokens so far" if isinstance(so_far, int) and done else "tokens unknown")
        label = " (probe)" if snap.get("probe") else (" (simulated)" if snap.get("simulated") else "")
        lines.append(f"{r.harness}{label}: {snap['phase']}, {done} of {snap['attempts_total']} attempts complete "
                     f"({outcomes}); {tokens}; model {snap.get('model')}")
    return lines, {"kind": "cross-agent", "name": group.name, "harnesses": [r.harness for r in group.runs], "runs": snaps}


#: polls in a row with every harness run ended before ``status --watch`` stops: the worker
#: takes the next harness's run within a second, so a quiet gap of 3 polls (6 s) means it is done
QUIET_POLLS = 3


def watch_over(snaps: list[dict[str, Any]], ended: tuple[str, ...]) -> bool:
    """Whether no harness run is active and every one has ended (or was never started)."""
    return all(not s["active"] and s["phase"] in ended for s in snaps)


def status(root: Path, *, watch: bool, json_out: bool) -> None:
    """``status`` of a cross-agent folder: one line per harness, then the matrix answer."""
    from ._watch import ENDED

    lines, view = status_lines(root)
    if json_out:
        print_json(view)
        return
    quiet, shown = 0, None
    while True:
        if lines != shown:  # --watch prints the lines again only when one changed
            if shown is not None:
                console.print()
            for line in lines:
                console.print(line, highlight=False, markup=False)
            shown = lines
        quiet = quiet + 1 if watch_over(list(view["runs"].values()), ENDED) else 0
        if not watch or quiet >= QUIET_POLLS:
            break
        time.sleep(2)
        lines, view = status_lines(root)
    if (root / "report" / "results.json").is_file():
        print_sentences(root)


def report(root: Path, *, json_out: bool) -> None:
    """``report`` of a cross-agent folder: the matrix report from the harness runs' logs."""
    from ..projections import build_cross_report

    files = build_cross_report(root)
    paths = {"results_json": str(files.results_json), "results_csv": str(files.results_csv),
             "report_html": str(files.report_html)}
    if json_out:
        print_json(paths)
    else:
        print_sentences(root)
        console.print(f"cross-agent report: {files.report_html}", highlight=False)


def worker(root: Path) -> int:
    """The background owner of a cross-agent evaluation: each harness run, then the report."""
    err_console.print(f"pid {os.getpid()} runs {root}", highlight=False)
    return run_all(root, foreground=False)


__all__ = ["go", "plan_of_config", "resume", "print_cross_plan", "report", "run_all", "start", "status", "status_lines", "worker"]
