"""Every harness adapter runs the shared harness contract (tests/harnesses/contract.py)."""

from __future__ import annotations

import os
import shutil

import pytest

from pluginbench.harnesses import Harness, make_harness
from pluginbench.probe import cli_version, find_cli
from tests._prereq import require

from .contract import HarnessContract


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class TestNop(HarnessContract):
    delivers_guidance = False

    def make_harness(self, probe_url: str | None) -> Harness:
        return make_harness("nop")


class TestOracle(HarnessContract):
    delivers_guidance = False

    def make_harness(self, probe_url: str | None) -> Harness:
        return make_harness("oracle")


class TestSimulated(HarnessContract):
    model = "simulated-1"

    def make_harness(self, probe_url: str | None) -> Harness:
        return make_harness("simulated")


class _Real(HarnessContract):
    name = ""

    def make_harness(self, probe_url: str | None) -> Harness:
        cli = find_cli(self.name)
        require(cli is not None, f"{self.name} CLI (tools/install-clis.sh)")
        require(shutil.which("bwrap") is not None, "bubblewrap")
        extra = {"environ": {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_OAUTH_TOKEN"}} if self.name == "claude" else {}
        return make_harness(self.name, cli_path=cli, cli_version=cli_version(cli), probe_base_url=probe_url, **extra)


@pytest.mark.realcli
class TestClaude(_Real):
    name = "claude"
    model = "claude-sonnet-4-5"


@pytest.mark.realcli
class TestCodex(_Real):
    name = "codex"
    model = "gpt-5.5"


@pytest.mark.realcli
class TestOpencode(_Real):
    name = "opencode"
    model = "gpt-4.1"


@pytest.mark.realcli
class TestGemini(_Real):
    name = "gemini"
    model = "gemini-2.5-pro"
