"""A run folder that cannot be written (read-only, full) ends with a clear message, never a
traceback or a stray temporary file (issue 21 item 4). Each case runs the CLI in a private
mount namespace (``unshare --mount``) so the read-only or full mount is seen by nobody else."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._prereq import require
from tests.cli.test_log_damage import tree_hash
from tests.runs_helpers import write_config


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One finished simulated run, made once."""
    require(_can_unshare(), "unshare --mount (root or user namespaces)")
    base = tmp_path_factory.mktemp("finished")
    env = dict(os.environ, XDG_CACHE_HOME=str(base / "cache"))
    config = write_config(base, tasks=["roman-numerals"])
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(config), "--output", str(base / "run"),
                           "--foreground"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    yield base / "run"


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    shutil.copytree(finished_run, dest)
    (dest / "run.lock").unlink(missing_ok=True)
    return dest


def _in_namespace(setup: str, *args: str, after: str = "true") -> subprocess.CompletedProcess[str]:
    """``setup`` (shell, mounts), ``pluginbench ARGS``, then ``after`` (its output goes to
    stdout), in a private mount namespace; the exit code is pluginbench's."""
    cli = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "pluginbench", *args])
    script = f"{setup}\nset +e\n{cli}\ncode=$?\n{after}\nexit $code"
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-ec", script],
                          capture_output=True, text=True, timeout=300)


def _read_only(path: Path) -> str:
    return f"mount --bind {shlex.quote(str(path))} {shlex.quote(str(path))}\n" \
           f"mount -o remount,bind,ro {shlex.quote(str(path))}"


def test_report_into_a_read_only_report_folder_says_so_and_changes_nothing(run_copy: Path) -> None:
    """report with report/ read-only: exit 2 naming report/results.json and the fix, no traceback, no file changed."""
    before = tree_hash(run_copy)
    done = _in_namespace(_read_only(run_copy / "report"), "report", str(run_copy))
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "cannot write report/results.json" in out and "Read-only file system" in out and "fix:" in out
    assert "Traceback" not in out
    assert tree_hash(run_copy) == before


def test_report_on_a_full_disk_says_so_and_leaves_no_temporary_file(run_copy: Path) -> None:
    """report with no space left under report/: exit 2 naming the file, no traceback, no .tmp left, the earlier report kept."""
    before = tree_hash(run_copy)
    report = shlex.quote(str(run_copy / "report"))
    setup = (f"cp -a {report} /tmp/.pb-report-$$\nmount -t tmpfs -o size=64k tmpfs {report}\n"
             f"cp -a /tmp/.pb-report-$$/. {report}/ || true\nrm -rf /tmp/.pb-report-$$\n"
             f"dd if=/dev/zero of={report}/.filler bs=4k 2>/dev/null || true")
    done = _in_namespace(setup, "report", str(run_copy), after=f"echo LISTING; ls -a {report}")
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "cannot write report/" in out and "No space left on device" in out and "Traceback" not in out
    listing = done.stdout.split("LISTING", 1)[1].split()
    assert not [n for n in listing if n.endswith(".tmp")], listing
    assert tree_hash(run_copy) == before  # the namespace's tmpfs is gone; the real report/ was never touched


def test_resume_of_a_read_only_run_folder_is_refused_clearly(run_copy: Path) -> None:
    """run <dir> --foreground on a read-only run folder: exit 2 naming run.lock and the fix, no traceback, nothing written."""
    before = tree_hash(run_copy)
    done = _in_namespace(_read_only(run_copy), "run", str(run_copy), "--foreground")
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "run.lock" in out and "Read-only file system" in out and "Traceback" not in out
    assert tree_hash(run_copy) == before
