"""Seconds to resolve and fetch task links (tasks.urls) on a loopback git daemon. Prints; asserts nothing.

    .venv/bin/python bench/bench_task_urls.py [--rounds 5]

Serves the six quickstart tasks from a bare repository under ``git daemon`` on 127.0.0.1 and
times, per round and for all six links at once: a cold fetch into an empty task cache
(branch links: ls-remote + one shallow fetch + write + verify), a warm branch resolve (ls-remote,
then the verified cache hit), and commit links served from the verified cache with the server
stopped (no network at all).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.tasks._remote import resolve_pins  # noqa: E402
from tests.tasks._gitserver import TaskRepo  # noqa: E402

TASKS = ROOT / "examples" / "quickstart" / "tasks"


def _error(i: int, message: str, fix: str) -> Exception:
    return RuntimeError(f"tasks.urls[{i}]: {message} ({fix})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    names = sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())
    timings: dict[str, list[float]] = {"cold fetch (branch links)": [], "warm resolve (branch links)": [],
                                       "cache only (commit links, server down)": []}
    with tempfile.TemporaryDirectory(prefix="bench-urls-") as tmp:
        repo = TaskRepo(Path(tmp) / "server")
        for name in names:
            repo.add_tree(TASKS / name, f"tasks/{name}")
        commit = repo.commit()
        files = sum(1 for _ in (repo.work / "tasks").rglob("*") if _.is_file())
        for r in range(args.rounds):
            repo.serve()
            cache = Path(tmp) / f"cache-{r}"
            branch = [repo.git_url("main", f"tasks/{n}") for n in names]
            for label, urls in (("cold fetch (branch links)", branch), ("warm resolve (branch links)", branch)):
                t = time.perf_counter()
                resolve_pins(urls, cache, error=_error)
                timings[label].append(time.perf_counter() - t)
            pinned = [repo.git_url(commit, f"tasks/{n}") for n in names]
            resolve_pins(pinned, cache, error=_error)
            repo.stop()
            t = time.perf_counter()
            resolve_pins(pinned, cache, error=_error)
            timings["cache only (commit links, server down)"].append(time.perf_counter() - t)
    print(f"{len(names)} task links ({files} files), {args.rounds} rounds, git daemon on 127.0.0.1")
    print(f"{'case':42} {'median s':>9} {'min s':>7} {'max s':>7}")
    for label, values in timings.items():
        print(f"{label:42} {statistics.median(values):9.3f} {min(values):7.3f} {max(values):7.3f}")


if __name__ == "__main__":
    main()
