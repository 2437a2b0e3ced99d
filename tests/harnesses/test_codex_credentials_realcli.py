"""The real Codex CLI on bubblewrap: the delivered auth.json is gone once the harness returns, removed in the
coding command's own launch when the host confirms it, else by the separate rm: also when the agent kills
the command's wrapper, or leaves daemons that keep writing the file back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from pluginbench.environments import (
    LocalEnvironment,
    Sandbox,
    SandboxSpec,
    bwrap_available,
)
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._codex_config import config_toml, launch_env, probe_settings
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.probe import ProbeServer, load_scenario
from tests._prereq import require
from tests.harnesses._credential_agents import KILL_WRAPPER, ExecSpy, daemons

from .test_codex_realcli import cli, task  # noqa: F401 - cli is a fixture

pytestmark = pytest.mark.realcli

VANILLA = FrozenTreatment("vanilla", None, (), (), (), "v")
AGENT = {"plain": None, "daemons": daemons("$CODEX_HOME/auth.json"), "killed": KILL_WRAPPER}


def _scenario(path: Path, command: str | None) -> Path:
    rule = {"name": "agent", "when": {"api": "responses"},
            "script": [{"tool": {"name": "shell", "input": {"command": command}},
                        "usage": {"input_tokens": 800, "output_tokens": 30}}]}
    path.write_text(yaml.safe_dump({"name": "credentials", "final": {"text": "Done.", "usage": {
        "input_tokens": 900, "output_tokens": 5}}, "rules": [rule] if command else []}, sort_keys=False))
    return path


def _logged_in(tmp: Path, cli: Path) -> Path:  # noqa: F811
    """A host CODEX_HOME logged in with a dummy API key by the real CLI."""
    home = tmp / "host-codex"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "CODEX_HOME": str(home)}
    done = subprocess.run([str(cli), "login", "--with-api-key"], input="sk-pluginbench-dummy-key-0123456789",
                          text=True, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return home


class _CredentialToProbe(CodexHarness):
    """A real run's credential path (the host auth.json put into the sandbox, ``codex login status``), with the
    model calls sent to the loopback probe instead of the provider: a test never reaches the provider."""

    def __init__(self, cli: Path, host: Path, base_url: str) -> None:  # noqa: F811
        super().__init__(cli, "0.169.0", None, host_codex_home=host)
        self._probe_url = base_url

    def _config(self) -> str:
        provider_id, _, _, table = probe_settings(self._probe_url)
        return config_toml(probe=(provider_id, table), capabilities=self.capabilities)

    def _env(self, sandbox: Sandbox) -> dict[str, str]:
        _, key_var, key, _ = probe_settings(self._probe_url)
        return launch_env(home=sandbox.paths.home, tmp=sandbox.paths.tmp, extra={**dict(self.native.env), key_var: key})



@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("agent", list(AGENT))
async def test_credential_is_gone_when_the_harness_returns(cli: Path, tmp_path: Path, agent: str) -> None:  # noqa: F811
    """A plain attempt removes auth.json in the coding launch (confirmed, no separate rm); an agent that kills
    the wrapper gets the separate rm; with daemons writing the file back, the separate rm runs whenever the
    removal is not confirmed; no file is ever left."""
    require(bwrap_available(), "bubblewrap")
    host = _logged_in(tmp_path, cli)
    with ProbeServer(load_scenario(_scenario(tmp_path / "s.yaml", AGENT[agent]))) as probe:
        harness = _CredentialToProbe(cli, host, probe.base_url)
        home = tmp_path / "home"
        assert harness.deliver(VANILLA, home)["credential"].startswith("copy of the host auth.json")
        work = tmp_path / "work"
        work.mkdir()
        (work / "README.md").write_text("hello\n")

        async def on_launch(argv: list[str]) -> None:
            return None

        ctx = AttemptContext("run", "a1", task(tmp_path, "Do the task."), VANILLA, "gpt-5.5", "medium", 0, 120.0,
                             tmp_path / "attempt", on_launch)
        egress = CodexHarness(cli, "0.169.0", probe.base_url).egress("coding", None)
        spec = SandboxSpec(run_id="run", attempt_id="a1", role="coding", task="t1", workspace=work, home=home,
                           readonly=harness.readonly, egress=egress)
        async with LocalEnvironment(isolation="bubblewrap").sandbox(spec) as sb:
            spy = ExecSpy(sb)
            run = await harness.run(spy, ctx)  # type: ignore[arg-type]
            left = (sb.root / "home" / ".codex" / "auth.json").exists()
            saved = (sb.root / "home" / "saved").exists()
    assert not left
    assert (tmp_path / "attempt" / "agent" / "login-status.json").is_file()  # the credential was really used
    coding = [res for argv, kw, res in spy.calls if kw.get("remove_after")]
    separate = [argv for argv, _, _ in spy.calls if argv[:2] == ["rm", "-f"]]
    assert len(coding) == 1 and len(separate) == (0 if coding[0].removed else 1)
    assert saved == (agent == "daemons")
    if agent != "daemons":  # daemons copying over the file may make the CLI fail: only the invariants above hold
        assert (run.exit_code == 0, coding[0].removed) == {"plain": (True, True), "killed": (False, False)}[agent]
