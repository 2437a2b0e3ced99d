"""Unwritable outputs and bad server options: exit 2 naming the path and the option, no
traceback, nothing written (issue 14 items 7, 9, 16)."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._prereq import require
from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import write_config

SCENARIO = Path(__file__).resolve().parents[2] / "pluginbench" / "probe" / "scenarios"


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only tmpfs mounted for this test (root only)."""
    target = tmp_path / "ro"
    target.mkdir()
    ok = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(target)], capture_output=True, check=False
    ).returncode == 0
    require(ok, "root and a read-only tmpfs mount")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


@pytest.mark.parametrize("where", ["/proc/pluginbench-test/run", "/sys/pluginbench-test"])
def test_output_under_proc_or_sys(tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """--output under /proc or /sys is refused naming --output and the folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, out = run_cli("run", str(write_config(tmp_path)), "--output", where)
    assert_refused(code, out, "cannot create the run directory", where, "--output")


def test_output_on_a_read_only_mount(tmp_path: Path, read_only: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run --output and demo --output on a read-only mount are refused; nothing appears there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, out = run_cli("run", str(write_config(tmp_path)), "--output", str(read_only / "run"))
    assert_refused(code, out, "Read-only file system", "--output")
    code, out = run_cli("demo", "--output", str(read_only / "demo"))
    assert_refused(code, out, "Read-only file system", "--output")
    assert list(read_only.iterdir()) == []


def test_init_into_a_read_only_folder(read_only: Path) -> None:
    """init into a read-only folder is refused naming the file."""
    code, out = run_cli("init", str(read_only / "evaluation.yaml"))
    assert_refused(code, out, "cannot write", "evaluation.yaml", "Read-only")


def test_init_whose_parent_is_missing(tmp_path: Path) -> None:
    """init into a folder that does not exist says so and creates nothing."""
    code, out = run_cli("init", str(tmp_path / "nope" / "evaluation.yaml"))
    assert_refused(code, out, "does not exist", "mkdir -p")
    assert not (tmp_path / "nope").exists()


def test_init_refuses_a_name_check_would_refuse(tmp_path: Path) -> None:
    """init foo.txt is refused, since check reads only .yaml, .yml and .json."""
    code, out = run_cli("init", str(tmp_path / "foo.txt"))
    assert_refused(code, out, "unsupported config extension '.txt'", "evaluation.yaml")
    assert not (tmp_path / "foo.txt").exists()


def test_init_onto_a_dangling_symlink(tmp_path: Path) -> None:
    """init onto a dangling symlink is refused and never creates the link's target."""
    os.symlink(tmp_path / "target.yaml", tmp_path / "evaluation.yaml")
    code, out = run_cli("init", str(tmp_path / "evaluation.yaml"))
    assert_refused(code, out, "is a symlink")
    assert not (tmp_path / "target.yaml").exists()


def _scenario() -> str:
    return str(sorted(SCENARIO.glob("*.yaml"))[0])


@pytest.mark.parametrize("port", ["-1", "65536", "99999"])
def test_probe_port_out_of_range(port: str) -> None:
    """probe serve refuses a port outside 0-65535."""
    code, out = run_cli("probe", "serve", "--scenario", _scenario(), "--port", port)
    assert_refused(code, out, "out of range", "--port")


def test_probe_port_in_use() -> None:
    """probe serve on a port another socket holds is refused naming the port."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out = run_cli("probe", "serve", "--scenario", _scenario(), "--port", str(port))
    assert_refused(code, out, f"cannot listen on 127.0.0.1:{port}", "--port")


def test_probe_unwritable_log(tmp_path: Path) -> None:
    """probe serve with a --log it cannot append to is refused before serving."""
    code, out = run_cli("probe", "serve", "--scenario", _scenario(), "--log", str(tmp_path / "missing" / "log.jsonl"))
    assert_refused(code, out, "cannot append to the request log", "--log")
    code, out = run_cli("probe", "serve", "--scenario", _scenario(), "--log", "/proc/pluginbench.jsonl")
    assert_refused(code, out, "--log")
