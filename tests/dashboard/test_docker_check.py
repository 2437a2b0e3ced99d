"""The dashboard's one Docker call, on a real engine: "Check for containers left running"."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pluginbench.dashboard._discovery import run_key
from pluginbench.environments._docker_containers import LABEL_ATTEMPT, LABEL_OWNER, LABEL_RUN, OWNER
from pluginbench.environments._docker_images import BASE_IMAGE
from pluginbench.rundir import RunDir
from tests._prereq import require
from tests.dashboard.server import dashboard, request
from tests.projections.test_report import RunBuilder, exact

pytestmark = pytest.mark.docker


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120)


def test_check_lists_a_container_a_killed_worker_left_and_polls_never_ask(tmp_path: Path) -> None:
    """The check names the run's running container and its docker stop command; the pages' status keeps left_running null."""
    require(shutil.which("docker") is not None and _docker("info").returncode == 0, "docker engine (tools/start-docker.sh)")
    require(_docker("image", "inspect", BASE_IMAGE).returncode == 0, f"base image {BASE_IMAGE} (tools/build-base-image.sh)")
    root = tmp_path / "runs" / "dock"
    b = RunBuilder(root, ["task-a"], backend="docker", isolation="docker")
    b.complete("task-a", "vanilla", "pass", exact(10, 5))
    b.start(b.slot("task-a", "guided"))  # launched, then the worker was killed
    b.close()
    (root / "evaluation-binding.json").write_text("{}")
    run_id = RunDir(root.resolve()).run_id
    started = _docker("run", "-d", "--rm", "--label", f"{LABEL_OWNER}={OWNER}", "--label", f"{LABEL_RUN}={run_id}",
                      "--label", f"{LABEL_ATTEMPT}=task-a.guided.0", "--network", "none", BASE_IMAGE, "sleep", "120")
    assert started.returncode == 0, started.stderr
    cid = started.stdout.strip()
    try:
        with dashboard(tmp_path / "runs") as port:
            key = run_key(root.resolve())
            status, page = request(port, "GET", f"/run/{key}")
            assert status == 200 and b"interrupted" in page and b"Check for containers left running" in page
            assert cid[:12].encode() not in page  # a page poll never asked Docker
            status, body = request(port, "GET", f"/run/{key}/left-running")
            assert status == 200, body
            assert cid[:12].encode() in body and f"docker stop {cid}".encode() in body
    finally:
        _docker("rm", "-f", cid)
