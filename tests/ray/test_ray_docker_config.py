"""Config of docker sandboxes on the ray backend (pure: no cluster, no engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.config import load
from pluginbench.environments import backend_of, check_backend_config
from pluginbench.environments._ray_backend import RayBackend, RayDockerBackend
from pluginbench.errors import ConfigError

from ..runs_helpers import QUICKSTART


def _ev(tmp_path: Path, settings: dict) -> tuple[object, Path]:
    import yaml

    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "name": "cfg", "tasks": {"source": str(QUICKSTART / "tasks"), "ids": ["word-wrap"]},
        "runner": {"harness": "nop"}, "environment": {"backend": "ray", "settings": settings}}))
    return load(path).evaluation, path


def test_docker_sandbox_makes_the_ray_backend_use_frozen_images(tmp_path: Path) -> None:
    """`settings.sandbox: docker` selects the ray variant with task images (prepared and frozen by ID), image-only
    tasks allowed, identity ray-docker and the CLI at the coding image's path; the default stays bubblewrap."""
    ev, path = _ev(tmp_path, {"address": "127.0.0.1:6379", "sandbox": "docker",
                              "nodes": {"a": {"docker_host": "unix:///tmp/a.sock"}, "b": {"jobs": 1}}})
    backend = check_backend_config(ev, path)
    assert isinstance(backend, RayDockerBackend) and backend.uses_images and not backend.needs_workspace
    assert backend.isolation(ev) == "ray-docker" and backend.isolated(ev)
    opts = backend.options(ev, "r1")
    assert opts["sandbox"] == "docker" and opts["docker_hosts"] == {"a": "unix:///tmp/a.sock"}
    assert opts["nodes"] == {"b": 1}
    plain, _ = _ev(tmp_path, {"address": "127.0.0.1:6379"})
    default = backend_of(plain)
    assert type(default) is RayBackend and not default.uses_images and default.isolation(plain) == "ray-bubblewrap"


@pytest.mark.parametrize(("settings", "field"), [
    ({"sandbox": "podman"}, "environment.settings.sandbox"),
    ({"sandbox": "docker", "docker_host": "tcp://10.0.0.1:2375"}, "environment.settings.docker_host"),
    ({"sandbox": "docker", "nodes": {"a": {"docker_host": "/var/run/docker.sock"}}},
     "environment.settings.nodes.a.docker_host"),
])
def test_bad_docker_sandbox_settings_name_the_field(tmp_path: Path, settings: dict, field: str) -> None:
    """An unknown sandbox kind or a docker endpoint that is not a local unix socket is a config error naming the
    field."""
    ev, path = _ev(tmp_path, {"address": "127.0.0.1:6379", **settings})
    with pytest.raises(ConfigError) as err:
        check_backend_config(ev, path)
    assert err.value.field == field
