"""Resume uses the versions frozen in run.created and refuses a host whose CLI or PluginBench differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench import __version__
from pluginbench.actors import create_run, version_mismatch
from pluginbench.config import load
from pluginbench.events import RunCreated
from pluginbench.probe import PINNED, SCENARIOS_DIR, cli_version, find_cli
from tests._prereq import require
from tests.runs_helpers import write_config

TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"


def _created(harness: str = "claude", harness_version: str | None = "2.1.328", pb: str = __version__) -> RunCreated:
    return RunCreated(
        name="t", evaluation_sha256="0" * 64, harness=harness, model="m", reasoning=None, backend="local",
        isolation="none", tasks=[], arms=["vanilla"], repeats=1, jobs=1, seed=1, timeout_seconds=60, slots=[],
        pluginbench_version=pb, harness_version=harness_version, cli_version_source="host",
    )


def test_same_versions_are_accepted() -> None:
    """A host reporting exactly the frozen CLI and PluginBench versions resumes."""
    assert version_mismatch(_created(), host_pluginbench=__version__, host_cli="2.1.328") is None


def test_another_host_cli_is_refused_naming_both_versions_and_the_choices() -> None:
    """Frozen 2.1.328 against a host 2.1.400: the message names both and the fix offers install or a new run."""
    message, fix = version_mismatch(_created(), host_pluginbench=__version__, host_cli="2.1.400") or ("", "")
    assert "2.1.328" in message and "2.1.400" in message and "claude" in message
    assert "install claude 2.1.328" in fix and "new evaluation" in fix


def test_a_missing_host_cli_is_refused() -> None:
    """A host CLI that does not answer --version differs from any frozen version."""
    problem = version_mismatch(_created(), host_pluginbench=__version__, host_cli=None)
    assert problem is not None and "not answering --version" in problem[0]


def test_another_pluginbench_version_is_refused_even_for_controls() -> None:
    """A run frozen by another PluginBench version is refused whatever its harness."""
    problem = version_mismatch(_created("simulated", None, pb="0.0.1"), host_pluginbench=__version__, host_cli=None)
    assert problem is not None and "0.0.1" in problem[0] and __version__ in problem[0]
    assert version_mismatch(_created("simulated", None), host_pluginbench=__version__, host_cli=None) is None


def test_a_cli_run_without_a_frozen_version_is_refused() -> None:
    """A CLI run whose run.created holds no version is never resumed with whatever the host has."""
    problem = version_mismatch(_created(harness_version=None), host_pluginbench=__version__, host_cli="2.1.328")
    assert problem is not None and "no claude CLI version" in problem[0]


def _rewrite_created(run_dir: Path, **fields: object) -> bytes:
    events = run_dir / "events.jsonl"
    lines = events.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["type"] == "run.created"
    first.update(fields)
    lines[0] = json.dumps(first, separators=(",", ":"))
    events.write_text("\n".join(lines) + "\n")
    return events.read_bytes()


def _resume(run_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", "run", str(run_dir)], capture_output=True,
                          text=True, timeout=120)


def test_resume_under_another_pluginbench_version_is_refused(tmp_path: Path) -> None:
    """`pluginbench run <run-dir>` of a run frozen by PluginBench 0.0.1 exits 2 naming both versions; nothing starts."""
    rd = create_run(load(write_config(tmp_path, harness="nop", treatments={})), tmp_path / "run")
    before = _rewrite_created(rd.root, pluginbench_version="0.0.1")
    done = _resume(rd.root)
    assert done.returncode == 2, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "PluginBench 0.0.1" in out and f"PluginBench {__version__}" in out and "Traceback" not in out
    assert (rd.root / "events.jsonl").read_bytes() == before


@pytest.mark.realcli
def test_resume_with_another_host_cli_version_is_refused(tmp_path: Path) -> None:
    """A run frozen with Claude Code 2.1.327 (runner.cli_version null) is not resumed by the host's real pinned 2.1.328."""
    cli = find_cli("claude")
    require(cli is not None, "claude CLI (tools/install-clis.sh)")
    host = cli_version(cli)
    assert host == PINNED["claude"]
    config = {
        "name": "frozen-cli",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {},
        "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low",
                   "probe": str(SCENARIOS_DIR / "guided.yaml")},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60,
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    rd = create_run(load(path), tmp_path / "run")
    created = json.loads((rd.root / "events.jsonl").read_text().splitlines()[0])
    assert created["harness_version"] == host and created["cli_version_source"] == "host"
    before = _rewrite_created(rd.root, harness_version="2.1.327")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(rd.root)], capture_output=True, text=True,
                          timeout=120, env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "2.1.327" in out and host in out and "tools/install-clis.sh" in out and "new evaluation" in out
    assert "Traceback" not in out
    assert (rd.root / "events.jsonl").read_bytes() == before


def test_a_host_cli_update_is_accepted_where_the_coding_images_carry_the_frozen_cli() -> None:
    """On a backend whose coding images carry the frozen CLI (docker), another host CLI version is accepted;
    a host CLI that does not answer is still refused."""
    assert version_mismatch(_created(), host_pluginbench=__version__, host_cli="2.1.400", carried=True) is None
    assert version_mismatch(_created(), host_pluginbench=__version__, host_cli=None, carried=True) is not None


def test_runtime_drift_refuses_the_launcher_and_platform_and_records_the_engine_and_host_cli() -> None:
    """A changed launcher version, source hash, backend or engine OS/architecture refuses; a changed engine ID or
    version or host CLI is accepted and named; fields either side lacks are not compared."""
    from pluginbench.actors import runtime_drift

    saved = {"launcher_version": "0.1.0", "launcher_source_sha256": "a", "backend": "docker", "engine_os": "linux",
             "engine_arch": "x86_64", "engine_id": "E1", "engine_version": "27.1", "host_cli_version": "2.1.328"}
    assert runtime_drift(saved, saved) == ([], [])
    refused, accepted = runtime_drift(saved, {**saved, "launcher_source_sha256": "b", "engine_arch": "aarch64",
                                              "engine_version": "28.0", "host_cli_version": "2.1.400"})
    assert refused == ["launcher_source_sha256: a -> b", "engine_arch: x86_64 -> aarch64"]
    assert accepted == ["engine_version: 27.1 -> 28.0", "host_cli_version: 2.1.328 -> 2.1.400"]
    lacking = {k: v for k, v in saved.items() if not k.startswith("engine")}
    assert runtime_drift(saved, {**lacking, "backend": "docker"}) == ([], [])


def test_resume_under_another_launcher_source_is_refused_naming_the_field(tmp_path: Path) -> None:
    """A run whose last worker recorded another launcher source hash is refused by `run <run-dir>` (exit 2, the field
    with its saved and current values, nothing written); the same runtime is not."""
    from pluginbench.actors import check_runtime, current_runtime
    from pluginbench.errors import RunDirError
    from pluginbench.events import EventLog, RunLock, RunStarted, read_run_log

    rd = create_run(load(write_config(tmp_path, harness="nop", treatments={})), tmp_path / "run")
    now = current_runtime(load(write_config(tmp_path, harness="nop", treatments={})).evaluation)
    assert check_runtime(read_run_log(rd.events).events, now, rd.events) == []
    with RunLock(rd.root), EventLog(rd.events) as log:
        log.append(RunStarted(pid=1, pgid=1, resumed=False, runtime={**now, "launcher_source_sha256": "0" * 64}))
    before = (rd.root / "events.jsonl").read_bytes()
    with pytest.raises(RunDirError):
        check_runtime(read_run_log(rd.events).events, now, rd.events)
    done = _resume(rd.root)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "launcher_source_sha256: " + "0" * 64 + " -> " + now["launcher_source_sha256"] in out
    assert "field: run.started.runtime" in out and "Traceback" not in out
    assert (rd.root / "events.jsonl").read_bytes() == before
