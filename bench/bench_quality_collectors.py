"""Seconds each code-quality collector adds per attempt (issue 9). Prints; asserts nothing.

    .venv/bin/python bench/bench_quality_collectors.py [--repeats 10] [--fixture python]

Runs every registered collector (lines, iterations, cyclomatic, cognitive, dead_code) on a
fixture of tests/data/quality (``--fixture``, default the Python one) (its starting source and submission patch; iterations on
the recorded Claude Code trace), each ``--repeats`` times through the real analyzers, and
prints the median, min and max wall seconds per collector. The complexity scan is cached
between cyclomatic and cognitive for one attempt, so the cache is cleared before each call
to time each collector alone; the dead-code collector's starting scan is cached per task, so
both its first call (cold: two Vulture runs) and later calls (warm: one run) are shown.
cargo check, knip, jscpd and staticcheck run in a fresh bubblewrap sandbox of the local
backend (issue 20), so their rows include creating and removing it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from pluginbench import measures
from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harness_registry import harness_class
from pluginbench.measures import CollectorInput, _quality

ROOT = Path(__file__).resolve().parents[1]
QUALITY = ROOT / "tests" / "data" / "quality"
TRACES = ROOT / "tests" / "data" / "quality" / "iterations" / "claude"


def _input(tmp: Path, harness: str, fixture: Path) -> CollectorInput:
    attempt = tmp / "attempt"
    if not attempt.exists():
        shutil.copytree(TRACES, attempt)
    return CollectorInput("t__vanilla__r1", "t", "vanilla", (fixture / "submission.patch").read_text(), attempt,
                          attempt / "agent", harness, fixture, fixture / "start", None, None,
                          _task_sandbox(fixture / "start"), {}, attempt / "measure" / "x",
                          agent_traces=bool(harness_class(harness).agent_traces))


def _task_sandbox(start: Path) -> Callable[..., AbstractAsyncContextManager[Any]]:
    """A fresh bubblewrap sandbox of the local backend over ``start``: where the analyzers
    that execute repository code (cargo check, knip, jscpd, staticcheck) run."""
    environment = LocalEnvironment(isolation="bubblewrap")

    def open_task_sandbox(**overrides: Any) -> AbstractAsyncContextManager[Any]:
        spec = SandboxSpec(run_id="bench", attempt_id="t", role="readiness", task="t", workspace=start)
        assert overrides.pop("network", "none") == "none"  # the port's word for the default egress
        return environment.sandbox(spec._replace(**overrides))

    return open_task_sandbox


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--fixture", default="python", help="a folder of tests/data/quality (python, javascript, go, …)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pb-bench-quality-") as tmp:
        inp = _input(Path(tmp), "claude", QUALITY / args.fixture)
        for name in ("lines", "iterations", "cyclomatic", "cognitive", "dead_code"):
            spec = measures.get(name)
            assert spec is not None and spec.collect is not None
            times = []
            cold = None
            for i in range(args.repeats + (1 if name == "dead_code" else 0)):
                _quality._SCANS.clear()
                if name == "dead_code" and i == 0:
                    _quality._STARTING_SCANS.clear()
                t0 = time.perf_counter()
                values = spec.collect(inp)
                dt = time.perf_counter() - t0
                # only JS/TS tasks have duplicate groups (unknown by design elsewhere); every other value is measured
                assert all(m.status == "measured" for k, m in values.items() if k != "duplicate_groups_added"), values
                if name == "dead_code" and i == 0:
                    cold = dt
                else:
                    times.append(dt)
            rows.append((name, statistics.median(times), min(times), max(times), cold))
    print(f"collector seconds per attempt, {args.fixture} fixture, {args.repeats} repeats")
    print(f"{'collector':<12} {'median':>8} {'min':>8} {'max':>8}  note")
    for name, med, lo, hi, cold in rows:
        note = f"first call (cold starting scan) {cold:.3f}" if cold is not None else ""
        print(f"{name:<12} {med:8.3f} {lo:8.3f} {hi:8.3f}  {note}")


if __name__ == "__main__":
    main()
