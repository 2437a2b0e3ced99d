"""A/A false-positive rate per gate on the bundled example (issue 10). Prints; asserts nothing.

    .venv/bin/python bench/bench_calibrate.py [--run RUN_DIR] [--seeds 200]

Without ``--run`` it first runs ``pluginbench demo`` (the simulated agent, ~30 s) into a
temporary folder. It then calibrates examples/quickstart/gates.yaml on that run's vanilla
attempts and prints each gate's observed false-positive rate next to its nominal level,
and the wall time of the calibration.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GATES = ROOT / "examples" / "quickstart" / "gates.yaml"


def pb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path)
    ap.add_argument("--seeds", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run
        if run is None:
            run = Path(tmp) / "demo"
            done = pb("demo", "--output", str(run))
            if done.returncode:
                sys.exit(done.stdout + done.stderr)
        t0 = time.perf_counter()
        done = pb("calibrate", str(run), "--gates", str(GATES), "--seeds", str(args.seeds), "--json")
        wall = time.perf_counter() - t0
        if done.returncode:
            sys.exit(done.stderr)
        cal = json.loads(done.stdout)
    print(f"A/A calibration, {cal['seeds']} seeds, {cal['tasks']} tasks, {cal['vanilla_attempts']} vanilla attempts; "
          f"{wall:.1f} s")
    print(f"{'split':<14} {'gate':<30} {'kind':<18} {'false pos.':>10} {'rate':>7} {'nominal':>8}")
    for r in cal["gates"]:
        rate = "n/a" if r["false_positive_rate"] is None else f"{r['false_positive_rate']:.1%}"
        nominal = "none" if r["nominal"] is None else f"{r['nominal']:.0%}"
        fp = f"{r['false_positives']}/{r['determined']}"
        print(f"{r['split']:<14} {r['gate']:<30} {r['kind']:<18} {fp:>10} {rate:>7} {nominal:>8}")
    print("exceeding nominal:", ", ".join(cal["exceeding"]) or "none")


if __name__ == "__main__":
    main()
