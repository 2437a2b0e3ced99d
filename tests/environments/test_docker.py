"""The docker backend: the environment contract on a real engine, plus docker-only rules.

Needs a running engine (tools/start-docker.sh) and the local base image
(tools/build-base-image.sh); without them these tests skip locally and fail under CI.
Pure parts (capacity arithmetic, tar safety, endpoint parsing) run everywhere.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import stat
import tarfile
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import aiodocker
import anyio
import pytest
from aiodocker.execs import Exec

from pluginbench.environments import LocalEnvironment, SandboxSpec, _docker_engine, make_environment
from pluginbench.environments._docker import (
    DockerEnvironment,
    list_left_running,
    stop_command,
    stop_left_running,
)
from pluginbench.environments._docker_containers import ContainerInfo
from pluginbench.environments._docker_engine import EngineInfo, capacity_problem, socket_of
from pluginbench.environments._docker_images import BASE_IMAGE
from pluginbench.environments._docker_tar import pack, unpack
from pluginbench.errors import EnvironmentFailure
from pluginbench.tasks import load_task
from tests._prereq import require

from .contract import BackendContract, assert_stopped_growing, write_workspace


@pytest.fixture
def anyio_backend() -> str:
    """aiodocker is asyncio-only, so every async test here runs on asyncio."""
    return "asyncio"


# -- a synchronous look at the engine (fixtures and release checks run outside the loop) --


def _engine_get(path: str) -> tuple[int, Any]:
    """GET ``path`` from the Engine API over its Unix socket; (status, decoded JSON or None)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(socket_of(None)[1])
    conn = http.client.HTTPConnection("localhost")
    conn.sock = sock
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(body)
    except ValueError:
        return resp.status, None


@cache
def _engine_ok() -> bool:
    try:
        return _engine_get("/_ping")[0] == 200
    except OSError:
        return False


@cache
def _base_image_id() -> str | None:
    if not _engine_ok():
        return None
    status, info = _engine_get(f"/images/{BASE_IMAGE}/json")
    return str(info["Id"]) if status == 200 else None


def _require_docker() -> str:
    """Require the engine and the base image; the base image ID."""
    require(_engine_ok(), "docker engine (tools/start-docker.sh)")
    base = _base_image_id()
    require(base is not None, f"base image {BASE_IMAGE} (tools/build-base-image.sh)")
    assert base is not None
    return base


def _container(cid: str) -> dict[str, Any] | None:
    status, info = _engine_get(f"/containers/{cid}/json")
    return info if status == 200 else None


def _run_id() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"


@pytest.mark.docker
class TestDockerContract(BackendContract):
    """The backend and environment contracts on the docker backend (base image, workspace
    copied in)."""

    backend_name = "docker"

    @pytest.fixture
    def environment(self) -> DockerEnvironment:
        _require_docker()
        return DockerEnvironment()

    def make_spec(self, tmp_path: Path, role: str = "coding", **kw: Any) -> SandboxSpec:
        if "image" not in kw:
            kw["image"] = _base_image_id()
        return super().make_spec(tmp_path, role, **kw)

    def owned(self, sb: Any) -> str:
        return sb.container_id

    def assert_released(self, owned: str) -> None:
        assert _container(owned) is None, f"container {owned[:12]} was not removed"


def _spec(tmp_path: Path, **kw: Any) -> SandboxSpec:
    return TestDockerContract().make_spec(tmp_path, **kw)


def _task(
    tmp_path: Path,
    name: str,
    dockerfile: str | None = None,
    toml: str = "",
    workspace: bool = False,
):
    """A minimal Harbor task folder with an optional environment/Dockerfile, loaded."""
    root = tmp_path / name
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    (root / "instruction.md").write_text("Do the thing.\n")
    (root / "task.toml").write_text(toml)
    if dockerfile is not None:
        (root / "environment").mkdir()
        (root / "environment" / "Dockerfile").write_text(dockerfile)
    if workspace:
        write_workspace(root / "workspace")
    return load_task(root)


# -- engine endpoint and capacity (pure) ------------------------------------------------


def test_container_config_binds_nothing_from_the_host(tmp_path):
    """A sandbox container gets no host bind, mount or volume (even with spec.readonly/hidden), no privilege
    and private PID/IPC namespaces."""
    spec = SandboxSpec("run1", "att1", "coding", "demo", image="sha256:abc", workspace=tmp_path,
                       readonly=(Path("/usr/lib/node_modules"),), hidden=(tmp_path,))
    config = DockerEnvironment(run_id="run1")._config(spec)
    host = config["HostConfig"]
    assert host["Binds"] == [] and host["Mounts"] == [] and "Volumes" not in config
    assert host["Privileged"] is False and host["PidMode"] == "" and host["IpcMode"] == "private"
    assert str(tmp_path) not in json.dumps(config)


def test_a_task_without_memory_mb_still_gets_the_default_memory_limit(tmp_path):
    """A container of a task that declares no memory_mb is capped at the default it records (8192 MB, swap
    off), never left without a memory limit; a declared value wins."""
    spec = SandboxSpec("run1", "att1", "coding", "demo", image="sha256:abc", workspace=tmp_path)
    host = DockerEnvironment(run_id="run1")._config(spec)["HostConfig"]
    assert host["Memory"] == host["MemorySwap"] == 8192 * 1024 * 1024 and host["PidsLimit"] == 4096
    declared = DockerEnvironment(run_id="run1")._config(spec._replace(memory_mb=300))["HostConfig"]
    assert declared["Memory"] == 300 * 1024 * 1024


def test_only_unix_endpoints_are_accepted(monkeypatch):
    """DOCKER_HOST is honoured for unix:// sockets and refused with a fix for anything else."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/custom.sock")
    assert socket_of(None) == ("unix:///run/custom.sock", "/run/custom.sock")
    assert socket_of("unix:///x.sock")[1] == "/x.sock"
    monkeypatch.setenv("DOCKER_HOST", "tcp://10.0.0.1:2375")
    with pytest.raises(EnvironmentFailure, match="not a local Unix socket"):
        socket_of(None)


def test_capacity_fits_or_names_every_shortfall():
    """Capacity passes when jobs x limits fit CPUs and 80% of memory, and names each excess otherwise."""
    info = EngineInfo("id", "20.10", "linux", cpus=4, memory_mb=10_000)
    assert capacity_problem(2, 2.0, 4_000, info) is None
    assert capacity_problem(4, None, None, info) is None
    cpu = capacity_problem(3, 2.0, None, info)
    assert cpu is not None and "6 CPUs" in cpu and "has 4" in cpu
    mem = capacity_problem(3, 1.0, 3_000, info)
    assert mem is not None and "9000 MB" in mem and "8000 MB" in mem and "CPUs" not in mem
    assert "never lowers" in mem


# -- tar safety (pure) ------------------------------------------------------------------


def _tar(*members: tuple[str, str, bytes | str]) -> io.BytesIO:
    """An archive of (kind, name, data-or-linkname) members, kind in file/dir/sym/hard."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for kind, name, data in members:
            info = tarfile.TarInfo(name)
            if kind == "file":
                assert isinstance(data, bytes)
                info.size, info.mode = len(data), 0o640
                tf.addfile(info, io.BytesIO(data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}[
                kind
            ]
            info.linkname = str(data)
            tf.addfile(info)
    buf.seek(0)
    return buf


def test_unpack_refuses_a_member_below_a_planted_symlink(tmp_path):
    """A container archive cannot write through a symlink it planted (app/link -> outside)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    evil = _tar(
        ("dir", "app", b""), ("sym", "app/link", str(outside)), ("file", "app/link/x", b"pwned")
    )
    with pytest.raises(EnvironmentFailure, match="refused"):
        unpack(evil, tmp_path / "dest")
    assert not (outside / "x").exists()
    with pytest.raises(EnvironmentFailure, match="escapes"):
        unpack(_tar(("dir", "app", b""), ("file", "app/../../y", b"no")), tmp_path / "dest2")


def test_unpack_keeps_symlinks_copies_hardlinks_and_skips_top_names(tmp_path):
    """Symlinks stay links, a hardlink becomes a copy, modes are kept, and skip_top drops .git."""
    archive = _tar(
        ("dir", "app", b""),
        ("file", "app/a", b"A"),
        ("hard", "app/b", "app/a"),
        ("sym", "app/l", "/etc/hostname"),
        ("file", "app/.git/HEAD", b"ref"),
    )
    dest = tmp_path / "out"
    unpack(archive, dest, skip_top=lambda n: n == ".git")
    assert (dest / "b").read_bytes() == b"A" and not os.path.samefile(dest / "a", dest / "b")
    assert stat.S_IMODE((dest / "a").stat().st_mode) == 0o640
    assert os.readlink(dest / "l") == "/etc/hostname"
    assert not (dest / ".git").exists()


def test_pack_refuses_symlinks_and_names_members_below_the_target(tmp_path):
    """pack() writes folder files below the target name with modes, and refuses a symlink source."""
    src = write_workspace(tmp_path / "src")
    buf = io.BytesIO()
    pack(src, "home/agent/cfg", buf)
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tf:
        members = {m.name: stat.S_IMODE(m.mode) for m in tf.getmembers()}
    assert members == {
        "home/agent/cfg/README.md": 0o644,
        "home/agent/cfg/run.sh": 0o755,
        "home/agent/cfg/src/app.py": 0o644,
    }
    (tmp_path / "link").symlink_to(src)
    with pytest.raises(EnvironmentFailure, match="symlink"):
        pack(tmp_path / "link", "x", io.BytesIO())


# -- a missing engine -------------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_engine_is_a_clear_error_naming_the_socket(tmp_path, monkeypatch):
    """No socket, a dead socket, or a silent one: check() fails naming it and how to start an engine."""
    sock = tmp_path / "nothing.sock"
    env = make_environment("docker", docker_host=f"unix://{sock}")
    with pytest.raises(EnvironmentFailure) as err:
        await env.check()
    assert str(sock) in str(err.value) and "tools/start-docker.sh" in str(err.value)
    # A socket file nobody listens on is also "no engine", not a hang or a raw traceback.
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock))
    listener.close()
    with pytest.raises(EnvironmentFailure, match="no Docker engine answers"):
        await env.check()
    # A listener that accepts and never answers is given up on after the answer deadline.
    monkeypatch.setattr(_docker_engine, "_ANSWER_SECONDS", 0.5)
    silent_path = tmp_path / "silent.sock"
    silent = socket.socket(socket.AF_UNIX)
    silent.bind(str(silent_path))
    silent.listen(4)
    try:
        with anyio.fail_after(10), pytest.raises(EnvironmentFailure, match="no answer within"):
            await DockerEnvironment(docker_host=f"unix://{silent_path}").check()
    finally:
        silent.close()


# -- engine checks ----------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.anyio
async def test_check_passes_and_capacity_refuses_what_does_not_fit():
    """check() accepts this engine; check_capacity refuses jobs that exceed its CPUs or 80% memory."""
    _require_docker()
    env = DockerEnvironment()
    await env.check()
    info = await env.check_capacity(1, 1.0, 256)
    assert info.os_type == "linux" and info.cpus >= 1 and info.memory_mb > 0
    with pytest.raises(EnvironmentFailure, match="too small.*CPUs"):
        await env.check_capacity(2, float(info.cpus), None)
    with pytest.raises(EnvironmentFailure, match="80% memory budget"):
        await env.check_capacity(1, None, info.memory_budget_mb + 1)


@pytest.mark.docker
@pytest.mark.anyio
async def test_a_command_whose_sandbox_closed_under_it_has_an_unknown_exit_code(tmp_path):
    """Asked for a command's exit code after its sandbox closed (container removed, engine
    client closed), the sandbox says unknown (None, never 0); an engine that cannot say
    while the sandbox is open is an EnvironmentFailure, never a raw engine error."""
    _require_docker()
    async with DockerEnvironment().sandbox(_spec(tmp_path)) as sb:
        ex = await sb._create_exec(["true"], {}, "/")
        async with ex.start(detach=False) as stream:
            while await stream.read_out() is not None:
                pass
    assert await sb._exit_code(ex) is None
    async with DockerEnvironment().sandbox(_spec(tmp_path)) as sb:
        unknown = Exec(sb._docker, "0" * 64, False)  # the engine answers 404 for it
        with pytest.raises(EnvironmentFailure, match="cannot read the exit code of exec 000000000000"):
            await sb._exit_code(unknown)


# -- labels, limits, network ------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.anyio
async def test_container_carries_ownership_labels_limits_and_network(tmp_path):
    """The container is labelled with owner, run, attempt, role and task, has the spec's limits, loopback only,
    no capability and no-new-privileges."""
    _require_docker()
    run = _run_id()
    spec = _spec(
        tmp_path,
        run_id=run,
        attempt_id="att-7",
        role="verifier",
        cpus=0.5,
        memory_mb=300,
    )
    async with DockerEnvironment().sandbox(spec) as sb:
        info = _container(sb.container_id)
        ip = await sb.exec(["sh", "-c", "cat /proc/net/dev | tail -n +3 | cut -d: -f1"])
    assert info is not None
    labels = info["Config"]["Labels"]
    assert {k: v for k, v in labels.items() if not k.startswith("pluginbench.base.")} == {
        "pluginbench.owner": "pluginbench",
        "pluginbench.run": run,
        "pluginbench.attempt": "att-7",
        "pluginbench.role": "verifier",
        "pluginbench.task": "demo",
    }
    host = info["HostConfig"]
    assert (host["NetworkMode"], host["NanoCpus"], host["Memory"]) == (
        "none",
        500_000_000,
        300 * 1024 * 1024,
    )
    assert info["Mounts"] == []
    assert ip.stdout.split() == [b"lo"]
    assert host["CapDrop"] == ["ALL"] and host["SecurityOpt"] == ["no-new-privileges"]


@pytest.mark.docker
@pytest.mark.anyio
async def test_container_egress_reaches_only_the_probe_port(tmp_path):
    """With a probe policy the container's 127.0.0.1:<probe port> answers through the bound socket, another host
    loopback port does not, /proc/sys is read-only, keyctl is refused and the only mount is the egress folder."""
    import errno
    import socket
    import threading

    from pluginbench.environments import Egress

    _require_docker()
    servers = []
    for reply in (b"probe", b"canary"):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        servers.append(s)

        def serve(sock=s, text=reply) -> None:
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                conn.sendall(text)
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
    probe_port, canary_port = (s.getsockname()[1] for s in servers)
    script = (
        "import socket,ctypes\n"
        f"for port in ({probe_port},{canary_port}):\n"
        "    try:\n"
        "        s=socket.create_connection(('127.0.0.1',port),timeout=3); print(port, s.recv(10).decode())\n"
        "    except OSError as e: print(port, 'refused', e.errno)\n"
        "try: open('/proc/sys/kernel/core_pattern','a'); print('core_pattern writable')\n"
        "except OSError as e: print('core_pattern', e.errno)\n"
        "l=ctypes.CDLL(None,use_errno=True); r=l.syscall(250,0,-3,1,0,0); print('keyctl', r, ctypes.get_errno())\n"
    )
    spec = _spec(tmp_path, run_id=_run_id(), egress=Egress("probe", port=probe_port))
    try:
        async with DockerEnvironment().sandbox(spec) as sb:
            info = _container(sb.container_id)
            r = await sb.exec(["python3", "-c", script], timeout=60)
            folder = sb.egress.folder
    finally:
        for s in servers:
            s.close()
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    # core_pattern: read-only /proc/sys (EROFS); with user-namespace remapping the file's
    # owner, the host's root, is not even the container's root (EACCES comes first)
    assert lines[2] in (f"core_pattern {errno.EROFS}", f"core_pattern {errno.EACCES}"), lines
    assert lines[:2] + lines[3:] == [
        f"{probe_port} probe", f"{canary_port} refused {errno.ECONNREFUSED}", f"keyctl -1 {errno.EPERM}",
    ]
    assert [(m["Source"], m["Destination"], m["RW"]) for m in info["Mounts"]] == [
        (str(folder), "/run/pluginbench", False)]
    assert not folder.exists()


# -- images -----------------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.anyio
async def test_image_that_fails_to_build_is_a_clear_error(tmp_path):
    """A Dockerfile whose RUN fails gives an EnvironmentFailure naming the task and the build output."""
    _require_docker()
    task = _task(tmp_path, "broken-task", f"FROM {BASE_IMAGE}\nRUN echo about-to-fail && exit 7\n")
    with pytest.raises(EnvironmentFailure) as err:
        await DockerEnvironment().prepare_image(task.root, task)
    text = str(err.value)
    assert "broken-task" in text and "did not build" in text and "about-to-fail" in text


@pytest.mark.docker
@pytest.mark.anyio
async def test_build_over_its_timeout_is_refused(tmp_path):
    """A build longer than build_timeout_sec stops at the deadline with an error naming the setting."""
    _require_docker()
    task = _task(
        tmp_path,
        "slow-task",
        f"FROM {BASE_IMAGE}\nRUN sleep 60\n",
        "[environment]\nbuild_timeout_sec = 2\n",
    )
    with anyio.fail_after(30):
        with pytest.raises(EnvironmentFailure, match="build_timeout_sec=2"):
            await DockerEnvironment().prepare_image(task.root, task)


@pytest.mark.docker
@pytest.mark.anyio
async def test_built_image_is_frozen_and_its_own_repo_head_is_the_base(tmp_path):
    """A Dockerfile task builds to an image ID (the same on rebuild) whose workdir repo HEAD is the base."""
    _require_docker()
    dockerfile = (
        f"FROM {BASE_IMAGE}\nWORKDIR /app\nCOPY hello.txt /app/hello.txt\n"
        "RUN git init -q && git add -A && git -c user.name=Author -c user.email=a@x.invalid commit -qm start\n"
    )
    task = _task(tmp_path, "built-task", dockerfile)
    (task.root / "environment" / "hello.txt").write_text("from the image\n")
    env = DockerEnvironment()
    image = await env.prepare_image(task.root, task)
    assert image.startswith("sha256:") and await env.prepare_image(task.root, task) == image
    spec = SandboxSpec(run_id=_run_id(), attempt_id="a", role="coding", task=task.id, image=image)
    async with env.sandbox(spec) as sb:
        r = await sb.exec(
            ["sh", "-c", "git rev-parse HEAD; git log -1 --format=%an; cat hello.txt"]
        )
        base = sb.base_commit
    head, author, text = r.stdout.decode().splitlines()
    assert (head, author, text) == (base, "Author", "from the image")


@pytest.mark.docker
@pytest.mark.anyio
async def test_workspace_task_uses_base_image_and_missing_published_image_is_refused(tmp_path):
    """A workspace-only task runs on the base image; a docker_image the engine lacks is refused."""
    base = _require_docker()
    env = DockerEnvironment()
    ws_task = _task(tmp_path, "ws-task", workspace=True)
    assert await env.prepare_image(ws_task.root, ws_task) == base
    missing = f"pluginbench/does-not-exist:{uuid.uuid4().hex[:8]}"
    pub = _task(tmp_path, "pub-task", toml=f'[environment]\ndocker_image = "{missing}"\n')
    with pytest.raises(EnvironmentFailure, match="not on this Docker engine"):
        await env.prepare_image(pub.root, pub)


# -- base commit across backends --------------------------------------------------------


@pytest.mark.docker
@pytest.mark.anyio
async def test_base_commit_equals_the_local_backends(tmp_path):
    """The same workspace gives the same base commit in a container as on the local backend."""
    _require_docker()
    ws = write_workspace(tmp_path / "ws")
    async with DockerEnvironment().sandbox(_spec(tmp_path, workspace=ws)) as sb:
        in_docker = sb.base_commit
    local = LocalEnvironment(isolation="none", root=tmp_path / "boxes")
    async with local.sandbox(_spec(tmp_path, workspace=ws)) as lb:
        assert lb.base_commit == in_docker


# -- left running -----------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.anyio
async def test_left_running_lists_and_stops_only_this_runs_containers(tmp_path):
    """Resume's listing finds this run's running containers only, and stopping them never removes them."""
    _require_docker()
    run, other = _run_id(), _run_id()
    env = DockerEnvironment(run_id=run)
    async with aiodocker.Docker(url=socket_of(None)[0]) as docker:
        # Labelled with our run but not owned by PluginBench: must never be touched.
        stranger = await docker.containers.create(
            {"Image": _base_image_id(), "Cmd": ["sleep", "600"], "Labels": {"pluginbench.run": run}}
        )
        await stranger.start()
        try:
            async with (
                env.sandbox(_spec(tmp_path, run_id=run, attempt_id="a1")) as one,
                env.sandbox(_spec(tmp_path, run_id=run, attempt_id="a2")) as two,
                DockerEnvironment().sandbox(
                    _spec(tmp_path, run_id=other, attempt_id="o1")
                ) as foreign,
            ):
                listed = await list_left_running(run)
                assert {(c.id, c.attempt) for c in listed} == {
                    (one.container_id, "a1"),
                    (two.container_id, "a2"),
                }
                assert all(c.name.startswith(f"pluginbench-{run}-") for c in listed)
                assert stop_command(listed) == "docker stop " + " ".join(c.id[:12] for c in listed)
                stopped = await env.stop_left_running()
                assert sorted(stopped) == sorted(
                    f"container {c.name} ({c.id[:12]}) of attempt {c.attempt}" for c in listed
                )
                for box in (one, two):
                    kept = _container(box.container_id)
                    assert kept is not None and kept["State"]["Running"] is False
                assert _container(foreign.container_id)["State"]["Running"] is True
                assert await env.left_running() == []
            assert _container(stranger.id)["State"]["Running"] is True
        finally:
            await stranger.delete(force=True)
    assert stop_command([]) is None
    assert await stop_left_running(run) == []
    assert ContainerInfo("i", "n", "a").attempt == "a"


# -- the agent cannot set its own reward ------------------------------------------------


@pytest.mark.docker
@pytest.mark.anyio
async def test_agent_reward_file_does_not_reach_the_verifier_container(tmp_path):
    """A reward.txt written by the coding container is absent in a separate verifier container."""
    _require_docker()
    run = _run_id()
    env = DockerEnvironment()
    tests = write_workspace(
        tmp_path / "tests", {"test.sh": ("#!/bin/sh\necho 0 > /logs/verifier/reward.txt\n", 0o755)}
    )
    async with env.sandbox(_spec(tmp_path, run_id=run, attempt_id="a")) as coding:
        cheat = await coding.exec(
            [
                "sh",
                "-c",
                "echo 1 > /logs/verifier/reward.txt && mkdir -p /tests && echo 'exit 0' > /tests/test.sh",
            ]
        )
        assert cheat.exit_code == 0
        async with env.sandbox(
            _spec(tmp_path, role="verifier", run_id=run, attempt_id="a", tests=tests)
        ) as verifier:
            before = await verifier.exec(
                ["sh", "-c", "test -e /logs/verifier/reward.txt; echo $?; cat /tests/test.sh"]
            )
            graded = await verifier.exec(["/tests/test.sh"])
            await verifier.stop()
            await verifier.get("/logs/verifier/reward.txt", tmp_path / "reward.txt")
    assert before.stdout.decode().splitlines()[0] == "1"
    assert "echo 0" in before.stdout.decode()
    assert graded.exit_code == 0 and (tmp_path / "reward.txt").read_text() == "0\n"


@pytest.mark.docker
@pytest.mark.anyio
async def test_get_refuses_a_planted_symlink_and_put_needs_a_live_sandbox(tmp_path):
    """get() will not follow a reward.txt symlink the agent planted; put() after stop() is refused."""
    _require_docker()
    async with DockerEnvironment().sandbox(_spec(tmp_path)) as sb:
        await sb.exec(["ln", "-s", "/etc/passwd", "/logs/verifier/reward.txt"])
        with pytest.raises(EnvironmentFailure, match="symlink"):
            await sb.get("/logs/verifier/reward.txt", tmp_path / "r")
        await sb.stop()
        with pytest.raises(EnvironmentFailure, match="stopped"):
            await sb.put(tmp_path, "/tmp/x")
    assert not (tmp_path / "r").exists()


@pytest.mark.docker
@pytest.mark.anyio
async def test_timeout_kills_escapees_by_marker_and_by_session(tmp_path):
    """At a deadline both a child in a new session and a child with a cleared environment die."""
    _require_docker()
    beat = 'while :; do echo x >> "/logs/artifacts/$0"; sleep 0.05; done'
    # The command waits until both escapees have written before it idles, and the
    # deadline leaves a loaded host seconds to start them; the check after it waits for a
    # quiet window instead of comparing two fixed instants.
    started = "until [ -s /logs/artifacts/own-session ] && [ -s /logs/artifacts/no-env ]; do sleep 0.05; done"
    script = f"setsid sh -c '{beat}' own-session & env -i sh -c '{beat}' no-env & {started}; sleep 300"
    async with DockerEnvironment().sandbox(_spec(tmp_path)) as sb:
        r = await sb.exec(["sh", "-c", script], timeout=6)
        assert r.timed_out is True and r.exit_code is None
        for name in ("own-session", "no-env"):
            await assert_stopped_growing(sb, f"/logs/artifacts/{name}", tmp_path)


@pytest.mark.docker
@pytest.mark.anyio
async def test_stop_is_confirmed_by_the_engine_and_a_spec_needs_an_image(tmp_path):
    """After stop() the engine reports the container not running; a spec without image is refused."""
    _require_docker()
    env = DockerEnvironment()
    async with env.sandbox(_spec(tmp_path)) as sb:
        await sb.exec(["sh", "-c", "trap '' TERM; sleep 300 >/dev/null 2>&1 &"])
        await sb.stop()
        state = _container(sb.container_id)
        assert state is not None and state["State"]["Running"] is False
    with pytest.raises(EnvironmentFailure, match="spec.image"):
        async with env.sandbox(_spec(tmp_path, image=None)):
            pass


@pytest.mark.docker
@pytest.mark.anyio
async def test_a_removed_sandbox_refuses_get(tmp_path):
    """Once the context has exited, get() says the sandbox is gone instead of reaching the engine."""
    _require_docker()
    async with DockerEnvironment().sandbox(_spec(tmp_path)) as sb:
        pass
    with pytest.raises(EnvironmentFailure, match="gone"):
        await sb.get("/logs", tmp_path / "logs")


@pytest.mark.docker
@pytest.mark.anyio
async def test_a_command_that_cannot_start_is_an_environment_failure(tmp_path):
    """A missing binary or working folder is reported as 'cannot start', not as an exit code."""
    _require_docker()
    async with DockerEnvironment().sandbox(_spec(tmp_path)) as sb:
        with pytest.raises(EnvironmentFailure, match="cannot start 'no-such-binary'"):
            await sb.exec(["no-such-binary"])
        with pytest.raises(EnvironmentFailure, match="cannot start"):
            await sb.exec(["true"], cwd="/no/such/folder")
        ok = await sb.exec(["sh", "-c", "exit 126"])
    assert ok.exit_code == 126
