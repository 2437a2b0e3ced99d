"""Grading's ``git apply`` and ``test.sh`` in one bubblewrap launch: the apply's result comes back on a channel
no process of the sandbox holds once test.sh starts, a patch that does not apply never runs test.sh, and the
grade and its files are the same bytes as with two launches."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pluginbench.actors._pipeline import grade_patch
from pluginbench.environments import LocalEnvironment, bwrap_available
from pluginbench.environments import _local as local_module
from pluginbench.environments import _local_apply as local_apply
from pluginbench.environments._local_apply import ApplyChannel, free_digit
from pluginbench.tasks import load_task
from tests._prereq import require
from tests.runs_helpers import task_folder

from .contract import EnvironmentContract

_PATCH = ("diff --git a/fixed.txt b/fixed.txt\nnew file mode 100644\nindex 0000000..d00491f\n--- /dev/null\n"
          "+++ b/fixed.txt\n@@ -0,0 +1 @@\n+1\n")
_BAD = _PATCH.replace("new file mode 100644\n", "").replace("--- /dev/null", "--- a/fixed.txt")
#: a verifier that leaves output, a log and a reward, and marks that it ran
_TEST_SH = """#!/bin/sh
echo "stdout of the tests"; echo "stderr of the tests" >&2
echo ran > /logs/verifier/ran.txt
if [ -f fixed.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""
#: test.sh as the agent's code: learn the nonce from pid 1's argv, list every descriptor of every process of the
#: sandbox and write a forged status to each one it can open, and to its own descriptors 3..9
_FORGER = r"""
nonce=$(tr '\0' '\n' < /proc/1/cmdline | grep -o "printf '%s %s\\\\n' [0-9a-f]*" | awk '{print $4}')
echo "nonce=$nonce"
for f in /proc/[0-9]*/fd/*; do
  echo "seen $f $(readlink "$f" 2>/dev/null)"
  (printf '%s 1\n' "$nonce" > "$f") 2>/dev/null
done
for n in 3 4 5 6 7 8 9; do (printf '%s 1\n' "$nonce" >&$n) 2>/dev/null && echo "wrote-fd $n"; done
echo done
"""


def _require_bwrap() -> None:
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")


def test_the_status_line_is_found_only_with_its_nonce() -> None:
    """git's output that imitates a status line is output; the wrapper's line (the launch's nonce) ends it; a digit
    is free only when no passed descriptor uses it."""
    ch = ApplyChannel("/p", {}, 10)
    try:
        ch.output += b"error: 0\ndeadbeef 0\n"
        assert not ch._found()
        ch.output += ch.nonce + b" 1\n"
        assert ch._found() and ch.status == 1 and bytes(ch.output) == b"error: 0\ndeadbeef 0\n"
    finally:
        ch.close()
    assert free_digit([3, 4, 12]) == 5 and free_digit(list(range(3, 10))) is None


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_code_run_by_test_sh_cannot_reach_the_channel_and_a_failed_apply_runs_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test.sh that knows the nonce finds no descriptor of the channel in any process of the sandbox and the host
    keeps the wrapper's status; with a patch that does not apply, test.sh never runs and git's words come back."""
    _require_bwrap()
    inodes: list[int] = []
    nonces: list[str] = []

    class Recorded(ApplyChannel):
        def __init__(self, *a, **kw):  # type: ignore[no-untyped-def]
            super().__init__(*a, **kw)
            inodes.append(os.fstat(self.read_end).st_ino)
            nonces.append(self.nonce.decode())

    monkeypatch.setattr(local_apply, "ApplyChannel", Recorded)
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    (tmp_path / "good.patch").write_text(_PATCH)
    (tmp_path / "bad.patch").write_text(_BAD)
    async with env.sandbox(EnvironmentContract().make_spec(tmp_path)) as sb:
        for name in ("good", "bad"):
            await sb.put(tmp_path / f"{name}.patch", f"/logs/artifacts/{name}.patch")
        ran = await sb.apply_and_exec("/logs/artifacts/good.patch", ["sh", "-c", _FORGER], cwd=sb.paths.app, env=None,
                                      apply_timeout=60, timeout=60, stdout_path=tmp_path / "o.txt",
                                      stderr_path=tmp_path / "e.txt")
        out = (tmp_path / "o.txt").read_text()
        assert ran is not None and ran.applied is True and ran.apply_output == b"", (ran, out)
        assert f"nonce={nonces[0]}\n" in out, out  # it knew what to forge
        assert "done" in out and "seen /proc/1/fd/1 pipe:" in out and "wrote-fd" not in out, out
        assert len(inodes) == 1 and f"pipe:[{inodes[0]}]" not in out, out  # no process of the sandbox holds it
        (sb.root / "app" / "fixed.txt").unlink()
        failed = await sb.apply_and_exec("/logs/artifacts/bad.patch", ["sh", "-c", "echo ran > /logs/verifier/ran"],
                                         cwd=sb.paths.app, env=None, apply_timeout=60, timeout=60,
                                         stdout_path=tmp_path / "o2.txt", stderr_path=tmp_path / "e2.txt")
        assert failed is not None and failed.applied is False
        assert b"fixed.txt" in failed.apply_output
        assert not (sb.root / "logs" / "verifier" / "ran").exists()
        assert not (tmp_path / "o2.txt").exists() and not (tmp_path / "e2.txt").exists()


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_one_launch_grades_byte_identically_to_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An applying, a non-applying and an empty patch, without and with a public verifier network (test.sh behind
    the forwarder), give the same grade and the same grading files in one launch as in two."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    patches = {"good": _PATCH, "bad": _BAD, "empty": ""}
    for net in ("", 'network_mode = "public"\n'):
        root = task_folder(tmp_path / f"task{bool(net)}", f'version = "1.0"\n[verifier]\ntimeout_sec = 60\n{net}')
        (root / "tests" / "test.sh").write_text(_TEST_SH)
        (root / "tests" / "test.sh").chmod(0o755)
        task = load_task(root)
        for name, text in patches.items():
            patch = tmp_path / f"{name}.patch"
            patch.write_text(text)
            graded = {}
            launched: list[object] = []
            for way in ("one", "two"):
                if way == "one":
                    monkeypatch.setattr(local_module.LocalSandbox, "apply_and_exec", _recording(launched))
                else:  # no descriptor digit free: the launch is refused and grading makes two, as elsewhere
                    monkeypatch.setattr(local_module, "free_digit", lambda taken: None)
                out = tmp_path / f"{name}-{bool(net)}-{way}"
                grade = await grade_patch(environment=env, run_id="r", attempt_id=f"{name}{way}", task=task,
                                          starting_source=task.workspace_dir, patch_path=patch, empty=not text,
                                          out_dir=out, hidden=())
                graded[way] = (grade, _files(out))
                monkeypatch.undo()
            assert graded["one"] == graded["two"], (name, net)
            # an empty patch is not applied: test.sh alone, one launch either way
            assert [r is not None for r in launched] == ([] if name == "empty" else [True]), launched
            expected = {"good": "pass", "bad": "unknown", "empty": "empty"}[name]
            assert graded["one"][0].outcome == expected, graded["one"]


def _recording(into: list[object]):  # type: ignore[no-untyped-def]
    """LocalSandbox.apply_and_exec, each result kept in ``into`` (``None``: the launch was refused)."""
    real = local_module.LocalSandbox.apply_and_exec

    async def apply_and_exec(self, *a, **kw):  # type: ignore[no-untyped-def]
        ran = await real(self, *a, **kw)
        into.append(ran)
        return ran

    return apply_and_exec
