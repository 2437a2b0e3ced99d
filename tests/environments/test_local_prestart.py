"""The grading sandbox made while the agent codes (local backend, bubblewrap): the attempt's own, fresh,
taken by exactly its spec once, and removed with its cgroup and mount namespace on every way out that does
not grade."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from pluginbench.actors._pipeline import code_attempt, grade_patch, verifier_spec
from pluginbench.environments import LocalEnvironment, bwrap_available, left_behind
from pluginbench.harnesses import FrozenTreatment, NopHarness
from pluginbench.harnesses._port import NO_MODEL_USAGE, AgentRun
from pluginbench.tasks import HarborTask
from tests._prereq import require
from tests.runs_helpers import b_txt_task

VANILLA = FrozenTreatment("vanilla", None, (), (), (), "0")
VERIFIER = '#!/bin/sh\nif [ -f "$APP_DIR/b.txt" ]; then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"\n'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _env(tmp_path: Path) -> LocalEnvironment:
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    return LocalEnvironment("bubblewrap", root=tmp_path / "boxes")


def _task(tmp_path: Path) -> HarborTask:
    return b_txt_task(tmp_path, VERIFIER)


class Agent(NopHarness):
    """Waits until its attempt's grading sandbox exists beside it, writes b.txt; ``then`` says what it does next."""

    def __init__(self, env: LocalEnvironment, then: str = "return") -> None:
        super().__init__()
        self.env, self.then = env, then
        self.seen: dict[str, Path] = {}
        self.waiting = anyio.Event()

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["agent"])
        with anyio.fail_after(60):
            while not self.env.prestarted(ctx.run_id):
                await anyio.sleep(0.02)
        self.seen[ctx.attempt_id] = self.env.prestarted(ctx.run_id)[0]
        await sandbox.exec(["sh", "-c", 'echo b > "$APP_DIR/b.txt"'], timeout=60)
        if self.then == "hang":
            self.waiting.set()
            await anyio.sleep(600)
        return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE,
                        provider_stop="the provider stopped it" if self.then == "provider_stop" else None)


async def _code(env: LocalEnvironment, agent: Agent, task: HarborTask, tmp_path: Path) -> Any:
    async def launched(argv: object) -> None:
        return None

    return await code_attempt(
        environment=env, harness=agent, run_id="r", attempt_id="a1", task=task, starting_source=task.workspace_dir,
        treatment=VANILLA, attempt_dir=tmp_path / "a1", model=None, reasoning=None, seed=0, timeout=120, hidden=(),
        launched=launched, verifier=verifier_spec("r", "a1", task, task.workspace_dir, ()),
    )


def _nothing_left(env: LocalEnvironment, tmp_path: Path) -> None:
    assert env.prestarted("r") == []
    left = [n for n in os.listdir(tmp_path / "boxes") if not n.startswith("pluginbench-gitbase-")]
    assert left == [], left


@pytest.mark.anyio
async def test_grading_takes_the_sandbox_made_while_its_agent_coded(tmp_path: Path) -> None:
    """The attempt's verifier sandbox exists (its own folder and uid) while the agent codes, grading takes exactly
    that one without making another, passes, and nothing of the attempt is left."""
    env, task = _env(tmp_path), _task(tmp_path)
    agent = Agent(env)
    coded = await _code(env, agent, task, tmp_path)
    warm = env.prestarted("r")
    assert warm == [agent.seen["a1"]] and "-verifier-" in warm[0].name
    made: list[object] = []
    real = env._made

    async def counting(spec: Any) -> Any:
        made.append(spec)
        return await real(spec)

    env._made = counting  # type: ignore[method-assign]
    grade = await grade_patch(environment=env, run_id="r", attempt_id="a1", task=task,
                              starting_source=task.workspace_dir, patch_path=coded.patch.path, empty=coded.patch.empty,
                              out_dir=tmp_path / "a1" / "grading", hidden=())
    assert grade.outcome == "pass", grade
    assert made == []
    _nothing_left(env, tmp_path)


@pytest.mark.anyio
@pytest.mark.parametrize("then", ["hang", "provider_stop"])
async def test_an_attempt_that_is_not_graded_leaves_no_verifier_sandbox(tmp_path: Path, then: str) -> None:
    """A cancelled attempt and one without a patch remove the verifier sandbox made beside them: no folder,
    no held sandbox."""
    env, task = _env(tmp_path), _task(tmp_path)
    agent = Agent(env, then)
    async with anyio.create_task_group() as tg:

        async def attempt() -> None:
            result = await _code(env, agent, task, tmp_path)
            assert then == "provider_stop" and result.patch is None

        tg.start_soon(attempt)
        if then == "hang":
            await agent.waiting.wait()
            tg.cancel_scope.cancel()
    assert "a1" in agent.seen
    _nothing_left(env, tmp_path)


@pytest.mark.anyio
async def test_a_prestarted_sandbox_is_taken_only_by_exactly_its_spec_and_discarded_whole(tmp_path: Path) -> None:
    """Another attempt never takes the pre-started sandbox, the same attempt with other tests removes it and gets its own; a
    discarded one loses its folder and its mount namespace; an unisolated environment pre-starts nothing."""
    env, task = _env(tmp_path), _task(tmp_path)
    spec = verifier_spec("r", "a1", task, task.workspace_dir, ())
    other = tmp_path / "other-tests"
    shutil.copytree(task.tests_dir, other)
    (other / "which").write_text("other")
    assert await env.prestart(spec)
    warm = env.prestarted("r")[0]
    async with env.sandbox(spec._replace(attempt_id="a2")) as sb:
        assert sb.root != warm and env.prestarted("r") == [warm]
    async with env.sandbox(spec._replace(tests=other)) as sb:
        assert (await sb.exec(["cat", "/tests/which"])).stdout == b"other"
        assert sb.root != warm and not warm.exists()
    assert await env.prestart(spec)
    held = env._warm._kept[("r", "a1", "verifier")][1]
    binds = held._binds
    assert held.root in left_behind("r", tmp_path / "boxes")  # what a resume's sweep would remove after a kill
    assert await env.discard_prestarted("r") == [held.root]
    assert not held.root.exists() and (binds is None or binds.fd == -1)
    _nothing_left(env, tmp_path)
    assert not await LocalEnvironment("none", root=tmp_path / "boxes").prestart(spec)
    _nothing_left(env, tmp_path)


@pytest.mark.anyio
async def test_nothing_is_prestarted_when_the_disk_could_not_keep_the_agents_storage_bound(tmp_path: Path) -> None:
    """A pre-start that would leave less than the coding agent's storage bound free on the disk makes nothing;
    with room it is made."""
    env, task = _env(tmp_path), _task(tmp_path)
    spec = verifier_spec("r", "a1", task, task.workspace_dir, ())
    free_mb = shutil.disk_usage(tmp_path).free // (1024 * 1024)
    assert not await env.prestart(spec._replace(storage_mb=free_mb + 1))
    assert env.prestarted("r") == []
    _nothing_left(env, tmp_path)
    assert await env.prestart(spec._replace(storage_mb=1))
    assert len(env.prestarted("r")) == 1
    await env.discard_prestarted("r")
    _nothing_left(env, tmp_path)
