"""A task's [verifier.env] reaches tests/test.sh in real runs: readiness (oracle 1, nop 0) and the graded
attempt, on the local backend under bubblewrap and on docker with the real engine. A literal comes from
task.toml, a host variable only because grading.verifier_env_from_host allows it, and its value is
written nowhere in the run folder."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from pluginbench.environments import bwrap_usable
from tests._prereq import require
from tests.runs_helpers import events_of

from .test_docker_runs import _engine_up, cli, config

pytestmark = [pytest.mark.slow]
HOST_VALUE = "pb-verifier-host-value-7f3a"
HOST_SHA = hashlib.sha256(HOST_VALUE.encode()).hexdigest()  # test.sh checks the value without holding it

TEST_SH = """#!/bin/sh
mkdir -p "$LOGS_DIR/verifier"
echo "the verifier saw: $SOME_VAR / $FROM_HOST"
if [ -f "$APP_DIR/b.txt" ] && [ "$SOME_VAR" = "task-value" ] && [ "$(printf %s "$FROM_HOST" | sha256sum | cut -d' ' -f1)" = "HOST_SHA" ]; then
  echo 1
else
  echo 0
fi > "$LOGS_DIR/verifier/reward.txt"
""".replace("HOST_SHA", HOST_SHA)


def _task(root: Path) -> Path:
    t = root / "envtask"
    for d in ("workspace", "tests", "solution"):
        (t / d).mkdir(parents=True)
    (t / "workspace" / "a.txt").write_text("a\n")
    (t / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n'
                                 '[verifier.env]\nSOME_VAR = "task-value"\nFROM_HOST = "${PB_IT_VERIFIER_HOST}"\n')
    (t / "instruction.md").write_text("Create b.txt.\n")
    (t / "tests" / "test.sh").write_text(TEST_SH)
    (t / "tests" / "test.sh").chmod(0o755)
    (t / "solution" / "solve.sh").write_text('#!/bin/sh\necho b > "$APP_DIR/b.txt"\n')
    (t / "solution" / "solve.sh").chmod(0o755)
    return t


def _run_oracle(tmp_path: Path, environment: dict[str, object]) -> Path:
    source = tmp_path / "tasks"
    _task(source)
    path = config(tmp_path, name="venv", tasks={"source": str(source), "ids": ["envtask"]}, treatments={},
                  runner={"harness": "oracle"}, jobs=1, environment=environment,
                  grading={"verifier_env_from_host": ["PB_IT_VERIFIER_HOST"]})
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground",
        env={**os.environ, "PB_IT_VERIFIER_HOST": HOST_VALUE})
    return run


def _assert_graded_with_env(run: Path) -> None:
    ready = [e for e in events_of(run) if e["type"] == "readiness.checked"]
    assert {(e["control"], e["ok"]) for e in ready} == {("oracle", True), ("nop", True)}
    results = json.loads((run / "report" / "results.json").read_text())
    assert [a["outcome"] for a in results["attempts"]] == ["pass"]
    assert results["comparison_identity"]["verifier_env"] == {"envtask": {
        "FROM_HOST": {"from": "host", "variable": "PB_IT_VERIFIER_HOST"},
        "SOME_VAR": {"from": "task", "value": "task-value"}}}
    leaks = [p for p in run.rglob("*") if p.is_file() and not p.is_symlink() and HOST_VALUE.encode() in p.read_bytes()]
    assert leaks == []  # the verifier printed it; the grading output is redacted, events and report never had it


def test_verifier_env_reaches_test_sh_on_local_bubblewrap(tmp_path: Path) -> None:
    """Under bubblewrap, test.sh gets the task's literal and the allowed host variable: readiness passes and the oracle grades 1."""
    require(bwrap_usable(), "bubblewrap (apt-get install bubblewrap)")
    _assert_graded_with_env(_run_oracle(tmp_path, {"backend": "local", "isolation": "bubblewrap"}))


@pytest.mark.docker
def test_verifier_env_reaches_test_sh_on_docker(tmp_path: Path) -> None:
    """On docker with the real engine, test.sh gets the task's literal and the allowed host variable: the oracle grades 1."""
    require(_engine_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    _assert_graded_with_env(_run_oracle(tmp_path, {"backend": "docker"}))


SOLUTION_HOST = "pb-solution-host-value-91c2"
TASK_ENV_TEST_SH = """#!/bin/sh
mkdir -p "$LOGS_DIR/verifier"
if [ "$(cat "$APP_DIR/b.txt")" = "sol-value/env-value" ] && [ "$ENV_VAR" = "env-value" ]; then echo 1; else echo 0; fi \\
  > "$LOGS_DIR/verifier/reward.txt"
"""


def _run_task_env(tmp_path: Path, environment: dict[str, object]) -> None:
    t = tmp_path / "tasks" / "envtask"
    for d in ("workspace", "tests", "solution"):
        (t / d).mkdir(parents=True)
    (t / "workspace" / "a.txt").write_text("a\n")
    (t / "task.toml").write_text('schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n'
                                 '[environment.env]\nENV_VAR = "env-value"\n'
                                 '[solution.env]\nSOL_VAR = "sol-value"\nSOL_TOKEN = "${PB_IT_SOLUTION_HOST}"\n')
    (t / "instruction.md").write_text("Create b.txt.\n")
    (t / "tests" / "test.sh").write_text(TASK_ENV_TEST_SH)
    (t / "solution" / "solve.sh").write_text('#!/bin/sh\necho "token: $SOL_TOKEN"\n'
                                             'printf %s "$SOL_VAR/$ENV_VAR" > "$APP_DIR/b.txt"\n')
    path = config(tmp_path, name="tenv", tasks={"source": str(tmp_path / "tasks"), "ids": ["envtask"]}, treatments={},
                  runner={"harness": "oracle"}, jobs=1, environment=environment,
                  grading={"verifier_env_from_host": ["PB_IT_SOLUTION_HOST"]})
    run = tmp_path / "run"
    cli("run", str(path), "--output", str(run), "--foreground", env={**os.environ, "PB_IT_SOLUTION_HOST": SOLUTION_HOST})
    ready = [e for e in events_of(run) if e["type"] == "readiness.checked"]
    assert {(e["control"], e["ok"]) for e in ready} == {("oracle", True), ("nop", True)}
    results = json.loads((run / "report" / "results.json").read_text())
    assert [a["outcome"] for a in results["attempts"]] == ["pass"]
    assert results["comparison_identity"]["environment_env"] == {"envtask": {"ENV_VAR": {"from": "task", "value": "env-value"}}}
    prepared = next(e for e in events_of(run) if e["type"] == "task.prepared")
    assert prepared["solution_env"]["SOL_TOKEN"] == {"from": "host", "variable": "PB_IT_SOLUTION_HOST"}
    leaks = [p for p in run.rglob("*") if p.is_file() and not p.is_symlink() and SOLUTION_HOST.encode() in p.read_bytes()]
    assert leaks == []  # solve.sh printed it; the oracle's evidence is redacted


def test_solution_env_and_environment_env_reach_solve_sh_and_test_sh_on_local_bubblewrap(tmp_path: Path) -> None:
    """Under bubblewrap the oracle's solve.sh gets [solution.env] and [environment.env] (it writes the fix from
    both, so the oracle passes only if they arrived), test.sh gets [environment.env], nop still fails, the
    identity records the environment's variables, and the allowed host value solve.sh printed is written nowhere."""
    require(bwrap_usable(), "bubblewrap (apt-get install bubblewrap)")
    _run_task_env(tmp_path, {"backend": "local", "isolation": "bubblewrap"})


@pytest.mark.docker
def test_solution_env_and_environment_env_reach_solve_sh_and_test_sh_on_docker(tmp_path: Path) -> None:
    """On docker with the real engine, solve.sh gets [solution.env] and [environment.env] and test.sh gets
    [environment.env]: the oracle grades 1, nop 0, and the host value solve.sh printed is written nowhere."""
    require(_engine_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    _run_task_env(tmp_path, {"backend": "docker"})
