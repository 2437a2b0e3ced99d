"""Whole-run helpers for the Ray tests: configs, the CLI as a subprocess, polling the log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..runs_helpers import QUICKSTART, events_of

#: What may differ between two runs of one evaluation on two backends: the backend's own
#: identity, the settings hash (the environment block differs), and wall-clock times (they
#: differ between any two runs). Everything else in results.json must match.
BACKEND_IDENTITY = ("backend", "isolation", "isolated", "evaluation_sha256")
WALL_CLOCK = re.compile(r"(seconds|minutes)")


def cli(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``pluginbench ...`` in a child process (the run's head when it runs one)."""
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))
    if check and done.returncode != 0:
        raise AssertionError(f"pluginbench {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def config(tmp: Path, *, address: str | None, harness: str = "simulated", tasks: dict[str, Any] | None = None,
           treatments: dict[str, Any] | None = None, jobs: int = 2, repeats: int = 1, name: str = "ray",
           nodes: dict[str, Any] | None = None) -> Path:
    """An evaluation over the quickstart tasks; on the ray backend when ``address`` is given."""
    cfg: dict[str, Any] = {
        "name": name,
        "tasks": tasks or {"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals", "word-wrap"]},
        "treatments": treatments if treatments is not None else {
            "testing-discipline": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]}},
        "runner": {"harness": harness, "model": "simulated-1" if harness == "simulated" else None},
        "repeats": repeats,
        "jobs": jobs,
        "seed": 3,
        "timeout_seconds": 120,
    }
    if address is not None:
        settings: dict[str, Any] = {"address": address, "isolation": "bubblewrap"}
        if nodes:
            settings["nodes"] = nodes
        cfg["environment"] = {"backend": "ray", "settings": settings}
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def slow_task(root: Path, name: str, seconds: float) -> Path:
    """A task the oracle solves after ``seconds`` (a window to kill something mid-attempt)."""
    t = root / name
    (t / "workspace").mkdir(parents=True)
    (t / "workspace" / "a.txt").write_text("a\n")
    (t / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n')
    (t / "instruction.md").write_text("Create b.txt containing b.\n")
    (t / "tests").mkdir()
    (t / "tests" / "test.sh").write_text(
        '#!/bin/sh\nmkdir -p "$LOGS_DIR/verifier"\nif [ "$(cat "$APP_DIR/b.txt" 2>/dev/null)" = b ]; then echo 1; else echo 0; fi'
        ' > "$LOGS_DIR/verifier/reward.txt"\n')
    (t / "solution").mkdir()
    (t / "solution" / "solve.sh").write_text(f'#!/bin/sh\nsleep {seconds}\necho b > "$APP_DIR/b.txt"\n')
    for script in (t / "tests" / "test.sh", t / "solution" / "solve.sh"):
        script.chmod(0o755)
    return t


def wait_for(what: str, condition: Callable[[], Any], seconds: float = 300) -> Any:
    """Poll ``condition`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + seconds
    while True:
        got = condition()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def events(run: Path) -> list[dict[str, Any]]:
    return events_of(run) if (run / "events.jsonl").exists() else []


def status(run: Path) -> dict[str, Any]:
    return json.loads(cli("status", str(run), "--json").stdout)


def results_without_backend(run: Path) -> dict[str, Any]:
    """results.json with the backend's own identity fields set aside."""
    data = json.loads((run / "report" / "results.json").read_text())
    _strip(data)
    return data


def _strip(value: Any) -> None:
    if isinstance(value, dict):
        # the source-only index holds each grade's wall-clock seconds, so its hash differs too
        if isinstance(value.get("source_only_index"), dict):
            value["source_only_index"].pop("sha256", None)
        for key in [k for k in value if k in BACKEND_IDENTITY or WALL_CLOCK.search(k)]:
            value.pop(key)
        for v in value.values():
            _strip(v)
    elif isinstance(value, list):
        for v in value:
            _strip(v)


def assert_no_duplicates_none_lost(run: Path) -> dict[str, Any]:
    """Every planned slot ends in exactly one complete live attempt; no attempt id launched twice."""
    evs = events_of(run)
    launched = [e["attempt_id"] for e in evs if e["type"] == "agent.launched"]
    assert len(launched) == len(set(launched)), f"an attempt was launched twice: {launched}"
    st = status(run)
    assert st["phase"] == "complete", st
    planned = next(e for e in evs if e["type"] == "run.created")["slots"]
    assert sorted(a["slot"] for a in st["attempts"]) == sorted(s["slot"] for s in planned)
    assert all(a["state"] == "complete" for a in st["attempts"])
    return st
