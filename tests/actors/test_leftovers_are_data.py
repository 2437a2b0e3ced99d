"""What an agent leaves is data, never a privilege or a pointer (issue 20, items 4 and 6):
a setuid file is exported without its setuid bit, a ``sub/.git`` pointer to another host
repository and a nested repository put nothing of them into the canonical patch, a
``.gitmodules`` ``update = !cmd`` never runs, and the agent's ``/logs/artifacts`` (a
symlink, ``model.patch`` as a folder, planted files) neither voids the grade nor reaches
the verifier, which gets only the canonical ``model.patch``.

The agent is a stand-in harness (the engine logic is under test, not an agent) that runs
its shell commands in the real bubblewrap sandbox of the local backend; the patch, the
export and the grade are made by the real pipeline.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from pluginbench.actors._pipeline import code_attempt, grade_patch
from pluginbench.environments import LocalEnvironment
from pluginbench.harnesses import FrozenTreatment, NopHarness
from pluginbench.harnesses._port import NO_MODEL_USAGE, AgentRun
from pluginbench.tasks import load_task
from tests._prereq import require

TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
#: the verifier: reward 1 only when add() sums AND /logs/artifacts holds nothing but model.patch
VERIFIER = """#!/usr/bin/env bash
cd "${APP_DIR:-/app}" || exit 1
logs="${LOGS_DIR:-/logs}"
mkdir -p "$logs/verifier"
ls -A "$logs/artifacts" | sed 's/^/artifact /'
if [ "$(ls -A "$logs/artifacts")" = "model.patch" ] && [ -f "$logs/artifacts/model.patch" ] && \\
   python3 -c 'import solution, sys; sys.exit(0 if solution.add(2, 3) == 5 else 1)'; then
  echo 1 > "$logs/verifier/reward.txt"
else
  echo 0 > "$logs/verifier/reward.txt"
fi
"""


class LeftoversHarness(NopHarness):
    """A stand-in agent that solves the task and leaves privileges and pointers behind."""

    def __init__(self, script: str) -> None:
        super().__init__()
        self.script = script

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["leftovers"])
        done = await sandbox.exec(["bash", "-c", self.script], timeout=60)
        assert done.exit_code == 0, done.stderr.decode(errors="replace")
        return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE)


def _git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "o", "GIT_AUTHOR_EMAIL": "o@x", "GIT_COMMITTER_NAME": "o", "GIT_COMMITTER_EMAIL": "o@x"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def _other_repository(tmp: Path) -> tuple[Path, str]:
    """A host repository the agent's gitdir pointer names, and its HEAD."""
    other = tmp / "other"
    other.mkdir()
    (other / "secret.txt").write_text("host repository content\n")
    _git(other, "init", "-q")
    _git(other, "add", "-A")
    _git(other, "commit", "-q", "-m", "other")
    return other, _git(other, "rev-parse", "HEAD")


@pytest.mark.anyio
async def test_setuid_git_pointers_and_artifact_tricks_leave_a_clean_patch_and_a_true_grade(tmp_path: Path) -> None:
    """The setuid copy of id is exported 0755; model.patch holds solution.py and .gitmodules but no gitlink, no
    other repository's HEAD and no nested .git (each drop named); update=!cmd never ran; the attempt passes and the
    verifier saw only model.patch in /logs/artifacts."""
    require(shutil.which("bwrap") is not None, "bubblewrap")
    other, other_head = _other_repository(tmp_path)
    marker = tmp_path / "gitmodules-update-ran"
    task_dir = tmp_path / "task"
    shutil.copytree(TASKS / "add-numbers", task_dir)
    (task_dir / "tests" / "test.sh").write_text(VERIFIER)
    task = load_task(task_dir, "add-numbers")
    script = (
        "set -e; cd \"$APP_DIR\"; printf 'def add(a, b):\\n    return a + b\\n' > solution.py; "
        "cp /usr/bin/id suid-id; chmod 4755 suid-id; "
        f"mkdir -p sub; printf 'gitdir: {other}/.git\\n' > sub/.git; echo sub > sub/file.txt; "
        "mkdir -p nested && cd nested && git init -q && echo n > n.txt && git add n.txt && "
        "git -c user.name=a -c user.email=a@x commit -qm n && cd ..; "
        f"printf '[submodule \"sub\"]\\n\\tpath = sub\\n\\turl = ./sub\\n\\tupdate = !touch {marker}\\n' > .gitmodules; "
        "mkfifo pipe; "
        "ln -s /etc/passwd \"$LOGS_DIR/artifacts/link\"; mkdir -p \"$LOGS_DIR/artifacts/model.patch\"; "
        "echo planted > \"$LOGS_DIR/artifacts/planted.txt\""
    )

    async def launched(argv: object) -> None:
        return None

    environment = LocalEnvironment(isolation="bubblewrap")
    attempt = tmp_path / "attempt"
    result = await code_attempt(
        environment=environment, harness=LeftoversHarness(script), run_id="r", attempt_id="a", task=task,
        starting_source=task.workspace_dir, treatment=FrozenTreatment("vanilla", None, (), (), (), "0"),
        attempt_dir=attempt, model=None, reasoning=None, seed=0, timeout=60, hidden=(), launched=launched,
    )
    assert result.capture_error is None and result.patch is not None
    exported = attempt / "export" / "suid-id"
    assert stat.S_IMODE(exported.stat().st_mode) == 0o755
    assert not (attempt / "export" / "sub" / ".git").exists() and not (attempt / "export" / "nested" / ".git").exists()
    assert [line.split(":")[0] for line in (attempt / "export.dropped.txt").read_text().splitlines()] == \
        ["nested/.git", "pipe", "sub/.git", "suid-id"]
    patch = (attempt / "model.patch").read_text()
    assert "b/solution.py" in patch and "b/.gitmodules" in patch and "b/sub/file.txt" in patch
    assert "Subproject commit" not in patch and other_head not in patch and "160000" not in patch
    headers = [line for line in patch.splitlines() if line.startswith("diff --git ")]
    assert not [h for h in headers if "/.git/" in h or h.endswith("/.git")] and "secret.txt" not in patch, headers
    assert not marker.exists()
    grading = await grade_patch(
        environment=environment, run_id="r", attempt_id="a", task=task, starting_source=task.workspace_dir,
        patch_path=attempt / "model.patch", empty=False, out_dir=attempt / "grading", hidden=(),
    )
    seen = (attempt / "grading" / "test-stdout.txt").read_text().split()
    assert (grading.outcome, grading.reason) == ("pass", None), (grading, seen)
    assert seen == ["artifact", "model.patch"]
    assert not marker.exists()


@pytest.mark.anyio
async def test_the_canonical_patch_names_each_nested_repository_it_dropped(tmp_path: Path) -> None:
    """An export holding a sub/.git gitdir pointer and a nested repository gives a patch of their files only, and
    model.patch.dropped.txt names both with the reason."""
    from pluginbench.actors._patch import make_patch

    other, head = _other_repository(tmp_path)
    start = tmp_path / "start"
    start.mkdir()
    (start / "a.txt").write_text("a\n")
    export = tmp_path / "export"
    shutil.copytree(start, export)
    (export / "sub").mkdir()
    (export / "sub" / ".git").write_text(f"gitdir: {other}/.git\n")
    (export / "sub" / "x.txt").write_text("x\n")
    nested = export / "nested"
    nested.mkdir()
    (nested / "n.txt").write_text("n\n")
    _git(nested, "init", "-q")
    _git(nested, "add", "-A")
    _git(nested, "commit", "-q", "-m", "n")
    info = make_patch(start, export, tmp_path / "out" / "model.patch")
    text = info.path.read_text()
    assert "b/sub/x.txt" in text and "b/nested/n.txt" in text and head not in text and "Subproject" not in text
    assert [d.split(":")[0] for d in info.dropped] == ["nested/.git", "sub/.git"]
    assert (tmp_path / "out" / "model.patch.dropped.txt").read_text().count("nested .git") == 2


def test_a_path_git_refuses_is_dropped_not_the_whole_patch(tmp_path: Path) -> None:
    """An export holding .Git/, a git~1 file, a symlinked sub/.gitmodules (paths git will not index) and a nested
    .git below a folder whose name is not UTF-8 still gives the patch of the agent's solution, and the exported
    tree's and the patch's dropped.txt name each path (escaped), never a crash that voids the submission."""
    from pluginbench.actors._patch import make_patch
    from pluginbench.environments._hostcopy import copy_out

    start = tmp_path / "start"
    start.mkdir()
    (start / "a.txt").write_text("a\n")
    export = tmp_path / "export"
    shutil.copytree(start, export)
    (export / "solution.py").write_text("def add(a, b):\n    return a - b\n")
    (export / ".Git").mkdir()
    (export / ".Git" / "x").write_text("x\n")
    (export / "git~1").write_text("y\n")
    (export / "sub").mkdir()
    (export / "sub" / ".gitmodules").symlink_to("/etc/passwd")
    (export / "d\udcff" / ".git").mkdir(parents=True)
    copy_out(export, "", tmp_path / "export2", skip_top=lambda n: n == ".git")
    assert (tmp_path / "export2.dropped.txt").read_text() == "d\\udcff/.git: a nested .git (a repository or a gitdir pointer) is not exported\n"
    info = make_patch(start, export, tmp_path / "out" / "model.patch")
    text = info.path.read_text()
    assert "b/solution.py" in text and info.files_changed == 1 and ".Git" not in text and "git~1" not in text
    assert [d.split(":")[0] for d in info.dropped] == ["d\udcff/.git", ".Git/x", "git~1", "sub/.gitmodules"]
    dropped = (tmp_path / "out" / "model.patch.dropped.txt").read_text()
    assert dropped.count("git refuses") == 3 and dropped.startswith("d\\udcff/.git: a nested .git")
