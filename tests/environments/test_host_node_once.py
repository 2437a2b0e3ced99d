"""The host's ``node --version`` is asked once per run, not per derived coding image (issue 27)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from pluginbench.environments import _docker_derived
from pluginbench.errors import EnvironmentFailure
from pluginbench.harness_registry import CliPin


def test_node_version_is_asked_once_for_every_cli_that_needs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three look-ups (two tasks' images and a too-old pin) start ``node --version`` once; the too-old pin is still refused."""
    calls: list[list[str]] = []

    def run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="v22.1.0\n", stderr="")

    monkeypatch.setattr(_docker_derived.shutil, "which", lambda _name: "/usr/bin/true")
    monkeypatch.setattr(_docker_derived.subprocess, "run", run)
    _docker_derived._host_node.cache_clear()
    try:
        pin = CliPin(command="x", package="@x/pkg", version="1.0.0", node_major=20)
        assert _docker_derived.private_node(pin)[1] == "v22.1.0"
        assert _docker_derived.private_node(pin)[1] == "v22.1.0"
        with pytest.raises(EnvironmentFailure, match="needs node 99 or newer"):
            _docker_derived.private_node(CliPin(command="x", package="@x/pkg", version="1.0.0", node_major=99))
        assert calls == [["/usr/bin/true", "--version"]]
    finally:
        _docker_derived._host_node.cache_clear()
