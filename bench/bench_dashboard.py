"""Dashboard page latency over 10,000 attempts, server memory, and event-to-page time (issue 12).

Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_dashboard.py [--runs 100] [--attempts-per-run 100] [--samples 20]

1. Page latency (median, p95) of the Runs, Results (all rows and filtered) and Run pages
   served by the real ``pluginbench dashboard`` process over ``--runs`` synthetic runs of
   ``--attempts-per-run`` complete attempts each (default 100 × 100 = 10,000 attempts),
   each with its ledger and report built.
2. The server's memory: resident set (VmRSS) after the page requests, and its peak (VmHWM).
3. Event to page: this process owns one more run (it holds ``run.lock`` and appends
   events as a worker does) and, with a Run page's live stream open, completes one
   attempt at a time; the time from the fsynced ``attempt.completed`` to the stream
   delivering a page with the new count (median, p95, max; the contract is within 2 s).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import queue
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.dashboard import run_key  # noqa: E402
from pluginbench.events import EventLog, RunLock, encode, read_events, stamp  # noqa: E402
from pluginbench.events._types import (  # noqa: E402
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    AttemptStarted,
    CodingStarted,
    Measure,
    MeasuresCollected,
    RunCreated,
    RunStarted,
    SlotPlan,
    SubmissionCaptured,
    Usage,
)
from pluginbench.projections import Ledger, build_report, fold  # noqa: E402

USAGE = Usage(status="exact", input_tokens=1000, cached_input_tokens=100, uncached_input_tokens=900,
              output_tokens=50, total_tokens=1050)
MEASURES = {n: Measure(value=3, unit="lines") for n in ("source_lines_added", "source_lines_removed",
                                                         "test_lines_added", "test_lines_removed")}


def attempt_events(s: SlotPlan, outcome: str) -> list[object]:
    return [
        AttemptStarted(attempt_id=s.attempt_id, slot=s.slot, task=s.task, arm=s.arm, repeat=s.repeat),
        AgentLaunched(attempt_id=s.attempt_id, argv=["true"]),
        AgentExited(attempt_id=s.attempt_id, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE),
        SubmissionCaptured(attempt_id=s.attempt_id, patch_sha256="x", empty=False, files_changed=1),
        AttemptGraded(attempt_id=s.attempt_id, outcome=outcome, reward=float(outcome == "pass")),
        MeasuresCollected(attempt_id=s.attempt_id, measures=MEASURES),
        AttemptCompleted(attempt_id=s.attempt_id),
    ]


def make_run(root: Path, name: str, attempts: int, *, complete: bool) -> list[SlotPlan]:
    """A run directory of ``attempts`` slots (10 tasks × 2 arms × repeats); complete ones
    get their ledger and report."""
    root.mkdir(parents=True)
    (root / "evaluation.json").write_text(json.dumps({"name": name, "runner": {"harness": "nop", "model": "nop"}}))
    digest = hashlib.sha256((root / "evaluation.json").read_bytes()).hexdigest()
    # bound as a real run's settings are (report refuses settings that do not match their binding)
    (root / "evaluation-binding.json").write_text(json.dumps({"evaluation_sha256": digest}))
    slots = [SlotPlan(slot=i, task=f"task-{i % 10}", arm="vanilla" if i % 2 else "core", repeat=i // 20,
                      attempt_id=f"a{i}") for i in range(attempts)]
    created = RunCreated(name=name, evaluation_sha256=digest, harness="nop", model="nop", reasoning=None,
                         backend="local", isolation="none", tasks=[f"task-{i}" for i in range(10)],
                         arms=["vanilla", "core"], repeats=max(1, attempts // 20), jobs=2, seed=0,
                         timeout_seconds=60, slots=slots)
    events = [created, RunStarted(pid=1, pgid=1, resumed=False), CodingStarted()] + (
        [ev for s in slots for ev in attempt_events(s, "pass" if s.slot % 3 else "fail")] if complete else []
    )
    with open(root / "events.jsonl", "wb") as fh:
        for seq, e in enumerate(events, start=1):
            fh.write(encode(stamp(e, seq=seq, at="2026-01-01T00:00:00.000Z")) + b"\n")  # type: ignore[arg-type]
    if complete:
        ledger = Ledger(root / "evidence" / "ledger.sqlite")
        ledger.rebuild(fold(read_events(root / "events.jsonl")))
        ledger.close()
        build_report(root)
    return slots


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(port: int, path: str) -> float:
    t = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    conn.close()
    assert resp.status == 200, (path, resp.status)
    return time.perf_counter() - t


def memory(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def stream_counts(port: int, page: str, out: queue.Queue[tuple[float, int]], stop: threading.Event) -> None:
    """Read the page's live stream; put (arrival time, complete count) for each pushed page."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/live?page=" + page)
    resp = conn.getresponse()
    while not stop.is_set():
        line = resp.readline()
        if not line:
            return
        if line.startswith(b"data: "):
            html = json.loads(line[6:])["html"]
            m = re.search(r'id="complete-count">(\d+)<', html)
            if m:
                out.put((time.perf_counter(), int(m.group(1))))


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--attempts-per-run", type=int, default=100)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--events", type=int, default=20, help="attempts completed in the live run")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-dash-bench-") as tmp:
        runs = Path(tmp) / "runs"
        t = time.perf_counter()
        for i in range(args.runs):
            make_run(runs / f"run-{i:03d}", f"bench-{i}", args.attempts_per_run, complete=True)
        live = runs / "live"
        live_slots = make_run(live, "live", max(args.events, 20), complete=False)
        print(f"[setup] {args.runs} runs × {args.attempts_per_run} attempts "
              f"({args.runs * args.attempts_per_run} attempts) in {time.perf_counter() - t:.1f} s")
        lock = RunLock(live)
        lock.acquire()  # this process is the live run's owner from here on
        port = free_port()
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "pluginbench", "dashboard", str(runs), "--port", str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO)
        try:
            while True:
                try:
                    get(port, "/")
                    break
                except OSError:
                    time.sleep(0.05)
            print(f"[start] first page answered {time.perf_counter() - t:.2f} s after launch "
                  f"(discovery and first read of {args.runs + 1} runs included)")
            key = run_key(runs / "run-000")
            pages = {"runs": "/", "results (all)": "/results", "results (arm+task)": "/results?arm=vanilla&task=task-1",
                     "run": f"/run/{key}"}
            print(f"[pages] {args.samples} GETs each, {args.runs * args.attempts_per_run} attempts:")
            for label, path in pages.items():
                times = [get(port, path) for _ in range(args.samples)]
                size = 0
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                conn.request("GET", path)
                size = len(conn.getresponse().read())
                conn.close()
                print(f"  {label:20s} median {statistics.median(times) * 1000:7.1f} ms   "
                      f"p95 {pct(times, 0.95) * 1000:7.1f} ms   ({size / 1024:.0f} KiB)")
            rss, hwm = memory(proc.pid)
            print(f"[memory] server VmRSS {rss:.1f} MiB, peak VmHWM {hwm:.1f} MiB")

            counts: queue.Queue[tuple[float, int]] = queue.Queue()
            stop = threading.Event()
            reader = threading.Thread(target=stream_counts, args=(port, f"/run/{run_key(live)}", counts, stop),
                                      daemon=True)
            time.sleep(2.5)  # let the monitor see the new owner
            reader.start()
            log = EventLog(live / "events.jsonl")
            delays = []
            for n, slot in enumerate(live_slots[: args.events], start=1):
                for e in attempt_events(slot, "pass"):
                    log.append(e)  # type: ignore[arg-type]
                appended = time.perf_counter()
                while True:
                    arrived, count = counts.get(timeout=30)
                    if count >= n:
                        delays.append(arrived - appended)
                        break
                time.sleep(random.uniform(0.1, 2.1))  # land anywhere in the 2 s read cycle
            stop.set()
            log.close()
            print(f"[event to page] {len(delays)} attempts completed one at a time: median "
                  f"{statistics.median(delays) * 1000:.0f} ms, p95 {pct(delays, 0.95) * 1000:.0f} ms, "
                  f"max {max(delays) * 1000:.0f} ms (contract: within 2 s)")
            rss, hwm = memory(proc.pid)
            print(f"[memory] after the live run: VmRSS {rss:.1f} MiB, peak VmHWM {hwm:.1f} MiB")
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
            lock.release()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
