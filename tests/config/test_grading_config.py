"""grading.verifier_env_from_host: frozen only when set, names checked; and check's tool-folder refusal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.config import Evaluation, GradingConfig
from pluginbench.config._load import frozen_builtins
from pluginbench.config._schema import EnvironmentConfig, TasksConfig
from pluginbench.environments import bwrap_usable, get_backend
from pluginbench.errors import ConfigError
from tests.cli._cli_helpers import assert_refused, edit, run_cli
from tests.runs_helpers import write_config


def _ev(grading: GradingConfig | None = None) -> Evaluation:
    return Evaluation(tasks=TasksConfig(source="t", ids=["a"]), grading=grading)


def test_grading_is_frozen_only_when_set() -> None:
    """Without grading, evaluation.json freezes as it did before; with it, the allowed names are frozen."""
    assert "grading" not in frozen_builtins(_ev())
    assert frozen_builtins(_ev(GradingConfig(verifier_env_from_host=["HF_TOKEN"])))["grading"] == {
        "verifier_env_from_host": ["HF_TOKEN"]}
    assert _ev().verifier_env_from_host == ()


def test_a_bad_allowed_name_is_refused_at_check(tmp_path: Path) -> None:
    """A grading.verifier_env_from_host entry that is not a variable name exits 2 naming the entry."""
    config = edit(write_config(tmp_path), grading={"verifier_env_from_host": ["HF_TOKEN", "NOT A NAME"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "grading.verifier_env_from_host[1]")


def test_check_refuses_a_cli_tool_folder_local_sandboxes_cannot_read(tmp_path: Path) -> None:
    """As root under bubblewrap, a tool folder of mode 0700 is refused by check's tool check (exit 2) naming chmod -R o+rX."""
    if os.geteuid() != 0 or not bwrap_usable():
        pytest.skip("only root under bubblewrap starts sandboxes as another uid")
    tool = tmp_path / "cli"
    tool.mkdir(mode=0o700)
    ev = Evaluation(tasks=TasksConfig(source="t", ids=["a"]), environment=EnvironmentConfig(isolation="bubblewrap"))
    backend = get_backend("local")
    with pytest.raises(ConfigError) as err:
        backend.check_tools(ev, tmp_path / "e.yaml", (tool,))
    assert err.value.exit_code == 2 and err.value.field == "runner.harness"
    assert err.value.fix == f"chmod -R o+rX {tool}"
    tool.chmod(0o755)
    backend.check_tools(ev, tmp_path / "e.yaml", (tool,))
