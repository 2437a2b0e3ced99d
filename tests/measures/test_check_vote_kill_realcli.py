"""kill -9 during an llm-check vote: the real pinned Codex CLI codes, reviews and grades against the loopback probe;
the worker is killed while the grader call is in flight, and the resume records the cut-off call before it grades
again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from tests._prereq import require

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")
MODEL = "gpt-5.5"


def _scenario(path: Path, delay: float) -> None:
    """review-findings.yaml with the grader's answer delayed by ``delay`` seconds."""
    doc = yaml.safe_load((SCENARIOS_DIR / "review-findings.yaml").read_text())
    for rule in doc["rules"]:
        if rule["name"] == "grade":
            rule["script"][0]["delay_seconds"] = delay
    path.write_text(yaml.safe_dump(doc))


def _pb(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def _events(run_dir: Path) -> list[dict]:
    path = run_dir / "events.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def test_a_vote_cut_off_by_kill_9_is_discarded_visibly_and_graded_again(tmp_path: Path) -> None:
    """The worker dies mid-vote: status shows the vote cut off; the resume records check_vote.discarded (usage
    unknown) before grading again, status counts one discarded and one cast vote with unknown vote tokens, and the
    check still passes."""
    require(find_cli("codex") is not None, "codex CLI (tools/install-clis.sh)")
    scenario = tmp_path / "scenario.yaml"
    _scenario(scenario, delay=60)
    cfg = {
        "name": "vote-kill", "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "runner": {"harness": "codex", "model": MODEL, "reasoning": "low", "probe": str(scenario),
                   "vanilla_cache": False},
        "reviewer": {"harness": "codex", "model": MODEL, "reasoning": "low", "timeout_seconds": 120},
        "measurements": ["tokens", "time", "lines", "checks"],
        "measurement_settings": {"checks": [
            {"name": "explains", "kind": "llm", "rubric": "The final message says what was fixed.", "votes": 1}]},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 120, "environment": {"isolation": "bubblewrap"},
    }
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump(cfg))
    run_dir = tmp_path / "run"
    started = _pb("run", str(config), "--output", str(run_dir), "--yes")
    assert started.returncode == 0, started.stdout + started.stderr
    deadline = time.monotonic() + 240
    while not any(e["type"] == "check_vote.started" for e in _events(run_dir)):
        assert time.monotonic() < deadline, [e["type"] for e in _events(run_dir)]
        time.sleep(0.1)
    owner = json.loads((run_dir / "run.lock").read_text())
    os.kill(owner["pid"], signal.SIGKILL)
    time.sleep(0.5)
    assert not any(e["type"] == "check_vote.cast" for e in _events(run_dir))
    snap = json.loads(_pb("status", str(run_dir), "--json").stdout)
    assert snap["phase"] == "interrupted" and snap["model_calls"]["check_votes"]["open"] == 1
    assert "cut off (the next worker records them as discarded)" in _pb("status", str(run_dir)).stdout

    _scenario(scenario, delay=0)  # the model answers at once now
    again = _pb("run", str(run_dir), "--foreground", "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    types = [e["type"] for e in _events(run_dir)]
    discarded = types.index("check_vote.discarded")
    assert types.index("run.started", 1) < discarded < max(i for i, t in enumerate(types) if t == "check_vote.started")
    [cut] = [e for e in _events(run_dir) if e["type"] == "check_vote.discarded"]
    assert cut["check"] == "explains" and cut["vote"] == 1 and cut["usage"]["status"] == "unknown"
    snap = json.loads(_pb("status", str(run_dir), "--json").stdout)
    votes = snap["model_calls"]["check_votes"]
    assert snap["phase"] == "complete" and (votes["discarded"], votes["cast"], votes["open"]) == (1, 1, 0)
    assert votes["tokens"]["total_tokens"] is None and votes["tokens"]["unknown_calls"] == 1
    assert snap["arms"]["vanilla"]["checks"]["checks"]["explains"]["passed"] == 1
    assert "1 discarded (cut off by a killed worker" in _pb("status", str(run_dir)).stdout
