"""A stop while an attempt is being graded lets the verifier finish: the attempt keeps its real grade."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runs_helpers import events_of, write_config

pytestmark = pytest.mark.slow

# Stands in front of the real git on PATH. Once armed by the test, the first host-side
# git that sets up a verifier sandbox's base (its app/ has a tests/ beside it: `update-index
# --refresh` over the kept base's copy, or `add -A` of the recipe) says so and stalls, so the stop lands exactly while
# the attempt's grading sandbox is set up (on the local backend under bubblewrap that is while its agent codes: the
# sandbox is pre-started); without its own session the stop's SIGTERM to the worker's process group kills it and the
# grade becomes unknown.
GIT_WRAPPER = """#!/bin/sh
state="{state}"
case " $* " in
  *" add -A "*|*" update-index --refresh "*)
    if [ -e "$state/armed" ] && [ -d ../tests ] && mkdir "$state/once" 2>/dev/null; then
      touch "$state/stalled"
      sleep 4
    fi;;
esac
exec {git} "$@"
"""


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, f"pluginbench {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _wait_for(predicate, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_stop_during_grading_keeps_the_verifiers_grade(tmp_path: Path) -> None:
    """`pluginbench stop` while the verifier sandbox's git runs: the run stops and that attempt is graded pass, not unknown."""
    real_git = shutil.which("git")
    assert real_git
    state, bin_dir = tmp_path / "gitstate", tmp_path / "bin"
    state.mkdir()
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(GIT_WRAPPER.format(state=state, git=real_git))
    wrapper.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    config = write_config(tmp_path, harness="oracle", repeats=2, jobs=1, treatments={},
                          tasks=["roman-numerals", "word-wrap"])
    run_dir = tmp_path / "run"
    _cli("run", str(config), "--output", str(run_dir), env=env)
    _wait_for(lambda: any(e["type"] == "coding.started" for e in events_of(run_dir)), "coding to start")
    (state / "armed").touch()
    _wait_for(lambda: (state / "stalled").exists(), "a verifier sandbox's base git")
    _cli("stop", str(run_dir), "--wait", env=env)

    events = events_of(run_dir)
    stop_at = next(i for i, e in enumerate(events) if e["type"] == "run.stopping")
    graded_after_stop = [e for e in events[stop_at:] if e["type"] == "attempt.graded"]
    assert graded_after_stop, "no attempt was being graded when the stop arrived"
    for event in graded_after_stop:
        assert event["outcome"] == "pass", json.dumps(event)
    assert events[-1]["type"] == "run.stopped"
    all_grades = [e for e in events if e["type"] == "attempt.graded"]
    assert all(e["outcome"] == "pass" for e in all_grades), [e.get("reason") for e in all_grades]
