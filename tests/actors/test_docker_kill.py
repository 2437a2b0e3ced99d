"""A ``docker kill`` of a coding container is an environment failure (issue 21 item 4): the
attempt is discarded and replaced, never scored as the agent's ``empty``."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.actors.test_docker_runs import cli, config, task
from tests.runs_helpers import events_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _coding_container(attempt_id: str) -> str:
    done = subprocess.run(["docker", "ps", "-q", "--filter", f"label=pluginbench.attempt={attempt_id}",
                           "--filter", "label=pluginbench.role=coding"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_docker_kill_of_the_coding_container_discards_and_replaces_the_attempt(tmp_path: Path) -> None:
    """docker kill mid-coding: the attempt is discarded with the container named, its replacement passes, and no attempt is scored empty."""
    source = tmp_path / "tasks"
    task(source, "slow", solve='sleep 8; echo b > "$APP_DIR/b.txt"\n')
    path = config(tmp_path, tasks={"source": str(source), "ids": ["slow"]}, treatments={},
                  runner={"harness": "oracle"}, jobs=1)
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run))
    deadline = time.monotonic() + 240
    while not any(e["type"] == "agent.launched" for e in events_of(run)):
        assert time.monotonic() < deadline, "the attempt never launched"
        time.sleep(0.2)
    time.sleep(1.0)
    cid = _coding_container("slow__vanilla__r1")
    assert cid, "no running coding container for the attempt"
    subprocess.run(["docker", "kill", cid], capture_output=True, check=True)
    while not any(e["type"] in ("run.finished", "run.failed", "run.stopped") for e in events_of(run)):
        assert time.monotonic() < deadline + 240, "the run never ended"
        time.sleep(0.3)
    events = events_of(run)
    discarded = [e for e in events if e["type"] == "attempt.discarded"]
    assert [e["attempt_id"] for e in discarded] == ["slow__vanilla__r1"], [e["type"] for e in events]
    assert "from outside the run" in discarded[0]["reason"] and cid[:12] in discarded[0]["reason"]
    assert discarded[0]["usage"]["status"] == "unknown"
    assert events[-1]["type"] == "run.finished"
    status = json.loads(cli("status", str(run), "--json").stdout)
    assert status["phase"] == "complete"
    assert [(a["id"], a["outcome"]) for a in status["attempts"]] == [("slow__vanilla__r1~2", "pass")]
    graded = [e for e in events if e["type"] == "attempt.graded"]
    assert all(e["outcome"] != "empty" for e in graded), graded


def test_resume_removes_the_runs_exited_and_never_started_containers(tmp_path: Path) -> None:
    """Containers of the run that a kill left exited or never started are removed by the resume (and said); another run's are kept."""
    from pluginbench.rundir import RunDir

    path = config(tmp_path, jobs=1)
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run))
    deadline = time.monotonic() + 240
    while not any(e["type"] == "agent.launched" for e in events_of(run)):
        assert time.monotonic() < deadline, "the attempt never launched"
        time.sleep(0.2)
    cli("stop", str(run), "--wait")
    run_id = RunDir(run.resolve()).run_id

    def make(run_label: str, start: bool) -> str:
        argv = ["docker", "run" if start else "create", *(["-d"] if start else []),
                "--label", "pluginbench.owner=pluginbench", "--label", f"pluginbench.run={run_label}",
                "--label", "pluginbench.attempt=left__vanilla__r1", "pluginbench/base:bookworm", "true"]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()

    exited, never_started, other = make(run_id, True), make(run_id, False), make("another-run", False)
    try:
        subprocess.run(["docker", "wait", exited], capture_output=True, check=True)
        resumed = cli("run", str(run), "--foreground")
        assert resumed.stdout.count("left stopped by an attempt that a kill interrupted") == 2, resumed.stdout
        for cid in (exited, never_started):
            assert subprocess.run(["docker", "inspect", cid], capture_output=True).returncode != 0, cid
        assert subprocess.run(["docker", "inspect", other], capture_output=True).returncode == 0
    finally:
        subprocess.run(["docker", "rm", "-f", exited, never_started, other], capture_output=True)


def test_an_agent_that_kills_every_process_in_its_container_gets_its_own_outcome(tmp_path: Path) -> None:
    """kill -9 -1 from the agent ends its own container (docker-init's child dies): no kill went through the engine,
    so the attempt is graded as the agent's outcome with the reason in its error, never discarded and coded again."""
    source = tmp_path / "tasks"
    task(source, "selfkill", solve='echo b > "$APP_DIR/b.txt"; kill -9 -1; sleep 30\n')
    path = config(tmp_path, tasks={"source": str(source), "ids": ["selfkill"]}, treatments={},
                  runner={"harness": "oracle"}, jobs=1)
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground")
    events = events_of(run)
    assert not [e for e in events if e["type"] == "attempt.discarded"], [e["type"] for e in events]
    assert events[-1]["type"] == "run.finished"
    (exited,) = [e for e in events if e["type"] == "agent.exited"]
    assert "the agent's own processes ended the container" in exited["error"] and exited["exit_code"] == 137
    (graded,) = [e for e in events if e["type"] == "attempt.graded"]
    assert graded["attempt_id"] == "selfkill__vanilla__r1" and graded["outcome"] == "pass"  # b.txt was written first
