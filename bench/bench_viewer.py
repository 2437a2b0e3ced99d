"""Attempt viewer page latency on long transcripts, and the shareable bundle's size and time (issue 26).

Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_viewer.py [--turns 5000] [--samples 20] [--attempts 300] [--demo runs/demo]

1. Attempt page latency for a ``--turns``-turn transcript (one Bash call and its output a
   turn, Claude Code stream-json), served by the real ``pluginbench dashboard`` process:
   the first request (the transcript parsed) and then ``--samples`` requests of page 1 and
   of the last page (the facts cached while the files are unchanged), median and p95; the
   same for an attempt whose one subagent makes ``--turns`` calls (the main page, with the
   subagent's first page in its fold, and the subagent's last page, ``?thread=``); and
   ``attempt_facts`` itself, uncached, median of 5.
2. Bundle size and time (``write_bundle``) for ``--demo`` (a run ``pluginbench demo`` wrote;
   made in a temp folder when not given) and for a synthetic run of ``--attempts`` complete
   attempts, each with a 30-turn transcript (seeded random words as tool output), a patch and grading output; and opening the
   synthetic bundle again (``show`` path: unpack, check every sha256).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_dashboard import free_port, get, make_run, pct  # noqa: E402

from pluginbench.dashboard import run_key  # noqa: E402
from pluginbench.viewer import attempt_facts, opened_run, write_bundle  # noqa: E402
from tests.viewer._fixture import PATCH  # noqa: E402
from tests.viewer.long_transcript import long_stream, subagent_stream  # noqa: E402


def add_evidence(root: Path, attempt_id: str, turns: int, seed: int | None = None) -> None:
    folder = root / "evidence" / "attempts" / attempt_id
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    (folder / "agent" / "stdout.jsonl").write_text(long_stream(turns, seed=seed))
    (folder / "model.patch").write_text(PATCH)
    (folder / "grading" / "verifier").mkdir(parents=True, exist_ok=True)
    (folder / "grading" / "test-stdout.txt").write_text("ok\n" * 200)
    (folder / "grading" / "verifier" / "reward.txt").write_text("1\n")
    (folder / "execution.json").write_text('{"exit_code": 0, "coding_seconds": 12.5}')


def wait_up(port: int, path: str, deadline: float) -> None:
    while True:
        try:
            get(port, path)
            return
        except (OSError, AssertionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def page_latency(tmp: Path, turns: int, samples: int) -> None:
    root = tmp / "runs" / "long"
    make_run(root, "long", 20, complete=True)
    add_evidence(root, "a0", turns)
    add_evidence(root, "a1", 1)
    (root / "evidence/attempts/a1/agent/stdout.jsonl").write_text(subagent_stream(3, turns))
    t = time.perf_counter()
    facts = [attempt_facts(root, "a0") for _ in range(1)]
    direct = [time.perf_counter() - t]
    for _ in range(4):
        t = time.perf_counter()
        attempt_facts(root, "a0")
        direct.append(time.perf_counter() - t)
    print(f"attempt_facts, {turns:,}-turn transcript ({facts[0].timeline_totals['steps']:,} steps, "
          f"{(root / 'evidence/attempts/a0/agent/stdout.jsonl').stat().st_size / 1e6:.1f} MB), uncached: "
          f"median {statistics.median(direct) * 1000:.0f} ms")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pluginbench", "dashboard", str(tmp / "runs"), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        key = run_key(root)
        wait_up(port, f"/run/{key}", time.monotonic() + 120)
        path = f"/run/{key}/attempt/a0"
        first = get(port, path)
        pages = -(-turns // 200)
        sub = f"/run/{key}/attempt/a1"
        get(port, sub)
        for label, p in (("page 1", path), (f"page {pages} (last)", f"{path}?page={pages}"),
                         (f"with a {turns:,}-step subagent (its first page folded in)", sub),
                         (f"of that subagent, page {pages} (last)", f"{sub}?thread=3.0&page={pages}")):
            times = [get(port, p) for _ in range(samples)]
            print(f"attempt page {label}: median {statistics.median(times) * 1000:.0f} ms, "
                  f"p95 {pct(times, 0.95) * 1000:.0f} ms ({samples} requests)")
        print(f"attempt page, first request (transcript parsed): {first * 1000:.0f} ms")
    finally:
        proc.send_signal(2)
        proc.wait(30)


def bundle(label: str, root: Path, out: Path) -> None:
    t = time.perf_counter()
    b = write_bundle(root, out, environ=dict(os.environ))
    took = time.perf_counter() - t
    raw = sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink())
    print(f"bundle {label}: {b.files} files, {b.bytes / 1e6:.2f} MB (run folder {raw / 1e6:.1f} MB), {took:.2f} s")
    t = time.perf_counter()
    with opened_run(out):
        pass
    print(f"  opened again (unpacked, sha256s checked): {time.perf_counter() - t:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=5000)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--attempts", type=int, default=300)
    ap.add_argument("--demo", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-bench-viewer-") as tmp_s:
        tmp = Path(tmp_s)
        page_latency(tmp, args.turns, args.samples)
        demo = args.demo
        if demo is None:
            demo = tmp / "demo"
            subprocess.run([sys.executable, "-m", "pluginbench", "demo", "--output", str(demo)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bundle("demo", demo.absolute(), tmp / "demo.tar.gz")
        big = tmp / "big"
        make_run(big, "big", args.attempts, complete=True)
        for i in range(args.attempts):
            add_evidence(big, f"a{i}", 30, seed=i)
        bundle(f"synthetic {args.attempts}-attempt run", big, tmp / "big.tar.gz")


if __name__ == "__main__":
    main()
