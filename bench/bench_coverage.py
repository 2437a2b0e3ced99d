"""Seconds the coverage collector adds per attempt. Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_coverage.py [--n 10]

On the Python fixture (tests/data/coverage/pyrepo: coverage.py with per-test contexts, JSON and
LCOV reports), it times N attempts of one task (local backend, no isolation) two ways:
"per attempt" runs the command on the starting source and on the submission for every attempt
(the collector before the starting report was cached); "cached" takes the starting report
computed once per task and run (``_coverage_starting``; the first attempt computes it) and
runs the submission only. It also times the pure part (parsing both reports and computing the
changed-line metrics) and prints the median and p95 of each.
Needs coverage.py and pytest in the interpreter running it (`.venv` after `tools/setup.sh --dev`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.environments import LocalEnvironment, SandboxSpec  # noqa: E402
from pluginbench.measures._coverage_changed import CoverageContext, changed_coverage  # noqa: E402
from pluginbench.measures._coverage_profile import CoverageProfile  # noqa: E402
from pluginbench.measures._coverage_run import run_coverage  # noqa: E402
from pluginbench.measures._coverage_starting import starting_key, starting_report  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "coverage" / "pyrepo"
PROFILE = CoverageProfile(command=["sh", "coverage.sh"], report_path="coverage.json", format="coverage-py-json",
                          tool_version="7.17.3")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _opener(env: LocalEnvironment, starting: Path):  # type: ignore[no-untyped-def]
    def opener():  # type: ignore[no-untyped-def]
        return env.sandbox(SandboxSpec(run_id="bench", attempt_id="cov", role="readiness", task="clamp",
                                       workspace=starting))
    return opener


async def _one(env: LocalEnvironment, starting: Path, patch: str, out: Path, shared: Path | None) -> tuple[float, float]:
    opener = _opener(env, starting)
    t0 = time.perf_counter()
    if shared is None:
        before = await run_coverage(opener, starting, PROFILE, None, out / "before")
    else:
        before, _, _ = await starting_report(opener, starting, PROFILE, shared,
                                             starting_key("clamp", str(starting), PROFILE, "2"))
    after = await run_coverage(opener, starting, PROFILE, patch, out / "after")
    t1 = time.perf_counter()
    got = changed_coverage(patch, before, after, CoverageContext(PROFILE.format, PROFILE.tool_version))
    t2 = time.perf_counter()
    assert got["changed_line_coverage"].value == 0.6, got
    return t1 - t0, t2 - t1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10)
    args = ap.parse_args()
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = LocalEnvironment(isolation="none")
    timings: dict[str, list[float]] = {"per attempt": [], "cached": []}
    pure_s: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-coverage-") as tmp:
        starting = Path(tmp) / "start"
        shutil.copytree(FIXTURE / "base", starting)
        subprocess.run(["git", "init", "-q"], cwd=starting, check=True)
        patch = (FIXTURE / "submission.patch").read_text()
        for i in range(args.n):  # interleaved, so machine load hits both alike
            a, b = anyio.run(_one, env, starting, patch, Path(tmp) / f"run{i}", None)
            timings["per attempt"].append(a)
            pure_s.append(b)
            c, _ = anyio.run(_one, env, starting, patch, Path(tmp) / f"cached{i}", Path(tmp) / "shared")
            timings["cached"].append(c)
    print(f"coverage collector, python fixture, {args.n} attempts of one task, load average {os.getloadavg()[0]:.2f}")
    for name, values in timings.items():
        print(f"  sandbox runs, {name:<12} median {statistics.median(values):.2f} s, p95 {_p95(values):.2f} s, "
              f"first attempt {values[0]:.2f} s, total {sum(values):.2f} s")
    print(f"  parse + changed-line metrics:  median {statistics.median(pure_s) * 1000:.2f} ms, p95 {_p95(pure_s) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
