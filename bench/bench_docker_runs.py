"""Wall time of a 20-attempt nop evaluation on the docker backend, jobs 1 and jobs 2.

    .venv/bin/python bench/bench_docker_runs.py [--attempts 20]

Each run is a whole evaluation (preparation with cached readiness after the first,
coding, grading in separate containers, report). Each run is paired with its anchor,
measured right after it: ``--attempts`` bare ``docker run --rm <base image> true``, one
after another for jobs 1 and two at a time for jobs 2; the ratio and the load are printed
beside the wall time. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pluginbench.actors import create_run, run_worker  # noqa: E402
from pluginbench.config import load  # noqa: E402
from pluginbench.events import TaskPrepared, read_events  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import _trivial_tasks  # noqa: E402  (the same trivial task as the engine bench)


def _bare(image: str, n: int, jobs: int) -> float:
    """Wall seconds of ``n`` bare ``docker run --rm image true``, ``jobs`` at a time."""
    def one(_: int) -> None:
        subprocess.run(["docker", "run", "--rm", image, "true"], check=True, capture_output=True)

    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, range(n)))
    return time.perf_counter() - t


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
            load_before = os.getloadavg()[0]
            t = time.perf_counter()
            state = run_worker(rd.root, handle_signals=False)
            wall = time.perf_counter() - t
            assert state.finished
            events = read_events(rd.events)
            cached = all(e.cached for e in events if type(e).__name__ == "ReadinessChecked")
            image = next(e.image for e in events if isinstance(e, TaskPrepared))
            anchor = _bare(str(image), args.attempts, jobs)
            print(json.dumps({"attempts": args.attempts, "jobs": jobs, "wall_seconds": round(wall, 2),
                              "per_attempt_seconds": round(wall / args.attempts, 3), "readiness_cached": cached,
                              "anchor": f"{args.attempts} bare docker run --rm, {jobs} at a time",
                              "anchor_seconds": round(anchor, 2), "ratio": round(wall / anchor, 2),
                              "load_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)]}))


if __name__ == "__main__":
    main()
