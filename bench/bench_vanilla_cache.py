"""What the vanilla cache saves: the same evaluation run twice against one cache root.

    .venv/bin/python bench/bench_vanilla_cache.py                      # the bundled example (simulated)
    .venv/bin/python bench/bench_vanilla_cache.py --realcli claude     # probe task, real Claude Code
    .venv/bin/python bench/bench_vanilla_cache.py --realcli codex      # probe task, real Codex

The first run codes every attempt and publishes its vanilla ones; the second imports
them. Per run it prints agent sessions launched (vanilla and treatment), model requests
the loopback probe answered (real CLIs only), the coding seconds of reused attempts (the
origin's time, not spent again), this run's spent tokens and its wall time. Each run
starts with a fresh private cache whose readiness results are already warm, so the
difference is the vanilla cache alone. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
from pluginbench.probe import SCENARIOS_DIR  # noqa: E402
from pluginbench.status import status_snapshot  # noqa: E402


def _config(root: Path, realcli: str | None, repeats: int | None) -> Path:
    if realcli is None:
        folder = root / "quickstart"
        shutil.copytree(REPO / "examples" / "quickstart", folder)
        cfg = folder / "evaluation.yaml"
        if repeats is not None:
            data = yaml.safe_load(cfg.read_text())
            data["repeats"] = repeats
            cfg.write_text(yaml.safe_dump(data))
        return cfg
    guidance = root / "core.md"
    guidance.write_text("# Guidance\nPLUGINBENCH-GUIDANCE-MARKER: write guided answers.\n")
    model = "claude-sonnet-4-5" if realcli == "claude" else "gpt-5.5"
    cfg = root / "evaluation.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": f"vanilla-cache-{realcli}",
        "tasks": {"source": str(REPO / "tests" / "data" / "probe-tasks"), "ids": ["add-numbers"]},
        "treatments": {"guided": {"guidance": [str(guidance)]}},
        "runner": {"harness": realcli, "model": model, "reasoning": "low", "probe": str(SCENARIOS_DIR / "guided.yaml")},
        "repeats": repeats or 3, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }))
    return cfg


def _measure(run: Path, wall: float) -> dict[str, object]:
    events = read_events(run / "events.jsonl")
    launched = [e.attempt_id for e in events if type(e).__name__ == "AgentLaunched"]
    reused = [e for e in events if type(e).__name__ == "AttemptReused"]
    requests = None
    log = run / "evidence" / "probe" / "requests.jsonl"
    if log.exists():
        rows = [json.loads(line) for line in log.read_text().splitlines()]
        requests = {"coding": sum(1 for r in rows if r["kind"] == "coding"),
                    "vanilla": sum(1 for r in rows if r["kind"] == "coding" and str(r["rule"]).endswith("-vanilla"))}
    snap = status_snapshot(run)
    return {
        "sessions_launched": len(launched),
        "vanilla_sessions_launched": sum(1 for a in launched if "__vanilla__" in a),
        "probe_requests": requests,
        "reused": len(reused),
        "reused_coding_seconds": round(sum(e.coding_seconds or 0.0 for e in reused), 2),
        "spent_total_tokens": snap["tokens"]["total_tokens"],
        "wall_seconds": round(wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realcli", choices=["claude", "codex"], default=None)
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
                "PLUGINBENCH_VANILLA_CACHE"):
        os.environ.pop(var, None)
    with tempfile.TemporaryDirectory(prefix="pb-bench-vcache-") as tmp:
        root = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(root / "cache")
        cfg = _config(root, args.realcli, args.repeats)
        # Warm the readiness cache with the cache off, so both measured runs skip oracle/nop alike.
        os.environ["PLUGINBENCH_VANILLA_CACHE"] = "off"
        run_worker(create_run(load(cfg), root / "warm").root, handle_signals=False)
        del os.environ["PLUGINBENCH_VANILLA_CACHE"]
        results = {}
        for name in ("first", "second"):
            rd = create_run(load(cfg), root / name)
            t = time.perf_counter()
            state = run_worker(rd.root, handle_signals=False)
            wall = time.perf_counter() - t
            assert state.finished, state.failed or state.stopped
            results[name] = _measure(rd.root, wall)
            print(json.dumps({"run": name, **results[name]}))
        first, second = results["first"], results["second"]
        saved = {
            "sessions_saved": first["sessions_launched"] - second["sessions_launched"],  # type: ignore[operator]
            "wall_seconds_saved": round(first["wall_seconds"] - second["wall_seconds"], 2),  # type: ignore[operator]
            "coding_seconds_not_spent_again": second["reused_coding_seconds"],
        }
        if first["probe_requests"] and second["probe_requests"]:
            saved["model_requests_saved"] = first["probe_requests"]["coding"] - second["probe_requests"]["coding"]  # type: ignore[index]
        print(json.dumps({"saved": saved}))


if __name__ == "__main__":
    main()
