"""``pluginbench compare`` wall time on two synthetic runs of 10,000 attempts each (issue 10).

Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_compare.py [--tasks 100] [--repeats 50] [--rounds 3]

Each run holds vanilla and one treatment on ``--tasks`` tasks with ``--repeats`` repeats
(100 × 2 × 50 = 10,000 attempts), written as ``report/results.json`` in the report's own
row shape. The comparison takes the treatment of run A against the vanilla of run B with
a gates file of one gate of each kind and a split of half the tasks. Reported: the whole
command as a process (median of rounds), and in-process time to read the inputs and to
decide the gates.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synth_run(root: Path, tasks: int, repeats: int, seed: int) -> Path:
    rng = random.Random(seed)
    rows = []
    task_ids = [f"task-{i:04d}" for i in range(tasks)]
    for t in task_ids:
        for arm, p in (("vanilla", 0.5), ("treatment", 0.6)):
            for r in range(1, repeats + 1):
                inp, out = rng.randint(5_000, 50_000), rng.randint(500, 5_000)
                rows.append({
                    "attempt_id": f"{t}__{arm}__r{r}", "slot": len(rows), "task": t, "arm": arm, "repeat": r,
                    "state": "complete", "outcome": "pass" if rng.random() < p else "fail",
                    "outcome_reason": None, "reward": None,
                    "tokens": {"input": inp, "cached_input": inp // 2, "uncached_input": inp - inp // 2,
                               "output": out, "reasoning_output": 0, "total": inp + out,
                               "status": "exact", "reason": None},
                    "coding_seconds": rng.uniform(10, 300),
                    "measures": {"source_lines_added": {"value": rng.randint(1, 80), "unit": "lines",
                                                        "status": "measured", "reason": None}},
                    "evidence": f"evidence/attempts/{t}__{arm}__r{r}",
                })
    ident = {
        "runner": {"harness": "claude", "model": "claude-x", "reasoning": "high"},
        "harness_version": "2.1.328", "capabilities": {"subagents": True},
        "tasks": {t: f"sha256:{t}" for t in task_ids},
        "task_limits": {t: {"effective": {"agent_timeout_seconds": 1800}} for t in task_ids},
        "measurement_settings": {"measurements": ["tokens", "time", "lines"]},
    }
    doc = {"schema_version": 2, "run": {"name": root.name}, "arms": ["vanilla", "treatment"],
           "tasks": task_ids, "attempts": rows, "comparison_identity": ident}
    (root / "report").mkdir(parents=True)
    (root / "report" / "results.json").write_text(json.dumps(doc))
    return root


def gates(path: Path, tasks: int) -> Path:
    path.write_text(yaml.safe_dump({
        "count_overlap_passes": True,
        "splits": {"half": [f"task-{i:04d}" for i in range(0, tasks, 2)]},
        "gates": [
            {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher", "tolerance": 5},
            {"name": "tokens", "metrics": ["Input tokens", "Output tokens"], "statistic": "mean_of_task_medians",
             "against": "vanilla", "direction": "lower", "factor": 1.3},
            {"name": "lines", "metrics": ["Source lines added"], "statistic": "mean_of_task_median_ratios",
             "reference_floor": 5, "against": "vanilla", "direction": "lower", "factor": 1.2},
            {"name": "non-inferior", "correctness": "passes", "against": "vanilla", "direction": "higher",
             "bound": "lower", "margin": -0.05},
            {"name": "token ceiling", "metrics": ["Input tokens", "Output tokens"], "against": "vanilla",
             "direction": "lower", "bound": "upper", "factor": 1.3},
        ],
    }))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from pluginbench.cli._compare_io import load_gates, load_inputs
    from pluginbench.stats import compare_packages

    with tempfile.TemporaryDirectory() as tmp:
        a = synth_run(Path(tmp) / "a", args.tasks, args.repeats, 1)
        b = synth_run(Path(tmp) / "b", args.tasks, args.repeats, 2)
        g = gates(Path(tmp) / "gates.yaml", args.tasks)
        n = args.tasks * 2 * args.repeats
        inputs = [f"{a}=treatment", f"{b}=vanilla"]
        print(f"two runs of {n:,} attempts each ({args.tasks} tasks × 2 arms × {args.repeats} repeats)")
        walls, cpus = [], []
        for _ in range(args.rounds):
            c0 = os.times()
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pluginbench", "compare", *inputs, "--gates", str(g), "--json"],
                                  capture_output=True, text=True)
            walls.append(time.perf_counter() - t0)
            c1 = os.times()
            cpus.append((c1.children_user - c0.children_user) + (c1.children_system - c0.children_system))
            verdict = json.loads(done.stdout)["status"] if done.stdout.startswith("{") else done.stderr
        print(f"compare --json as a process: median {statistics.median(walls):.2f} s over {args.rounds} "
              f"(min {min(walls):.2f}, max {max(walls):.2f}); CPU median {statistics.median(cpus):.2f} s "
              f"(wall includes waiting on a shared machine); exit {done.returncode} ({verdict})")
        t0 = time.perf_counter()
        gf = load_gates(g)
        packages, identities = load_inputs(inputs)
        t1 = time.perf_counter()
        compare_packages(packages, gf, identities)
        t2 = time.perf_counter()
        print(f"in process: read inputs {t1 - t0:.2f} s, decide gates and paired sections {t2 - t1:.2f} s")


if __name__ == "__main__":
    main()
