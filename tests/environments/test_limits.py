"""Sandbox limits on the local backend: memory, processes and disk hold, a breach ends the
sandbox's commands with a recorded reason, and the machine is fine afterwards."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pluginbench.environments import (
    LocalEnvironment,
    SandboxSpec,
    bwrap_available,
    limits_of,
    over_storage,
)
from pluginbench.environments._limits import Cgroup, tree_bytes
from tests._prereq import require

pytestmark = pytest.mark.anyio
ALLOCATE = "import time\nb = []\nfor i in range(40):\n    b.append(bytearray(10 * 1024 * 1024))\nprint('allocated')\n"


def _cgroups_usable() -> bool:
    box = Cgroup.create(f"pluginbench-probe-{os.getpid()}", limits_of(64, None, 16, None))
    if box is None:
        return False
    box.remove()
    return True


def _spec(tmp_path: Path, **limits: int) -> SandboxSpec:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "README.md").write_text("hi\n")
    return SandboxSpec(run_id="r", attempt_id="a", role="coding", task="t", workspace=ws, **limits)  # type: ignore[arg-type]


def _isolation() -> str:
    return "bubblewrap" if bwrap_available() else "none"


async def test_memory_past_the_limit_is_killed_and_recorded(tmp_path: Path) -> None:
    """A command allocating 400 MB in a 128 MB sandbox is killed and the breach names the memory limit."""
    require(_cgroups_usable(), "root and a writable cgroup file system")
    env = LocalEnvironment(isolation=_isolation(), root=tmp_path / "boxes")
    async with env.sandbox(_spec(tmp_path, memory_mb=128)) as box:
        assert box.limit_mechanism.startswith("cgroup")
        done = await box.exec(["python3", "-c", ALLOCATE], timeout=60)
        assert done.exit_code != 0 and b"allocated" not in done.stdout
        assert any(b.startswith("memory:") and "128 MB" in b for b in box.limit_breaches())


async def test_a_fork_bomb_is_stopped_at_the_process_limit(tmp_path: Path) -> None:
    """5,000 background processes in a 64-process sandbox: forks are refused, the sandbox's commands end
    well before their 30 s sleep, the breach names the process limit, and none of them is left running."""
    require(_cgroups_usable(), "root and a writable cgroup file system")
    env = LocalEnvironment(isolation=_isolation(), root=tmp_path / "boxes")
    bomb = "i=0; while [ $i -lt 5000 ]; do sleep 30 & i=$((i+1)); done; wait"
    started = time.monotonic()
    async with env.sandbox(_spec(tmp_path, pids=64)) as box:
        done = await box.exec(["sh", "-c", bomb], env={"PB_BOMB_MARK": "x"}, timeout=60)
        assert not done.timed_out
        assert any(b.startswith("processes:") and "64" in b for b in box.limit_breaches())
    assert time.monotonic() - started < 25
    left = [p for p in os.listdir("/proc") if p.isdigit() and _marked(int(p))]
    assert left == []


def _marked(pid: int) -> bool:
    try:
        return b"PB_BOMB_MARK=x" in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


async def test_a_sandbox_within_its_limits_records_none(tmp_path: Path) -> None:
    """An ordinary command under the default limits records no breach and says how limits were set."""
    env = LocalEnvironment(isolation=_isolation(), root=tmp_path / "boxes")
    async with env.sandbox(_spec(tmp_path)) as box:
        done = await box.exec(["sh", "-c", "echo ok"], timeout=30)
        assert done.stdout == b"ok\n" and box.limit_breaches() == []
        assert box.limit_mechanism != "not set up"
        assert box.limits == limits_of(None, None, None, None)


def test_a_sparse_file_counts_at_its_apparent_size(tmp_path: Path) -> None:
    """A 1.5 GiB sparse file takes almost no disk but is over a 1,024 MB storage bound."""
    tree = tmp_path / "export"
    tree.mkdir()
    with open(tree / "sparse.bin", "wb") as fh:
        fh.truncate(1536 * 1024 * 1024)
    assert tree_bytes(tree, allocated=True) < 1024 * 1024
    why = over_storage(tree, limits_of(None, None, None, 1024))
    assert why is not None and "1024 MB" in why
    assert over_storage(tree, limits_of(None, None, None, 2048)) is None


def test_every_entry_counts_at_least_one_block(tmp_path: Path) -> None:
    """Empty files, folders and links take no bytes but an inode each: 2,000 of them count 2,000 blocks, over a
    4 MB bound (1,024 entries) in apparent and in allocated size."""
    from pluginbench.environments._limits import ENTRY_BYTES

    tree = tmp_path / "export"
    (tree / "d").mkdir(parents=True)
    for i in range(1000):
        (tree / "d" / f"e{i}").touch()
        (tree / f"l{i}").symlink_to("/nowhere")
    assert tree_bytes(tree) >= 2001 * ENTRY_BYTES and tree_bytes(tree, allocated=True) >= 2001 * ENTRY_BYTES
    why = over_storage(tree, limits_of(None, None, None, 4))
    assert why is not None and "4 MB" in why
    assert over_storage(tree, limits_of(None, None, None, 16)) is None


async def test_many_empty_files_in_a_sandbox_end_it_at_its_storage_bound(tmp_path: Path) -> None:
    """A command creating 20,000 empty files in an 8 MB sandbox (2,048 entries) is ended by the disk check and the
    breach is recorded: empty files cannot use up the host's inodes."""
    require(bwrap_available(), "bubblewrap (the disk check watches isolated sandboxes)")
    env = LocalEnvironment(isolation="bubblewrap", root=tmp_path / "boxes")
    many = 'mkdir -p /tmp/many && cd /tmp/many && i=0; while [ $i -lt 20000 ]; do : > f$i; i=$((i+1)); done; sleep 60'
    started = time.monotonic()
    async with env.sandbox(_spec(tmp_path, storage_mb=8)) as box:
        done = await box.exec(["sh", "-c", many], timeout=120)
        assert not done.timed_out and done.exit_code != 0
        assert any(b.startswith("disk:") and "8 MB" in b for b in box.limit_breaches()), box.limit_breaches()
    assert time.monotonic() - started < 60


# -- docker ------------------------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_docker_containers_get_a_process_and_memory_limit(tmp_path: Path, anyio_backend: str) -> None:
    """A docker sandbox has PidsLimit (the default 4096 when the task says nothing), a fork bomb past a
    64-process limit is refused and recorded, and memory past 128 MB is killed and recorded."""
    from pluginbench.environments._docker import DockerEnvironment
    from tests.environments.test_docker import _container, _require_docker
    from tests.environments.test_docker import _spec as docker_spec

    _require_docker()
    env = DockerEnvironment()
    assert env._config(docker_spec(tmp_path / "d"))["HostConfig"]["PidsLimit"] == 4096
    async with env.sandbox(docker_spec(tmp_path / "a", pids=64, memory_mb=128)) as box:
        info = _container(box.container_id)
        assert info is not None and info["HostConfig"]["PidsLimit"] == 64
        bomb = "i=0; while [ $i -lt 5000 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; kill -9 -1; true"
        done = await box.exec(["sh", "-c", bomb], timeout=60)
        assert not done.timed_out
        await box.exec(["python3", "-c", ALLOCATE], timeout=60)
        found = await box.limit_breaches()
        assert any(b.startswith("processes:") and "64" in b for b in found), found
        assert any(b.startswith("memory:") for b in found), found


@pytest.mark.docker
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_many_empty_files_in_a_container_end_its_command_at_the_storage_bound(tmp_path: Path,
                                                                                   anyio_backend: str) -> None:
    """On docker too: 20,000 empty files in an 8 MB container (2,048 entries) get its command killed by the 5-second
    check of its writable layer and the breach recorded; a command within the bound records none."""
    from pluginbench.environments._docker import DockerEnvironment
    from tests.environments.test_docker import _require_docker
    from tests.environments.test_docker import _spec as docker_spec

    _require_docker()
    many = 'mkdir -p /tmp/many && cd /tmp/many && i=0; while [ $i -lt 20000 ]; do : > f$i; i=$((i+1)); done; sleep 60'
    started = time.monotonic()
    async with DockerEnvironment().sandbox(docker_spec(tmp_path / "d", storage_mb=8)) as box:
        quiet = await box.exec(["sh", "-c", "echo ok"], timeout=30)
        assert quiet.exit_code == 0 and await box.limit_breaches() == []
        done = await box.exec(["sh", "-c", many], timeout=120)
        assert not done.timed_out and done.exit_code != 0
        found = await box.limit_breaches()
        assert any(b.startswith("disk:") and "8 MB" in b for b in found), found
    assert time.monotonic() - started < 60


async def test_resume_removes_the_cgroups_a_killed_worker_left(tmp_path: Path) -> None:
    """A sandbox cgroup of a run whose worker was killed (never cleaned up) is killed and removed by the
    backend's stop_left_running, and another run's cgroup is left alone."""
    require(_cgroups_usable(), "root and a writable cgroup file system")
    dead = Cgroup.create(f"pluginbench-deadrun{os.getpid()}-a-coding-x1", limits_of(None, None, None, None))
    other = Cgroup.create(f"pluginbench-liverun{os.getpid()}-a-coding-x1", limits_of(None, None, None, None))
    assert dead is not None and other is not None
    try:
        said = await LocalEnvironment(isolation="none", root=tmp_path).stop_left_running(f"deadrun{os.getpid()}")
        assert said and all(s.startswith("sandbox cgroup ") for s in said)
        assert not any(d.exists() for d in dead.dirs.values())
        assert all(d.exists() for d in other.dirs.values())
    finally:
        dead.remove()
        other.remove()


async def test_a_sparse_file_in_the_tree_is_never_exported(tmp_path: Path) -> None:
    """An agent that leaves 1.5 GiB of sparse files under a 1,024 MB storage bound gets no export and no
    patch, its attempt records resource_limit, and the attempt folder stays small."""
    import shutil

    from pluginbench.actors._pipeline import code_attempt
    from pluginbench.harnesses import FrozenTreatment, NopHarness
    from pluginbench.harnesses._port import NO_MODEL_USAGE, AgentRun
    from pluginbench.tasks import load_task

    class SparseHarness(NopHarness):
        """A stand-in agent (engine logic under test) that leaves a sparse file in its tree."""

        async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
            await ctx.launched(["sparse"])
            # Two files each under the bound (a bigger one is refused by RLIMIT_FSIZE) add up past it.
            await sandbox.exec(["python3", "-c", "[open(f'big{i}.bin', 'wb').truncate(768 * 1024 * 1024) for i in (1, 2)]"])
            return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE)

    root = tmp_path / "task"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "probe-tasks" / "add-numbers", root)
    toml = root / "task.toml"
    toml.write_text(toml.read_text().replace("[environment]\n", "[environment]\nstorage_mb = 1024\n"))
    task = load_task(root, "add-numbers")

    async def launched(argv: object) -> None:
        return None

    attempt = tmp_path / "attempt"
    result = await code_attempt(
        environment=LocalEnvironment(isolation=_isolation(), root=tmp_path / "boxes"), harness=SparseHarness(),
        run_id="r", attempt_id="a", task=task, starting_source=task.workspace_dir,
        treatment=FrozenTreatment("vanilla", None, (), (), (), "0"), attempt_dir=attempt, model=None, reasoning=None,
        seed=0, timeout=60, hidden=(), launched=launched,
    )
    assert result.patch is None and result.capture_error and result.capture_error.startswith("resource_limit: disk")
    assert result.run.resource_limit and "1024 MB" in result.run.resource_limit
    assert not (attempt / "export").exists() and not (attempt / "model.patch").exists()
    assert tree_bytes(attempt) < 10 * 1024 * 1024


@pytest.mark.parametrize(("anyio_backend", "backend"), [
    ("asyncio", "local"),
    pytest.param("asyncio", "docker", marks=pytest.mark.docker),
])
async def test_a_sparse_file_is_never_copied_out_of_a_sandbox(tmp_path: Path, anyio_backend: str, backend: str) -> None:
    """get() of a folder or file holding a sparse file past the storage bound (/logs/artifacts, /logs/verifier) is
    refused as a resource limit before anything is written on the host; a folder within the bound still copies."""
    from pluginbench.errors import ResourceLimitHit

    if backend == "docker":
        from pluginbench.environments._docker import DockerEnvironment
        from tests.environments.test_docker import _require_docker
        from tests.environments.test_docker import _spec as docker_spec

        _require_docker()
        env, spec = DockerEnvironment(), docker_spec(tmp_path / "d", storage_mb=8)
    else:
        env, spec = LocalEnvironment(isolation=_isolation(), root=tmp_path / "boxes"), _spec(tmp_path, storage_mb=8)
    async with env.sandbox(spec) as box:
        logs = box.paths.logs
        script = (f"import os; os.makedirs('{logs}/artifacts/deep', exist_ok=True); "
                  f"[open(f'{logs}/artifacts/deep/big{{i}}.bin', 'wb').truncate(6 * 1024 * 1024) for i in (1, 2)]; "
                  f"open('{logs}/verifier/reward.txt', 'w').write('1')")
        assert (await box.exec(["python3", "-c", script])).exit_code == 0
        await box.stop()
        for path in (f"{logs}/artifacts", f"{logs}/artifacts/deep"):
            with pytest.raises(ResourceLimitHit, match="storage"):
                await box.get(path, tmp_path / "out")
            assert tree_bytes(tmp_path / "out") < 1024 * 1024
        await box.get(f"{logs}/verifier", tmp_path / "verifier")
    assert (tmp_path / "verifier" / "reward.txt").read_text() == "1"


@pytest.mark.parametrize(("anyio_backend", "backend"), [
    ("asyncio", "local"),
    pytest.param("asyncio", "docker", marks=pytest.mark.docker),
])
async def test_a_commands_output_file_stops_at_the_storage_bound(tmp_path: Path, anyio_backend: str, backend: str) -> None:
    """A command (a verifier's test code, a process writing to the agent CLI's stdout) printing 24 MB into an
    8 MB-bound sandbox ends normally, and its host output file holds 8 MB and one line saying it was cut."""
    if backend == "docker":
        from pluginbench.environments._docker import DockerEnvironment
        from tests.environments.test_docker import _require_docker
        from tests.environments.test_docker import _spec as docker_spec

        _require_docker()
        env, spec = DockerEnvironment(), docker_spec(tmp_path / "d", storage_mb=8)
    else:
        env, spec = LocalEnvironment(isolation=_isolation(), root=tmp_path / "boxes"), _spec(tmp_path, storage_mb=8)
    out = tmp_path / "stdout.txt"
    async with env.sandbox(spec) as box:
        done = await box.exec(["sh", "-c", "head -c 25165824 /dev/zero; echo end >&2"], stdout_path=out,
                              stderr_path=tmp_path / "stderr.txt", timeout=120)
    assert done.exit_code == 0 and (tmp_path / "stderr.txt").read_text() == "end\n"
    data = out.read_bytes()
    assert len(data) < 9 * 1024 * 1024 and data.endswith(b"output cut at 8388608 bytes (the storage bound, storage_mb)]\n")
    assert data[:8 * 1024 * 1024] == bytes(8 * 1024 * 1024)


def test_only_a_cpu_cap_puts_a_sandbox_in_a_cpu_group_of_its_own() -> None:
    """Without a CPU cap a sandbox's cgroup has no cpu controller of its own; with one, the cap is its quota."""
    require(_cgroups_usable(), "a writable cgroup file system (root)")
    free = Cgroup.create(f"pluginbench-cpu-free-{os.getpid()}", limits_of(64, None, 16, None))
    capped = Cgroup.create(f"pluginbench-cpu-capped-{os.getpid()}", limits_of(64, 1.5, 16, None))
    assert free is not None and capped is not None
    try:
        if free.version == 1:
            assert set(free.dirs) == {"memory", "pids"} and set(capped.dirs) == {"memory", "pids", "cpu"}
            assert (capped.dirs["cpu"] / "cpu.cfs_quota_us").read_text().strip() == "150000"
        else:
            assert (capped.dirs[""] / "cpu.max").read_text().split()[0] == "150000"
    finally:
        free.remove()
        capped.remove()


def test_jobs_times_the_pids_limit_must_stay_under_pid_max() -> None:
    """jobs x the per-sandbox pids limit under pid_max fits; at or over it the reason names kernel.pid_max."""
    from pluginbench.environments._limits import pids_fit

    assert pids_fit(4, 4096, 32768) is None
    why = pids_fit(8, 4096, 32768)
    assert why is not None and "pid_max (32768" in why and "kernel.pid_max" in why and "lower jobs" in why
    assert pids_fit(1, 4096, 4096) is not None


@pytest.mark.anyio
async def test_local_capacity_check_refuses_jobs_over_pid_max(tmp_path: Path, monkeypatch) -> None:
    """The local backend's capacity check fails with the pid_max reason when jobs x pids do not fit."""
    from pluginbench.environments import _limits
    from pluginbench.environments._local_backend import LocalBackend
    from pluginbench.errors import EnvironmentFailure

    monkeypatch.setattr(_limits, "read_pid_max", lambda path=_limits.PID_MAX_FILE: 8192)
    await LocalBackend().check_capacity(None, 1, None, None)
    with pytest.raises(EnvironmentFailure, match="pid_max"):
        await LocalBackend().check_capacity(None, 2, None, None)


def test_an_output_file_keeps_at_most_the_output_bound_whatever_the_storage_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's output file keeps storage_mb or OUTPUT_FILE_BYTES, the smaller (the host parses such files, and
    the sandbox can write to them as fast as the host reads), and its cut line names the bound that cut it."""
    from pluginbench.environments import _limits

    assert _limits.output_file_cap(limits_of(None, None, None, 10240)) == _limits.OUTPUT_FILE_BYTES == 256 * 1024 ** 2
    assert _limits.output_file_cap(limits_of(None, None, None, 8)) == 8 * 1024 ** 2
    monkeypatch.setattr(_limits, "OUTPUT_FILE_BYTES", 1000)
    with _limits.CappedFile(tmp_path / "out", _limits.output_file_cap(limits_of(None, None, None, 8))) as fh:
        fh.write(b"x" * 1500)
    data = (tmp_path / "out").read_bytes()
    assert data.startswith(b"x" * 1000) and data.endswith(b"output cut at 1000 bytes (the output file bound)]\n")
