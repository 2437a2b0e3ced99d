"""Generation overhead per task of a generated-guidance arm on the probe (issue 25 item 5). Prints numbers.

    .venv/bin/python bench/bench_generation.py [--harness claude|simulated] [--tasks 1] [--rounds 1]

One evaluation per round: the bundled probe task(s) (tests/data/probe-tasks/add-numbers, copied under distinct
names), vanilla and one arm with ``generate`` (task_owned: remove), repeats 1, jobs 1, bubblewrap, a fresh cache
(readiness included, so both runs pay the same), the real CLI against the loopback probe with the
``generate-guidance`` scenario (claude), or the simulated agent. From the run's own events it prints, per
generating session: wall seconds from the launch of the generation phase (the last readiness event) to the
session's end, the agent's own seconds, and its tokens; and the coding phase's wall seconds for comparison.
The machine's load average is printed beside them: the numbers are wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "tests" / "data" / "probe-tasks" / "add-numbers"
SCENARIO = REPO / "pluginbench" / "probe" / "scenarios" / "generate-guidance.yaml"
MODELS = {"claude": "claude-sonnet-4-5", "simulated": "simulated-1"}


def _t(at: str) -> float:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def one_round(harness: str, n_tasks: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="pb-bench-gen-") as tmp_s:
        tmp = Path(tmp_s)
        ids = [f"add-numbers-{i}" for i in range(n_tasks)]
        for tid in ids:
            shutil.copytree(TASK, tmp / "tasks" / tid)
            with (tmp / "tasks" / tid / "workspace" / "README.md").open("a") as fh:
                fh.write(f"\nCopy {tid}.\n")  # distinct content: the same task twice is refused
            toml = tmp / "tasks" / tid / "task.toml"
            toml.write_text(toml.read_text().replace("pluginbench/add-numbers", f"pluginbench/{tid}"))
        runner: dict[str, object] = {"harness": harness, "model": MODELS[harness]}
        if harness != "simulated":
            runner.update(reasoning="low", probe=str(SCENARIO))
        config = {"name": "bench-generation", "tasks": {"source": str(tmp / "tasks"), "ids": ids},
                  "treatments": {"generated": {"generate": {"model": MODELS[harness]}, "task_owned": "remove"}},
                  "runner": runner, "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 180,
                  "environment": {"isolation": "bubblewrap"}}
        (tmp / "evaluation.yaml").write_text(yaml.safe_dump(config))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_CODE_OAUTH"))}
        env["XDG_CACHE_HOME"] = str(tmp / "xdg")
        done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(tmp / "evaluation.yaml"), "--output",
                               str(tmp / "run"), "--foreground", "--yes"], capture_output=True, text=True, env=env,
                              timeout=3600)
        if done.returncode != 0:
            raise SystemExit(done.stdout + done.stderr)
        events = [json.loads(line) for line in (tmp / "run" / "events.jsonl").read_text().splitlines()]
    phase_start = max(_t(e["at"]) for e in events if e["type"] == "readiness.checked")
    out: dict[str, list[float]] = {"wall": [], "agent": [], "tokens": [], "coding_wall": [], "attempt_wall": []}
    for e in events:
        if e["type"] == "guidance.generated":
            out["wall"].append(_t(e["at"]) - phase_start)
            phase_start = _t(e["at"])  # jobs 1: the next session starts after this one
            out["agent"].append(e["seconds"])
            out["tokens"].append(float(e["usage"]["total_tokens"] or 0))
    coding = next(_t(e["at"]) for e in events if e["type"] == "coding.started")
    last = max(_t(e["at"]) for e in events if e["type"] == "attempt.completed")
    out["coding_wall"].append(last - coding)
    starts = {e["attempt_id"]: _t(e["at"]) for e in events if e["type"] == "attempt.started"}
    out["attempt_wall"] += [_t(e["at"]) - starts[e["attempt_id"]] for e in events if e["type"] == "agent.exited"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--harness", default="claude", choices=sorted(MODELS))
    ap.add_argument("--tasks", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    merged: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for k, v in one_round(args.harness, args.tasks).items():
            merged.setdefault(k, []).extend(v)
    load = os.getloadavg()[0]
    med = statistics.median
    print(f"harness {args.harness}, {args.tasks} task(s) × {args.rounds} round(s), load average {load:.1f}")
    print(f"generation per task: wall {med(merged['wall']):.1f} s (median of {len(merged['wall'])}; "
          f"min {min(merged['wall']):.1f}, max {max(merged['wall']):.1f}), agent {med(merged['agent']):.1f} s, "
          f"tokens {med(merged['tokens']):,.0f}")
    print(f"coding attempt (start to agent exit), for comparison: median {med(merged['attempt_wall']):.1f} s; "
          f"coding phase wall {med(merged['coding_wall']):.1f} s")


if __name__ == "__main__":
    main()
