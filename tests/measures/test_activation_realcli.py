"""Activation read from traces the real Claude Code and Codex CLIs write against the probe.

One package per CLI; each scenario picks its behaviour from a word in the task: invoke the
skill, call the plugin agent, run a command that fires the hook, or none of these. The
activation verdicts must match what the scenario did, every time; with the transcripts
removed every component is unknown.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._claude import ClaudeHarness
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.measures._activation_spec import verdicts
from pluginbench.probe import PINNED, ProbeServer, cli_version, find_cli, load_scenario
from pluginbench.tasks import HarborTask
from tests._prereq import require
from tests.harnesses._claude_pkg import write

pytestmark = pytest.mark.realcli
AGENT_MARK = "PB-REVIEWER-AGENT-BODY"

CLAUDE_SCENARIO = textwrap.dedent(f"""\
    name: activation-claude
    final: {{text: "Done.", usage: {{input_tokens: 900, output_tokens: 5}}}}
    rules:
      - name: subagent
        when: {{api: anthropic, system_contains: {AGENT_MARK}}}
        script:
          - text: "Reviewed."
            usage: {{input_tokens: 500, output_tokens: 5}}
      - name: skill
        when: {{api: anthropic, tools_include: Write, messages_contain: DO-SKILL}}
        script:
          - tool: {{name: Skill, input: {{skill: tidy-code}}}}
          - tool: {{name: Write, input: {{file_path: "{{{{cwd}}}}/answer.txt", content: "skill\\n"}}}}
      - name: agent
        when: {{api: anthropic, tools_include: Write, messages_contain: DO-AGENT}}
        script:
          - tool: {{name: Task, input: {{subagent_type: "pb-act:reviewer", description: "Review", prompt: "Review it."}}}}
          - tool: {{name: Write, input: {{file_path: "{{{{cwd}}}}/answer.txt", content: "agent\\n"}}}}
      - name: hook
        when: {{api: anthropic, tools_include: Write, messages_contain: DO-HOOK}}
        script:
          - tool: {{name: Bash, input: {{command: "echo hi > answer.txt", description: "Write"}}}}
      - name: none
        when: {{api: anthropic, tools_include: Write}}
        script:
          - tool: {{name: Write, input: {{file_path: "{{{{cwd}}}}/answer.txt", content: "none\\n"}}}}
    """)

#: what each scenario must show: component -> (state, count, first turn)
CLAUDE_EXPECTED = {
    "skill": {"skill:tidy-code": ("used", 1, 1), "agent:pb-act:reviewer": ("not_used", 0, None),
              "hook:pb-act:PreToolUse:Bash": ("not_used", 0, None)},
    "agent": {"skill:tidy-code": ("not_used", 0, None), "agent:pb-act:reviewer": ("used", 1, 1),
              "hook:pb-act:PreToolUse:Bash": ("not_used", 0, None)},
    "hook": {"skill:tidy-code": ("not_used", 0, None), "agent:pb-act:reviewer": ("not_used", 0, None),
             "hook:pb-act:PreToolUse:Bash": ("used", 1, 1)},
    "none": {"skill:tidy-code": ("not_used", 0, None), "agent:pb-act:reviewer": ("not_used", 0, None),
             "hook:pb-act:PreToolUse:Bash": ("not_used", 0, None)},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _task(tmp: Path, instruction: str) -> HarborTask:
    return HarborTask("t1", tmp, instruction, "/app", None, 60.0, 60.0, "local", None, None, None, None, (), {})


def claude_package(tmp: Path) -> FrozenTreatment:
    pkg = tmp / "pkg"
    skill = pkg / "skills" / "tidy-code"
    write(skill / "SKILL.md", "---\nname: tidy-code\ndescription: Keep code tidy.\n---\nBe tidy.\n")
    plugin = pkg / "plugins" / "pb-act"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pb-act", "version": "0.1.0"}))
    write(plugin / "agents" / "reviewer.md",
          f"---\nname: reviewer\ndescription: Reviews changes.\n---\n{AGENT_MARK}: review the change.\n")
    write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "true"}]}]}}))
    return FrozenTreatment("act", pkg, (), (skill,), (plugin,), "fp")


async def _claude_attempt(cli: Path, tmp: Path, probe: ProbeServer, treatment: FrozenTreatment, name: str,
                          instruction: str) -> Path:
    harness = ClaudeHarness(cli, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"})
    home = tmp / f"home-{name}"
    home.mkdir()
    harness.deliver(treatment, home)
    work = tmp / f"work-{name}"
    write(work / "README.md", "hello\n")
    attempt_dir = tmp / f"attempt-{name}"

    async def on_launch(argv: list[str]) -> None:
        return None

    ctx = AttemptContext("run", name, _task(tmp, instruction), treatment, "claude-sonnet-4-5", "medium", 0, 120.0,
                         attempt_dir, on_launch)
    spec = SandboxSpec(run_id="run", attempt_id=name, role="coding", task="t1", workspace=work, home=home,
                       readonly=harness.readonly, egress=harness.egress("coding", None))
    async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
        run = await harness.run(sb, ctx)
        await sb.stop()
    assert run.error is None, run.error
    return attempt_dir


def _table(attempt_dir: Path) -> dict[str, tuple[str, int | None, int | None]]:
    found, why = verdicts(attempt_dir)
    assert found is not None, why
    return {v.key: (v.state, v.uses, v.first_turn) for v in found if v.owner == "treatment"}


@pytest.mark.anyio
async def test_claude_activation_matches_each_scenario(tmp_path: Path) -> None:
    """On the real Claude Code CLI, invoking the skill, calling the plugin agent, firing the hook and doing none
    of these each give exactly that activation (count, first turn); without transcripts all are unknown."""
    cli = find_cli("claude")
    require(cli is not None and cli_version(cli) == PINNED["claude"], f"Claude Code {PINNED['claude']}")
    assert cli is not None
    treatment = claude_package(tmp_path)
    scen = load_scenario(write(tmp_path / "s.yaml", CLAUDE_SCENARIO))
    dirs = {}
    with ProbeServer(scen) as probe:
        for case in CLAUDE_EXPECTED:
            dirs[case] = await _claude_attempt(cli, tmp_path, probe, treatment, case, f"DO-{case.upper()} the task.")
        probe.wait_idle(timeout=60)
    for case, want in CLAUDE_EXPECTED.items():
        assert _table(dirs[case]) == want, case
    shutil.rmtree(dirs["skill"] / "agent" / "transcripts")
    gone = _table(dirs["skill"])
    assert gone["skill:tidy-code"][0] == "unknown" and gone["agent:pb-act:reviewer"][0] == "unknown"
    # the hook is read from the stdout stream, which is still there
    assert gone["hook:pb-act:PreToolUse:Bash"] == ("not_used", 0, None)
    (dirs["skill"] / "agent" / "stdout.jsonl").unlink()
    assert {s for s, _, _ in _table(dirs["skill"]).values()} == {"unknown"}


CODEX_SCENARIO = textwrap.dedent("""\
    name: activation-codex
    final: {text: "Done.", usage: {input_tokens: 900, output_tokens: 5}}
    rules:
      - name: skill
        when: {api: responses, messages_contain: DO-SKILL}
        script:
          - tool: {name: exec_command, input: {cmd: "cat $CODEX_HOME/skills/careful-edits/SKILL.md"}}
          - tool:
              name: apply_patch
              input: "*** Begin Patch\\n*** Add File: answer.txt\\n+skill\\n*** End Patch\\n"
      - name: none
        when: {api: responses}
        script:
          - tool:
              name: apply_patch
              input: "*** Begin Patch\\n*** Add File: answer.txt\\n+none\\n*** End Patch\\n"
    """)


def codex_package(tmp: Path) -> FrozenTreatment:
    pkg = tmp / "pkg"
    skill = pkg / "skills" / "careful-edits"
    write(skill / "SKILL.md", "---\nname: careful-edits\ndescription: Edit carefully.\n---\nRead before you write.\n")
    plugin = pkg / "plugins" / "starter"
    write(plugin / ".codex-plugin" / "plugin.json", json.dumps({"name": "starter", "version": "0.2.0", "description": "d"}))
    write(plugin / "skills" / "plug-skill" / "SKILL.md", "---\nname: plug-skill\ndescription: from a plugin\n---\nx\n")
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": "true", "timeout": 10}]}]}
    write(plugin / "hooks" / "hooks.json", json.dumps({"hooks": hooks}))
    return FrozenTreatment("act", pkg, (), (skill,), (plugin,), "fp")


async def _codex_attempt(cli: Path, tmp: Path, probe: ProbeServer, treatment: FrozenTreatment, name: str,
                         instruction: str) -> Path:
    harness = CodexHarness(cli, "0.169.0", probe.base_url)
    home = tmp / f"home-{name}"
    harness.deliver(treatment, home)
    ws = tmp / f"ws-{name}"
    write(ws / "README.md", "start\n")
    attempt_dir = tmp / f"attempt-{name}"

    async def on_launch(argv: list[str]) -> None:
        return None

    ctx = AttemptContext("run", name, _task(tmp, instruction), treatment, "gpt-5.5", "medium", 1, 120.0,
                         attempt_dir, on_launch)
    spec = SandboxSpec("run", name, "coding", "t", workspace=ws, home=home, readonly=harness.readonly, egress=harness.egress("coding", None))
    async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
        run = await harness.run(sb, ctx)
        await sb.stop()
    assert run.error is None, run.error
    return attempt_dir


@pytest.mark.anyio
async def test_codex_activation_matches_each_scenario(tmp_path: Path) -> None:
    """On the real Codex CLI, reading the skill's SKILL.md marks it used (turn 1), an attempt that does not
    leaves it and the plugin skill not used, the hook is unknown (Codex records no hook run), and with
    the rollouts removed every component is unknown."""
    cli = find_cli("codex")
    require(cli is not None, "codex in .tools/clis (tools/install-clis.sh)")
    assert cli is not None
    treatment = codex_package(tmp_path)
    scen = load_scenario(write(tmp_path / "s.yaml", CODEX_SCENARIO))
    with ProbeServer(scen) as probe:
        used = await _codex_attempt(cli, tmp_path, probe, treatment, "skill", "DO-SKILL the task.")
        none = await _codex_attempt(cli, tmp_path, probe, treatment, "none", "Do the task.")
        probe.wait_idle(timeout=60)
    hook = "hook:starter:sessionstart"
    assert _table(used) == {"skill:careful-edits": ("used", 1, 1), "skill:starter:plug-skill": ("not_used", 0, None),
                            hook: ("unknown", None, None)}
    assert _table(none) == {"skill:careful-edits": ("not_used", 0, None),
                            "skill:starter:plug-skill": ("not_used", 0, None), hook: ("unknown", None, None)}
    shutil.rmtree(used / "agent" / "rollouts")
    assert {s for s, _, _ in _table(used).values()} == {"unknown"}
