"""The starting source's base repository, built once per process and copied into each local sandbox: the same
repository as the three-process recipe (commit, reflog, exclude, a clean index, the agent's identity) in one git
process, and a copy no sandbox shares with another or with the template."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec, _gitbase, _gitbase_template

from ..git_helpers import GIT_ENV as BASE_GIT_ENV
from ..git_helpers import record_git_processes
from .contract import write_workspace

GIT_ENV = {**BASE_GIT_ENV, "HOME": "/nonexistent"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, check=True).stdout.decode()


def _repo_facts(app: Path) -> tuple[str, ...]:
    """What the agent's git sees of its base: HEAD, the reflog, the index entries and cleanliness, config, exclude."""
    return (_git(app, "rev-parse", "HEAD"), _git(app, "reflog", "--format=%H %gs"), _git(app, "ls-files", "-s"),
            _git(app, "status", "--porcelain", "--ignored"), _git(app, "diff-files", "--name-only"),
            _git(app, "config", "--list", "--local"), (app / ".git" / "info" / "exclude").read_text(),
            _git(app, "log", "--format=%H %an %ae %ad %cn %ce %cd %s", "--date=iso-strict"))


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_sandboxes_copy_one_kept_base_in_one_git_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unisolated sandboxes of one source get the recipe's repository through the kept template (built once,
    then one update-index a sandbox), and what one sandbox does to its .git reaches neither the next nor the
    template."""
    monkeypatch.setattr(_gitbase_template, "_kept", _gitbase_template.OrderedDict())
    ws = write_workspace(tmp_path / "ws")
    (ws / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(ws / "tool.sh", 0o755)
    identity = ("Agent Q", "q@pluginbench.invalid")
    reference = tmp_path / "reference"
    subprocess.run(["cp", "-a", str(ws), str(reference)], check=True)
    (tmp_path / "home").mkdir()
    expected_commit = await _gitbase.init_base_repo(reference, tmp_path / "home", identity)
    expected = _repo_facts(reference)

    calls = record_git_processes(monkeypatch)
    env = LocalEnvironment("none", root=tmp_path / "boxes")
    seen = []
    for attempt in ("a1", "a2"):
        spec = SandboxSpec(run_id="r", attempt_id=attempt, role="coding", task="t", workspace=ws, git_identity=identity)
        async with env.sandbox(spec) as sb:
            app = Path(sb.paths.app)
            seen.append((sb.base_commit, _repo_facts(app)))
            (app / "README.md").write_text("changed\n")
            _git(app, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "agent work")
    assert [c for c, _ in seen] == [expected_commit, expected_commit]
    assert [f for _, f in seen] == [expected, expected]
    assert [[a for a in argv if not a.startswith("-") and "=" not in a][1] for argv in calls] == ["update-index"] * 2
    template = next(iter(_gitbase_template._kept.values()))
    assert _git(template.repo, "rev-parse", "HEAD").strip() == expected_commit
    assert _git(template.repo, "status", "--porcelain") == ""


def test_a_removed_template_is_built_again_and_each_temp_root_keeps_its_own(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's temp root removed with its template (the worker's cleanup) gives a fresh template, not a dead
    path; another temp root gets a template of its own."""
    import shutil
    import tempfile

    from pluginbench.tasks import scan_tree

    monkeypatch.setattr(_gitbase_template, "_kept", _gitbase_template.OrderedDict())
    ws = write_workspace(tmp_path / "ws")
    entries = scan_tree(ws)
    runs = [tmp_path / "run1", tmp_path / "run2"]
    for run in runs:
        run.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(runs[0]))
    first = _gitbase_template.template_for(ws, entries)
    assert first.repo.is_relative_to(runs[0])
    shutil.rmtree(first.repo.parent)
    again = _gitbase_template.template_for(ws, entries)
    assert again.repo != first.repo and (again.repo / ".git" / "HEAD").is_file() and again.commit == first.commit
    monkeypatch.setattr(tempfile, "tempdir", str(runs[1]))
    other = _gitbase_template.template_for(ws, entries)
    assert other.repo.is_relative_to(runs[1]) and other.commit == first.commit
