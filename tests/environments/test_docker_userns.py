"""Whose uid a docker sandbox's root is: the engine must remap users (or be rootless), else
runs refuse it unless ``environment.allow_host_root`` accepts the host's root.

The decision is pure and tested here without an engine; the real part reads
``/proc/self/uid_map`` inside a sandbox on the running engine (tools/start-docker.sh starts
it with ``--userns-remap=default``; an engine without remapping skips locally and fails
under CI)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from pluginbench.config import Evaluation
from pluginbench.config._load import frozen_builtins
from pluginbench.config._schema import EnvironmentConfig, TasksConfig
from pluginbench.environments import get_backend
from pluginbench.environments._docker import DockerEnvironment
from pluginbench.environments._docker_engine import EngineInfo, engine
from pluginbench.environments._docker_userns import (
    host_root_problem,
    host_root_warning,
    host_uid_of_root,
    probe_root_uid,
    user_namespace,
)
from pluginbench.errors import ConfigError, RunDirError
from tests._prereq import require

from .test_docker import _require_docker, _spec


@pytest.fixture
def anyio_backend() -> str:
    """aiodocker is asyncio-only."""
    return "asyncio"


def _ev(allow: bool = False) -> Evaluation:
    return Evaluation(tasks=TasksConfig(source="t", ids=["a"]),
                      environment=EnvironmentConfig(backend="docker", allow_host_root=allow))


def test_user_namespace_reads_the_engines_security_options() -> None:
    """``name=userns`` is a remapped engine, ``name=rootless`` a rootless one, seccomp alone the host's root."""
    assert user_namespace({"SecurityOptions": ["name=seccomp,profile=default", "name=userns"]}) == "userns"
    assert user_namespace({"SecurityOptions": ["name=seccomp,profile=builtin", "name=rootless",
                                               "name=cgroupns"]}) == "rootless"
    assert user_namespace({"SecurityOptions": ["name=seccomp,profile=default"]}) == "none"
    assert user_namespace({}) == "none"


def test_host_root_is_refused_unless_allowed() -> None:
    """Only an engine without remapping is refused; the opt-out turns it into a warning that names the fix."""
    problem = host_root_problem("none", allowed=False)
    assert problem is not None and "without user-namespace remapping" in problem
    assert host_root_problem("none", allowed=True) is None
    assert host_root_problem("userns", allowed=False) is None and host_root_problem("rootless", False) is None
    assert "--userns-remap" in (host_root_warning("none") or "") and host_root_warning("userns") is None


def test_host_uid_of_root_reads_the_mapping() -> None:
    """The identity map makes root the host's root; a remapped range names the host uid it starts at."""
    assert host_uid_of_root("         0          0 4294967295\n") == 0
    assert host_uid_of_root("         0     100000      65536\n") == 100000
    assert host_uid_of_root("      1000       1000          1\n") is None
    assert host_uid_of_root("") is None


def test_check_refuses_a_host_root_engine_with_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """check and run (the backend's host check) refuse an engine without remapping as bad input naming allow_host_root."""
    async def info(self: DockerEnvironment) -> EngineInfo:
        return EngineInfo("id", "20.10", "linux", cpus=8, memory_mb=16_000, user_namespace="none")

    monkeypatch.setattr(DockerEnvironment, "info", info)
    with pytest.raises(ConfigError) as err:
        get_backend("docker").check_host(_ev(), tmp_path / "evaluation.yaml", {})
    assert err.value.exit_code == 2 and err.value.field == "environment.allow_host_root"
    assert "user-namespace remapping" in str(err.value)
    assert "--userns-remap" in (err.value.fix or "") and "allow_host_root: true" in (err.value.fix or "")
    get_backend("docker").check_host(_ev(allow=True), tmp_path / "evaluation.yaml", {})  # accepted: warned only


def test_a_resume_on_a_host_root_engine_is_refused(tmp_path: Path) -> None:
    """A worker's runtime on an engine without remapping refuses the resume unless the run allowed it."""
    backend = get_backend("docker")
    with pytest.raises(RunDirError) as err:
        backend.refuse_runtime(_ev(), {"engine_user_namespace": "none"}, tmp_path / "events.jsonl")
    assert err.value.exit_code == 2 and "--userns-remap" in (err.value.fix or "")
    backend.refuse_runtime(_ev(allow=True), {"engine_user_namespace": "none"}, tmp_path / "events.jsonl")
    backend.refuse_runtime(_ev(), {"engine_user_namespace": "userns"}, tmp_path / "events.jsonl")
    backend.refuse_runtime(_ev(), {}, tmp_path / "events.jsonl")  # the engine did not answer: preparation says why


def test_a_resume_with_coding_left_checks_the_engine_it_would_code_on(tmp_path: Path) -> None:
    """check_runtime (run <run-dir> and the worker) refuses a resume whose engine lost its remapping; an allowed
    run accepts it and names the change."""
    from pluginbench.actors import check_runtime
    from pluginbench.events import RunStarted

    events = [RunStarted(pid=1, pgid=1, resumed=False, runtime={"backend": "docker", "engine_user_namespace": "userns"})]
    now = {"backend": "docker", "engine_user_namespace": "none"}
    with pytest.raises(RunDirError) as err:
        check_runtime(events, now, tmp_path / "events.jsonl", _ev())
    assert err.value.field == "run.started.runtime.engine_user_namespace"
    assert check_runtime(events, now, tmp_path / "events.jsonl", _ev(allow=True)) == ["engine_user_namespace: userns -> none"]


def test_the_opt_out_is_frozen_only_when_set() -> None:
    """A false allow_host_root leaves evaluation.json as it was; a true one is frozen with the run."""
    assert "allow_host_root" not in frozen_builtins(_ev())["environment"]
    assert frozen_builtins(_ev(allow=True))["environment"]["allow_host_root"] is True


@pytest.mark.docker
@pytest.mark.anyio
async def test_a_sandbox_root_is_not_the_host_root(tmp_path: Path) -> None:
    """Uid 0 inside a docker sandbox is an unprivileged host uid, and the engine's own word
    (SecurityOptions) agrees with the sandbox's /proc/self/uid_map."""
    base = _require_docker()
    env = DockerEnvironment()
    namespace = (await env.info()).user_namespace
    async with env.sandbox(_spec(tmp_path)) as sb:
        got = await sb.exec(["cat", "/proc/self/uid_map"], timeout=60)
    assert got.exit_code == 0, got.stderr
    host_uid = host_uid_of_root(got.stdout.decode())
    assert host_uid is not None
    assert (host_uid == 0) == (namespace == "none"), (namespace, got.stdout)
    async with engine() as docker:
        assert await probe_root_uid(docker, base) == host_uid
    require(namespace != "none", "a Docker engine with user-namespace remapping (tools/start-docker.sh)")
    assert host_uid != 0
    with anyio.fail_after(30):
        await DockerEnvironment().check()  # a remapped engine is accepted without the opt-out
