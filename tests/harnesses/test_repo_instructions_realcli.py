"""Task-owned instruction files through the real CLIs and the probe (issue 13 items 2 and 3,
issue 25 item 4).

A task repository with its own instruction file and skill runs on the vanilla arm and a
treatment arm of each harness. What the model received (the probe's request log) must
equal what the discovery receipt says loaded: the repository's files on vanilla (listed
as task-owned), the treatment's components only on the treatment arm. The treatment arm
also says ``task_owned: remove`` (AGENTbench's generated-file condition): its sandbox starts
from the pipeline's stripped copy of the repository, so neither its receipt nor its requests
hold the repository's files. A counting wrapper around the CLI records every process start,
so the single-process launch is asserted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._claude import ClaudeHarness
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._codex_discovery import loaded_agents_md, split_agents_md
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment, tool_roots
from pluginbench.probe import PINNED, ProbeServer, cli_version, find_cli, load_scenario
from pluginbench.probe._server import ProbeRequest
from pluginbench.tasks import HarborTask, stripped_copy
from tests._prereq import require
from tests.harnesses._claude_pkg import MARKER, sample_treatment, vanilla, write

pytestmark = pytest.mark.realcli
SCENARIOS = Path(__file__).resolve().parents[2] / "pluginbench" / "probe" / "scenarios"
REPO_MEMORY = "REPO-OWN-INSTRUCTIONS-MARKER: run the tests before you finish."
REPO_SKILL = "REPO-OWN-SKILL-MARKER"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _cli(name: str) -> Path:
    path = find_cli(name)
    require(path is not None and cli_version(path) == PINNED[name], f"{name} {PINNED[name]} (tools/install-clis.sh)")
    assert path is not None
    return path


def _counting_wrapper(tmp: Path, real: Path) -> Path:
    """A stand-in executable that logs each start to $HOME/cli-launches.log, then runs the real CLI."""
    return write(tmp / "bin" / real.name,
                 f'#!/bin/sh\nprintf "%s\\n" "$*" >> "$HOME/cli-launches.log"\nexec "{real}" "$@"\n', 0o755)


def _repository(work: Path, memory_name: str, skill_dir: str) -> None:
    write(work / "README.md", "hello\n")
    write(work / memory_name, f"# Repository guide\n{REPO_MEMORY}\n")
    write(work / skill_dir / "repo-skill" / "SKILL.md",
          f"---\nname: repo-skill\ndescription: {REPO_SKILL} checks the repository.\n---\nbody\n")


def _task(root: Path) -> HarborTask:
    return HarborTask("t1", root, "Do the task.", "/app", None, 120.0, 60.0, "local", None, None,
                      None, None, (), {})


async def _attempt(harness, tmp: Path, probe: ProbeServer, treatment: FrozenTreatment, name: str,
                   model: str, memory_name: str, skill_dir: str) -> tuple[dict, list[str], int | None]:
    """One attempt; returns (receipt, CLI launch lines, probe requests when agent.launched fired)."""
    home, work = tmp / f"home-{name}", tmp / f"work-{name}"
    home.mkdir()
    harness.deliver(treatment, home)
    if treatment.task_owned == "remove":  # as the attempt pipeline starts such an arm
        _repository(tmp / f"full-{name}", memory_name, skill_dir)
        removed = stripped_copy(tmp / f"full-{name}", work)
        assert removed == tuple(sorted([memory_name, f"{skill_dir}/repo-skill/SKILL.md"]))
    else:
        _repository(work, memory_name, skill_dir)
    at_launch: list[int] = []

    async def launched(argv) -> None:
        at_launch.append(len(probe.requests))

    attempt_dir = tmp / f"attempt-{name}"
    ctx = AttemptContext("run", name, _task(tmp), treatment, model, "medium", 0, 120.0, attempt_dir, launched)
    spec = SandboxSpec(run_id="run", attempt_id=name, role="coding", task="t1", workspace=work, home=home,
                       readonly=harness.readonly, egress=harness.egress("coding", None))
    log = tmp / f"launches-{name}.log"
    async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
        run = await harness.run(sb, ctx)
        await sb.stop()
        with contextlib.suppress(Exception):
            await sb.get(f"{sb.paths.home}/cli-launches.log", log)
    assert run.error is None, run.error
    probe.wait_idle(timeout=60)
    receipt = json.loads((attempt_dir / "native-treatment.json").read_text())
    launches = log.read_text().splitlines() if log.exists() else []
    return receipt, launches, at_launch[0] if at_launch else None


def _coding(probe: ProbeServer, since: int) -> list[ProbeRequest]:
    return [r for r in probe.requests[since:] if r.kind == "coding"]


@pytest.mark.anyio
async def test_claude_receipt_equals_what_the_model_received_on_every_arm(tmp_path: Path) -> None:
    """Claude Code: the repository's CLAUDE.md and skill reach the model on vanilla and are task-owned in its
    receipt; the treatment arm (task_owned: remove) gets its guidance and neither repository file, in receipt or
    request; one CLI session process each."""
    real = _cli("claude")
    wrapper = _counting_wrapper(tmp_path, real)
    with ProbeServer(load_scenario(SCENARIOS / "edit-file.yaml")) as probe:
        harness = ClaudeHarness(wrapper, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"})
        harness.readonly = tool_roots(wrapper) + tool_roots(real)
        core = sample_treatment(tmp_path)._replace(task_owned="remove")
        for arm, treatment in (("vanilla", vanilla()), ("core", core)):
            before = len(probe.requests)
            receipt, launches, at_launch = await _attempt(harness, tmp_path, probe, treatment, arm,
                                                          "claude-sonnet-4-5", "CLAUDE.md", ".claude/skills")
            # No request before the task was sent; a discovery run (hooks disabled), then the coding session.
            assert at_launch == before
            sessions = [ln for ln in launches if ln.startswith("-p ")]
            assert len(sessions) == 2 and all("--input-format stream-json" in ln for ln in sessions), launches
            assert '"disableAllHooks":true' in sessions[0] and "disableAllHooks" not in sessions[1]
            assert receipt["passed"] and receipt["cli_processes"] == 2
            task = receipt["task_owned"]
            owned = arm == "vanilla"  # the core arm started without the repository's own files
            assert task["memory_files"] == ([{"path": "<cwd>/CLAUDE.md", "type": "Project"}] if owned else [])
            assert [s["name"] for s in task["skills"]] == (["repo-skill"] if owned else [])
            requests = _coding(probe, before)
            assert requests
            for req in requests:
                sent = json.dumps(req.body)
                assert (REPO_MEMORY in sent) == owned and (REPO_SKILL in sent) == owned
                assert (MARKER in sent) == (receipt["memory_files"] != [])
                for skill in receipt["skills"]:
                    assert skill["name"].split(":")[-1] in sent
            if arm == "vanilla":
                assert receipt["skills"] == [] and receipt["plugins"] == [] and receipt["memory_files"] == []


def _agents_block(body: object) -> str | None:
    return loaded_agents_md({"input": body.get("input")} if isinstance(body, dict) else body)


@pytest.mark.anyio
async def test_codex_receipt_equals_what_the_model_received_on_every_arm(tmp_path: Path) -> None:
    """Codex: the repository's AGENTS.md and skill reach the model on vanilla and are task-owned in its receipt
    (same text digest as sent); the treatment arm (task_owned: remove) gets the global AGENTS.md and neither
    repository file, in receipt or request; one exec each, and a repeat of the same setup reuses the receipt
    without starting the discovery commands again."""
    real = _cli("codex")
    wrapper = _counting_wrapper(tmp_path, real)
    guidance = write(tmp_path / "pkg" / "AGENTS.md", f"# Guidance\n{MARKER}\n")
    skill = write(tmp_path / "pkg" / "skills" / "careful" / "SKILL.md",
                  "---\nname: careful\ndescription: Edit carefully.\n---\nx\n").parent
    treated = FrozenTreatment("core", tmp_path / "pkg", (guidance,), (skill,), (), "fp1", task_owned="remove")
    with ProbeServer(load_scenario(SCENARIOS / "edit-file.yaml")) as probe:
        harness = CodexHarness(wrapper, PINNED["codex"], probe.base_url)
        harness.readonly = tool_roots(wrapper) + tool_roots(real)
        for arm, treatment in (("vanilla", vanilla()), ("core", treated), ("vanilla-again", vanilla())):
            before = len(probe.requests)
            receipt, launches, at_launch = await _attempt(harness, tmp_path, probe, treatment, arm, "gpt-5.5",
                                                          "AGENTS.md", ".agents/skills")
            assert at_launch == before
            assert sum(1 for ln in launches if ln.startswith("exec ")) == 1, launches
            discovery_starts = [ln for ln in launches if ln.startswith(("debug ", "app-server"))]
            assert receipt["ok"], receipt["mismatches"]
            assert receipt["cache"]["hit"] == (arm == "vanilla-again")
            assert len(discovery_starts) == (0 if arm == "vanilla-again" else 2), launches
            requests = _coding(probe, before)
            assert requests
            owned = arm != "core"  # the core arm started without the repository's own files
            for req in requests:
                global_part, project_part = split_agents_md(_agents_block(req.body), owned)
                sent = json.dumps(req.body)
                if owned:
                    (doc,) = receipt["task_owned"]["memory_files"]
                    assert doc["path"] == "<cwd>/AGENTS.md"
                    assert hashlib.sha256(project_part.encode()).hexdigest() == doc["sha256"]
                    assert REPO_MEMORY in project_part
                else:
                    assert receipt["task_owned"]["memory_files"] == [] and REPO_MEMORY not in sent
                assert bool(global_part) == receipt["memory_file"]["loaded"] == (arm == "core")
                assert (REPO_SKILL in sent) == owned
                for s in receipt["skills"]:
                    assert s["name"] in sent
            assert [s["name"] for s in receipt["task_owned"]["skills"]] == (["repo-skill"] if owned else [])


@pytest.mark.anyio
async def test_codex_cached_receipt_never_covers_a_changed_home(tmp_path: Path) -> None:
    """After a passing vanilla attempt, the same harness meets a home with an undeclared skill: the digest
    differs, discovery runs again, refuses the attempt, and the model is never called."""
    from pluginbench.harnesses._codex import DiscoveryMismatch

    real = _cli("codex")
    with ProbeServer(load_scenario(SCENARIOS / "edit-file.yaml")) as probe:
        harness = CodexHarness(real, PINNED["codex"], probe.base_url)
        receipt, _, _ = await _attempt(harness, tmp_path, probe, vanilla(), "clean", "gpt-5.5",
                                       "AGENTS.md", ".agents/skills")
        assert receipt["ok"] and receipt["cache"]["hit"] is False
        before = len(probe.requests)
        original = harness.deliver

        def sneaky(treatment, home):
            out = original(treatment, home)
            write(home / ".codex" / "skills" / "sneaky" / "SKILL.md", "---\nname: sneaky\ndescription: x\n---\nx\n")
            return out

        harness.deliver = sneaky  # type: ignore[method-assign]
        with pytest.raises(DiscoveryMismatch, match="sneaky"):
            await _attempt(harness, tmp_path, probe, vanilla(), "sneak", "gpt-5.5", "AGENTS.md", ".agents/skills")
        assert len(probe.requests) == before
        saved = json.loads((tmp_path / "attempt-sneak" / "native-treatment.json").read_text())
        assert saved["cache"]["hit"] is False and not saved["ok"]
