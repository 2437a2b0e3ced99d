"""Whole simulated-agent runs with ``comparison.stopping`` on the local backend: a large
effect stops the run early, even when the worker is killed -9 during the deciding task and
resumed; no effect runs to ``max_tasks``, feeding vanilla attempts reused from the cache."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pluginbench import stats
from tests.runs_helpers import QUICKSTART, events_of

pytestmark = pytest.mark.slow

POOL = 9
LEVEL = 0.6  # a low level keeps the run short: a +100 pp effect decides after 4 tasks (the pure rule says; the test derives it)
GUIDANCE = QUICKSTART / "guidance" / "testing-discipline.md"  # mentions "edge case", the tasks' keyword
CANDIDATES = """keywords = ["edge case"]

[[candidates]]
name = "correct"
patch = "correct.patch"
expect = "pass"
weight = 0
guided_weight = 1

[[candidates]]
name = "partial"
patch = "partial.patch"
expect = "fail"
weight = 1
guided_weight = 0
"""


def _tasks(root: Path) -> list[str]:
    """POOL copies of the quickstart roman-numerals task whose simulated agent fails without
    guidance and passes with guidance that names the keyword (a +100 pp effect)."""
    ids = [f"seq{i:02d}" for i in range(POOL)]
    for tid in ids:
        dest = root / tid
        shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", dest)
        (dest / "simulated" / "candidates.toml").write_text(CANDIDATES)
        toml = dest / "task.toml"
        toml.write_text(toml.read_text().replace("pluginbench/roman-numerals", f"pluginbench/{tid}"))
    return ids


def _config(tmp: Path, ids: list[str], guidance: Path, *, jobs: int, max_tasks: int | None, name: str) -> Path:
    cfg: dict[str, Any] = {
        "name": name,
        "tasks": {"source": str(tmp / "tasks"), "ids": ids},
        "treatments": {"td": {"guidance": [str(guidance)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": jobs, "seed": 3, "timeout_seconds": 60,
        "environment": {"isolation": "none"},
        "measurements": ["tokens", "time"],
        "statistics": {"confidence_level": LEVEL},
        "comparison": {"stopping": {"min_tasks": 3, "max_tasks": max_tasks, "smallest_effect": 0.1}},
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


def _plan_tasks(run_dir: Path) -> list[str]:
    """The run's tasks in plan (slot) order: the seeded random order a sequential run draws."""
    created = events_of(run_dir)[0]
    return list(dict.fromkeys(s["task"] for s in created["slots"]))


def _expected_decision_task() -> int:
    """After how many complete tasks the pure rule decides +1 on every task at LEVEL."""
    rule = stats.StoppingRule(level=LEVEL, min_tasks=3, max_tasks=None, smallest_effect=0.1)
    rows = [stats.TaskValues(task=str(i), pass_rate={"td": 1.0}, tokens={"td": None}) for i in range(POOL)]
    decided = stats.sequential_state(rule, ["td"], rows).decided_after
    assert decided is not None and decided < POOL
    return decided


def test_large_effect_stops_early_and_a_kill_during_the_deciding_task_resumes_to_the_same_decision(tmp_path: Path) -> None:
    """A +100 pp effect is decided (success) after the task the pure rule names, the worker killed -9 while that task codes; the resume records that decision, stops with tasks left unrun, and the report, status and a rebuilt report say so identically."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), PLUGINBENCH_VANILLA_CACHE="on")
    ids = _tasks(tmp_path / "tasks")
    config = _config(tmp_path, ids, GUIDANCE, jobs=2, max_tasks=None, name="large")
    run_dir = tmp_path / "large"
    k = _expected_decision_task()
    _cli(env, "run", str(config), "--output", str(run_dir))
    deciding = _plan_tasks(run_dir)[k - 1]
    deadline = time.monotonic() + 400
    killed = False
    while time.monotonic() < deadline and not killed:
        events = events_of(run_dir) if (run_dir / "events.jsonl").exists() else []
        if any(e["type"] == "agent.launched" and e["attempt_id"].startswith(f"{deciding}__") for e in events):
            owner = json.loads((run_dir / "run.lock").read_text())
            with contextlib.suppress(ProcessLookupError):
                os.kill(owner["pid"], signal.SIGKILL)
            killed = True
        assert not any(e["type"] == "run.stopped" for e in events), "the run ended before the kill"
        time.sleep(0.05)
    assert killed, "the deciding task never started"
    time.sleep(0.5)
    _cli(env, "run", str(run_dir), "--foreground")

    events = events_of(run_dir)
    decisions = [e for e in events if e["type"] == "extension.recorded" and e["extension"] == "sequential"]
    assert len(decisions) == 1
    record = decisions[0]["data"]
    assert record["decided_after"] == k
    assert [(g["arm"], g["metric"], g["decision"]) for g in record["gates"]] == [("td", "pass_rate", "success")]
    assert events[-1]["type"] == "run.stopped" and events[-1]["reason"].startswith(f"decided after {k} complete task")
    started = {e["attempt_id"].split("~")[0] for e in events if e["type"] == "attempt.started"}
    assert len(started) < 2 * POOL, "a decided run starts nothing after the decision: attempts are left unrun"
    assert events[-1]["type"] == "run.stopped"

    status = json.loads(_cli(env, "status", str(run_dir), "--json").stdout)
    assert status["sequential"]["decided_after"] == k
    results = json.loads((run_dir / "report" / "results.json").read_text())
    seq = results["sequential"]
    assert seq["decided"] and seq["decided_after"] == k and seq["stopped_by_decision"]
    html = (run_dir / "report" / "report.html").read_text()
    assert f"decided after {k} complete task" in html and "anytime-valid" in html
    verdict = results["verdicts"][0]
    assert verdict["kind"] == "better" and verdict["low"] > 0
    before = {p.name: p.read_bytes() for p in (run_dir / "report").iterdir() if p.is_file()}
    _cli(env, "report", str(run_dir))
    assert {p.name: p.read_bytes() for p in (run_dir / "report").iterdir() if p.is_file()} == before

    # No effect (guidance without the keyword): runs to max_tasks, vanilla reused from the cache.
    plain = tmp_path / "plain.md"
    plain.write_text("# Notes\n\nKeep changes small.\n")
    config2 = _config(tmp_path, ids, plain, jobs=2, max_tasks=3, name="none")
    # with a cost gate too: every attempt priced at the row frozen into run.created
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"as_of": "2026-11-01", "models": {"simulated-1": {
        "input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0}}}))
    cfg2 = yaml.safe_load(config2.read_text())
    cfg2["prices"] = str(prices)
    cfg2["comparison"]["stopping"]["cost_factor"] = 1.0
    config2.write_text(yaml.safe_dump(cfg2))
    run2 = tmp_path / "none"
    _cli(env, "run", str(config2), "--output", str(run2), "--foreground")
    events2 = events_of(run2)
    assert events2[-1]["type"] == "run.finished"
    assert not [e for e in events2 if e["type"] == "extension.recorded"]
    assert [e for e in events2 if e["type"] == "attempt.reused"], "vanilla attempts come from the cache"
    results2 = json.loads((run2 / "report" / "results.json").read_text())
    assert results2["sequential"]["complete_tasks"] == 3 and not results2["sequential"]["decided"]
    assert results2["sequential"]["at_max"]
    frozen = events2[0]["stopping"]
    assert frozen["multiplicity"] == "bonferroni" and frozen["price"]["model"] == "simulated-1"
    cost = [g for g in results2["sequential"]["gates"] if g["metric"] == "cost"]
    assert len(cost) == 1 and cost[0]["left_out"] == 0 and len(cost[0]["points"]) == 3
    assert results2["sequential"]["family"] == 2 and cost[0]["level"] == pytest.approx(1 - (1 - LEVEL) / 2)
