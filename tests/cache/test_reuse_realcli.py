"""The vanilla cache with the real Claude Code and Codex CLIs against the loopback probe:
a second evaluation reuses the first one's vanilla attempts and sends the model no
vanilla request (the probe's request log is the witness)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from tests._prereq import require
from tests.harnesses._claude_pkg import MARKER, write

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")


def _evaluate(tmp: Path, name: str, harness: str, model: str, env: dict[str, str]) -> Path:
    guidance = write(tmp / "pkg" / "core.md", f"# Guidance\n{MARKER}: write guided answers.\n")
    config = {
        "name": f"cache-{harness}",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"guided": {"guidance": [str(guidance)]}},
        "runner": {"harness": harness, "model": model, "reasoning": "low", "probe": str(SCENARIOS_DIR / "guided.yaml")},
        "repeats": 2, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp / name
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return run_dir


def _coding_requests(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == "coding"]


@pytest.mark.parametrize("harness, model", [("claude", "claude-sonnet-4-5"), ("codex", "gpt-5.5")])
def test_a_second_evaluation_makes_no_vanilla_model_call(tmp_path: Path, harness: str, model: str) -> None:
    """Run 1 pays for vanilla (probe requests matched by the vanilla rule); run 2 reuses both vanilla repeats, the probe sees no vanilla request, and the regraded vanilla still fails while guided passes."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env.pop("PLUGINBENCH_VANILLA_CACHE", None)

    first = _evaluate(tmp_path, "run1", harness, model, env)
    vanilla_first = [r for r in _coding_requests(first) if str(r["rule"]).endswith("-vanilla")]
    assert vanilla_first, "run 1 must pay for its vanilla arm"
    guided_first = [r for r in _coding_requests(first) if str(r["rule"]).endswith("-guided")]

    second = _evaluate(tmp_path, "run2", harness, model, env)
    requests = _coding_requests(second)
    assert not [r for r in requests if str(r["rule"]).endswith("-vanilla")], requests
    assert len([r for r in requests if str(r["rule"]).endswith("-guided")]) == len(guided_first)
    results = json.loads((second / "report" / "results.json").read_text())
    assert len(results["reused_attempts"]) == 2
    assert {r["origin_cohort"] for r in results["reused_attempts"]} == {
        f"vanilla/{p.name}" for p in (tmp_path / "xdg" / "pluginbench" / "vanilla").iterdir()}
    for r in results["reused_attempts"]:
        current = json.loads((second / "evidence" / "attempts" / r["attempt_id"] / "execution-current.json").read_text())
        assert current["revalidated"] is True and current["changed"] is False  # today's rules agree with the origin's
    per = results["per_task"]["add-numbers"]
    assert per["vanilla"]["pass_rate"] == 0.0 and per["guided"]["pass_rate"] == 1.0
    status = json.loads(subprocess.run([sys.executable, "-m", "pluginbench", "status", str(second), "--json"],
                                       capture_output=True, text=True, env=env, check=True).stdout)
    assert status["reuse"] == {"vanilla_attempts": 2, "planned_hits": 2, "reused": 2}
    guided_tokens = sum(a["tokens"] for a in status["attempts"] if a["arm"] == "guided")
    assert status["tokens"]["total_tokens"] == guided_tokens
