"""PLUGINBENCH_VANILLA_CACHE turns the vanilla cache off or leaves it on; any other value is refused."""

from __future__ import annotations

from pathlib import Path

from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import write_config


def test_a_switch_value_that_is_neither_off_nor_on_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    """PLUGINBENCH_VANILLA_CACHE=disabled makes check and run exit 2 naming the variable and the value that works, and run makes no run folder."""
    config = write_config(tmp_path)
    env = {"PLUGINBENCH_VANILLA_CACHE": "disabled", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for argv in (["check", str(config), "--no-readiness"], ["run", str(config), "--output", str(tmp_path / "r")]):
        code, out = run_cli(*argv, env=env)
        assert_refused(code, out, "PLUGINBENCH_VANILLA_CACHE='disabled' is neither off nor on",
                       "PLUGINBENCH_VANILLA_CACHE=off")
    assert not (tmp_path / "r").exists()
    for value in ("off", "OFF", "0", "on", ""):
        code, out = run_cli("check", str(config), "--no-readiness", env={**env, "PLUGINBENCH_VANILLA_CACHE": value})
        assert code == 0, (value, out)


def test_a_resume_with_a_bad_switch_value_is_refused_in_the_foreground(tmp_path: Path) -> None:
    """Resuming a run with PLUGINBENCH_VANILLA_CACHE=nah exits 2 naming the variable and appends nothing to its log."""
    config = write_config(tmp_path, tasks=["word-wrap"], treatments={})
    env = {"PLUGINBENCH_VANILLA_CACHE": "off", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "r"), "--foreground", env=env)
    assert code == 0, out
    log = (tmp_path / "r" / "events.jsonl").read_bytes()
    code, out = run_cli("run", str(tmp_path / "r"), env={**env, "PLUGINBENCH_VANILLA_CACHE": "nah"})
    assert_refused(code, out, "PLUGINBENCH_VANILLA_CACHE='nah' is neither off nor on")
    assert (tmp_path / "r" / "events.jsonl").read_bytes() == log
