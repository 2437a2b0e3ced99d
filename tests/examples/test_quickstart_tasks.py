"""The bundled quickstart: its config loads and every task is a real, solvable task.

Each task is checked the way the pipeline will use it, but directly on the host: a
temp git repo is made from ``workspace/``, the hidden verifier ``tests/test.sh`` runs
against it with the ``APP_DIR``/``TESTS_DIR``/``LOGS_DIR`` variables a sandbox gets,
and the reward file is read back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pluginbench.config import load
from pluginbench.harnesses import load_plan
from pluginbench.tasks import load_task

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CONFIG = QUICKSTART / "evaluation.yaml"
TASK_IDS = sorted(p.name for p in (QUICKSTART / "tasks").iterdir() if p.is_dir())
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t.invalid",
}


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **GIT_ENV, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120)


def _repo(task: str, dest: Path) -> Path:
    """A git repo whose only commit is the task's starting source."""
    app = dest / "app"
    shutil.copytree(QUICKSTART / "tasks" / task / "workspace", app)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        done = _run(argv, app)
        assert done.returncode == 0, done.stderr
    return app


def _apply(app: Path, patch: Path) -> None:
    done = _run(["git", "apply", str(patch)], app)
    assert done.returncode == 0, f"{patch.name} does not apply: {done.stderr}"


def _reward(task: str, app: Path, logs: Path) -> str:
    """Run the hidden verifier on ``app`` and return the reward file's content."""
    root = QUICKSTART / "tasks" / task
    env = {"APP_DIR": str(app), "TESTS_DIR": str(root / "tests"), "LOGS_DIR": str(logs)}
    _run(["bash", str(root / "tests" / "test.sh")], app, env)
    return (logs / "verifier" / "reward.txt").read_text().strip()


def test_config_loads_and_lists_every_task():
    """The quickstart config validates and lists exactly the bundled task folders."""
    loaded = load(CONFIG)
    ev = loaded.evaluation
    assert ev.name == "quickstart"
    assert sorted(ev.tasks.ids or []) == TASK_IDS
    assert len(TASK_IDS) >= 5
    assert ev.runner.harness == "simulated" and ev.runner.model == "simulated-1"
    assert (ev.repeats, ev.jobs, ev.seed, ev.timeout_seconds) == (3, 2, 7, 120)
    assert list(ev.treatments) == ["testing-discipline"]
    for raw in ev.treatments["testing-discipline"].guidance:
        assert loaded.resolve(raw).is_file()
    for task in ev.tasks.ids or []:
        assert load_task(loaded.resolve(ev.tasks.source or "") / task, task).has_workspace


@pytest.mark.parametrize("task", TASK_IDS)
def test_task_toml_follows_the_quickstart_conventions(task):
    """Each task.toml is Harbor 1.4 with a pluginbench/<id> name, Python metadata, limits and /app."""
    data = tomllib.loads((QUICKSTART / "tasks" / task / "task.toml").read_text())
    assert data["schema_version"] == "1.4"
    assert data["task"]["name"] == f"pluginbench/{task}"
    assert data["metadata"]["language"] == "python"
    assert data["metadata"]["difficulty"] in ("easy", "medium", "hard")
    assert data["agent"]["timeout_sec"] == 120 and data["verifier"]["timeout_sec"] == 60
    assert data["environment"]["workdir"] == "/app"
    assert "docker_image" not in data["environment"]
    loaded = load_task(QUICKSTART / "tasks" / task)
    assert loaded.has_solution and loaded.instruction.strip()


@pytest.mark.parametrize("task", TASK_IDS)
def test_visible_tests_pass_on_the_starting_source(task, tmp_path):
    """The workspace's own unit tests pass before any change (the bug is in what they miss)."""
    app = _repo(task, tmp_path)
    done = _run([sys.executable, "-m", "unittest", "discover", "-s", "tests"], app)
    assert done.returncode == 0, done.stderr
    assert "Ran 0 tests" not in done.stderr


@pytest.mark.parametrize("task", TASK_IDS)
def test_hidden_tests_fail_on_the_starting_source(task, tmp_path):
    """The hidden verifier gives reward 0 to the untouched workspace (nop must fail)."""
    app = _repo(task, tmp_path)
    assert _reward(task, app, tmp_path / "logs") == "0"


@pytest.mark.parametrize("task", TASK_IDS)
def test_solution_patch_passes_the_hidden_tests(task, tmp_path):
    """solution.patch applies with git apply and earns reward 1."""
    app = _repo(task, tmp_path)
    _apply(app, QUICKSTART / "tasks" / task / "solution" / "solution.patch")
    assert _reward(task, app, tmp_path / "logs") == "1"


@pytest.mark.parametrize("task", TASK_IDS)
def test_solve_script_applies_the_solution(task, tmp_path):
    """solve.sh, run from anywhere with APP_DIR and SOLUTION_DIR, makes the task pass."""
    app = _repo(task, tmp_path)
    solution = QUICKSTART / "tasks" / task / "solution"
    done = _run(
        ["bash", str(solution / "solve.sh")],
        tmp_path,
        {"APP_DIR": str(app), "SOLUTION_DIR": str(solution)},
    )
    assert done.returncode == 0, done.stderr
    assert _run(["git", "status", "--porcelain"], app).stdout.strip(), "solve.sh changed nothing"
    assert _reward(task, app, tmp_path / "logs") == "1"


@pytest.mark.parametrize("task", TASK_IDS)
def test_every_candidate_gets_its_expected_reward(task, tmp_path):
    """Each simulated candidate applies cleanly; 'pass' ones earn 1 and 'fail' ones 0."""
    folder = QUICKSTART / "tasks" / task / "simulated"
    plan = load_plan(folder)
    assert {c.expect for c in plan.candidates} == {"pass", "fail"}
    for i, candidate in enumerate(plan.candidates):
        app = _repo(task, tmp_path / f"c{i}")
        if candidate.patch:
            _apply(app, folder / candidate.patch)
        reward = _reward(task, app, tmp_path / f"c{i}" / "logs")
        assert reward == ("1" if candidate.expect == "pass" else "0"), candidate.name


@pytest.mark.parametrize("task", TASK_IDS)
def test_candidates_cover_tested_partial_and_empty_outcomes(task):
    """Each task scripts a passing patch that adds tests, a partial fix, and no change."""
    folder = QUICKSTART / "tasks" / task / "simulated"
    plan = load_plan(folder)
    adds_tests = [
        c
        for c in plan.candidates
        if c.patch and "\n+++ b/tests/" in (folder / c.patch).read_text() and c.expect == "pass"
    ]
    assert adds_tests, "no passing candidate adds a test file"
    assert any(c.patch and c.expect == "fail" for c in plan.candidates), "no partial candidate"
    assert any(not c.patch for c in plan.candidates), "no empty candidate"


def _pass_rate(plan, guided: bool) -> float:
    key = "guided_weight" if guided else "weight"
    total = sum(getattr(c, key) for c in plan.candidates)
    return sum(getattr(c, key) for c in plan.candidates if c.expect == "pass") / total


def test_guidance_reaches_every_task_and_shifts_the_odds_moderately():
    """The treatment's guidance mentions a keyword of every task, and the scripted pass rate
    rises with it by a visible but plausible margin."""
    guidance = (QUICKSTART / "guidance" / "testing-discipline.md").read_text().casefold()
    vanilla, guided = [], []
    for task in TASK_IDS:
        plan = load_plan(QUICKSTART / "tasks" / task / "simulated")
        assert any(k.casefold() in guidance for k in plan.keywords), task
        vanilla.append(_pass_rate(plan, guided=False))
        guided.append(_pass_rate(plan, guided=True))
        assert 0 < vanilla[-1] < 1 and 0 < guided[-1] < 1, task
    delta = sum(guided) / len(guided) - sum(vanilla) / len(vanilla)
    assert 0.10 <= delta <= 0.30, delta
