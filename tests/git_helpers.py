"""Test helpers for the git work of an attempt: a git environment that reads no user or system
configuration, and a recorder of the git processes the sandbox recipe (``environments._gitbase``)
starts."""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

from pluginbench.environments import _gitbase

#: git reading no system or user configuration
GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def record_git_processes(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argv of every process ``environments._gitbase`` starts from now on (they still run)."""
    calls: list[list[str]] = []
    real = anyio.run_process

    async def counting(argv: list[str], *a: Any, **kw: Any) -> Any:
        calls.append(list(argv))
        return await real(argv, *a, **kw)

    monkeypatch.setattr(_gitbase.anyio, "run_process", counting)
    return calls
