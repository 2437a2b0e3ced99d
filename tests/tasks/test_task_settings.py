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


def test_check_no_longer_names_verifier_env_as_ignored(tmp_path: Path) -> None:
    """A [verifier.env] of literals passes check and is not named as a setting the backend ignores (test.sh gets it)."""
    _task(tmp_path, '[verifier.env]\nFOO = "bar"\nN = 3\n')
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert code == 0, out
    assert "verifier.env" not in out


def test_check_refuses_a_host_reference_the_evaluation_does_not_allow(tmp_path: Path) -> None:
    """A [verifier.env] value ${NAME} whose NAME is not in grading.verifier_env_from_host exits 2 naming the file, the key and the fix."""
    root = _task(tmp_path, '[verifier.env]\nTOKEN = "${PB_TEST_TOKEN}"\n')
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness", env={"PB_TEST_TOKEN": "s3cr3t-value"})
    assert_refused(code, out, str(root / "task.toml"), "verifier.env.TOKEN", "grading.verifier_env_from_host")
    assert "s3cr3t-value" not in out


def test_check_refuses_an_allowed_host_variable_that_is_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An allowed ${NAME} without a default exits 2 when the host does not set NAME, and passes once it does."""
    _task(tmp_path, '[verifier.env]\nTOKEN = "${PB_TEST_TOKEN}"\n')
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]},
                  grading={"verifier_env_from_host": ["PB_TEST_TOKEN"]})
    monkeypatch.delenv("PB_TEST_TOKEN", raising=False)
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "verifier.env.TOKEN", "PB_TEST_TOKEN", "not set")
    code, out = run_cli("check", str(config), "--no-readiness", env={"PB_TEST_TOKEN": "s3cr3t-value"})
    assert code == 0, out
    assert "s3cr3t-value" not in out


@pytest.mark.parametrize(("extra", "field"), [
    ('[environment.env]\nENV_VAR = "${PB_ANY_HOST}"\n', "environment.env.ENV_VAR"),
    ('[solution.env]\nSOL_VAR = "${PB_ANY_HOST}"\n', "solution.env.SOL_VAR"),
])
def test_check_refuses_host_references_the_task_env_tables_may_not_make(tmp_path: Path, extra: str, field: str) -> None:
    """`check` exits 2 naming task.toml and the key for a host reference in [environment.env] (never allowed) and in
    [solution.env] (its name is not in grading.verifier_env_from_host); a literal [environment.env] is not called ignored."""
    (_task(tmp_path, "") / "task.toml").write_text(extra)
    config = edit(write_config(tmp_path), tasks={"source": str(tmp_path / "tasks"), "ids": ["t"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, field, "task.toml")
    (tmp_path / "tasks" / "t" / "task.toml").write_text('[environment.env]\nENV_VAR = "x"\n')
    code, out = run_cli("check", str(config), "--no-readiness")
    assert code == 0 and "environment.env" not in out, out
