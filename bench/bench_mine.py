"""Mining throughput of ``pluginbench tasks mine`` on the bundled repository (issue 25).

    .venv/bin/python bench/bench_mine.py [--rounds 1] [--backend local] [--mutants 0] [--jobs 1] [--repo python]

``--repo go`` or ``--repo js`` mines ``tests/data/mine-go``/``mine-js`` instead (3 candidates:
1 admitted, graded by ``go test -json`` or ``node --test``).

Mines ``tests/data/mine/calc-history.bundle`` (9 first-parent candidates: 2 admitted, 7
rejected, one for each reason the bundle exercises) into a private temporary folder, through
the same code as the command (``actors.mine_history``), and prints per round the wall time,
the sandbox runs (readiness controls), candidates examined and admitted per minute, and the
per-candidate seconds by outcome. Screening-only rejections take milliseconds; every
candidate that reaches the sandbox costs four controls (two before, two after, nop and
oracle side by side), an admitted one two more (the written task's readiness).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.actors import MineOptions, mine_history  # noqa: E402

BUNDLES = {"python": ROOT / "tests" / "data" / "mine" / "calc-history.bundle",
           "go": ROOT / "tests" / "data" / "mine-go" / "calc-go.bundle",
           "js": ROOT / "tests" / "data" / "mine-js" / "calc-js.bundle"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--backend", choices=("local", "docker"), default="local")
    parser.add_argument("--jobs", type=int, default=1, help="candidates examined at the same time")
    parser.add_argument("--repo", choices=sorted(BUNDLES), default="python", help="which bundled history")
    parser.add_argument("--mutants", type=int, default=0, help="also seed this many mutation-repair tasks at HEAD")
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average at start: {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="bench-mine-") as tmp:
            t0 = time.monotonic()
            report = anyio.run(mine_history, MineOptions(repo=str(BUNDLES[args.repo]), out=Path(tmp) / "out", backend=args.backend,
                                                           mutants=args.mutants, jobs=args.jobs))
            wall = time.monotonic() - t0
        runs = sum(c.sandbox_runs for c in report.candidates)
        print(f"round {r + 1} ({report.language}, runner {report.runner}): {wall:.1f} s, {report.examined} examined, {report.admitted} admitted, "
              f"{runs} sandbox runs ({wall / max(runs, 1):.2f} s each incl. staging)")
        print(f"  throughput: {report.examined / wall * 60:.1f} candidates examined/min, "
              f"{report.admitted / wall * 60:.1f} admitted/min")
        by: dict[str, list[float]] = {}
        for c in report.candidates:
            kind = ("mutant " if c.mutation else "") + ("admitted" if c.admitted else str(c.code))
            by.setdefault(kind, []).append(c.seconds)
        for outcome, secs in sorted(by.items()):
            print(f"  {outcome:<18} n={len(secs)}  median {statistics.median(secs):.2f} s")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
