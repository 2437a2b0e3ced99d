"""``task_owned: remove``: which files are the repository's own guidance, the stripped copy,
putting them back before the patch, the config rule, and one attempt through the pipeline."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pluginbench.config import parse_evaluation, validate
from pluginbench.errors import ConfigError
from pluginbench.tasks import HarborTask, restore_removed, stripped_copy, task_owned_paths


def test_instruction_files_and_skill_folders_are_task_owned_at_any_depth() -> None:
    """AGENTS.md, AGENTS.override.md, CLAUDE.md, CLAUDE.local.md and everything under .claude/ or .agents/ are
    task-owned at any depth; look-alikes (docs about CLAUDE.md, a file named .claude) are not."""
    paths = ["AGENTS.md", "src/CLAUDE.md", "a/b/AGENTS.override.md", "CLAUDE.local.md", ".claude/settings.json",
             "pkg/.agents/skills/x/SKILL.md", "docs/claude.md", "CLAUDE.md.bak", ".claude", "notes/.claudeignore",
             "src/main.py"]
    assert task_owned_paths(paths) == (".claude/settings.json", "AGENTS.md", "CLAUDE.local.md",
                                       "a/b/AGENTS.override.md", "pkg/.agents/skills/x/SKILL.md", "src/CLAUDE.md")


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_strip_then_restore_puts_back_only_what_the_agent_left_absent(tmp_path: Path) -> None:
    """The copy lacks the task-owned files; restoring skips a path the agent wrote and one under a symlinked
    folder (never written through), keeps exact modes, and puts back the rest."""
    source, work = tmp_path / "source", tmp_path / "work"
    _tree(source, {"main.py": "x\n", "CLAUDE.md": "repo\n", "sub/AGENTS.md": "nested\n",
                   ".claude/skills/s/SKILL.md": "skill\n", "lib/.agents/a.md": "a\n"})
    os.chmod(source / "CLAUDE.md", 0o600)
    removed = stripped_copy(source, work)
    assert removed == (".claude/skills/s/SKILL.md", "CLAUDE.md", "lib/.agents/a.md", "sub/AGENTS.md")
    assert sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_file()) == ["main.py"]
    (work / "sub").mkdir()
    (work / "sub" / "AGENTS.md").write_text("the agent's own\n")  # the agent wrote where one was
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "lib").mkdir()
    (work / "lib" / ".agents").symlink_to(outside)  # a symlinked folder is never written through
    restored = restore_removed(source, work, removed)
    assert restored == (".claude/skills/s/SKILL.md", "CLAUDE.md")
    assert (work / "sub" / "AGENTS.md").read_text() == "the agent's own\n" and not any(outside.iterdir())
    assert (work / "CLAUDE.md").stat().st_mode & 0o777 == 0o600


def _config(treatment: dict) -> ConfigError | None:
    raw = {"tasks": {"source": "t", "ids": ["a"]}, "runner": {"harness": "nop"}, "treatments": {"none": treatment}}
    try:
        validate(parse_evaluation(raw, Path("e.yaml")), Path("e.yaml"))
    except ConfigError as exc:
        return exc
    return None


def test_config_accepts_an_arm_that_only_removes_the_repository_guidance() -> None:
    """task_owned: remove alone makes a treatment (AGENTbench's no-context-file arm); keep alone is still empty;
    any other value is refused naming the field with the arm (not treatments[...])."""
    assert _config({"task_owned": "remove"}) is None
    assert _config({"task_owned": "remove", "guidance": ["g.md"]}) is None
    empty = _config({"task_owned": "keep"})
    assert empty is not None and empty.field == "treatments.none"
    wrong = _config({"task_owned": "strip"})
    assert wrong is not None and wrong.field == "treatments.none.task_owned" and "invalid value 'strip'" in wrong.message


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_removing_arm_codes_without_the_files_and_its_patch_keeps_them(tmp_path: Path) -> None:
    """Through the attempt pipeline (oracle control, unisolated sandbox): the agent's tree has no task-owned file,
    delivery.json and task_owned.json record the removal, and the patch is against the whole starting source:
    the agent's listing and its own sub/CLAUDE.md (a change to the repository's), no deletion."""
    from pluginbench.actors._pipeline import code_attempt
    from pluginbench.environments import LocalEnvironment
    from pluginbench.harnesses._controls import OracleHarness
    from pluginbench.harnesses._port import FrozenTreatment

    task_root, source = tmp_path / "task", tmp_path / "task" / "workspace"
    _tree(source, {"main.py": "x\n", "CLAUDE.md": "repo\n", "sub/CLAUDE.md": "nested\n",
                   ".claude/skills/s/SKILL.md": "skill\n"})
    _tree(task_root, {"solution/solve.sh": "#!/bin/sh\ncd \"$APP_DIR\"\nfind . -path ./.git -prune -o -type f -print"
                                            " | sort > seen.txt\nmkdir -p sub\necho mine > sub/CLAUDE.md\n"})
    task = HarborTask("t1", task_root, "Do it.", "/app", None, 60.0, 60.0, "local", None, None, None, None, (), {})
    arm = FrozenTreatment("none", None, (), (), (), "fp", task_owned="remove")

    async def launched(argv) -> None:
        return None

    result = await code_attempt(
        environment=LocalEnvironment(isolation="none"), harness=OracleHarness(), run_id="r", attempt_id="a",
        task=task, starting_source=source, treatment=arm, attempt_dir=tmp_path / "attempt", model=None,
        reasoning=None, seed=0, timeout=60.0, hidden=(), launched=launched,
    )
    assert result.capture_error is None and result.patch is not None, (result.capture_error, result.run.error)
    record = json.loads((tmp_path / "attempt" / "task_owned.json").read_text())
    assert record == {"setting": "remove", "removed": [".claude/skills/s/SKILL.md", "CLAUDE.md", "sub/CLAUDE.md"],
                      "restored_before_patch": [".claude/skills/s/SKILL.md", "CLAUDE.md"]}
    assert json.loads((tmp_path / "attempt" / "delivery.json").read_text())["task_owned"]["removed"] == record["removed"]
    patch = (tmp_path / "attempt" / "model.patch").read_text()
    seen = [ln[1:] for ln in patch.splitlines() if ln.startswith("+./") and ln != "+./seen.txt"]
    assert seen == ["./main.py"]  # what the agent saw: no task-owned file
    assert "deleted file" not in patch and "-nested" in patch and "+mine" in patch


def test_removal_roots_take_a_whole_skill_folder_once_and_other_files_alone() -> None:
    """An image task's sandbox removes each outermost .claude/.agents folder once and each other instruction file by
    itself (nothing beside them)."""
    from pluginbench.tasks import removal_roots

    assert removal_roots(["CLAUDE.md", ".claude/a/b.md", ".claude/c.json", "pkg/.agents/x/.claude/y.md",
                          "sub/AGENTS.md"]) == (".claude", "CLAUDE.md", "pkg/.agents", "sub/AGENTS.md")


@pytest.mark.docker
@pytest.mark.anyio
async def test_an_image_only_task_arm_codes_without_the_files_removed_inside_its_sandbox(tmp_path: Path) -> None:
    """On docker, a task whose starting source lives only in its image: the removing arm's sandbox deletes the
    repository's guidance inside itself before the agent (the agent lists only main.py), delivery.json and
    task_owned.json record the same paths as a folder task, and the patch against the exported starting source keeps
    them (the agent's own sub/CLAUDE.md is a change, no deletion)."""
    import shutil
    import subprocess
    import uuid

    from pluginbench.actors._context import SandboxSource
    from pluginbench.actors._pipeline import code_attempt
    from pluginbench.environments import SandboxSpec
    from pluginbench.environments._docker import DockerEnvironment
    from pluginbench.harnesses._controls import OracleHarness
    from pluginbench.harnesses._port import FrozenTreatment
    from tests._prereq import require

    require(shutil.which("docker") is not None and subprocess.run(
        ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0,
        "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    context = tmp_path / "image"
    _tree(context / "repo", {"main.py": "x\n", "CLAUDE.md": "repo\n", "sub/CLAUDE.md": "nested\n",
                             ".claude/skills/s/SKILL.md": "skill\n", "lib/.agents/a.md": "a\n"})
    (context / "Dockerfile").write_text("FROM pluginbench/base:bookworm\nWORKDIR /app\nCOPY repo/ /app/\n")
    image = "pluginbench-test/task-owned-image:v1"  # same content, same image: parallel builds agree
    subprocess.run(["docker", "build", "-q", "-t", image, str(context)], check=True, capture_output=True, timeout=300)
    task_root = tmp_path / "task"
    _tree(task_root, {"solution/solve.sh": "#!/bin/sh\ncd \"$APP_DIR\"\nfind . -path ./.git -prune -o -print"
                                            " | sort > seen.txt\nmkdir -p sub\necho mine > sub/CLAUDE.md\n"})
    task = HarborTask("t1", task_root, "Do it.", "/app", None, 60.0, 60.0, "separate", image, None, None, None, (), {})
    run_id = f"owned-{uuid.uuid4().hex[:8]}"
    env = DockerEnvironment(run_id=run_id)
    starting = tmp_path / "starting"  # what preparation exports from an image task's image
    async with env.sandbox(SandboxSpec(run_id=run_id, attempt_id="export", role="readiness", task="t1",
                                       image=image)) as sb:
        await sb.stop()
        await sb.export_workspace(starting)
    arm = FrozenTreatment("none", None, (), (), (), "fp", task_owned="remove")

    async def launched(argv) -> None:
        return None

    result = await code_attempt(
        environment=env, harness=OracleHarness(), run_id=run_id, attempt_id="a", task=task,
        starting_source=starting, treatment=arm, attempt_dir=tmp_path / "attempt", model=None, reasoning=None,
        seed=0, timeout=120.0, hidden=(), launched=launched, source=SandboxSource(None, image, None, None),
    )
    assert result.capture_error is None and result.patch is not None, (result.capture_error, result.run.error)
    removed = [".claude/skills/s/SKILL.md", "CLAUDE.md", "lib/.agents/a.md", "sub/CLAUDE.md"]
    record = json.loads((tmp_path / "attempt" / "task_owned.json").read_text())
    assert record == {"setting": "remove", "removed": removed,
                      "restored_before_patch": [".claude/skills/s/SKILL.md", "CLAUDE.md", "lib/.agents/a.md"]}
    assert json.loads((tmp_path / "attempt" / "delivery.json").read_text())["task_owned"]["removed"] == removed
    patch = (tmp_path / "attempt" / "model.patch").read_text()
    seen = sorted(ln[1:] for ln in patch.splitlines() if ln.startswith("+./") and ln != "+./seen.txt")
    assert seen == ["./main.py"]  # no .claude, no .agents (nor lib/, left empty), no instruction file
    assert "deleted file" not in patch and "-nested" in patch and "+mine" in patch


def test_the_integrity_check_accepts_a_removing_arm_s_bound_fingerprint_and_still_sees_a_change(tmp_path: Path) -> None:
    """A frozen treatment recorded with task_owned: remove bound into its fingerprint is unchanged while its tree is
    (the report and resume used to refuse every such run), and changed once a file under it changes."""
    from pluginbench.events._types import TreatmentFrozen
    from pluginbench.projections._integrity import frozen_changes
    from pluginbench.projections._state import RunState
    from pluginbench.rundir import RunDir
    from pluginbench.tasks import bind_task_owned, fingerprint, scan_tree

    rd = RunDir(tmp_path / "run")
    dest = rd.frozen_treatment("none")
    _tree(dest, {"guidance/g.md": "be brief\n"})
    state = RunState()
    bound = bind_task_owned(fingerprint(scan_tree(dest)), "remove")
    state.frozen_treatments["none"] = TreatmentFrozen(seq=1, arm="none", fingerprint=bound,
                                                      guidance_bytes=9, skills=[], plugins=[])
    assert frozen_changes(rd, state) == []
    (dest / "guidance" / "g.md").write_text("be verbose\n")
    assert frozen_changes(rd, state) == ["frozen treatment 'none' (evidence/frozen/treatments/none)"]
