"""Docker sandboxes on Ray worker nodes: each worker node of a real local cluster has its
own real Docker Engine (a second dockerd with its own image store), images are prepared
and frozen on the head's engine and loaded by ID into the engine of the node that runs the
sandbox, hash-checked, and an image whose ID is not the frozen one is refused."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pluginbench.environments._ray import RayEnvironment
from pluginbench.environments._ray_images import ImageExport
from pluginbench.errors import EnvironmentFailure
from tests._prereq import require

from ..environments.contract import EnvironmentContract, write_workspace
from .node_engines import NodeEngine, host_links, node_engines

pytestmark = [pytest.mark.ray, pytest.mark.docker]
BASE_IMAGE = "pluginbench/base:bookworm"


def _head_image_id(ref: str) -> str | None:
    done = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", ref], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.fixture(scope="module")
def base_id() -> str:
    found = _head_image_id(BASE_IMAGE)
    require(found is not None, "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def engines(base_id: str) -> Iterator[dict[str, NodeEngine]]:
    with node_engines(("a", "b")) as started:
        yield started


@pytest.fixture(scope="module")
def ray_env(cluster, engines, tmp_path_factory) -> RayEnvironment:
    env = RayEnvironment(cluster.address, jobs=2, root=str(tmp_path_factory.mktemp("nodes")), sandbox="docker",
                         docker_hosts={name: e.host for name, e in engines.items()})
    env.connect()
    return env


def _running_on(engines: dict[str, NodeEngine], container: str) -> list[str]:
    """The node engines on which ``container`` exists."""
    return [name for name, e in engines.items() if e.docker("inspect", container).returncode == 0]


class TestRayDockerContract(EnvironmentContract):
    """The environment contract, every sandbox a container on a worker node's own engine."""

    @pytest.fixture
    def environment(self, ray_env: RayEnvironment, engines: dict[str, NodeEngine], base_id: str) -> RayEnvironment:
        self.engines = engines
        self.base_id = base_id
        return ray_env

    def make_spec(self, tmp_path: Path, role: str = "coding", **kw: Any):
        kw.setdefault("image", _head_image_id(BASE_IMAGE))
        return super().make_spec(tmp_path, role, **kw)

    def owned(self, sb: Any) -> Any:
        container, staging = sb.owned
        assert _running_on(self.engines, container) == [sb.node.name], "the container should be on its node's engine"
        return sb.node.name, container, staging

    def assert_released(self, owned: Any) -> None:
        node, container, staging = owned
        assert self.engines[node].docker("inspect", container).returncode != 0, f"container {container[:12]} survived"
        assert not Path(staging).exists(), f"staging folder {staging} was not removed"


@pytest.fixture(scope="module")
def small_image(base_id: str, tmp_path_factory) -> str:
    """A small second image on the head's engine (the base plus a label), to ship and mismatch."""
    ctx = tmp_path_factory.mktemp("img")
    (ctx / "Dockerfile").write_text(f"FROM {base_id}\nLABEL pluginbench.test=raydocker\n")
    subprocess.run(["docker", "build", "-q", "-t", "pluginbench/test-raydocker:1", str(ctx)], check=True,
                   capture_output=True, timeout=300)
    found = _head_image_id("pluginbench/test-raydocker:1")
    assert found is not None
    return found


@pytest.mark.anyio
async def test_images_are_loaded_into_the_engine_of_the_node_that_runs_the_sandbox(ray_env, engines, small_image,
                                                                                 tmp_path):
    """A sandbox from an image only the head holds runs on node a after that node's own engine loaded it by the
    frozen ID; node b's engine never got it."""
    assert all(small_image not in e.image_ids() for e in engines.values())
    ws = write_workspace(tmp_path / "ws")
    spec = EnvironmentContract().make_spec
    ray_env._busy[next(n.node_id for n in ray_env.nodes() if n.name == "b")] = 2  # b full: the sandbox goes to a
    try:
        async with ray_env.sandbox(spec(tmp_path, workspace=ws, attempt_id="img1", image=small_image)) as sb:
            assert sb.node.name == "a"
            got = await sb.exec(["sh", "-c", "echo in-container"])
            assert got.stdout == b"in-container\n"
    finally:
        ray_env._busy[next(n.node_id for n in ray_env.nodes() if n.name == "b")] = 0
    assert small_image in engines["a"].image_ids()
    assert small_image not in engines["b"].image_ids()
    assert any(t["node"] == "a" and t["image"] == small_image for t in ray_env.image_timings())


@pytest.mark.anyio
async def test_a_tampered_image_export_is_not_loaded(ray_env, engines, small_image):
    """An export whose bytes do not match the head's sha256 is refused before anything is loaded."""
    import ray

    real = await ray_env._shipper.export(small_image)
    bad = ImageExport(small_image, real.sha256, real.size, [*real.chunks[:-1], ray.put(b"tampered")])
    node_b = next(n for n in ray_env.nodes() if n.name == "b")
    assert small_image not in engines["b"].image_ids()
    with pytest.raises(EnvironmentFailure, match="nothing was loaded"):
        await ray_env.call(node_b, ray_env._agent(node_b).load_image.remote(bad))
    assert small_image not in engines["b"].image_ids()


@pytest.mark.anyio
async def test_a_node_refuses_an_image_whose_id_is_not_the_frozen_one(ray_env, engines, small_image):
    """A hash-consistent export whose image is not the frozen ID is loaded but refused with a message naming both IDs;
    a sandbox is never opened from an image the node's engine does not hold under the frozen ID."""
    frozen = "sha256:" + "0" * 64
    real = await ray_env._shipper.export(small_image)
    claim = ImageExport(frozen, real.sha256, real.size, real.chunks)
    node_b = next(n for n in ray_env.nodes() if n.name == "b")
    agent = ray_env._agent(node_b)
    with pytest.raises(EnvironmentFailure) as refused:
        await ray_env.call(node_b, agent.load_image.remote(claim))
    text = str(refused.value)
    assert "node b" in text and frozen in text and small_image in text and "refusing to run" in text
    with pytest.raises(EnvironmentFailure) as not_held:
        spec = {"run_id": "r", "attempt_id": "x", "role": "coding", "task": "t", "image": frozen}
        await ray_env.call(node_b, agent.open.remote("sid-x", spec, {}))
    assert "does not hold the frozen image" in str(not_held.value)


@pytest.mark.anyio
async def test_describe_reports_each_nodes_own_engine(ray_env, engines):
    """Each node describes the Docker engine it uses (its own socket, its version) and sees no problem."""
    described = {d["node"]: d for d in await ray_env.describe()}
    assert set(described) == {"a", "b"}
    for name, d in described.items():
        assert d["sandbox"] == "docker" and d["problem"] is None
        assert d["docker"]["host"] == engines[name].host
        assert d["docker"]["version"] and d["cpus"] >= 1


def test_doctor_checks_each_nodes_docker_engine(cluster, engines) -> None:
    """`doctor --ray ADDRESS --ray-sandbox docker` passes when every node's own engine answers, naming each node's
    socket, and fails (exit 1) naming the node whose engine does not answer."""
    import json

    from .runs import cli

    hosts = [f"--ray-docker-host={name}={e.host}" for name, e in engines.items()]
    ok = cli("doctor", "--ray", cluster.address, "--ray-sandbox", "docker", *hosts, "--json", timeout=300)
    checks = {c["name"]: c for c in json.loads(ok.stdout)["checks"]["ray"]}
    assert all(c["ok"] for c in checks.values()), checks
    for name, e in engines.items():
        assert e.host in checks[f"node {name}"]["detail"]
    assert checks["head Docker engine (task images are prepared here)"]["ok"]
    bad = cli("doctor", "--ray", cluster.address, "--ray-sandbox", "docker", hosts[0],
              "--ray-docker-host=b=unix:///nonexistent/docker.sock", "--json", check=False, timeout=300)
    assert bad.returncode == 1, bad.stderr
    checks = {c["name"]: c for c in json.loads(bad.stdout)["checks"]["ray"]}
    assert checks["node a"]["ok"] and not checks["node b"]["ok"]
    assert "/nonexistent/docker.sock" in checks["node b"]["detail"]


def test_node_engines_leave_the_machines_network_links_alone() -> None:
    """Starting and stopping a node's own engine removes no link of the machine (docker0 stays) and removes its own bridge."""
    before = host_links()
    with node_engines(("g",)) as started:
        assert started["g"].answers()
        during = host_links()
        bridge = started["g"].bridge
    after = host_links()
    assert before <= during, f"links the node engine removed while running: {sorted(before - during)}"
    assert before <= after, f"links gone after the node engine stopped: {sorted(before - after)}"
    assert bridge in during and bridge not in after
