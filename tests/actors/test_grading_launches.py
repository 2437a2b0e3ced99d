"""Grading's sandbox commands: ``chmod +x tests/test.sh`` runs only when it could change the staged copy, and
the outcome is the same either way (a real bubblewrap grading of both modes, and of a patch that does not apply)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pluginbench.actors._pipeline import executable_by_all, grade_patch
from pluginbench.environments import LocalEnvironment, bwrap_available
from pluginbench.tasks import load_task
from tests._prereq import require
from tests.runs_helpers import task_folder

from .test_verifier_env_exec import _Env

_TOML = 'version = "1.0"\n[verifier]\ntimeout_sec = 60\n'
_TEST_SH = '#!/bin/sh\nif [ -f fixed.txt ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n'
_PATCH = ("diff --git a/fixed.txt b/fixed.txt\nnew file mode 100644\nindex 0000000..d00491f\n--- /dev/null\n"
          "+++ b/fixed.txt\n@@ -0,0 +1 @@\n+1\n")


def _task(root: Path, mode: int) -> Path:
    task_folder(root, _TOML)
    (root / "tests" / "test.sh").write_text(_TEST_SH)
    (root / "tests" / "test.sh").chmod(mode)
    return root


def test_executable_by_all_needs_every_execute_bit_on_a_regular_file(tmp_path: Path) -> None:
    """Only a regular test.sh with all three execute bits skips chmod; 0o744, 0o644, a symlink, none, or image tests do not."""
    tests = tmp_path / "tests"
    tests.mkdir()
    assert not executable_by_all(tests) and not executable_by_all(None)
    (tests / "real.sh").write_text("#!/bin/sh\n")
    (tests / "real.sh").chmod(0o755)
    (tests / "test.sh").symlink_to("real.sh")
    assert not executable_by_all(tests)
    (tests / "test.sh").unlink()
    shutil.copy2(tests / "real.sh", tests / "test.sh")
    assert executable_by_all(tests)
    for mode in (0o744, 0o644):
        (tests / "test.sh").chmod(mode)
        assert not executable_by_all(tests)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_chmod_runs_only_for_a_test_sh_not_executable_by_all(tmp_path: Path) -> None:
    """An executable test.sh is run with no chmod launch before it; a 0o644 one still gets chmod +x first."""
    for mode, expected in ((0o755, [["/tests/test.sh"]]), (0o644, [["chmod", "+x", "/tests/test.sh"], ["/tests/test.sh"]])):
        task = load_task(_task(tmp_path / f"t{mode:o}", mode))
        patch = tmp_path / "model.patch"
        patch.write_text("")
        env = _Env()
        await grade_patch(environment=env, run_id="r", attempt_id="a", task=task, starting_source=task.root / "workspace",  # type: ignore[arg-type]
                          patch_path=patch, empty=True, out_dir=tmp_path / f"out{mode:o}", hidden=())
        assert [argv for argv, _ in env.box.calls] == expected


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_bubblewrap_grading_is_the_same_with_or_without_the_chmod_launch(tmp_path: Path) -> None:
    """In a real sandbox both modes of test.sh grade a fixing patch as a pass, and a patch that does not apply
    is unknown with git's words in apply.txt, as before."""
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    environment = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    patch = tmp_path / "model.patch"
    patch.write_text(_PATCH)
    bad = tmp_path / "bad.patch"
    bad.write_text(_PATCH.replace("new file mode 100644\n", "").replace("--- /dev/null", "--- a/fixed.txt"))
    for mode in (0o755, 0o644):
        task = load_task(_task(tmp_path / f"t{mode:o}", mode))
        kw = dict(environment=environment, run_id="r", attempt_id=f"a{mode:o}", task=task,
                  starting_source=task.root / "workspace", empty=False, hidden=())
        graded = await grade_patch(patch_path=patch, out_dir=tmp_path / f"out{mode:o}", **kw)
        assert graded.outcome == "pass", graded
        failed = await grade_patch(patch_path=bad, out_dir=tmp_path / f"bad{mode:o}", **kw)
        assert (failed.outcome, failed.reason) == ("unknown", "the canonical patch does not apply to the starting source")
        assert b"fixed.txt" in (tmp_path / f"bad{mode:o}" / "apply.txt").read_bytes()
