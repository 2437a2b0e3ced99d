"""Task settings a runner refuses (exit 2 at admission) and the ones a backend ignores (named by check)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pluginbench.errors import TaskError
from pluginbench.tasks import COMMON_SETTINGS, ignored_settings, load_task
from tests.cli._cli_helpers import assert_refused, edit, run_cli
from tests.runs_helpers import QUICKSTART, write_config

BASE = 'schema_version = "1.4"\n[environment]\nworkdir = "/app"\n'


def _task(tmp_path: Path, extra: str) -> Path:
    root = tmp_path / "tasks" / "t"
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", root)
    (root / "task.toml").write_text(BASE + extra)
    return root


@pytest.mark.parametrize(("extra", "field"), [
    ("privileged = true\n", "environment.privileged"),
    ('volumes = ["/:/host"]\n', "environment.volumes"),
    ('devices = ["/dev/kvm"]\n', "environment.devices"),
    ('cap_add = ["SYS_ADMIN"]\n', "environment.cap_add"),
    ('pid = "host"\n', "environment.pid"),
    ('ipc_mode = "host"\n', "environment.ipc_mode"),
    ('network_mode = "host"\n', "environment.network_mode"),
    ('[agent]\nprivileged = true\n', "agent.privileged"),
    ('[verifier.environment]\nmounts = [{source = "/etc", target = "/x"}]\n', "verifier.environment.mounts"),
])
def test_a_setting_that_grants_the_host_is_refused(tmp_path: Path, extra: str, field: str) -> None:
    """Each setting that would hand the sandbox a root power or a host path is a TaskError naming the field."""
    root = _task(tmp_path, extra)
    with pytest.raises(TaskError) as err:
        load_task(root, "t")
    assert err.value.field == field and err.value.file == str(root / "task.toml")


def test_harmless_values_of_those_settings_are_admitted(tmp_path: Path) -> None:
    """privileged = false, empty lists and a no-network mode grant nothing and are admitted."""
    task = load_task(_task(tmp_path, 'privileged = false\ncap_add = []\nnetwork_mode = "no-network"\n'), "t")
    assert "environment.network_mode" in task.settings


def test_a_privileged_task_exits_2_at_check(tmp_path: Path) -> None:
    """`pluginbench check` on a config whose task asks for privileged stops with exit 2 naming file and field."""
    _task(tmp_path, "privileged = true\n")
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "environment.privileged", "task.toml")


def test_check_names_the_settings_its_backend_ignores(tmp_path: Path) -> None:
    """A setting the local backend does not honour (docker_image, allowed_hosts) is named in check's output."""
    _task(tmp_path, 'docker_image = "python:3.12"\nallowed_hosts = ["example.com"]\ncpus = 1\n')
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert code == 0, out
    line = next(ln for ln in out.splitlines() if ln.startswith("task t:"))
    assert "environment.allowed_hosts" in line and "environment.docker_image" in line and "cpus" not in line


def test_ignored_settings_subtracts_common_and_backend_settings() -> None:
    """Only settings neither common nor the backend's own are ignored."""
    declared = ("environment.cpus", "environment.docker_image", "environment.healthcheck")
    assert "environment.cpus" in COMMON_SETTINGS
    assert ignored_settings(declared, frozenset({"environment.docker_image"})) == ("environment.healthcheck",)


def test_the_plan_records_each_tasks_sandbox_limits(tmp_path: Path) -> None:
    """check --json lists each task's limits: its declared memory, cpus, process and disk bounds, defaults
    for the rest."""
    import json

    _task(tmp_path, "memory_mb = 512\ncpus = 1.5\npids_limit = 200\n")
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness", "--json")
    assert code == 0, out
    limits = json.loads(out)["plan"]["limits"]
    assert limits == {"t": {"memory_mb": 512, "cpus": 1.5, "pids": 200, "storage_mb": 10240}}


def test_check_names_verifier_env_as_ignored_since_the_verifier_does_not_get_it(tmp_path: Path) -> None:
    """A [verifier.env] table, which tests/test.sh never receives, is named by check as a setting the backend ignores."""
    _task(tmp_path, '[verifier.env]\nFOO = "bar"\n')
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert code == 0, out
    line = next(ln for ln in out.splitlines() if ln.startswith("task t:"))
    assert "verifier.env" in line
