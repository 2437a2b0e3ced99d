"""pluginbench doctor: real CLIs against the loopback probe, spending nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pluginbench.probe import find_cli
from tests._prereq import require

pytestmark = [pytest.mark.realcli, pytest.mark.slow]


def _doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", "doctor", "--json", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_doctor_passes_with_a_credential_present(tmp_path: Path, harness: str) -> None:
    """With the CLI, a (presence-only) credential and bubblewrap, every check passes and exit is 0."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text("{}")
    env = {**os.environ, "HOME": str(home), "CLAUDE_CODE_OAUTH_TOKEN": "present-not-used"}
    done = _doctor(env, "--harness", harness)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"][harness]}
    assert checks["end-to-end probe attempt"]["ok"] and "graded pass" in checks["end-to-end probe attempt"]["detail"]
    assert checks["cli version"]["detail"].endswith("(qualified)")


def test_doctor_fails_without_a_credential(tmp_path: Path) -> None:
    """A missing credential is a failed check and exit code 1, even when the CLI works."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_OAUTH_TOKEN"}
    done = _doctor(env, "--harness", "claude")
    assert done.returncode == 1
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]["claude"]}
    assert checks["credential present"]["ok"] is False
