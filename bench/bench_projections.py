"""``status`` and ``report`` at a million events (issue 27, item 3). Prints numbers; asserts nothing.

    .venv/bin/python bench/bench_projections.py [--attempts 142857] [--tasks 300] [--before main] [--keep DIR]
        [--repeat 3] [--no-report]

Writes a synthetic finished run of ``--attempts`` attempts (7 events an attempt, so the
default is the issue's 1,000,000 events): ``run.created`` with ``--tasks`` tasks × 3 arms × as
many repeats as it takes (the paired statistics cost grows with tasks, not attempts),
every attempt started, launched, exited with a usage, captured (its ``model.patch`` in its
evidence folder), graded (pass/fail/unknown from a seeded draw), measured (four line counts)
and completed; then its ledger
(``evidence/ledger.sqlite``) at the log's last event. Then, as separate processes of the
real CLI (``python -m pluginbench``), it times and takes the peak resident set
(``wait4``'s ``ru_maxrss``) of:

* ``status --json`` with the ledger at the log's last event (states from the ledger);
* ``status --json`` with the ledger moved aside (states from a fold of the log);
* plain ``status`` with the ledger at the log's last event (the terminal view of every
  attempt, to a pipe);
* one ``status --watch`` redraw (:func:`pluginbench.status.watch_snapshot` and the terminal
  view, in a process of its own);
* ``report`` (results.json, results.csv, report.html; ``--no-report`` skips it).

Each status command runs ``--repeat`` times (the median by CPU is shown). The anchors, timed
the same way in the same run: for status, a process that only imports ``pluginbench.status``
(the fixed cost every status command pays before reading anything); for ``report``, a process
that reads the log with one ``json.loads`` a line and keeps nothing. The ratios printed are
each command's CPU seconds over its anchor's, and "after" over "before".

``--before REF`` also runs the same three commands with the code of git ``REF`` (exported
with ``git archive`` into a temporary folder and put first on ``PYTHONPATH``; default
``main``), on the same run, and says whether each report file is byte-identical between the
two. ``--before ''`` skips it. The machine's load average is printed before and after: on a
shared machine the times move with it; the peak memory does not.

Two more anchors for status: ``python -c pass`` (an interpreter's start) and ``cat`` of the
bytes ``status --json`` prints (reading them from a file); each status command's CPU over
theirs is printed too. Every process runs with its bytecode cached (``compileall`` first,
without ``PYTHONDONTWRITEBYTECODE``), as an installed package's does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.events import (  # noqa: E402
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    AttemptStarted,
    CodingStarted,
    Event,
    Measure,
    MeasuresCollected,
    ReportBuilt,
    RunCreated,
    RunFinished,
    RunStarted,
    SlotPlan,
    SubmissionCaptured,
    Usage,
    encode,
    stamp,
)
from pluginbench.plan import attempt_id  # noqa: E402

ARMS = ("vanilla", "core", "full")
TASKS = 300
PASS_RATE = {"vanilla": 0.45, "core": 0.55, "full": 0.6}


def evaluation(name: str) -> dict[str, object]:
    return {"name": name, "runner": {"harness": "nop", "model": "nop"},
            "measurements": ["tokens", "time", "lines"]}


def plan(name: str, n_attempts: int, evaluation_sha256: str, n_tasks: int = TASKS) -> RunCreated:
    """``n_tasks`` tasks × 3 arms × as many repeats as it takes, the first ``n_attempts`` slots."""
    n_tasks = max(1, min(n_tasks, n_attempts // len(ARMS)))
    repeats = -(-n_attempts // (len(ARMS) * n_tasks))
    slots: list[SlotPlan] = []
    for t in range(n_tasks):
        for arm in ARMS:
            for r in range(1, repeats + 1):
                if len(slots) < n_attempts:
                    task = f"task-{t:05d}"
                    slots.append(SlotPlan(slot=len(slots), task=task, arm=arm, repeat=r,
                                          attempt_id=attempt_id(task, arm, r)))
    return RunCreated(
        name=name, evaluation_sha256=evaluation_sha256, harness="nop", model="nop", reasoning=None,
        backend="local", isolation="none", tasks=sorted({s.task for s in slots}), arms=list(ARMS),
        repeats=repeats, jobs=4, seed=0, timeout_seconds=60, slots=slots)


def patch(aid: str) -> bytes:
    """The attempt's saved ``model.patch`` (the report checks each against its recorded sha256)."""
    return f"diff --git a/solution.py b/solution.py\n--- a/solution.py\n+++ b/solution.py\n@@ -1 +1 @@\n-pass\n+# {aid}\n".encode()


def attempt_events(slot: SlotPlan, rng: random.Random) -> list[Event]:
    """One attempt from start to completion, as a run records it."""
    aid = slot.attempt_id
    draw = rng.random()
    outcome = "pass" if draw < PASS_RATE[slot.arm] else ("unknown" if draw > 0.97 else "fail")
    inp, out = rng.randint(5_000, 50_000), rng.randint(500, 5_000)
    usage = Usage(status="exact", input_tokens=inp, cached_input_tokens=inp // 2, uncached_input_tokens=inp - inp // 2,
                  output_tokens=out, total_tokens=inp + out)
    measures = {n: Measure(value=rng.randint(0, 80), unit="lines")
                for n in ("source_lines_added", "source_lines_removed", "test_lines_added", "test_lines_removed")}
    return [
        AttemptStarted(attempt_id=aid, slot=slot.slot, task=slot.task, arm=slot.arm, repeat=slot.repeat),
        AgentLaunched(attempt_id=aid, argv=["nop"]),
        AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=round(rng.uniform(10, 300), 3),
                    usage=usage),
        SubmissionCaptured(attempt_id=aid, patch_sha256=hashlib.sha256(patch(aid)).hexdigest(), empty=False,
                           files_changed=1),
        AttemptGraded(attempt_id=aid, outcome=outcome, reward=None if outcome == "unknown" else float(outcome == "pass"),
                      reason="verifier wrote no reward" if outcome == "unknown" else None),
        MeasuresCollected(attempt_id=aid, measures=measures),
        AttemptCompleted(attempt_id=aid),
    ]


def run_events(created: RunCreated, seed: int) -> Iterator[Event]:
    rng = random.Random(seed)
    yield created
    yield RunStarted(pid=1, pgid=1, resumed=False)
    yield CodingStarted()
    for slot in created.slots:
        yield from attempt_events(slot, rng)
    yield ReportBuilt(path="report/report.html")
    yield RunFinished()


def make_run(root: Path, n_attempts: int, *, tasks: int = TASKS, seed: int = 0, ledger: bool = True) -> int:
    """A finished synthetic run folder at ``root`` (evaluation.json, events.jsonl, and the
    ledger when ``ledger``); returns the number of events."""
    root.mkdir(parents=True)
    settings = json.dumps(evaluation(root.name), indent=2).encode()
    (root / "evaluation.json").write_bytes(settings)
    digest = hashlib.sha256(settings).hexdigest()
    (root / "evaluation-binding.json").write_text(json.dumps({"evaluation_sha256": digest}))
    created = plan(root.name, n_attempts, digest, tasks)
    n = 0
    with open(root / "events.jsonl", "wb") as fh:
        for n, event in enumerate(run_events(created, seed), start=1):
            fh.write(encode(stamp(event, seq=n, at="2026-01-01T00:00:00.000Z")) + b"\n")
    for slot in created.slots:  # each attempt's evidence folder with its patch
        folder = root / "evidence" / "attempts" / slot.attempt_id
        folder.mkdir(parents=True)
        (folder / "model.patch").write_bytes(patch(slot.attempt_id))
    if ledger:
        write_ledger(root)
    return n


def write_ledger(root: Path) -> None:
    """The run's ledger at its log's last event, with the log's mark (as the writer leaves it)."""
    from pluginbench.events import EventLog
    from pluginbench.projections import Ledger, fold_checked_log
    from pluginbench.rundir import RunDir

    state = fold_checked_log(RunDir(root)).state
    with EventLog(root / "events.jsonl") as log:
        mark = log.mark
    db = Ledger(root / "evidence" / "ledger.sqlite")
    db.rebuild(state, mark)
    db.close()


def timed(argv: list[str], env: dict[str, str], timeout: float) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in MiB and the exit code of one
    process (stdout discarded); killed after ``timeout`` CPU seconds (exit code -9)."""
    start = time.perf_counter()
    # not from the checkout's folder: ``-m`` would import the checkout's package before PYTHONPATH's
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tempfile.gettempdir(),
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 5)))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode:
        print(f"  ! {' '.join(argv[-3:])} exited {proc.returncode} after {usage.ru_utime + usage.ru_stime:.0f} CPU s"
              + (" (the CPU limit)" if proc.returncode in (-9, -24) else f": {err.decode(errors='replace')[-400:]}"))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


_LEDGER = """
import sys, zlib
from pathlib import Path
from pluginbench.events import read_events
from pluginbench.projections import Ledger, fold
root = Path(sys.argv[1])
path = root / "evidence" / "ledger.sqlite"
path.unlink(missing_ok=True)
db = Ledger(path)
state = fold(read_events(root / "events.jsonl"))
try:
    from pluginbench.events import read_log_mark  # the whole mark, as the writer keeps it
    db.rebuild(state, read_log_mark(root / "events.jsonl"))
except ImportError:
    try:
        from pluginbench.events import LogMark
        data = (root / "events.jsonl").read_bytes()
        db.rebuild(state, LogMark(len(data), zlib.crc32(data)))
    except ImportError:  # a ledger without a log mark (before issue 27 item 3)
        db.rebuild(state)
db.close()
"""


_WATCH = """
import sys
from pathlib import Path
from rich.console import Console
from pluginbench.cli._watch import render_status
try:
    from pluginbench.status import watch_snapshot
    snap = watch_snapshot(Path(sys.argv[1]), tasks=20)
    view = render_status(snap, max_tasks=snap["tasks_limit"])
except ImportError:  # before status --watch had its own snapshot: the full one, every row
    from pluginbench.status import status_snapshot
    view = render_status(status_snapshot(Path(sys.argv[1])))
Console(file=open("/dev/null", "w"), width=200, height=50).print(view)
"""


def median(runs: list[tuple[float, float, float, int]]) -> tuple[float, float, float, int]:
    """The run with the median CPU time (of ``--repeat`` runs)."""
    return sorted(runs, key=lambda r: r[1])[len(runs) // 2]


def measure(run: Path, code: Path | None, timeout: float, repeat: int = 3,
            report: bool = True) -> dict[str, tuple[float, float, float, int]]:
    """The commands with ``code`` (None: this checkout), each on the ledger that code writes."""
    # An installed package has its bytecode cached: without it every process compiles its
    # modules again (about 1 CPU s), which is not what a user's `status` pays.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(code or REPO / "pluginbench")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    py = [sys.executable, "-m", "pluginbench"]
    subprocess.run([sys.executable, "-c", _LEDGER, str(run)], env=env, check=True, cwd=run)
    ledger = run / "evidence" / "ledger.sqlite"
    aside = run / "ledger.aside"
    shutil.rmtree(run / "report", ignore_errors=True)
    rows = run.parent / "status.json"  # the anchor `cat` reads: status --json's own bytes
    with open(rows, "wb") as fh:
        subprocess.run([*py, "status", "--json", str(run)], env=env, check=True, stdout=fh, cwd=tempfile.gettempdir())
    out = {"anchor: python -c pass": median([timed([sys.executable, "-c", "pass"], env, timeout) for _ in range(repeat)]),
           "anchor: cat status.json": median([timed(["cat", str(rows)], env, timeout) for _ in range(repeat)]),
           "anchor: import status": median([timed([sys.executable, "-c", "import pluginbench.status"], env, timeout)
                                            for _ in range(repeat)]),
           "status --json (ledger)": median([timed([*py, "status", "--json", str(run)], env, timeout)
                                             for _ in range(repeat)]),
           "status (terminal)": median([timed([*py, "status", str(run)], env, timeout) for _ in range(repeat)]),
           "status --watch redraw": median([timed([sys.executable, "-c", _WATCH, str(run)], env, timeout)
                                            for _ in range(repeat)])}
    ledger.rename(aside)
    try:
        out["status --json (log)"] = timed([*py, "status", "--json", str(run)], env, timeout)
    finally:
        aside.rename(ledger)
    if report:
        out["anchor: json.loads log"] = timed([sys.executable, "-c", _READ_LOG, str(run / "events.jsonl")], env, timeout)
        out["report"] = timed([*py, "report", str(run)], env, timeout)
    return out


#: ``report``'s anchor: the log read and decoded with one ``json.loads`` a line, nothing kept
#: (the least any projection of the log pays).
_READ_LOG = """
import json, sys
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        json.loads(line)
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cpus"


def export(ref: str, dest: Path) -> Path:
    """The package tree of git ``ref`` in ``dest`` (for PYTHONPATH)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "pluginbench"], check=True,
                             capture_output=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def digests(run: Path) -> dict[str, str]:
    folder = run / "report"
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if p.is_file()} if folder.is_dir() else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attempts", type=int, default=142_857, help="attempts (7 events each)")
    ap.add_argument("--tasks", type=int, default=TASKS, help="tasks (the arms and repeats fill the attempts)")
    ap.add_argument("--before", default="main", help="git ref to time as 'before' ('' to skip)")
    ap.add_argument("--keep", type=Path, help="write the run here and keep it (else a temporary folder)")
    ap.add_argument("--timeout", type=float, default=600, help="CPU seconds a command may take before it is killed")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each status command (the median by CPU is shown)")
    ap.add_argument("--no-report", action="store_true", help="skip `report` (status only)")
    args = ap.parse_args()
    print(load(), flush=True)
    with tempfile.TemporaryDirectory(prefix="pb-bench-proj-") as tmp:
        run = args.keep or Path(tmp) / "run"
        if not (run / "events.jsonl").exists():
            t = time.perf_counter()
            n = make_run(run, args.attempts, tasks=args.tasks)
            print(f"synthetic run: {args.attempts:,} attempts, {n:,} events, "
                  f"{(run / 'events.jsonl').stat().st_size / 2**20:.0f} MiB log, written in {time.perf_counter() - t:.0f} s",
                  flush=True)
        results: dict[str, dict[str, tuple[float, float, float, int]]] = {}
        hashes: dict[str, dict[str, str]] = {}
        if args.before:
            code = export(args.before, Path(tmp) / "before")
            results["before"] = measure(run, code, args.timeout, args.repeat, not args.no_report)
            hashes["before"] = digests(run)
            print(f"before ({args.before}) measured; {load()}", flush=True)
        results["after"] = measure(run, None, args.timeout, args.repeat, not args.no_report)
        hashes["after"] = digests(run)
        print(f"after measured; {load()}")
        print(f"{'command':<24} " + " ".join(f"{k + ' wall s':>14} {k + ' cpu s':>13} {k + ' MiB':>11}" for k in results))
        for what in results["after"]:
            print(f"{what:<24} " + " ".join(f"{r[what][0]:>14.2f} {r[what][1]:>13.2f} {r[what][2]:>11.0f}"
                                             for r in results.values()))
        print("cpu s is user + system time of the process: on a loaded machine it moves far less than wall s")
        for what in results["after"]:
            key = "anchor: json.loads log" if what == "report" else "anchor: import status"
            anchor = results["after"][key][1]
            ratios = [f"{results['after'][what][1] / anchor:.1f}x the CPU of '{key}'"]
            if what == "report" and "before" in results and "report" in results["before"]:
                ratios.append(f"before {results['before'][what][1] / results['before'][key][1]:.1f}x its own anchor")
            if "before" in results and what in results["before"] and results["after"][what][1]:
                ratios.append(f"before/after CPU {results['before'][what][1] / results['after'][what][1]:.1f}x")
            print(f"{what:<24} " + ", ".join(ratios))
        for what in (w for w in results["after"] if w.startswith("status")):
            after = results["after"]
            print(f"{what:<24} CPU {after[what][1] / after['anchor: python -c pass'][1]:.1f}x `python -c pass`'s, "
                  f"{after[what][1] / max(after['anchor: cat status.json'][1], 1e-3):.1f}x `cat` of its output's")
        if "before" in hashes:
            for name in sorted(hashes["after"]):
                same = hashes["before"].get(name) == hashes["after"][name]
                print(f"report/{name}: " + ("no 'before' file to compare" if name not in hashes["before"] else
                                            "byte-identical before/after" if same else "differs before/after"))


if __name__ == "__main__":
    main()
