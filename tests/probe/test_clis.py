"""Finding the pinned CLIs and reading their versions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pluginbench.probe import (
    PINNED,
    VERSIONS_ENV,
    cli_version,
    find_cli,
    prefetch_version,
    versions_env,
)
from pluginbench.probe._clis import clis_dir
from tests._prereq import require

ROOT = Path(__file__).resolve().parents[2]


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "tool"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def test_cli_version_reads_the_first_version_token(tmp_path: Path) -> None:
    """cli_version returns the dotted version a program prints for --version."""
    assert cli_version(_script(tmp_path, 'echo "2.1.328 (Claude Code)"')) == "2.1.328"


def test_cli_version_is_none_when_unusable(tmp_path: Path) -> None:
    """A failing program, one that prints no version, or a missing path gives None."""
    assert cli_version(_script(tmp_path, "exit 3")) is None
    assert cli_version(_script(tmp_path, "echo hello")) is None
    assert cli_version(tmp_path / "absent") is None


def test_a_started_process_is_handed_the_asked_version_and_asks_only_a_changed_cli(tmp_path: Path) -> None:
    """The version this process asked is handed to a process it starts (as `run` starts its
    worker): the child does not run the CLI again; a CLI changed on disk since is asked again,
    and a malformed hand-over is ignored, never trusted."""
    calls = tmp_path / "calls"
    tool = _script(tmp_path, f'echo x >> "{calls}"; echo "1.2.3 (Tool)"')
    assert cli_version(tool) == "1.2.3"
    asked = len(calls.read_text().splitlines())
    child = [sys.executable, "-c", "import sys; from pluginbench.probe import cli_version; print(cli_version(sys.argv[1]))",
             str(tool)]

    def run_child(extra: dict[str, str]) -> str:
        return subprocess.run(child, env={**os.environ, **extra}, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert run_child(versions_env()) == "1.2.3"
    assert len(calls.read_text().splitlines()) == asked  # the child did not start the CLI
    assert run_child({VERSIONS_ENV: "not json"}) == "1.2.3"
    assert len(calls.read_text().splitlines()) == asked + 1  # nothing usable handed over: asked
    handed = versions_env()
    tool.write_text(tool.read_text() + "# changed\n")  # a new size: another file to ask
    assert run_child(handed) == "1.2.3"
    assert len(calls.read_text().splitlines()) == asked + 2


def test_a_prefetched_version_is_asked_once_and_waited_for(tmp_path: Path) -> None:
    """A version asked ahead (prefetch_version, while other checks run) is the one cli_version
    returns: cli_version waits for the question in flight instead of starting the CLI again."""
    calls = tmp_path / "calls"
    tool = _script(tmp_path, f'echo x >> "{calls}"; sleep 0.3; echo "4.5.6 (Tool)"')
    prefetch_version(tool)
    assert cli_version(tool) == "4.5.6"
    assert cli_version(tool) == "4.5.6"
    assert len(calls.read_text().splitlines()) == 1


def test_a_prefetch_works_out_its_command_in_the_callers_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """prefetch_version decides the command (which can import a harness module) before its thread starts, so the
    thread never imports beside the caller's own imports."""
    import threading

    from pluginbench.probe import _clis

    tool = _script(tmp_path, 'echo "7.8.9 (Tool)"')
    seen: list[str] = []
    real = _clis._version_argv

    def spy(path: str | Path) -> list[str]:
        seen.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(_clis, "_version_argv", spy)
    prefetch_version(tool)
    for thread in threading.enumerate():  # its answer in first, so this thread's own ask cannot win the race
        if thread.name == "pluginbench-cli-version":
            thread.join(30)
    assert cli_version(tool) == "7.8.9"
    assert seen == [threading.current_thread().name]


def test_find_cli_refuses_unknown_names() -> None:
    """Only claude and codex are known."""
    with pytest.raises(ValueError):
        find_cli("cursor")


def test_local_install_folder_is_under_the_repo_root() -> None:
    """The project-local install lives in <repo>/.tools/clis, where install-clis.sh puts it."""
    assert clis_dir() == ROOT / ".tools" / "clis" / "node_modules" / ".bin"


@pytest.mark.realcli
@pytest.mark.parametrize("name", ["claude", "codex", "qwen", "opencode", "gemini"])
def test_installed_clis_are_found_at_the_pinned_version(name: str) -> None:
    """find_cli finds the installed CLI and it reports the pinned version."""
    path = find_cli(name)
    require(path is not None, f"{name} (run tools/install-clis.sh)")
    assert path is not None and cli_version(path) == PINNED[name]


@pytest.mark.realcli
def test_install_script_is_idempotent_and_prints_both_paths() -> None:
    """With every pinned CLI already installed the script installs nothing and prints each binary."""
    require(all(find_cli(n) is not None and find_cli(n).parent == clis_dir()  # type: ignore[union-attr]
                for n in PINNED), "CLIs installed by tools/install-clis.sh")
    proc = subprocess.run(["bash", str(ROOT / "tools/install-clis.sh")], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "already installed" in proc.stderr
    paths = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert set(paths) == {"claude", "codex", "qwen", "opencode", "gemini"}
    assert all(Path(p).is_file() for p in paths.values())


def test_cli_version_asks_each_cli_once_until_it_changes(tmp_path: Path) -> None:
    """A run's several version checks start the CLI once; a CLI replaced on disk is asked again."""
    count = tmp_path / "count"
    tool = _script(tmp_path, f'echo x >> {count}; echo "1.2.3"')
    assert [cli_version(tool) for _ in range(3)] == ["1.2.3"] * 3
    assert count.read_text().count("x") == 1
    tool.write_text(f'#!/bin/sh\necho x >> {count}; echo "1.2.40"\n')
    assert cli_version(tool) == "1.2.40" and count.read_text().count("x") == 2
