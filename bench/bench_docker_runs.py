"""Wall time of a 20-attempt nop evaluation on the docker backend, jobs 1 and jobs 2.

    .venv/bin/python bench/bench_docker_runs.py [--attempts 20]

Each run is a whole evaluation (preparation with cached readiness after the first,
coding, grading in separate containers, report). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.actors import create_run, run_worker  # noqa: E402
from pluginbench.config import load  # noqa: E402
from pluginbench.events import read_events  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import _trivial_tasks  # noqa: E402  (the same trivial task as the engine bench)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-bench-docker-") as tmp:
        root = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(root / "cache")
        # Every run here is vanilla with the same key per jobs value: measure the engine,
        # not the vanilla cache (bench_vanilla_cache.py measures that).
        os.environ["PLUGINBENCH_VANILLA_CACHE"] = "off"
        source = _trivial_tasks(root, 1)
        for jobs in (1, 2, 1, 2):
            cfg = {"tasks": {"source": str(source), "ids": ["t0"]}, "treatments": {},
                   "runner": {"harness": "nop"}, "repeats": args.attempts, "jobs": jobs,
                   "environment": {"backend": "docker"}}
            (root / "evaluation.yaml").write_text(yaml.safe_dump(cfg))
            rd = create_run(load(root / "evaluation.yaml"), root / f"run-{jobs}-{time.monotonic_ns()}")
            t = time.perf_counter()
            state = run_worker(rd.root, handle_signals=False)
            wall = time.perf_counter() - t
            assert state.finished
            events = read_events(rd.events)
            cached = all(e.cached for e in events if type(e).__name__ == "ReadinessChecked")
            print(json.dumps({"attempts": args.attempts, "jobs": jobs, "wall_seconds": round(wall, 2),
                              "per_attempt_seconds": round(wall / args.attempts, 3), "readiness_cached": cached}))


if __name__ == "__main__":
    main()
