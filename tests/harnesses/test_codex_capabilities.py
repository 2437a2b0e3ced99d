"""The capability policy and the login check with the real Codex CLI 0.169.0 in a local sandbox."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from pluginbench.config import Capabilities
from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._codex import CodexHarness, CodexLoginError
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.probe._clis import find_cli
from pluginbench.probe._scenario import load_scenario
from pluginbench.probe._server import ProbeServer
from pluginbench.tasks._harbor import HarborTask
from tests._prereq import require

pytestmark = pytest.mark.realcli
SCENARIOS = Path(__file__).resolve().parents[2] / "pluginbench" / "probe" / "scenarios"
VANILLA = FrozenTreatment("vanilla", None, (), (), (), "f")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cli() -> Path:
    path = find_cli("codex")
    require(path is not None, "codex 0.169.0 in .tools/clis (run tools/install-clis.sh)")
    assert path is not None
    return path


def _task(root: Path) -> HarborTask:
    return HarborTask(id="t", root=root, instruction="Say hello.", workdir="/app", agent_timeout_sec=120,
                      verifier_timeout_sec=60, build_timeout_sec=60, environment_mode="local",
                      docker_image=None, verifier_docker_image=None, cpus=None, memory_mb=None,
                      collect=(), metadata={})


def _workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("starting source\n")
    return ws


async def _attempt(tmp: Path, cli: Path, caps: Capabilities) -> tuple[dict, str, int | None]:
    """(delivered config, the first coding request's input as text, exit code) of one probe attempt."""
    home = tmp / "home"
    with ProbeServer(load_scenario(SCENARIOS / "text.yaml")) as probe:
        harness = CodexHarness(cli, "0.169.0", probe.base_url, capabilities=caps)
        harness.deliver(VANILLA, home)

        async def launched(argv):
            pass

        ctx = AttemptContext("run", "att", _task(tmp), VANILLA, "gpt-5.5", "low", 1, 120.0, tmp / "attempt", launched)
        spec = SandboxSpec("run", "att", "coding", "t", workspace=_workspace(tmp), home=home, readonly=harness.readonly, egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
            run = await harness.run(sb, ctx)
        probe.wait_idle(timeout=60)
        coding = [r for r in probe.requests if r.kind == "coding"]
    assert coding, "the CLI made no coding request"
    import json

    first_input = json.dumps((coding[0].body or {}).get("input"))
    return tomllib.loads((home / ".codex" / "config.toml").read_text()), first_input, run.exit_code


@pytest.mark.anyio
async def test_codex_receives_the_thread_and_depth_limits(tmp_path, cli):
    """With subagents on, the CLI accepts [agents] max_threads/max_depth under --strict-config and the model sees its agent tools."""
    cfg, seen, exit_code = await _attempt(tmp_path, cli, Capabilities(max_threads=2, max_depth=1))
    assert cfg["agents"] == {"max_threads": 2, "max_depth": 1}
    assert exit_code == 0
    assert "multi_agent_v1" in seen


@pytest.mark.anyio
async def test_codex_subagents_false_removes_native_agents(tmp_path, cli):
    """With subagents: false the delivered config turns both agent runtimes off and the model is offered no agent tools."""
    cfg, seen, exit_code = await _attempt(tmp_path, cli, Capabilities(subagents=False))
    assert cfg["features"]["multi_agent"] is False and cfg["features"]["multi_agent_v2"] is False
    assert exit_code == 0
    assert "multi_agent" not in seen


def _login_home(tmp: Path, cli: Path, key: str | None) -> Path:
    """A host CODEX_HOME: logged in with ``key`` by the real CLI, or holding a corrupt auth.json."""
    home = tmp / "host-codex"
    home.mkdir()
    if key is None:
        (home / "auth.json").write_text("not json\n")
        return home
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "CODEX_HOME": str(home)}
    done = subprocess.run([str(cli), "login", "--with-api-key"], input=key, text=True, env=env,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return home


@pytest.mark.anyio
@pytest.mark.parametrize("logged_in", [True, False])
async def test_login_status_runs_in_the_sandbox_before_coding(tmp_path, cli, logged_in):
    """codex login status with the delivered auth.json passes for a real login and stops the attempt for a corrupt one."""
    host = _login_home(tmp_path, cli, "sk-pluginbench-dummy-key-0123456789" if logged_in else None)
    harness = CodexHarness(cli, "0.169.0", host_codex_home=host)
    home = tmp_path / "home"
    harness.deliver(VANILLA, home)
    spec = SandboxSpec("run", "att", "coding", "t", workspace=_workspace(tmp_path), home=home, readonly=harness.readonly, egress=harness.egress("coding", None))
    async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
        await harness._put_credential(sb)
        if logged_in:
            status = await harness.login_status(sb)
            assert status == {"checked": True, "exit_code": 0, "login": "api key"}
        else:
            with pytest.raises(CodexLoginError, match="failed to deserialize CLI auth"):
                await harness.login_status(sb)


def _spawn_fields(body: object) -> dict[str, list[str]]:
    """``namespace.spawn_agent -> its parameter names`` among the tools of one request body."""
    found: dict[str, list[str]] = {}
    for tool in (body or {}).get("tools", []) if isinstance(body, dict) else []:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools", []):
                if inner.get("name") == "spawn_agent":
                    found[tool["name"]] = sorted((inner.get("parameters") or {}).get("properties", {}))
    return found


@pytest.mark.parametrize("runtime", ["v1", "v2"])
def test_v2_spawn_tool_hides_model_and_effort(tmp_path, cli, runtime):
    """The delivered config makes the real CLI's V2 spawn_agent offer no model or reasoning_effort field, while V1's keeps them (not a lock)."""
    from pluginbench.probe import launch_env

    home = tmp_path / "home"
    with ProbeServer(load_scenario(SCENARIOS / "text.yaml")) as probe:
        harness = CodexHarness(cli, "0.169.0", probe.base_url)
        harness.deliver(VANILLA, home)
        ws = _workspace(tmp_path)
        # An unknown slug offers the agent tools directly (bundled slugs defer them behind tool_search);
        # V2 is forced on here only to see its tool; a run leaves the runtime to the model.
        force = ["-c", "features.multi_agent_v2.enabled=true"] if runtime == "v2" else []
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
               "TMPDIR": str(tmp_path), **launch_env("responses", probe.base_url).env}
        done = subprocess.run([str(cli), "exec", "--json", "--strict-config", "--skip-git-repo-check", "-C", str(ws),
                               "-m", "stub-model", *force, "--", "Say hello."],
                              env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        probe.wait_idle(timeout=60)
        coding = [r for r in probe.requests if r.kind == "coding"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert coding, "the CLI made no coding request"
    fields = _spawn_fields(coding[0].body)
    if runtime == "v2":
        assert fields == {"collaboration": ["fork_turns", "message", "task_name"]}
    else:
        assert fields["multi_agent_v1"] == ["fork_context", "items", "message", "model", "reasoning_effort"]
