"""The environment contract: every backend's sandboxes must pass these tests.

A backend's test module subclasses :class:`EnvironmentContract` and provides the
``environment`` fixture; it may override :meth:`EnvironmentContract.make_spec` (docker
adds an ``image``), :meth:`EnvironmentContract.owned` and
:meth:`EnvironmentContract.assert_released` (what "everything is removed" means for it).
Every test builds its starting source from a small temp workspace, so nothing here
depends on the backend.
"""

from __future__ import annotations

import os
import re
import stat
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from pluginbench.config import Evaluation
from pluginbench.environments import (
    Backend,
    Environment,
    LeftRunning,
    Sandbox,
    SandboxSpec,
    backend_names,
    check_backend_config,
    get_backend,
)
from pluginbench.errors import ConfigError, EnvironmentFailure, ResourceLimitHit

WORKSPACE = {
    "README.md": ("hello\n", 0o644),
    "src/app.py": ("def add(a, b):\n    return a + b\n", 0o644),
    "run.sh": ("#!/bin/sh\necho run\n", 0o755),
}

SH = "/bin/sh"


def write_workspace(folder: Path, files: dict[str, tuple[str, int]] = WORKSPACE) -> Path:
    """Write ``files`` (relative path -> (text, mode)) under ``folder``."""
    for rel, (text, mode) in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)
    return folder


def beat(name: str) -> str:
    """Shell text of a loop that appends to ``$LOGS_DIR/artifacts/<name>`` forever."""
    return f'while :; do echo x >> "$LOGS_DIR/artifacts/{name}"; sleep 0.05; done'


async def size_of(sb: Sandbox, sandbox_path: str, scratch: Path) -> int:
    """Size of a sandbox file via ``get``, or -1 when it does not exist (yet)."""
    dest = scratch / f"size-{uuid.uuid4().hex}"
    try:
        await sb.get(sandbox_path, dest)
    except EnvironmentFailure:
        return -1
    return dest.stat().st_size


async def wait_for_file(sb: Sandbox, sandbox_path: str, scratch: Path, seconds: float = 60) -> None:
    """Wait until a sandbox file exists and is non-empty (a command started writing).

    The deadline is generous: on a loaded 2-core CI host starting two shells can take
    seconds; it bounds a hang, it does not time anything."""
    with anyio.fail_after(seconds):
        while await size_of(sb, sandbox_path, scratch) <= 0:
            await anyio.sleep(0.05)


async def assert_stopped_growing(sb: Sandbox, sandbox_path: str, scratch: Path, seconds: float = 20) -> None:
    """The heartbeat file exists and stops growing, so its writer is dead.

    A living writer appends every 0.05 s, so it never stays unchanged for a whole 0.6 s
    window; a dead one does. Waiting for such a window (up to ``seconds``) instead of
    comparing two fixed instants keeps a kill that lands late on a loaded machine from
    failing the test, while a process that outlived the kill still fails it."""
    first = await size_of(sb, sandbox_path, scratch)
    assert first > 0, "the heartbeat never started"
    with anyio.move_on_after(seconds):
        while True:
            await anyio.sleep(0.6)
            second = await size_of(sb, sandbox_path, scratch)
            if second == first:
                return
            first = second
    raise AssertionError("a process outlived the kill: its heartbeat is still growing")


class EnvironmentContract:
    """Backend-agnostic tests of :class:`pluginbench.environments.Environment`."""

    @pytest.fixture
    def environment(self) -> Environment:
        raise NotImplementedError("a backend's test class provides the environment fixture")

    def make_spec(self, tmp_path: Path, role: str = "coding", **kw: Any) -> SandboxSpec:
        """A spec over a fresh copy of :data:`WORKSPACE` unless ``workspace`` is given."""
        if kw.get("workspace") is None:
            kw["workspace"] = write_workspace(tmp_path / f"ws-{uuid.uuid4().hex[:8]}")
        kw.setdefault("run_id", "run1")
        kw.setdefault("attempt_id", "att1")
        kw.setdefault("task", "demo")
        return SandboxSpec(role=role, **kw)  # type: ignore[arg-type]

    def owned(self, sb: Sandbox) -> Any:
        """What ``sb`` owns on the host (a folder, a container id ...)."""
        raise NotImplementedError

    def assert_released(self, owned: Any) -> None:
        """Fail unless everything in ``owned`` is gone."""
        raise NotImplementedError

    async def sh(self, sb: Sandbox, script: str, **kw: Any):
        return await sb.exec([SH, "-c", script], **kw)

    # -- base commit -------------------------------------------------------------

    @pytest.mark.anyio
    async def test_base_commit_is_a_sha_that_depends_only_on_content(self, environment, tmp_path):
        """Equal starting content gives the same 40-hex base commit; other content another."""
        spec_a = self.make_spec(tmp_path, run_id="runA", attempt_id="a1")
        spec_b = self.make_spec(tmp_path, run_id="runB", attempt_id="b7")
        other = write_workspace(tmp_path / "other", {**WORKSPACE, "README.md": ("bye\n", 0o644)})
        spec_c = self.make_spec(tmp_path, workspace=other)
        async with environment.sandbox(spec_a) as a, environment.sandbox(spec_b) as b:
            assert re.fullmatch(r"[0-9a-f]{40}", a.base_commit)
            assert a.base_commit == b.base_commit
            head = await self.sh(a, "git rev-parse HEAD && git status --porcelain")
            assert head.exit_code == 0
            assert head.stdout.decode().split() == [a.base_commit]
        async with environment.sandbox(spec_c) as c:
            assert c.base_commit != a.base_commit

    # -- independence and exec -----------------------------------------------------

    @pytest.mark.anyio
    async def test_sandboxes_from_one_spec_are_independent(self, environment, tmp_path):
        """A file written in one sandbox is not visible in another made from the same spec."""
        spec = self.make_spec(tmp_path)
        async with environment.sandbox(spec) as a, environment.sandbox(spec) as b:
            wrote = await self.sh(
                a, 'echo mine > "$APP_DIR/only_a.txt" && echo l > "$LOGS_DIR/agent/x"'
            )
            assert wrote.exit_code == 0
            seen_a = await self.sh(a, 'test -f "$APP_DIR/only_a.txt"')
            seen_b = await self.sh(
                b, 'test -e "$APP_DIR/only_a.txt" || test -e "$LOGS_DIR/agent/x"'
            )
            assert seen_a.exit_code == 0
            assert seen_b.exit_code == 1

    @pytest.mark.anyio
    async def test_exec_returns_exit_code_and_output(self, environment, tmp_path):
        """exec reports the exit code and captures stdout and stderr separately."""
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            r = await self.sh(sb, "echo out; echo err >&2; exit 3")
            ok = await sb.exec(["cat", "src/app.py"])
        assert (r.exit_code, r.timed_out, r.stdout, r.stderr) == (3, False, b"out\n", b"err\n")
        assert r.seconds >= 0
        assert ok.exit_code == 0 and b"def add" in ok.stdout

    @pytest.mark.anyio
    async def test_exec_streams_to_host_files_and_feeds_stdin(self, environment, tmp_path):
        """With stdout_path/stderr_path output lands in host files; stdin bytes reach the command."""
        out, err = tmp_path / "out.log", tmp_path / "err.log"
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            r = await self.sh(
                sb, "cat; echo e >&2", stdin=b"piped\n", stdout_path=out, stderr_path=err
            )
        assert r.exit_code == 0 and r.stdout == b"" and r.stderr == b""
        assert out.read_bytes() == b"piped\n"
        assert err.read_bytes() == b"e\n"

    @pytest.mark.anyio
    async def test_exec_dialogue_answers_each_line_before_the_next_is_sent(self, environment, tmp_path):
        """A dialogue reads each stdout line as it comes and its replies reach the running command."""
        out = tmp_path / "dialogue.log"
        heard: list[bytes] = []

        async def talk(channel):
            for word in (b"one", b"two"):
                await channel.send(word + b"\n")
                heard.append(await channel.receive_line() or b"")
            await channel.send(b"bye\n")
            heard.append(await channel.receive_line() or b"")
            assert await channel.receive_line() is None

        script = 'while read l; do echo "got $l"; [ "$l" = bye ] && exit 4; done'
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            r = await self.sh(sb, script, dialogue=talk, stdout_path=out, timeout=120)
        assert heard == [b"got one", b"got two", b"got bye"]
        assert r.exit_code == 4 and out.read_bytes() == b"got one\ngot two\ngot bye\n"

    @pytest.mark.anyio
    async def test_env_has_sandbox_paths_and_no_host_secrets(
        self, environment, tmp_path, monkeypatch
    ):
        """Commands see APP_DIR and friends, cwd is the app, and nothing else from the host env."""
        monkeypatch.setenv("PLUGINBENCH_TEST_SECRET", "hunter2-do-not-leak")
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            r = await sb.exec(["env"], env={"EXTRA": "1"})
            pwd = await sb.exec(["pwd"])
            paths = sb.paths
        seen = dict(line.split("=", 1) for line in r.stdout.decode().splitlines() if "=" in line)
        assert {k: seen.get(k) for k in paths.env()} == paths.env()
        assert seen.get("EXTRA") == "1" and seen.get("LANG") == "C.UTF-8"
        assert "PLUGINBENCH_TEST_SECRET" not in seen
        assert b"hunter2" not in r.stdout
        assert pwd.stdout.decode().strip() == paths.app

    # -- deadlines and cancellation ------------------------------------------------

    @pytest.mark.anyio
    async def test_timeout_kills_the_tree_including_grandchildren(self, environment, tmp_path):
        """At the deadline the command and its grandchildren die and timed_out is reported."""
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            # The command alone would run 300 s: ending well before that proves the
            # deadline cut it, with room for a slow kill on a loaded host.
            script = f"sh -c '{beat('t.beat')}' & sleep 300"
            r = await self.sh(sb, script, timeout=1.5)
            assert r.timed_out is True and r.exit_code is None
            assert 1.4 <= r.seconds < 120
            await assert_stopped_growing(sb, f"{sb.paths.logs}/artifacts/t.beat", tmp_path)

    @pytest.mark.anyio
    async def test_timeout_of_one_command_spares_a_concurrent_one(self, environment, tmp_path):
        """A deadline kills only its own command's tree, not another command running beside it."""
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            results: dict[str, Any] = {}

            async def run(name: str, script: str, timeout: float) -> None:
                results[name] = await self.sh(sb, script, timeout=timeout)

            async with anyio.create_task_group() as tg:
                tg.start_soon(run, "slow", "sleep 3; echo done", 120)
                tg.start_soon(run, "short", "sleep 30", 0.5)
        assert results["short"].timed_out is True
        assert (results["slow"].exit_code, results["slow"].stdout) == (0, b"done\n")

    @pytest.mark.anyio
    async def test_cancelling_exec_kills_the_process(self, environment, tmp_path):
        """Cancelling a running exec kills its process tree before the cancellation propagates."""
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            finished = []
            beat_path = f"{sb.paths.logs}/artifacts/c.beat"
            async with anyio.create_task_group() as tg:

                async def run() -> None:
                    await self.sh(sb, f"sh -c '{beat('c.beat')}'")
                    finished.append(True)

                tg.start_soon(run)
                await wait_for_file(sb, beat_path, tmp_path)
                tg.cancel_scope.cancel()
            assert finished == []
            await assert_stopped_growing(sb, beat_path, tmp_path)

    # -- what each role sees ---------------------------------------------------------

    @pytest.mark.anyio
    async def test_tests_and_solution_exist_only_when_given(self, environment, tmp_path):
        """A coding sandbox has no tests/ or solution/; they appear only when the spec gives them."""
        tests = write_workspace(tmp_path / "t", {"test.sh": ("#!/bin/sh\nexit 0\n", 0o755)})
        solution = write_workspace(tmp_path / "s", {"solve.sh": ("#!/bin/sh\n", 0o755)})
        probe = 'test -e "$TESTS_DIR"; echo $?; test -e "$SOLUTION_DIR"; echo $?'
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            coding = await self.sh(sb, probe)
        async with environment.sandbox(self.make_spec(tmp_path, "verifier", tests=tests)) as sb:
            verifier = await self.sh(sb, probe + '; ls -l "$TESTS_DIR"')
        async with environment.sandbox(self.make_spec(tmp_path, solution=solution)) as sb:
            oracle = await self.sh(sb, probe + '; cat "$SOLUTION_DIR/solve.sh"')
        assert coding.stdout.split() == [b"1", b"1"]
        assert verifier.stdout.split()[:2] == [b"0", b"1"]
        assert b"-rwxr-xr-x" in verifier.stdout and b"test.sh" in verifier.stdout
        assert oracle.stdout.split()[:2] == [b"1", b"0"]

    @pytest.mark.anyio
    async def test_verifier_reward_is_readable_with_get(self, environment, tmp_path):
        """A reward the verifier writes to $LOGS_DIR/verifier/reward.txt comes out through get()."""
        tests = write_workspace(
            tmp_path / "t",
            {"test.sh": ('#!/bin/sh\necho 1 > "$LOGS_DIR/verifier/reward.txt"\n', 0o755)},
        )
        dest = tmp_path / "reward.txt"
        async with environment.sandbox(self.make_spec(tmp_path, "verifier", tests=tests)) as sb:
            r = await sb.exec([f"{sb.paths.tests}/test.sh"])
            assert r.exit_code == 0
            await sb.stop()
            await sb.get(f"{sb.paths.logs}/verifier/reward.txt", dest)
        assert dest.read_text() == "1\n"

    @pytest.mark.anyio
    async def test_put_copies_in_with_modes_and_get_copies_folders_out(self, environment, tmp_path):
        """put() delivers a host folder with its modes; get() brings a folder back out."""
        src = write_workspace(
            tmp_path / "cfg",
            {"bin/tool": ("#!/bin/sh\necho tool\n", 0o755), "a.txt": ("a\n", 0o600)},
        )
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            await sb.put(src, f"{sb.paths.home}/cfg")
            r = await self.sh(
                sb,
                '"$HOME/cfg/bin/tool" && mkdir -p "$LOGS_DIR/artifacts/d" && echo q > "$LOGS_DIR/artifacts/d/q"',
            )
            await sb.get(f"{sb.paths.logs}/artifacts", tmp_path / "art")
        assert (r.exit_code, r.stdout) == (0, b"tool\n")
        assert (tmp_path / "art" / "d" / "q").read_text() == "q\n"

    @pytest.mark.anyio
    async def test_get_refuses_a_planted_symlink_and_a_folder_over_the_storage_bound(self, environment, tmp_path):
        """get() never follows a reward.txt symlink the agent planted and refuses a folder whose sparse
        files add up past storage_mb, writing nothing on the host; a folder within the bound still copies."""
        async with environment.sandbox(self.make_spec(tmp_path, storage_mb=8)) as sb:
            r = await self.sh(sb, 'ln -s /etc/passwd "$LOGS_DIR/verifier/reward.txt" && mkdir -p "$LOGS_DIR/artifacts/big" '
                                  '&& cd "$LOGS_DIR/artifacts/big" && truncate -s 4M a b c && echo ok > "$LOGS_DIR/agent/ok"')
            assert r.exit_code == 0, r.stderr
            await sb.stop()
            with pytest.raises(EnvironmentFailure, match="symlink"):
                await sb.get(f"{sb.paths.logs}/verifier/reward.txt", tmp_path / "reward.txt")
            with pytest.raises(ResourceLimitHit, match="storage"):
                await sb.get(f"{sb.paths.logs}/artifacts", tmp_path / "artifacts")
            await sb.get(f"{sb.paths.logs}/agent", tmp_path / "agent")
        assert not os.path.lexists(tmp_path / "reward.txt") and not os.path.lexists(tmp_path / "artifacts")
        assert (tmp_path / "agent" / "ok").read_text() == "ok\n"

    @pytest.mark.anyio
    async def test_get_with_a_limit_refuses_what_is_over_it_before_writing(self, environment, tmp_path):
        """get(limit=) refuses a file whose apparent size (sparse included) is over the limit, though within
        storage_mb, and writes nothing; a file within the limit copies."""
        async with environment.sandbox(self.make_spec(tmp_path, storage_mb=64)) as sb:
            r = await self.sh(sb, 'cd "$LOGS_DIR/agent" && truncate -s 3M big && head -c 1000 /dev/zero > small')
            assert r.exit_code == 0, r.stderr
            await sb.stop()
            with pytest.raises(ResourceLimitHit):
                await sb.get(f"{sb.paths.logs}/agent/big", tmp_path / "big", limit=1024 * 1024)
            await sb.get(f"{sb.paths.logs}/agent/small", tmp_path / "small", limit=1024 * 1024)
        assert not os.path.lexists(tmp_path / "big") and (tmp_path / "small").stat().st_size == 1000

    @pytest.mark.anyio
    async def test_output_kept_in_memory_is_bounded(self, environment, tmp_path):
        """A command printing 24 MB without an output file comes back as its head and tail with a cut line."""
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            r = await self.sh(sb, "head -c 25165824 /dev/zero; echo end >&2", timeout=120)
        assert r.exit_code == 0 and r.stderr == b"end\n"
        assert len(r.stdout) < 17 * 1024 * 1024 and b"[pluginbench: output cut: 8388608 bytes" in r.stdout
        assert r.stdout.startswith(bytes(1024)) and r.stdout.endswith(bytes(1024))

    @pytest.mark.anyio
    async def test_no_file_can_grow_past_the_storage_bound(self, environment, tmp_path):
        """The kernel refuses a file bigger than storage_mb at once (fallocate and a sparse extend), so an
        agent cannot fill the host's disk in one call between two size checks."""
        async with environment.sandbox(self.make_spec(tmp_path, storage_mb=8)) as sb:
            r = await self.sh(sb, 'cd "$TMPDIR"; for c in "fallocate -l 9M fa" "truncate -s 9M tr" "fallocate -l 7M ok"; '
                                  'do if sh -c "$c" 2>/dev/null; then echo grew; else echo refused; fi; done')
        assert r.stdout.split() == [b"refused", b"refused", b"grew"], (r.stdout, r.stderr)

    # -- stop, export, cleanup -------------------------------------------------------

    @pytest.mark.anyio
    async def test_export_needs_stop_and_keeps_files_and_modes(self, environment, tmp_path):
        """export_workspace refuses before stop(); after it, the working tree comes out with modes and without .git."""
        dest = tmp_path / "export"
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            await self.sh(
                sb,
                "printf 'x' > new.sh && chmod 755 new.sh && mkdir -p d && echo y > d/y && rm README.md",
            )
            with pytest.raises(EnvironmentFailure):
                await sb.export_workspace(dest)
            await sb.stop()
            with pytest.raises(EnvironmentFailure):
                await sb.exec(["true"])
            await sb.export_workspace(dest)
        got = {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()}
        assert got == {"new.sh", "d/y", "src/app.py", "run.sh"}
        assert stat.S_IMODE((dest / "new.sh").stat().st_mode) == 0o755
        assert stat.S_IMODE((dest / "src/app.py").stat().st_mode) == 0o644
        assert (dest / "new.sh").read_text() == "x"

    @pytest.mark.anyio
    async def test_export_copies_symlinks_as_symlinks(self, environment, tmp_path):
        """A symlink the agent made is exported as a symlink and never followed."""
        dest = tmp_path / "export"
        async with environment.sandbox(self.make_spec(tmp_path)) as sb:
            r = await self.sh(sb, "ln -s /etc/hostname host_link && ln -s src/app.py rel_link")
            assert r.exit_code == 0
            await sb.stop()
            await sb.export_workspace(dest)
        assert os.readlink(dest / "host_link") == "/etc/hostname"
        assert os.readlink(dest / "rel_link") == "src/app.py"

    @pytest.mark.anyio
    async def test_everything_is_removed_after_the_context_exits(self, environment, tmp_path):
        """What a sandbox owns, running processes included, is gone after a normal exit and after an exception."""
        spec = self.make_spec(tmp_path)
        owned: list[Any] = []

        async def use(fail: bool) -> None:
            async with anyio.create_task_group() as tg, environment.sandbox(spec) as sb:
                tg.start_soon(partial(self.sh, sb, f"sh -c '{beat('r.beat')}'"))
                await wait_for_file(sb, f"{sb.paths.logs}/artifacts/r.beat", tmp_path)
                owned.append(self.owned(sb))
                if fail:
                    raise RuntimeError("boom")

        await use(fail=False)
        self.assert_released(owned[0])
        with pytest.raises(ExceptionGroup) as raised:  # the task group wraps it
            await use(fail=True)
        assert raised.group_contains(RuntimeError, match="boom")
        self.assert_released(owned[1])

    @pytest.mark.anyio
    async def test_git_commit_works_with_the_spec_identity(self, environment, tmp_path):
        """An agent can commit inside the app repo and the commit carries the spec's identity."""
        spec = self.make_spec(tmp_path, git_identity=("Test Agent", "test@agent.invalid"))
        async with environment.sandbox(spec) as sb:
            r = await self.sh(
                sb,
                "echo z > z.txt && git add z.txt && git commit -q -m agent && git log -1 --format='%an <%ae> %P'",
            )
            base = sb.base_commit
        assert r.exit_code == 0, r.stderr
        assert r.stdout.decode().strip() == f"Test Agent <test@agent.invalid> {base}"


class BackendContract(EnvironmentContract):
    """The backend port's contract, on top of the environment contract: every registered
    backend (built-in or a toy registered by a test) passes it.

    A subclass sets :attr:`backend_name` (and :meth:`backend_settings` when the backend
    takes an ``environment.settings`` block), provides ``owned``/``assert_released`` as
    for the environment contract, and may override the ``environment`` fixture (by
    default the backend's own :meth:`Backend.make` for a throwaway run id).
    """

    backend_name: str = ""

    def backend_settings(self, tmp_path: Path) -> dict[str, Any]:
        """A valid ``environment.settings`` block for this backend ({} when it takes none)."""
        return {}

    def evaluation(self, tmp_path: Path, **environment: Any) -> Evaluation:
        """A minimal evaluation selecting this backend (tasks are never read here)."""
        env = {"backend": self.backend_name, "settings": self.backend_settings(tmp_path), **environment}
        return msgspec.convert({"tasks": {"source": str(tmp_path), "ids": ["demo"]},
                                "runner": {"harness": "nop"}, "environment": env}, Evaluation)

    @pytest.fixture
    def backend(self) -> Backend:
        return get_backend(self.backend_name)

    @pytest.fixture
    def environment(self, backend: Backend, tmp_path: Path) -> Environment:
        return backend.make(self.evaluation(tmp_path), f"contract-{uuid.uuid4().hex[:8]}")

    # -- the registry and the config ---------------------------------------------

    def test_registered_under_its_own_name(self, backend: Backend, tmp_path: Path) -> None:
        """The registry returns the same adapter for its name, lists it, and the environment
        it makes for a run carries that name."""
        assert backend.name == self.backend_name and self.backend_name in backend_names()
        assert get_backend(self.backend_name) is backend
        made = backend.make(self.evaluation(tmp_path), "contract-run")
        assert made.name == self.backend_name

    def test_config_validation_goes_through_the_backend(self, backend: Backend, tmp_path: Path) -> None:
        """Its valid settings pass config validation; an unknown settings key is a config
        error (exit 2) naming a field under environment.settings and a fix."""
        config = tmp_path / "evaluation.yaml"
        assert check_backend_config(self.evaluation(tmp_path), config) is backend
        bad = self.evaluation(tmp_path)
        bad = msgspec.structs.replace(bad, environment=msgspec.structs.replace(
            bad.environment, settings={**bad.environment.settings, "no_such_setting": 1}))
        with pytest.raises(ConfigError) as refused:
            check_backend_config(bad, config)
        assert refused.value.exit_code == 2 and refused.value.file == str(config)
        assert (refused.value.field or "").startswith("environment.settings") and refused.value.fix

    def test_identity_parts_are_deterministic_text(self, backend: Backend, tmp_path: Path) -> None:
        """The isolation label and the readiness-cache key parts are non-empty text, equal
        for equal settings, and the key names the backend."""
        ev = self.evaluation(tmp_path)
        label = backend.isolation(ev)
        assert isinstance(label, str) and label and label == backend.isolation(ev)
        key = backend.readiness_key(ev)
        assert key == backend.readiness_key(ev) and all(isinstance(p, str) and p for p in key)
        assert self.backend_name in key
        assert isinstance(backend.isolated(ev), bool)

    # -- capacity and what a killed worker left ------------------------------------

    @pytest.mark.anyio
    async def test_one_job_fits(self, backend: Backend, environment: Environment) -> None:
        """The capacity check passes for one sandbox without limits."""
        await backend.check_capacity(environment, 1, None, None)

    @pytest.mark.anyio
    async def test_a_run_that_never_ran_left_nothing(self, backend: Backend, environment: Environment) -> None:
        """Status asks the backend: a run id that never ran has nothing left running, and
        stopping what it left stops nothing."""
        run_id = f"never-{uuid.uuid4().hex[:10]}"
        left = await anyio.to_thread.run_sync(backend.left_running, run_id)
        assert isinstance(left, LeftRunning)
        assert (left.containers, left.folders, left.stop_command) == ([], [], None)
        assert await environment.stop_left_running(run_id) == []

    @pytest.mark.anyio
    async def test_a_live_sandbox_is_listed_until_it_ends(self, backend: Backend, environment: Environment,
                                                          tmp_path: Path) -> None:
        """While a sandbox of a run is alive (what a killed worker leaves), ``left_running``
        lists something for that run; once the sandbox has ended, nothing."""
        run_id = f"live-{uuid.uuid4().hex[:10]}"
        async with environment.sandbox(self.make_spec(tmp_path, run_id=run_id, attempt_id="a-live")) as sb:
            assert (await self.sh(sb, "true", timeout=120)).exit_code == 0
            left = await anyio.to_thread.run_sync(backend.left_running, run_id)
            assert left.containers or left.folders, "a live sandbox of the run is not listed"
        after = await anyio.to_thread.run_sync(backend.left_running, run_id)
        assert (after.containers, after.folders) == ([], [])
