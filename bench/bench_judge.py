"""Judge calls per second: ``judge run`` through the real pinned Claude Code CLI against the probe.

    .venv/bin/python bench/bench_judge.py               # --jobs 1 and --jobs 3, 12 pairs
    .venv/bin/python bench/bench_judge.py --jobs 3 --repeats 5

Makes one simulated run of the bundled quickstart (two tasks, ``--repeats`` repeats, vanilla
and the guidance treatment), prepares vanilla against the treatment, then times
``pluginbench judge run`` with the ``judge-always-a`` probe scenario for each ``--jobs``
value in a fresh prepared directory. Prints pairs, seconds and calls per second (the
CLI's start-up, discovery and sandbox included); asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"
DROP = ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def pb(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in DROP}
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, env=env,
                          cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"pluginbench {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="*", default=[1, 3])
    ap.add_argument("--repeats", type=int, default=6, help="repeats per task (pairs = 2 x repeats, at most 12)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp:
        root = Path(tmp)
        cfg = root / "evaluation.yaml"
        cfg.write_text(yaml.safe_dump({
            "name": "bench-judge", "tasks": {"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals", "word-wrap"]},
            "treatments": {"testing-discipline": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]}},
            "runner": {"harness": "simulated", "model": "simulated-1", "vanilla_cache": False},
            "repeats": args.repeats, "jobs": 2, "seed": 3, "timeout_seconds": 60}))
        pb("run", str(cfg), "--output", str(root / "run"), "--foreground", "--yes")
        criteria = root / "criteria.md"
        criteria.write_text("Correct, minimal, tested.\n")
        print(f"{'jobs':>4} {'pairs':>6} {'seconds':>8} {'calls/s':>8}")
        for jobs in args.jobs:
            out = root / f"judging-{jobs}"
            pb("judge", "prepare", f"{root / 'run'}=testing-discipline", f"{root / 'run'}=vanilla",
               "--criteria", str(criteria), "--seed", "11", "--output", str(out))
            pairs = len(list(out.glob("task-*.brief.md")))
            t0 = time.perf_counter()
            pb("judge", "run", str(out), "--judge", "claude:claude-sonnet-4-5:high", "--jobs", str(jobs),
               "--probe", str(REPO / "pluginbench" / "probe" / "scenarios" / "judge-always-a.yaml"))
            seconds = time.perf_counter() - t0
            print(f"{jobs:>4} {pairs:>6} {seconds:>8.1f} {pairs / seconds:>8.2f}")


if __name__ == "__main__":
    main()
