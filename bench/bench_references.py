"""Seconds the reference measurement adds per task (issue 9 item 6). Prints; asserts nothing.

    .venv/bin/python bench/bench_references.py [--runs 5] [--measurements lines,cyclomatic,cognitive,dead_code]

Runs a small real evaluation (simulated agent, local backend, unisolated) on the reference
fixture tasks of tests/data/reference ``--runs`` times, each in a fresh process, and reads the
``seconds`` each ``reference.measured`` event recorded: the time preparation spent measuring
that task's solution/solution.patch with every selected reference measure (real analyzers:
rust-code-analysis, Vulture). Each run is a fresh process, so the dead-code starting scan is
cold in the reference measurement (later attempts of the task reuse it). Prints the median,
min and max per task, and the expected vs measured reference values of clamp-ref.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "tests" / "data" / "reference" / "tasks"
#: hand counts, tests/data/reference/README.md
EXPECTED = {"cyclomatic_added": 2, "cognitive_added": 1, "functions_added": 1, "source_lines_added": 6,
            "dead_code_candidates_added": 1, "duplicated_test_lines_added": 0, "test_lines_added": 0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--measurements", default="lines,cyclomatic,cognitive,dead_code")
    args = ap.parse_args()
    seconds: dict[str, list[float]] = {}
    last: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        guidance = tmp / "testing.md"
        guidance.write_text("Always add tests for new code.\n")
        cfg = {
            "name": "bench-refs", "tasks": {"source": str(TASKS), "ids": ["clamp-ref", "clamp-nosolution"]},
            "treatments": {"t": {"guidance": [str(guidance)]}}, "runner": {"harness": "simulated", "model": "simulated-1"},
            "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 120,
            "environment": {"isolation": "none", "allow_unisolated": True},
            "measurements": ["tokens", "time", *args.measurements.split(",")],
        }
        config = tmp / "evaluation.yaml"
        config.write_text(yaml.safe_dump(cfg))
        for i in range(args.runs):
            out = tmp / f"run-{i}"
            subprocess.run([sys.executable, "-m", "pluginbench", "run", str(config), "--output", str(out), "--foreground"],
                           check=True, capture_output=True, cwd=ROOT)
            for line in (out / "events.jsonl").read_text().splitlines():
                event = json.loads(line)
                if event["type"] == "reference.measured":
                    seconds.setdefault(event["task"], []).append(event["seconds"])
                    last[event["task"]] = event["measures"]
    print(f"reference measurement seconds per task ({args.runs} fresh runs; measures {args.measurements})")
    print("| task | median s | min | max |\n| --- | --- | --- | --- |")
    for task, values in sorted(seconds.items()):
        print(f"| {task} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")
    print("\nclamp-ref reference: expected (hand count) vs measured")
    print("| metric | expected | measured |\n| --- | --- | --- |")
    for metric, want in EXPECTED.items():
        got = last.get("clamp-ref", {}).get(metric, {})
        print(f"| {metric} | {want} | {got.get('value') if isinstance(got, dict) else None} |")


if __name__ == "__main__":
    main()
