"""The cache root's refusals through the CLI: a symlink inside it, an output folder that
overlaps it. Exit 2, a message naming the path and the fix, nothing started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pluginbench.cli import app
from tests.runs_helpers import write_config

runner = CliRunner()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PLUGINBENCH_VANILLA_CACHE", raising=False)
    root = tmp_path / "xdg" / "pluginbench"
    root.mkdir(parents=True)
    return root


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_a_symlink_inside_the_cache_root_fails_check_and_run(tmp_path: Path, cache: Path) -> None:
    """A symlinked cohort inside the cache root is refused by check and by run (exit 2), and run writes nothing."""
    (tmp_path / "elsewhere").mkdir()
    (cache / "vanilla").mkdir()
    os.symlink(tmp_path / "elsewhere", cache / "vanilla" / "codex-abc")
    config = write_config(tmp_path, environment={"isolation": "none"})
    code, out = _cli("check", str(config), "--no-readiness")
    assert code == 2, out
    assert "symlink inside the cache root" in out and "codex-abc" in out and "fix:" in out
    code, out = _cli("run", str(config), "--output", str(tmp_path / "run"), "--foreground")
    assert code == 2, out
    assert not (tmp_path / "run").exists()


def test_a_symlinked_cache_root_itself_is_resolved_and_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The root is resolved before use, so a symlinked ~/.cache (XDG_CACHE_HOME) is accepted."""
    real = tmp_path / "real-cache"
    real.mkdir()
    os.symlink(real, tmp_path / "linked")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "linked"))
    config = write_config(tmp_path, environment={"isolation": "none"})
    code, out = _cli("check", str(config), "--no-readiness")
    assert code == 0, out


@pytest.mark.parametrize("where", ["inside", "containing"])
def test_an_output_folder_overlapping_the_cache_root_is_refused(tmp_path: Path, cache: Path, where: str) -> None:
    """An output folder inside the cache root, or one that contains it, is refused before anything is written."""
    config = write_config(tmp_path, environment={"isolation": "none"})
    output = cache / "runs" / "r1" if where == "inside" else tmp_path / "xdg"
    code, out = _cli("run", str(config), "--output", str(output), "--foreground")
    assert code == 2, out
    assert "overlaps the cache root" in out and "--output" in out
    assert not (cache / "runs").exists()
