"""The grading container made while the agent codes (docker): the attempt's own, fresh,
taken by its grading only, and removed on every way out that does not grade."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from pluginbench.actors._context import SandboxSource
from pluginbench.actors._pipeline import code_attempt, grade_patch, verifier_spec
from pluginbench.environments import SandboxSpec
from pluginbench.environments._docker import DockerEnvironment
from pluginbench.harnesses import FrozenTreatment, NopHarness
from pluginbench.harnesses._port import NO_MODEL_USAGE, AgentRun
from pluginbench.tasks import HarborTask
from tests._prereq import require
from tests.runs_helpers import b_txt_task

pytestmark = [pytest.mark.docker]
VANILLA = FrozenTreatment("vanilla", None, (), (), (), "0")
#: the verifier says which container it runs in, and passes only when the agent's b.txt arrived
VERIFIER = """#!/bin/sh
echo "graded-in $(cat /etc/hostname)"
if [ -f "$APP_DIR/b.txt" ]; then echo 1; else echo 0; fi > "$LOGS_DIR/verifier/reward.txt"
"""


@pytest.fixture
def anyio_backend() -> str:
    """aiodocker is asyncio-only."""
    return "asyncio"


def _base_image() -> str:
    require(shutil.which("docker") is not None, "docker CLI and engine (tools/start-docker.sh)")
    done = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", "pluginbench/base:bookworm"],
                          capture_output=True, text=True)
    require(done.returncode == 0, "pluginbench/base:bookworm (tools/build-base-image.sh)")
    return done.stdout.strip()


def _containers(run_id: str, role: str | None = None) -> list[dict[str, Any]]:
    """Every container (any state) labelled as ``run_id``'s (and ``role``'s), as ``docker ps`` lists them."""
    args = ["docker", "ps", "-a", "--no-trunc", "--format", "{{json .}}", "--filter", f"label=pluginbench.run={run_id}"]
    if role is not None:
        args += ["--filter", f"label=pluginbench.role={role}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


async def _running_verifier(run_id: str, attempt_id: str, within: float = 120) -> str:
    """The ID of the attempt's verifier container once it runs (waited for: it is made beside the agent)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for c in await anyio.to_thread.run_sync(_containers, run_id, "verifier"):
            if f"pluginbench.attempt={attempt_id}" in c["Labels"] and c["State"] == "running":
                return str(c["ID"])
        await anyio.sleep(0.2)
    raise AssertionError(f"no running verifier container of {attempt_id} within {within:g} s")


class Agent(NopHarness):
    """Writes b.txt after seeing its attempt's verifier container running; ``then`` says what it does next."""

    def __init__(self, then: str = "return") -> None:
        super().__init__()
        self.then = then
        self.seen: dict[str, str] = {}
        self.waiting = anyio.Event()

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["agent"])
        self.seen[ctx.attempt_id] = await _running_verifier(ctx.run_id, ctx.attempt_id)
        await sandbox.exec(["sh", "-c", 'echo b > "$APP_DIR/b.txt"'], timeout=60)
        if self.then == "hang":
            self.waiting.set()
            await anyio.sleep(600)
        return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE,
                        provider_stop="the provider stopped it" if self.then == "provider_stop" else None)


def _task(tmp_path: Path) -> HarborTask:
    return b_txt_task(tmp_path, VERIFIER)


async def _environment(jobs: int = 1, cpus: float | None = None) -> DockerEnvironment:
    env = DockerEnvironment()
    await env.check_capacity(jobs, cpus, None)
    return env


async def _code(env: DockerEnvironment, harness: Agent, run_id: str, attempt_id: str, task: HarborTask,
                source: SandboxSource, tmp_path: Path) -> Any:
    async def launched(argv: object) -> None:
        return None

    return await code_attempt(
        environment=env, harness=harness, run_id=run_id, attempt_id=attempt_id, task=task,
        starting_source=task.workspace_dir, treatment=VANILLA, attempt_dir=tmp_path / attempt_id, model=None,
        reasoning=None, seed=0, timeout=120, hidden=(), launched=launched, source=source,
        verifier=verifier_spec(run_id, attempt_id, task, task.workspace_dir, (), source),
    )


@pytest.mark.anyio
async def test_each_attempt_is_graded_in_its_own_container_made_while_it_coded(tmp_path: Path) -> None:
    """Two attempts coding at once each get a verifier container while the agent runs; each grading runs in
    its own attempt's one (never the other's), passes, and no container of the run is left."""
    image, task, run_id = _base_image(), _task(tmp_path), f"test-{uuid.uuid4().hex[:10]}"
    env, agent = await _environment(jobs=2), Agent()
    source = SandboxSource(task.workspace_dir, image, None, None)
    results: dict[str, Any] = {}

    async def one(attempt_id: str) -> None:
        results[attempt_id] = await _code(env, agent, run_id, attempt_id, task, source, tmp_path)

    async with anyio.create_task_group() as tg:
        for aid in ("a1", "a2"):
            tg.start_soon(one, aid)
    assert sorted(env.prestarted(run_id)) == sorted(agent.seen.values())
    for aid in ("a1", "a2"):
        patch = results[aid].patch
        grade = await grade_patch(
            environment=env, run_id=run_id, attempt_id=aid, task=task, starting_source=task.workspace_dir,
            patch_path=patch.path, empty=patch.empty, out_dir=tmp_path / aid / "grading", hidden=(), source=source)
        stdout = (tmp_path / aid / "grading" / "test-stdout.txt").read_text()
        assert grade.outcome == "pass", (grade, stdout)
        assert stdout.split() == ["graded-in", agent.seen[aid][:12]]
    assert agent.seen["a1"] != agent.seen["a2"]
    assert env.prestarted(run_id) == [] and _containers(run_id) == []


@pytest.mark.anyio
@pytest.mark.parametrize("then", ["hang", "provider_stop"])
async def test_an_attempt_that_is_not_graded_leaves_no_verifier_container(tmp_path: Path, then: str) -> None:
    """A cancelled attempt (the worker stopping it mid-agent) and one without a patch (a provider stop) remove the
    verifier container made beside them: no container of the run remains and none is held for grading."""
    image, task, run_id = _base_image(), _task(tmp_path), f"test-{uuid.uuid4().hex[:10]}"
    env, agent = await _environment(), Agent(then)
    source = SandboxSource(task.workspace_dir, image, None, None)
    async with anyio.create_task_group() as tg:

        async def attempt() -> None:
            result = await _code(env, agent, run_id, "a1", task, source, tmp_path)
            assert then == "provider_stop" and result.patch is None

        tg.start_soon(attempt)
        if then == "hang":
            await agent.waiting.wait()
            tg.cancel_scope.cancel()
    assert "a1" in agent.seen
    assert env.prestarted(run_id) == [] and _containers(run_id) == []


@pytest.mark.anyio
async def test_a_prestarted_container_is_taken_only_by_exactly_its_spec(tmp_path: Path) -> None:
    """A sandbox of another attempt, or of the same attempt with other tests, never takes the pre-started
    container: it gets its own fresh one, and the mismatched pre-started one is removed."""
    image, run_id = _base_image(), f"test-{uuid.uuid4().hex[:10]}"
    tests, other = tmp_path / "tests", tmp_path / "other-tests"
    for folder, text in ((tests, "mine"), (other, "other")):
        folder.mkdir()
        (folder / "which").write_text(text)
    spec = SandboxSpec(run_id=run_id, attempt_id="a1", role="verifier", task="t", image=image, tests=tests)
    env = await _environment()
    assert await env.prestart(spec)
    warm = env.prestarted(run_id)[0]
    async with env.sandbox(spec._replace(attempt_id="a2")) as sb:
        assert sb.container_id != warm
    async with env.sandbox(spec._replace(tests=other)) as sb:
        assert sb.container_id != warm
        assert (await sb.exec(["cat", "/tests/which"])).stdout == b"other"
    assert env.prestarted(run_id) == [] and _containers(run_id) == []


@pytest.mark.anyio
async def test_no_container_is_prestarted_when_a_second_one_per_job_does_not_fit(tmp_path: Path) -> None:
    """When jobs containers fit the engine but twice as many do not, nothing is pre-started (grading makes its own)."""
    image, run_id = _base_image(), f"test-{uuid.uuid4().hex[:10]}"
    env = DockerEnvironment()
    info = await env.info()
    await env.check_capacity(1, float(info.cpus), None)
    spec = SandboxSpec(run_id=run_id, attempt_id="a1", role="verifier", task="t", image=image)
    assert not await env.prestart(spec)
    assert env.prestarted(run_id) == [] and _containers(run_id) == []
