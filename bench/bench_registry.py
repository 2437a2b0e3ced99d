"""Seconds to resolve a 100-task Harbor registry dataset from a local index. Prints; asserts nothing.

    .venv/bin/python bench/bench_registry.py [--tasks 100] [--rounds 3]

Builds one bare repository holding ``--tasks`` task folders (copies of the six quickstart tasks
under distinct names), serves it with ``git daemon`` on 127.0.0.1 and writes a local
``registry.json`` listing them as one dataset version. Times, per round:

* index only: read + parse + select the dataset and all its tasks (pure, no git);
* cold: ``resolve_dataset`` into an empty task cache (one ``ls-remote HEAD``, one shallow
  fetch, then per task: write, git-tree and SHA-256 verification, cache entry);
* warm (server up): the same again, every task a verified cache hit (``head`` resolved again);
* cache only (server down): an index with the commit written out, every task from the cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pluginbench.tasks import parse_registry, read_registry, resolve_dataset, select_dataset  # noqa: E402
from pluginbench.tasks._registry import pick_tasks  # noqa: E402
from tests.tasks._gitserver import TaskRepo  # noqa: E402

TASKS = ROOT / "examples" / "quickstart" / "tasks"


def _error(part: str, message: str, fix: str) -> Exception:
    return RuntimeError(f"{part}: {message} ({fix})")


def _index(path: Path, url: str, names: list[str], commit: str | None) -> None:
    rows = [{"name": f"bench/{n}", "git_url": url, "git_commit_id": commit, "path": f"tasks/{n}"} for n in names]
    path.write_text(json.dumps([{"name": "bench", "version": "1.0", "description": "", "tasks": rows, "metrics": []}]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sources = sorted(p for p in TASKS.iterdir() if (p / "task.toml").is_file())
    timings: dict[str, list[float]] = {"index only (read, parse, select)": [], "cold (empty task cache)": [],
                                       "warm (server up, head resolved)": [], "cache only (server down)": []}
    with tempfile.TemporaryDirectory(prefix="bench-registry-") as tmp:
        repo = TaskRepo(Path(tmp) / "server")
        names = [f"{sources[i % len(sources)].name}-{i:03d}" for i in range(args.tasks)]
        for i, name in enumerate(names):
            repo.add_tree(sources[i % len(sources)], f"tasks/{name}")
        commit = repo.commit()
        files = sum(1 for f in (repo.work / "tasks").rglob("*") if f.is_file())
        ids = [f"bench/{n}" for n in names]
        for r in range(args.rounds):
            repo.serve()
            url = f"git://127.0.0.1:{repo.port}/tasks.git"
            head, pinned = Path(tmp) / "head.json", Path(tmp) / "pinned.json"
            _index(head, url, names, None)
            _index(pinned, url, names, commit)
            cache = Path(tmp) / f"cache-{r}"
            t = time.perf_counter()
            ds = select_dataset(parse_registry(read_registry(str(head)), str(head)), "bench", "1.0", str(head))
            pick_tasks(ds, ids, str(head), "ids")
            timings["index only (read, parse, select)"].append(time.perf_counter() - t)
            hashes = set()
            for label in ("cold (empty task cache)", "warm (server up, head resolved)"):
                t = time.perf_counter()
                pin, _ = resolve_dataset("bench", "1.0", ids, str(head), cache, error=_error)
                timings[label].append(time.perf_counter() - t)
                hashes.add(pin.content_hash)
            repo.stop()
            t = time.perf_counter()
            pin, _ = resolve_dataset("bench", "1.0", ids, str(pinned), cache, error=_error)
            timings["cache only (server down)"].append(time.perf_counter() - t)
            hashes.add(pin.content_hash)
            assert len(hashes) == 1, "the same files must give the same content hash"
    print(f"{args.tasks}-task dataset ({files} files) from a local registry.json, {args.rounds} rounds, "
          "git daemon on 127.0.0.1")
    print(f"{'case':36} {'median s':>9} {'min s':>7} {'max s':>7} {'ms/task':>8}")
    for label, values in timings.items():
        med = statistics.median(values)
        print(f"{label:36} {med:9.3f} {min(values):7.3f} {max(values):7.3f} {1000 * med / args.tasks:8.1f}")


if __name__ == "__main__":
    main()
