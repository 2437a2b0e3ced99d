"""The real Claude Code CLI on bubblewrap: its credentials file is gone once the harness returns, removed in
the coding command's own launch when the host confirms it, else by the separate rm: also when the agent kills
the command's wrapper, or leaves daemons that keep writing the file back."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pluginbench.environments import LocalEnvironment, SandboxSpec, bwrap_available
from pluginbench.harnesses._claude import ClaudeHarness
from pluginbench.harnesses._port import AttemptContext
from pluginbench.probe import PINNED, ProbeServer, load_scenario
from tests._prereq import require
from tests.harnesses._claude_pkg import vanilla, write
from tests.harnesses._credential_agents import KILL_WRAPPER, ExecSpy, daemons

from .test_claude_realcli import MODEL, _task, cli  # noqa: F401 - cli is a fixture

pytestmark = pytest.mark.realcli

AGENT = {"plain": None, "daemons": daemons("${CLAUDE_CONFIG_DIR:-$HOME/.claude-config}/.credentials.json"), "killed": KILL_WRAPPER}


def _scenario(command: str | None) -> str:
    rule = {"name": "agent", "when": {"api": "anthropic", "tools_include": "Bash"},
            "script": [{"tool": {"name": "Bash", "input": {"command": command, "description": "Run"}},
                        "usage": {"input_tokens": 800, "output_tokens": 30}}]}
    return yaml.safe_dump({"name": "credentials", "final": {"text": "Done.", "usage": {
        "input_tokens": 900, "output_tokens": 5}}, "rules": [rule] if command else []}, sort_keys=False)



@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("agent", list(AGENT))
async def test_credentials_are_gone_when_the_harness_returns(cli: Path, tmp_path: Path, agent: str) -> None:  # noqa: F811
    """A plain attempt removes the credentials in the coding launch (confirmed, no separate rm); an agent that
    kills the wrapper gets the separate rm; with daemons writing the file back, the separate rm runs whenever
    the removal is not confirmed; no file is ever left."""
    require(bwrap_available(), "bubblewrap")
    with ProbeServer(load_scenario(write(tmp_path / "s.yaml", _scenario(AGENT[agent])))) as probe:
        harness = ClaudeHarness(cli, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"})
        home = tmp_path / "home"
        home.mkdir()
        harness.deliver(vanilla(), home)
        work = tmp_path / "work"
        write(work / "README.md", "hello\n")

        async def on_launch(argv: list[str]) -> None:
            return None

        ctx = AttemptContext("run", "a1", _task(tmp_path), vanilla(), MODEL, "medium", 0, 120.0, tmp_path / "attempt",
                             on_launch)
        spec = SandboxSpec(run_id="run", attempt_id="a1", role="coding", task="t1", workspace=work, home=home,
                           readonly=harness.readonly, egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation="bubblewrap").sandbox(spec) as sb:
            spy = ExecSpy(sb)
            run = await harness.run(spy, ctx)  # type: ignore[arg-type]
            left = (sb.root / "home" / ".claude-config" / ".credentials.json").exists()
            saved = (sb.root / "home" / "saved").exists()
    assert not left
    coding = [res for argv, kw, res in spy.calls if kw.get("remove_after")]
    separate = [argv for argv, _, _ in spy.calls if argv[:2] == ["rm", "-f"]]
    assert len(coding) == 1 and len(separate) == (0 if coding[0].removed else 1)
    assert saved == (agent == "daemons")
    if agent != "daemons":  # daemons copying over the file may make the CLI fail: only the invariants above hold
        assert (run.exit_code == 0, coding[0].removed) == {"plain": (True, True), "killed": (False, False)}[agent]
