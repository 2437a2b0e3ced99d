"""The ray backend's sandboxes: the environment contract on a real 3-node local cluster,
placement by node and slot, and transfers that are checked byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.environments._ray import RayEnvironment, RayNode, choose_node, participating
from pluginbench.errors import EnvironmentFailure

from ..environments.contract import EnvironmentContract, write_workspace

pytestmark = [pytest.mark.ray]


def _processes_naming(root: str) -> set[int]:
    """Processes naming ``root`` in their argv or started in it (a local sandbox's bubblewrap
    runs in its folder and names no host path in its argv)."""
    found = set()
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if root.encode() in fh.read():
                    found.add(int(name))
            if os.readlink(f"/proc/{name}/cwd") == root:
                found.add(int(name))
        except (OSError, ValueError):
            continue
    return found


@pytest.fixture(scope="module")
def ray_env(cluster, tmp_path_factory) -> RayEnvironment:
    env = RayEnvironment(cluster.address, jobs=2, root=str(tmp_path_factory.mktemp("nodes")))
    env.connect()
    return env


class TestRayContract(EnvironmentContract):
    """The environment contract, every sandbox on a worker node of the cluster."""

    @pytest.fixture
    def environment(self, ray_env):
        return ray_env

    def owned(self, sb):
        assert sb.owned and all(Path(p).is_dir() for p in sb.owned)
        assert _processes_naming(sb.owned[0]), "the sandbox should show live processes on its node"
        return sb.owned

    def assert_released(self, owned):
        for folder in owned:
            assert not os.path.lexists(folder), f"{folder} was not removed on the node"
            assert _processes_naming(folder) == set(), "processes of the sandbox survived"


@pytest.mark.anyio
async def test_coding_sandboxes_spread_over_nodes_and_verifier_follows(ray_env, tmp_path):
    """Two coding sandboxes at once land on the two worker nodes; an attempt's verifier runs where it coded."""
    ws = write_workspace(tmp_path / "ws")
    spec = EnvironmentContract().make_spec
    async with ray_env.sandbox(spec(tmp_path, workspace=ws, attempt_id="x1")) as a, \
            ray_env.sandbox(spec(tmp_path, workspace=ws, attempt_id="x2")) as b:
        assert {a.node.name, b.node.name} == {"a", "b"}
        coded_on = a.node.name
    assert ray_env.node_of("x1") == coded_on
    async with ray_env.sandbox(spec(tmp_path, "verifier", workspace=ws, attempt_id="x1")) as v:
        assert v.node.name == coded_on


@pytest.mark.anyio
async def test_a_tampered_transfer_is_refused(ray_env, tmp_path, monkeypatch):
    """Evidence whose bytes differ from the node's sha256 never lands: get() raises and names the file."""
    from pluginbench.environments import _ray_transfer

    real = _ray_transfer.unpack

    def corrupt(packed, dest):
        bad = dict(packed.manifest)
        key = sorted(k for k, v in bad.items() if v.startswith("f:"))[0]
        bad[key] = "f:" + "0" * 64
        return real(packed._replace(manifest=bad), dest)

    async with ray_env.sandbox(EnvironmentContract().make_spec(tmp_path)) as sb:
        await sb.exec(["sh", "-c", 'echo evidence > "$LOGS_DIR/artifacts/e.txt"'])
        monkeypatch.setattr("pluginbench.environments._ray.unpack", corrupt)
        with pytest.raises(EnvironmentFailure, match="transfer check failed"):
            await sb.get(f"{sb.paths.logs}/artifacts", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_placement_prefers_free_slots_then_name():
    """A coding sandbox goes to the node with most free slots; a full cluster gives None; the verifier may use a full node."""
    nodes = [RayNode("n1", "a", 2), RayNode("n2", "b", 1)]
    assert choose_node(nodes, {}, True, None).name == "a"
    assert choose_node(nodes, {"n1": 1}, True, None).name == "a"  # ties by name
    assert choose_node(nodes, {"n1": 2}, True, None).name == "b"
    assert choose_node(nodes, {"n1": 2, "n2": 1}, True, None) is None
    assert choose_node(nodes, {"n1": 2, "n2": 1}, False, "n2").name == "b"


@pytest.mark.anyio
async def test_a_node_exception_that_cannot_travel_back_is_an_environment_failure():
    """A node-side exception Ray cannot deserialise on the head becomes an EnvironmentFailure naming the node and the failure's own line."""
    import ray.exceptions

    from pluginbench.environments._ray import _translate

    async def fails() -> None:
        raise ray.exceptions.UnserializableException(
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nDockerError: [900] Connector is closed.\n")

    with pytest.raises(EnvironmentFailure, match=r"^on worker node b: DockerError: \[900\] Connector is closed\.$"):
        await _translate(None, RayNode("n2", "b", 1), fails())  # type: ignore[arg-type]


def test_only_alive_labelled_nodes_take_part_with_their_jobs():
    """Nodes without the label, dead nodes and nodes set to 0 jobs get no sandbox; per-node jobs override."""
    seen = [
        {"NodeID": "h", "Alive": True, "Labels": {}},
        {"NodeID": "1", "Alive": True, "Labels": {"pluginbench-node": "b"}},
        {"NodeID": "2", "Alive": False, "Labels": {"pluginbench-node": "c"}},
        {"NodeID": "3", "Alive": True, "Labels": {"pluginbench-node": "a"}},
        {"NodeID": "4", "Alive": True, "Labels": {"pluginbench-node": "off"}},
    ]
    got = participating(seen, "pluginbench-node", 2, {"b": 3, "off": 0})
    assert got == [RayNode("3", "a", 2), RayNode("1", "b", 3)]


@pytest.mark.anyio
async def test_check_describes_each_worker_node(ray_env):
    """check() passes on the test cluster and describe() reports both worker nodes with their jobs."""
    await ray_env.check()
    described = await ray_env.describe()
    assert [(d["node"], d["jobs"], d["problem"]) for d in described] == [("a", 2, None), ("b", 2, None)]
    assert all(d["cpus"] >= 1 for d in described)


@pytest.mark.anyio
async def test_a_node_sandbox_reaches_the_probe_port_and_nothing_else(ray_env, tmp_path):
    """A coding sandbox on a worker node with a probe policy reaches the probe's 127.0.0.1 port through its
    node's egress proxy and is refused another host loopback port."""
    import errno
    import socket
    import threading

    from pluginbench.environments import Egress

    servers = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        servers.append(s)

        def serve(sock=s) -> None:
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                conn.sendall(b"answer")
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
    probe, other = (s.getsockname()[1] for s in servers)
    script = (f"import socket\nfor port in ({probe},{other}):\n    try: print(port, socket.create_connection("
              "('127.0.0.1',port),timeout=3).recv(10).decode())\n    except OSError as e: print(port, e.errno)\n")
    spec = EnvironmentContract().make_spec(tmp_path, egress=Egress("probe", port=probe))
    try:
        async with ray_env.sandbox(spec) as sb:
            r = await sb.exec(["python3", "-c", script], timeout=60)
    finally:
        for s in servers:
            s.close()
    assert r.stdout.decode().splitlines() == [f"{probe} answer", f"{other} {errno.ECONNREFUSED}"], r.stderr


@pytest.mark.anyio
async def test_a_commands_output_file_crosses_the_cluster_in_chunks(ray_env, tmp_path):
    """A 20 MB output file reaches the head byte for byte while no reply carries more than one
    8 MiB chunk of it, and the node keeps nothing of it afterwards."""
    import hashlib

    from pluginbench.environments._ray_node import OUTPUT_CHUNK_BYTES

    out = tmp_path / "stdout.txt"
    script = "head -c 20000000 /dev/urandom | tee \"$LOGS_DIR/artifacts/copy\""
    async with ray_env.sandbox(EnvironmentContract().make_spec(tmp_path, storage_mb=64)) as sb:
        reply = await ray_env.call(sb.node, sb._agent.exec.remote(
            sb._sid, "direct", ["sh", "-c", script], None, None, 120, None, (True, False), False))
        size, digest = reply["files"]["stdout"]
        assert size == 20_000_000 and len(digest) == 64  # a size and a hash, never the bytes
        first = await sb._call("read_output", "direct", "stdout", 0)
        assert len(first) == OUTPUT_CHUNK_BYTES
        await sb._call("drop_output", "direct")
        r = await sb.exec(["sh", "-c", script], stdout_path=out, timeout=120)
        assert r.exit_code == 0
        await sb.get(f"{sb.paths.logs}/artifacts/copy", tmp_path / "copy")
        assert not [p for p in Path(sb.owned[1]).iterdir() if p.name.startswith("exec-")]
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256((tmp_path / "copy").read_bytes()).hexdigest()
