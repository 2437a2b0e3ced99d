"""Docker-backend bad input said precisely (issue 14 item 21): a docker_image the engine
lacks is exit 2 naming the task, task.toml and the field (also with --no-readiness), and
a capacity refusal for too many CPUs names container_cpus, not container_memory_mb."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pluginbench.cli import app
from tests._prereq import require
from tests.runs_helpers import QUICKSTART, write_config

pytestmark = pytest.mark.docker
runner = CliRunner()


def _engine_up() -> bool:
    import anyio

    from pluginbench.environments import make_environment

    try:
        anyio.run(make_environment("docker").check, backend="asyncio")
    except Exception:  # noqa: BLE001 - any failure means: no usable engine here
        return False
    return True


def docker_config(tmp_path: Path, toml_extra: str = "", **env: object) -> Path:
    source = tmp_path / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", source / "roman-numerals")
    if toml_extra:
        toml = source / "roman-numerals" / "task.toml"
        toml.write_text(toml.read_text().replace("[environment]\n", "[environment]\n" + toml_extra + "\n"))
    config = write_config(tmp_path, harness="nop")
    data = yaml.safe_load(config.read_text())
    data["tasks"] = {"source": str(source), "ids": ["roman-numerals"]}
    data["environment"] = {"backend": "docker", **env}
    config.write_text(yaml.safe_dump(data))
    return config


def test_missing_docker_image_is_bad_input(tmp_path: Path) -> None:
    """A task image the engine does not hold is refused by check --no-readiness and run."""
    require(_engine_up(), "docker engine (tools/start-docker.sh)")
    config = docker_config(tmp_path, 'docker_image = "pluginbench-test/never-built:0"')
    for args in (("check", str(config), "--no-readiness"), ("run", str(config), "--output", str(tmp_path / "run"))):
        result = runner.invoke(app, list(args))
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: task 'roman-numerals': image 'pluginbench-test/never-built:0'")
        assert "field: environment.docker_image" in result.output and "docker pull" in result.output
        assert "config ok" not in result.output
    assert not (tmp_path / "run").exists()


def test_too_many_cpus_names_container_cpus(tmp_path: Path) -> None:
    """An engine too small in CPUs names environment.container_cpus as the field."""
    require(_engine_up(), "docker engine (tools/start-docker.sh)")
    config = docker_config(tmp_path, container_cpus=4096.0)
    result = runner.invoke(app, ["check", str(config), "--no-readiness"])
    assert result.exit_code == 2, result.output
    assert "field: environment.container_cpus" in result.output
    assert "container_memory_mb" not in result.output.split("field:")[1].splitlines()[0]
