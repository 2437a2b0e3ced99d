"""A full disk during a run (issue 14 item 8): the cause is said ("no space left on …"),
the failure is recorded, the log stays intact, and the run resumes once space is free.

Uses a small tmpfs the test mounts (root only): skipped locally without it, failed under
CI (``tests/_prereq.py``).
"""

from __future__ import annotations

import errno
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pluginbench.cli import app
from tests._prereq import require
from tests.runs_helpers import events_of, write_config

runner = CliRunner()


def _try_mount(target: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test and unmounted after it."""
    target = tmp_path / "disk"
    target.mkdir()
    require(_try_mount(target, "4m"), "root and a tmpfs mount (mount -t tmpfs)")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` with one file, then give back ``leave`` bytes."""
    filler = disk / f"filler-{uuid.uuid4().hex}"
    with open(filler, "wb") as fh:
        block = b"\0" * 65536
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def test_full_disk_mid_run_is_said_recorded_and_resumable(small_disk: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose disk fills ends exit 1 with "no space left on <mount>", run.failed in an
    intact log and no traceback; after the space is freed, resume completes it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import create_run
    from pluginbench.config import load
    from pluginbench.events import read_run_log

    rd = create_run(load(write_config(tmp_path, tasks=["roman-numerals"])), small_disk / "run")
    filler = fill(small_disk, leave=8192)
    result = runner.invoke(app, ["run", str(rd.root), "--foreground"])
    out = result.output
    assert result.exit_code == 1, out
    assert "Traceback" not in out and "cannot rollback" not in out
    assert f"no space left on {small_disk}" in out
    assert f"pluginbench run {rd.root}" in out
    events = read_run_log(rd.events).events  # intact: every line decodes, seq contiguous
    assert type(events[-1]).__name__ == "RunFailed"
    assert "no space left" in events[-1].error  # type: ignore[attr-defined]
    filler.unlink()
    result = runner.invoke(app, ["run", str(rd.root), "--foreground"])
    assert result.exit_code == 0, result.output
    assert events_of(rd.root)[-1]["type"] == "run.finished"


def test_full_disk_when_creating_a_run_keeps_nothing(small_disk: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk too full to create the run directory says so and leaves no half-made run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fill(small_disk, leave=0)
    result = runner.invoke(app, ["run", str(write_config(tmp_path)), "--output", str(small_disk / "run")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ")
    assert "No space left on device" in result.output and "--output" in result.output
    assert not (small_disk / "run").exists()
