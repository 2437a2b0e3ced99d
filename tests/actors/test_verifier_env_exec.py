"""What grading hands test.sh's exec: nothing new for a task without [verifier.env] (the real DeepSWE tasks
and the DeepSWE-shaped one), the resolved variables for a task with one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from pluginbench.actors._pipeline import grade_patch
from pluginbench.environments import ExecResult, SandboxPaths
from pluginbench.tasks import admit_contract, load_task, resolve_verifier_env
from tests.runs_helpers import task_folder

DATA = Path(__file__).resolve().parents[1] / "data"
DEEPSWE = [DATA / "deep-swe" / "anko-default-function-arguments", DATA / "deep-swe" / "textual-kitty-key-phases",
           DATA / "deepswe-shaped" / "calc-clamp"]


class _Recording:
    """A sandbox that records every exec (unit logic only: no command runs)."""

    paths = SandboxPaths("/app", "/tests", "/solution", "/logs", "/home/v", "/tmp")
    base_commit = "0" * 40
    isolated = True

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    async def exec(self, argv: list[str], **kw: Any) -> ExecResult:
        self.calls.append((list(argv), kw))
        return ExecResult(0, False, 0.0, b"", b"")

    async def put(self, host: Path, path: str) -> None:
        return None

    async def get(self, path: str, host: Path) -> None:
        (host).mkdir(parents=True, exist_ok=True)
        (host / "reward.txt").write_text("1\n")

    async def stop(self) -> None:
        return None


class _Env:
    def __init__(self) -> None:
        self.box = _Recording()

    @asynccontextmanager
    async def sandbox(self, spec: Any) -> AsyncIterator[_Recording]:
        yield self.box


async def _test_sh_call(task_dir: Path, tmp_path: Path, **kw: Any) -> dict[str, Any]:
    task = load_task(task_dir)
    tmp_path.mkdir(parents=True, exist_ok=True)
    patch = tmp_path / "model.patch"
    patch.write_text("")
    env = _Env()
    await grade_patch(environment=env, run_id="r", attempt_id="a", task=task, starting_source=tmp_path,  # type: ignore[arg-type]
                      patch_path=patch, empty=True, out_dir=tmp_path / "out", hidden=(),
                      contract=admit_contract(task) if "deep" in str(task_dir) else None, **kw)
    return next(call for argv, call in env.box.calls if argv == ["/tests/test.sh"])


@pytest.mark.anyio
@pytest.mark.parametrize("task_dir", DEEPSWE, ids=lambda p: p.name)
async def test_a_deepswe_task_without_verifier_env_runs_test_sh_as_before(task_dir: Path, tmp_path: Path) -> None:
    """A real DeepSWE task (empty [verifier.env]) admits, records nothing, and test.sh's exec gets no env, as before."""
    task = load_task(task_dir)
    admit_contract(task)
    resolved = resolve_verifier_env(task.verifier_env, allowed=("ANY",), host={"ANY": "x"}, file="f", tid="t")
    assert resolved.values == {} and resolved.record == {}
    call = await _test_sh_call(task_dir, tmp_path)
    assert call["env"] is None and call["cwd"] == "/app"


@pytest.mark.anyio
async def test_a_task_with_verifier_env_hands_test_sh_its_values(tmp_path: Path) -> None:
    """A task's literal [verifier.env] reaches test.sh's exec (and grading without an evaluation reads no host variable)."""
    task_dir = task_folder(tmp_path / "t", '[verifier.env]\nSOME_VAR = "v"\nN = 2\n')
    call = await _test_sh_call(task_dir, tmp_path / "g")
    assert call["env"] == {"SOME_VAR": "v", "N": "2"}


@pytest.mark.anyio
async def test_test_sh_also_gets_environment_env_under_verifier_env(tmp_path: Path) -> None:
    """test.sh runs in the task's environment: it gets [environment.env], with [verifier.env] winning a shared name."""
    task_dir = task_folder(tmp_path / "t", '[environment.env]\nENV_VAR = "e"\nBOTH = "env"\n[verifier.env]\nBOTH = "verifier"\n')
    call = await _test_sh_call(task_dir, tmp_path / "g")
    assert call["env"] == {"ENV_VAR": "e", "BOTH": "verifier"}
