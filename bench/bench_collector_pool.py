"""Wall seconds of a whole evaluation whose coverage collector is slow, with one collector actor
(before) and with ``jobs`` of them (the pool). Prints numbers; asserts nothing. Run on demand:

    .venv/bin/python bench/bench_collector_pool.py [--repeats 3] [--jobs 2]

The evaluation is tests/data/coverage's clamp task (simulated agent, local backend, no
isolation, real coverage.py: one starting run per task, one run per submission), vanilla and
one guided arm. It reports the run's wall time and the seconds from the first to the last
``measures.collected`` event. Needs coverage.py and pytest in this interpreter (`.venv`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import anyio
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.actors import Supervisor, build_engine, create_run, load_saved  # noqa: E402
from pluginbench.config import load  # noqa: E402
from pluginbench.events import EventLog  # noqa: E402
from pluginbench.projections import Ledger, fold  # noqa: E402
from pluginbench.rundir import RunDir  # noqa: E402

CLAMP = ROOT / "tests" / "data" / "coverage" / "tasks"
PROFILE = {"command": ["sh", "coverage.sh"], "report_path": "coverage.json", "format": "coverage-py-json",
           "tool_version": "7.17.3"}


def _config(tmp: Path, repeats: int, jobs: int) -> Path:
    guidance = tmp / "testing.md"
    guidance.write_text("Always add tests for new code.\n")
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "name": "pool", "tasks": {"source": str(CLAMP), "ids": ["clamp"]},
        "treatments": {"tests-first": {"guidance": [str(guidance)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": repeats, "jobs": jobs, "seed": 1, "timeout_seconds": 300,
        "environment": {"isolation": "none", "allow_unisolated": True},
        "measurements": ["tokens", "time", "lines", "coverage"],
        "measurement_settings": {"coverage_profiles": {"python": PROFILE}},
    }))
    return path


async def _drive(root: Path, collectors: int | None) -> None:
    rd = RunDir(root)
    saved = load_saved(rd)
    log = EventLog(rd.events)
    ledger = Ledger(rd.ledger)
    try:
        await Supervisor(build_engine(rd, saved.evaluation, None), log, ledger, fold(log.recovered),
                         handle_signals=False, collectors=collectors).run(resumed=False)
    finally:
        log.close()
        ledger.close()


def _one(tmp: Path, repeats: int, jobs: int, collectors: int | None) -> tuple[float, float]:
    tmp.mkdir(parents=True)
    rd = create_run(load(_config(tmp, repeats, jobs)), tmp / "run")
    t0 = time.perf_counter()
    anyio.run(_drive, rd.root, collectors)
    wall = time.perf_counter() - t0
    events = [json.loads(x) for x in (rd.root / "events.jsonl").read_text().splitlines() if x.strip()]
    stamps = [datetime.fromisoformat(e["at"]) for e in events if e["type"] == "measures.collected"]
    assert len(stamps) == 2 * repeats, "every attempt is measured"
    return wall, (max(stamps) - min(stamps)).total_seconds()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    print(f"clamp, coverage selected, {2 * args.repeats} attempts, jobs {args.jobs}, "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-pool-") as tmp:
        for label, collectors in (("one collector (before)", 1), (f"pool of {args.jobs} (after)", None)):
            wall, spread = _one(Path(tmp) / str(collectors), args.repeats, args.jobs, collectors)
            print(f"  {label:<24} run {wall:6.1f} s, first to last measures.collected {spread:6.1f} s")


if __name__ == "__main__":
    main()
