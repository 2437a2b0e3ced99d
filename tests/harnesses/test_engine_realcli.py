"""Whole evaluations with the real Claude Code and Codex CLIs, driven by the loopback probe.

The scripted model writes the correct fix only when the treatment's delivered guidance
is in the request, so the report must show a real delta; the usage in results.json must
equal, exactly, the usage the probe served.
"""

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


def _treatment(tmp: Path, harness: str) -> dict[str, list[str]]:
    guidance = write(tmp / "pkg" / "core.md", f"# Guidance\n{MARKER}: write guided answers.\n")
    skill = tmp / "pkg" / "skills" / "tidy-code"
    write(skill / "SKILL.md", "---\nname: tidy-code\ndescription: Keep code tidy.\n---\nBe tidy.\n")
    treatment = {"guidance": [str(guidance)], "skills": [str(skill)]}
    if harness == "codex":
        plugin = tmp / "pkg" / "plugins" / "starter"
        write(plugin / ".codex-plugin" / "plugin.json", json.dumps({"name": "starter", "version": "0.2.0", "description": "d"}))
        write(plugin / "skills" / "plug-skill" / "SKILL.md", "---\nname: plug-skill\ndescription: from a plugin\n---\nx\n")
        write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "sh ${PLUGIN_ROOT}/hooks/start.sh", "timeout": 10}]}]}}))
        write(plugin / "hooks" / "start.sh", 'echo "$PWD" > "$HOME/hook-ran.txt"\n')
        treatment["plugins"] = [str(plugin)]
    if harness == "claude":
        plugin = tmp / "pkg" / "plugins" / "pb-hooks"
        write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pb-hooks", "version": "0.1.0"}))
        write(plugin / "hooks" / "mark.sh", "#!/bin/sh\necho session-start-ran >> \"$HOME/hook.log\"\n", 0o755)
        write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/mark.sh\""}]}]}}))
        treatment["plugins"] = [str(plugin)]
    return treatment


def _run(tmp: Path, harness: str, model: str, scenario: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    config = {
        "name": f"probe-{harness}",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"guided": _treatment(tmp, harness)},
        "runner": {"harness": harness, "model": model, "reasoning": "low", "probe": str(scenario)},
        "repeats": 2,
        "jobs": 2,
        "seed": 1,
        "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    run_dir = tmp / "run"
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    return run_dir, done


def _served(run_dir: Path, harness: str) -> tuple[int, int]:
    """(input, output) tokens the probe served over completed coding turns."""
    inp = out = 0
    for line in (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] != "coding" or not r["completed"] or r["status"] != 200 or not r["usage"]:
            continue
        u = r["usage"]
        if harness == "claude":  # Anthropic's input_tokens exclude cache reads and writes
            inp += u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        else:  # OpenAI's input_tokens include cached ones
            inp += u["input_tokens"]
        out += u["output_tokens"]
    return inp, out


@pytest.mark.parametrize("harness, model", [("claude", "claude-sonnet-4-5"), ("codex", "gpt-5.5")])
def test_whole_evaluation_shows_the_guidance_delta_and_exact_usage(tmp_path: Path, harness: str, model: str) -> None:
    """Vanilla fails and the guided arm passes; results.json tokens equal what the probe served."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    run_dir, done = _run(tmp_path, harness, model, SCENARIOS_DIR / "guided.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    assert results["run"]["probe"] is True
    per = results["per_task"]["add-numbers"]
    assert per["vanilla"]["pass_rate"] == 0.0
    assert per["guided"]["pass_rate"] == 1.0
    attempts = results["attempts"]
    assert len(attempts) == 4
    sessions = []
    for a in attempts:
        # A command hook (both treatments carry a plugin with one) may spend unmetered
        # tokens: its arm's total is unknown and the native session's usage is kept apart.
        hooked = a["arm"] == "guided"
        if hooked:
            assert a["tokens"]["status"] == "unknown" and a["tokens"]["total"] is None, a["tokens"]
            assert a["tokens"]["native_session"]["status"] == "exact", a["tokens"]
            sessions.append(a["tokens"]["native_session"])
        else:
            assert a["tokens"]["status"] == "exact" and a["tokens"]["native_session"] is None, a["tokens"]
            sessions.append(a["tokens"])
    got_in = sum(s["input"] for s in sessions)
    got_out = sum(s["output"] for s in sessions)
    assert (got_in, got_out) == _served(run_dir, harness)
    assert any("native CLI session usage is kept separately" in n for n in results["notes"])
    for a in attempts:
        receipt = json.loads((run_dir / a["evidence"] / "native-treatment.json").read_text())
        assert receipt, "discovery receipt missing"
    assert "PROBE" in (run_dir / "report" / "report.html").read_text()


@pytest.mark.parametrize("stop", ["rate-limit", "auth", "server-error"])
@pytest.mark.parametrize("harness, model", [("claude", "claude-sonnet-4-5"), ("codex", "gpt-5.5")])
def test_provider_stop_stops_the_run_and_resume_finishes(tmp_path: Path, harness: str, model: str, stop: str) -> None:
    """A limit, auth failure or 5xx stops the run naming the attempt; once the provider answers, resume codes the slot again."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    scenario = tmp_path / "scenario.yaml"
    shutil.copyfile(SCENARIOS_DIR / f"{stop}.yaml", scenario)
    run_dir, done = _run(tmp_path, harness, model, scenario)
    assert done.returncode == 1, done.stdout + done.stderr
    status = json.loads(subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    assert status["phase"] == "failed"
    assert "provider stop" in status["error"] and "__r" in status["error"]
    assert status["states"]["interrupted"] >= 1
    assert status["outcomes"] == {"pass": 0, "overlap_pass": 0, "fail": 0, "empty": 0, "unknown": 0}
    shutil.copyfile(SCENARIOS_DIR / "guided.yaml", scenario)  # the provider recovers
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    again = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(run_dir), "--foreground"],
                           capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    status = json.loads(subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    assert status["phase"] == "complete"
    assert status["discarded"] and all(d["replaced_by"] for d in status["discarded"])


def test_refused_operator_variable_stops_before_anything_starts(tmp_path: Path) -> None:
    """ANTHROPIC_API_KEY in the operator environment refuses a Claude run with exit 2 and no run directory."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    config = {
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {},
        "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
        "environment": {"isolation": "bubblewrap", "allow_unisolated": True},
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**{k: v for k, v in os.environ.items() if k not in REFUSED}, "ANTHROPIC_API_KEY": "sk-ant-not-used",
           "CLAUDE_CODE_OAUTH_TOKEN": "x"}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(tmp_path / "run"), "--yes"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert not (tmp_path / "run").exists()
