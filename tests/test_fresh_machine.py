"""A brand-new machine: every subsystem that keeps state starts from none (issue 19).

Whole evaluations run as a newcomer's first command would, with the cache root, the
home folder and the temporary root pointing at folders that do not exist yet. The task
cache (a git task link), the readiness cache and the vanilla cache must each be created
on first use and then serve the second run; nothing is read from or written to the
machine's real ``~/.cache``, ``$HOME`` or ``/tmp`` state. The Ray side is
``tests/ray/test_ray_fresh_state.py``; the base image's cache is the last test here.
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

from tests._prereq import require
from tests.runs_helpers import events_of
from tests.tasks._gitserver import TaskRepo, git

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"


def _fresh_env(root: Path) -> dict[str, str]:
    """The environment of a first command on a new machine: caches, HOME and TMPDIR all absent."""
    env = {k: v for k, v in os.environ.items() if k not in ("PLUGINBENCH_VANILLA_CACHE", "RAY_TMPDIR")}
    env.update(XDG_CACHE_HOME=str(root / "cache"), HOME=str(root / "home"), TMPDIR=str(root / "tmp"),
               XDG_CONFIG_HOME=str(root / "config"), XDG_DATA_HOME=str(root / "data"))
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          timeout=600, env=env, check=False, cwd=REPO)


@pytest.fixture
def served(tmp_path: Path):
    repo = TaskRepo(tmp_path / "server")
    repo.add_tree(QUICKSTART / "tasks" / "roman-numerals", "tasks/roman-numerals")
    repo.commit()
    repo.serve()
    yield repo
    repo.stop()


def test_task_readiness_and_vanilla_caches_start_from_nothing_and_serve_the_next_run(
        served: TaskRepo, tmp_path: Path) -> None:
    """With no cache root, HOME or TMPDIR, a run from a task link completes and fills the task, readiness and
    vanilla caches; a second run then reads each of them (task pinned from cache, readiness cached, vanilla reused)."""
    fresh = tmp_path / "new-machine"
    env = _fresh_env(fresh)
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump({
        "name": "fresh", "tasks": {"urls": [served.git_url(git("rev-parse", "HEAD", cwd=served.work), "tasks/roman-numerals")]},
        "treatments": {"testing-discipline": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": 1, "seed": 5, "timeout_seconds": 60,
    }))
    assert not fresh.exists()
    first = _run(env, "run", str(config), "--output", str(tmp_path / "first"), "--foreground", "--yes")
    assert first.returncode == 0, first.stdout + first.stderr
    cache = fresh / "cache" / "pluginbench"
    for sub in ("tasks", "readiness", "vanilla"):
        assert (cache / sub).is_dir() and any((cache / sub).iterdir()), f"{sub} cache was not created"
    firsts = events_of(tmp_path / "first")
    assert [e["cached"] for e in firsts if e["type"] == "readiness.checked"] and \
        not any(e["cached"] for e in firsts if e["type"] == "readiness.checked")
    assert not [e for e in firsts if e["type"] == "attempt.reused"]

    served.stop()  # the second run must take the pinned task from the cache, not the server
    second = _run(env, "run", str(config), "--output", str(tmp_path / "second"), "--foreground", "--yes")
    assert second.returncode == 0, second.stdout + second.stderr
    seconds = events_of(tmp_path / "second")
    assert all(e["cached"] for e in seconds if e["type"] == "readiness.checked")
    assert [e["attempt_id"] for e in seconds if e["type"] == "attempt.reused"], "vanilla was not reused"
    results = json.loads((tmp_path / "second" / "report" / "results.json").read_text())
    assert set(results["per_task"]) == {"roman-numerals"}
    assert not (fresh / "home" / ".cache").exists(), "the cache went to HOME although XDG_CACHE_HOME was set"


def test_the_base_image_script_starts_from_an_absent_cache_folder(tmp_path: Path) -> None:
    """tools/build-base-image.sh with a cache root that does not exist makes it and finds the built image."""
    require(shutil.which("docker") is not None, "docker (tools/setup.sh --dev)")
    ok = subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False).returncode == 0
    require(ok, "a running Docker engine (tools/start-docker.sh)")
    cache = tmp_path / "absent" / "cache"
    done = subprocess.run(["bash", str(REPO / "tools" / "build-base-image.sh")], capture_output=True, text=True,
                          timeout=1800, env={**os.environ, "XDG_CACHE_HOME": str(cache)}, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (cache / "pluginbench" / "base-image").is_dir()
    inspected = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", "pluginbench/base:bookworm"],
                               capture_output=True, text=True, timeout=30, check=False)
    assert inspected.returncode == 0 and inspected.stdout.startswith("sha256:")
