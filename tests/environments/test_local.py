"""The local backend: the environment contract with and without bubblewrap, plus local rules."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import tempfile
from pathlib import Path

import anyio
import pytest

from pluginbench.environments import LocalEnvironment, _proctree, bwrap_available, make_environment
from pluginbench.environments._bwrap import (
    ETC_COPY_LIMIT,
    Bind,
    Hidden,
    TopEntry,
    bwrap_args,
    etc_copies,
    host_etc,
    workdir_conflict,
)
from pluginbench.environments._gitbase import BASE_DATE, BASE_IDENTITY, BASE_MESSAGE
from pluginbench.errors import ConfigError, EnvironmentFailure
from tests._prereq import require

from .contract import (
    BackendContract,
    EnvironmentContract,
    assert_stopped_growing,
    beat,
    wait_for_file,
    write_workspace,
)


def _require_bwrap() -> None:
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")


def _processes_of(root: Path, app_dir: str) -> set[int]:
    """Live processes started in ``root`` (bwrap's host working folder; its argv names no host
    path) or carrying its APP_DIR (unisolated)."""
    found = (
        _proctree.marked(f"APP_DIR={app_dir}".encode()) if app_dir.startswith(str(root)) else set()
    )
    for name in os.listdir("/proc"):
        try:
            if os.readlink(f"/proc/{name}/cwd") == str(root):
                found.add(int(name))
        except (OSError, ValueError):
            continue
    return _proctree.alive(found)


class _LocalContract(BackendContract):
    """The backend and environment contracts on the local backend, its environment made
    by the backend itself; sandboxes (and what ``left_running`` looks at) go to a private
    temp folder so the release check can see that nothing is left in it."""

    backend_name = "local"
    isolation = "none"

    def evaluation(self, tmp_path, **environment):
        return super().evaluation(tmp_path, **{"isolation": self.isolation, **environment})

    @pytest.fixture
    def environment(self, backend, tmp_path, monkeypatch):
        boxes = tmp_path / "boxes"
        boxes.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(boxes))
        env = backend.make(self.evaluation(tmp_path), "contract-run")
        assert env.isolation == self.isolation
        return env

    def owned(self, sb):
        assert _processes_of(sb.root, sb.paths.app), "the sandbox should show live processes here"
        return sb.root, sb.paths.app

    def assert_released(self, owned):
        root, app_dir = owned
        assert not os.path.lexists(root), f"{root} was not removed"
        # The starting source's kept base repository (environments._gitbase_template) is the
        # process's, not the sandbox's: it stays beside the sandboxes until the temp root goes.
        left = [n for n in os.listdir(root.parent) if not n.startswith("pluginbench-gitbase-")]
        assert not left, f"the sandbox parent folder holds leftovers: {left}"
        assert _processes_of(root, app_dir) == set(), "processes of the sandbox survived"


class TestLocalBubblewrap(_LocalContract):
    """The contracts with bubblewrap isolation."""

    isolation = "bubblewrap"

    @pytest.fixture(autouse=True)
    def _bwrap(self):
        _require_bwrap()


class TestLocalUnisolated(_LocalContract):
    """The contracts with plain host processes."""


def _spec(tmp_path: Path, **kw):
    return EnvironmentContract().make_spec(tmp_path, **kw)


@pytest.fixture
def visible_secret():
    """A folder with a secret file in a host location outside the sandbox folders (/var/tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="pluginbench-test-secret-", dir="/var/tmp"))
    folder.chmod(0o755)  # a tool folder is readable by the sandbox's own uid
    (folder / "secret.txt").write_text("top secret\n")
    yield folder
    shutil.rmtree(folder)


# -- bubblewrap only -------------------------------------------------------------------


@pytest.mark.anyio
async def test_host_folders_are_absent_unless_named_read_only(tmp_path, visible_secret):
    """Default deny: a host folder is absent inside unless spec.readonly names it, and then it cannot be written."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    read = f"cat {visible_secret}/secret.txt; test -e /var; echo var=$?; test -e /srv; echo srv=$?"
    async with env.sandbox(_spec(tmp_path)) as sb:
        denied = await sb.exec(["sh", "-c", read])
    async with env.sandbox(_spec(tmp_path, readonly=(visible_secret,))) as sb:
        named = await sb.exec(["sh", "-c", read])
        write = await sb.exec(["touch", str(visible_secret / "new.txt")])
    assert b"top secret" not in denied.stdout
    assert b"var=1" in denied.stdout and b"srv=1" in denied.stdout
    assert b"top secret" in named.stdout
    assert write.exit_code != 0 and not (visible_secret / "new.txt").exists()


@pytest.mark.anyio
async def test_hidden_paths_under_a_read_only_folder_are_empty_inside(tmp_path, visible_secret):
    """A host path listed in spec.hidden that lies inside a read-only tool folder is empty inside."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    (visible_secret / "cache").mkdir()
    (visible_secret / "cache" / "entry.txt").write_text("cached answer\n")
    read = f"ls {visible_secret}/cache; cat {visible_secret}/cache/entry.txt"
    spec = _spec(tmp_path, readonly=(visible_secret,), hidden=(visible_secret / "cache", visible_secret / "secret.txt"))
    async with env.sandbox(spec) as sb:
        hidden = await sb.exec(["sh", "-c", read])
        file_hidden = await sb.exec(["cat", str(visible_secret / "secret.txt")])
    assert b"cached answer" not in hidden.stdout and hidden.exit_code != 0
    assert file_hidden.stdout == b""


@pytest.mark.anyio
async def test_bubblewrap_root_is_read_only_and_capabilities_dropped(tmp_path, visible_secret):
    """Inside bubblewrap /usr cannot be written and no capability lets a process unmount a hidden path."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    marker = Path("/usr") / f"pluginbench-test-{os.getpid()}"
    async with env.sandbox(_spec(tmp_path, readonly=(visible_secret,), hidden=(visible_secret,))) as sb:
        write = await sb.exec(["touch", str(marker)])
        caps = await sb.exec(["grep", "CapEff", "/proc/self/status"])
        umount = await sb.exec(
            ["sh", "-c", f"umount {visible_secret}; cat {visible_secret}/secret.txt"]
        )
    assert write.exit_code != 0 and not marker.exists()
    assert caps.stdout.split()[-1].strip(b"0") == b""
    assert b"top secret" not in umount.stdout


@pytest.mark.anyio
async def test_tools_python_git_and_dns_work_inside(tmp_path):
    """The default-deny root still runs python, git, Debian alternatives (awk) and resolves localhost."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    script = "python3 -c 'import ssl; print(1 + 1)'; git -C /app log --oneline | wc -l; awk 'BEGIN{print 7}'; getent hosts localhost"
    async with env.sandbox(_spec(tmp_path)) as sb:
        r = await sb.exec(["sh", "-c", script])
    lines = r.stdout.decode().split("\n")
    assert r.exit_code == 0, r.stderr
    assert lines[:3] == ["2", "1", "7"] and "localhost" in lines[3]


@pytest.mark.anyio
async def test_bubblewrap_app_is_the_workspace_at_workdir(tmp_path):
    """The workspace is /app by default and spec.workdir moves it; other host temp files are not visible."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    async with env.sandbox(_spec(tmp_path)) as sb:
        app = await sb.exec(["sh", "-c", "pwd; ls /app; ls /tmp | wc -l"])
        assert sb.isolated is True and sb.paths.app == "/app"
    async with env.sandbox(_spec(tmp_path, workdir="/workspace")) as sb:
        moved = await sb.exec(["sh", "-c", 'pwd; echo "$APP_DIR"; test -e /app; echo $?'])
    lines = app.stdout.decode().split()
    assert (
        lines[0] == "/app"
        and {"README.md", "run.sh", "src"} <= set(lines[1:-1])
        and lines[-1] == "0"
    )
    assert moved.stdout.decode().split() == ["/workspace", "/workspace", "1"]


@pytest.mark.anyio
async def test_every_sandbox_has_only_loopback(tmp_path):
    """A bubblewrap sandbox has its own network namespace with no interface but lo."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    async with env.sandbox(_spec(tmp_path)) as sb:
        r = await sb.exec(["cat", "/proc/net/dev"])
    names = {line.split(":")[0].strip() for line in r.stdout.decode().splitlines()[2:]}
    assert names == {"lo"}


@pytest.mark.anyio
async def test_etc_inside_is_the_hosts_allowed_files_and_read_only(tmp_path):
    """Inside bubblewrap /etc/passwd reads as the host's, and neither it nor /etc itself can be written."""
    _require_bwrap()
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    async with env.sandbox(_spec(tmp_path)) as sb:
        r = await sb.exec(["sh", "-c", "cat /etc/passwd; echo x >> /etc/passwd || echo refused; "
                                 "touch /etc/new || echo refused; ls /etc/shadow || echo absent"])
    assert r.stdout.decode().split("\n")[-4:] == ["refused", "refused", "absent", ""], (r.stdout, r.stderr)
    assert r.stdout.startswith(Path("/etc/passwd").read_bytes())


def test_bwrap_layout_is_default_deny():
    """The argv starts from an empty root, binds only system folders, allowed /etc entries and tool folders
    read-only, keeps top symlinks, and hides only paths a bind would show."""
    top = [
        TopEntry("bin", False, "usr/bin"),
        TopEntry("home", True, None),
        TopEntry("opt", True, None),
        TopEntry("srv", True, None),
        TopEntry("usr", True, None),
        TopEntry("var", True, None),
        TopEntry("tmp", True, None),
        TopEntry("work", True, None),
        TopEntry(".dockerenv", False, None),
    ]
    args = bwrap_args(
        top,
        [Bind("/h/app", "/app"), Bind("/h/logs", "/logs")],
        [
            Hidden("/srv/runs", True),
            Hidden("/work/co/node_modules/cache", True),
            Hidden("/usr/secret.key", False),
        ],
        chdir="/app",
        readonly=["/work/co/node_modules"],
        etc=["passwd", "ssl"],
        proc_entries=["/proc/sys", "/proc/kcore"],
        etc_files=[("passwd", 9)],
    )
    joined = " ".join(args)
    assert args[:2] == ["--tmpfs", "/"]
    assert "--symlink usr/bin /bin" in joined and "--ro-bind /usr /usr" in joined
    assert "--file 9 /etc/passwd" in joined and "--ro-bind /etc/ssl /etc/ssl" in joined
    assert "--ro-bind /etc/passwd" not in joined
    # /etc is a fresh tmpfs, made read-only after every mount under it
    assert [args[i - 1] for i, a in enumerate(args) if a == "/etc"] == ["--tmpfs", "--remount-ro"]
    assert joined.index("--remount-ro /etc") > joined.index("--ro-bind /dev/null /usr/secret.key")
    for absent in ("/srv", "/opt", "/var", "/home", "/work", "/.dockerenv", "/tmp"):
        assert absent not in args, absent
    assert "--bind /h/app /app" in joined
    assert "--ro-bind /work/co/node_modules /work/co/node_modules" in joined
    assert joined.index("--bind /h/logs /logs") < joined.index("--ro-bind /work/co/node_modules")
    assert "--tmpfs /work/co/node_modules/cache" in joined
    assert "/srv/runs" not in args  # nothing of /srv exists inside anyway
    assert "--ro-bind /dev/null /usr/secret.key" in joined
    assert args.count("--unshare-net") == 1 and args[-2:] == ["--chdir", "/app"]
    assert "--unshare-net" in bwrap_args(top, [], [], chdir="/")


def test_bwrap_layout_makes_proc_sys_read_only_and_binds_only_the_egress_folder():
    """Over the fresh /proc, /proc/sys is a read-only bind and kcore is /dev/null (only the entries the host
    has); the egress folder, when given, is bound read-only at /run/pluginbench."""
    top = [TopEntry("usr", True, None)]
    args = bwrap_args(top, [], [], chdir="/", proc_entries=["/proc/sys", "/proc/kcore"], egress_dir="/tmp/pb-egress-x")
    joined = " ".join(args)
    assert joined.index("--proc /proc") < joined.index("--ro-bind /proc/sys /proc/sys")
    assert "--ro-bind /dev/null /proc/kcore" in joined and "/proc/sysrq-trigger" not in args
    assert "--ro-bind /tmp/pb-egress-x /run/pluginbench" in joined
    assert "/run/pluginbench" not in bwrap_args(top, [], [], chdir="/")


def test_host_etc_keeps_only_the_allowed_entries(tmp_path):
    """Of /etc only users, name resolution, certificates, linker, alternatives and runtime config are taken."""
    for name in ("passwd", "shadow", "ssh", "python3.11", "java-17-openjdk", "npmrc", "resolv.conf", "pip.conf"):
        (tmp_path / name).mkdir()
    assert host_etc(str(tmp_path)) == ["java-17-openjdk", "passwd", "python3.11", "resolv.conf"]


def test_host_etc_matches_each_allowed_entry_as_the_shell_pattern_it_is_written_as(tmp_path):
    """Every ETC_ENTRIES pattern is a name or a name ending in one '*', and host_etc keeps exactly the names fnmatch would keep (case, suffixes and the bare prefix included)."""
    import fnmatch

    from pluginbench.environments._bwrap import ETC_ENTRIES

    assert all("*" not in p[:-1] and not set(p) & set("?[]") for p in ETC_ENTRIES)
    names = {"passwd", "passwd-", "PASSWD", "xpasswd", "python3", "python", "python3.12", "java-", "java",
             "ssl", "ssl.bak", "hosts", "hosts.allow", "magic", "magic.mime", "shadow", "resolv.conf"}
    for name in names:
        (tmp_path / name).mkdir()
    expected = sorted(n for n in names if any(fnmatch.fnmatchcase(n, p) for p in ETC_ENTRIES))
    assert host_etc(str(tmp_path)) == expected
    assert "python3" in expected and "java-" in expected and "passwd-" not in expected


def test_etc_copies_take_only_small_readable_regular_files(tmp_path):
    """Allowed /etc files become copies (through a symlink too); folders, FIFOs and oversized files stay binds."""
    (tmp_path / "passwd").write_bytes(b"root:x:0:0::/root:/bin/sh\n")
    (tmp_path / "real-os-release").write_bytes(b"ID=debian\n")
    (tmp_path / "os-release").symlink_to("real-os-release")
    (tmp_path / "ssl").mkdir()
    os.mkfifo(tmp_path / "hosts")
    (tmp_path / "services").write_bytes(b"x" * (ETC_COPY_LIMIT + 1))
    names = ["hosts", "missing", "os-release", "passwd", "services", "ssl"]
    assert etc_copies(names, str(tmp_path)) == {"os-release": b"ID=debian\n", "passwd": b"root:x:0:0::/root:/bin/sh\n"}


def test_workdir_must_not_sit_under_a_read_only_host_folder():
    """A workdir under a bound system folder, on a sandbox mount or over a tool folder is refused; /srv is free."""
    top = [TopEntry("usr", True, None), TopEntry("srv", True, None)]
    assert workdir_conflict("/workspace", top) is None
    assert workdir_conflict("/app", top) is None
    assert workdir_conflict("/srv/app", top) is None
    assert workdir_conflict("/usr/src/app", top) is not None
    assert workdir_conflict("/logs", top) is not None
    assert workdir_conflict("/etc/app", top) is not None
    assert workdir_conflict("relative", top) is not None
    assert workdir_conflict("/work", top, ["/work/co/node_modules"]) is not None


# -- both modes ------------------------------------------------------------------------


def _both(tmp_path: Path, isolation: str) -> LocalEnvironment:
    if isolation == "bubblewrap":
        _require_bwrap()
    return LocalEnvironment(isolation, root=tmp_path / "boxes")  # type: ignore[arg-type]


MODES = pytest.mark.parametrize("isolation", ["bubblewrap", "none"])


@MODES
@pytest.mark.anyio
async def test_base_commit_matches_an_independently_hashed_commit(tmp_path, isolation):
    """The base commit of an empty workspace is the SHA-1 of the fixed commit object, so it is machine-independent."""
    empty = tmp_path / "empty"
    empty.mkdir()
    tree = hashlib.sha1(b"tree 0\0").hexdigest()
    stamp = "946684800 +0000"
    assert BASE_DATE == "2000-01-01T00:00:00Z"
    who = f"{BASE_IDENTITY[0]} <{BASE_IDENTITY[1]}> {stamp}"
    body = f"tree {tree}\nauthor {who}\ncommitter {who}\n\n{BASE_MESSAGE}\n".encode()
    expected = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
    async with _both(tmp_path, isolation).sandbox(_spec(tmp_path, workspace=empty)) as sb:
        exclude = await sb.exec(["cat", ".git/info/exclude"])
        assert sb.base_commit == expected
    assert exclude.stdout == b".pytest_cache/\n__pycache__/\n"


@pytest.mark.anyio
async def test_base_commit_equals_the_patch_recipe(tmp_path):
    """A sandbox's base commit equals the BASE the patch maker computes for the same starting source."""
    from pluginbench.actors._patch import base_commit_of

    ws = write_workspace(tmp_path / "ws")
    async with _both(tmp_path, "none").sandbox(_spec(tmp_path, workspace=ws)) as sb:
        assert sb.base_commit == base_commit_of(ws)


@MODES
@pytest.mark.anyio
async def test_sandbox_folder_is_named_after_run_attempt_and_role(tmp_path, isolation):
    """The sandbox folder is pluginbench-<run>-<attempt>-<role>-XXXX under root; unisolated paths point into it."""
    async with _both(tmp_path, isolation).sandbox(
        _spec(tmp_path, run_id="r/9", attempt_id="a2", role="verifier")
    ) as sb:
        assert sb.root.parent == tmp_path / "boxes"
        assert sb.root.name.startswith("pluginbench-r_9-a2-verifier-")
        if isolation == "none":
            assert sb.isolated is False and sb.paths.app == str(sb.root / "app")
            assert sb.paths.home == str(sb.root / "home")


@MODES
@pytest.mark.anyio
async def test_get_refuses_to_follow_a_planted_symlink(tmp_path, isolation):
    """A reward file that is a symlink to a host file is refused, not read."""
    secret = tmp_path / "host-secret"
    secret.write_text("host data\n")
    async with _both(tmp_path, isolation).sandbox(_spec(tmp_path)) as sb:
        await sb.exec(["ln", "-s", str(secret), f"{sb.paths.logs}/verifier/reward.txt"])
        await sb.exec(["ln", "-s", str(tmp_path), f"{sb.paths.logs}/verifier/dir"])
        with pytest.raises(EnvironmentFailure):
            await sb.get(f"{sb.paths.logs}/verifier/reward.txt", tmp_path / "out1")
        with pytest.raises(EnvironmentFailure):
            await sb.get(f"{sb.paths.logs}/verifier/dir/host-secret", tmp_path / "out2")
    assert not (tmp_path / "out1").exists() and not (tmp_path / "out2").exists()


@MODES
@pytest.mark.anyio
async def test_put_refuses_outside_paths_and_planted_symlinks(tmp_path, isolation):
    """put() refuses paths outside the sandbox folders and never writes through a symlink the agent planted."""
    outside = tmp_path / "outside"
    outside.mkdir()
    payload = tmp_path / "payload.txt"
    payload.write_text("p\n")
    async with _both(tmp_path, isolation).sandbox(_spec(tmp_path)) as sb:
        await sb.exec(["ln", "-s", str(outside), f"{sb.paths.logs}/agent/evil"])
        for target in (
            "/etc/pluginbench-x",
            f"{sb.paths.app}/../../x",
            f"{sb.paths.logs}/agent/evil/x",
        ):
            with pytest.raises(EnvironmentFailure):
                await sb.put(payload, target)
        await sb.put(payload, f"{sb.paths.app}/ok/p.txt")
        ok = await sb.exec(["cat", "ok/p.txt"])
    assert list(outside.iterdir()) == [] and ok.stdout == b"p\n"


@MODES
@pytest.mark.anyio
async def test_timeout_kills_a_grandchild_that_started_its_own_session(tmp_path, isolation):
    """A grandchild that calls setsid is still killed at the deadline."""
    async with _both(tmp_path, isolation).sandbox(_spec(tmp_path)) as sb:
        # 5 s so the grandchild has surely started beating before the deadline on a loaded CI.
        r = await sb.exec(["sh", "-c", f"setsid sh -c '{beat('s.beat')}' & sleep 30"], timeout=5)
        assert r.timed_out
        await assert_stopped_growing(sb, f"{sb.paths.logs}/artifacts/s.beat", tmp_path)


@pytest.mark.anyio
async def test_unisolated_stop_kills_background_processes_of_finished_commands(tmp_path):
    """A daemon left behind by a finished command (own session, reparented) dies at stop()."""
    async with _both(tmp_path, "none").sandbox(_spec(tmp_path)) as sb:
        r = await sb.exec(["sh", "-c", f"setsid sh -c '{beat('d.beat')}' >/dev/null 2>&1 &"])
        assert r.exit_code == 0
        path = f"{sb.paths.logs}/artifacts/d.beat"
        await wait_for_file(sb, path, tmp_path)
        await anyio.sleep(0.3)
        await sb.stop()
        await assert_stopped_growing(sb, path, tmp_path)


# -- check and selection -----------------------------------------------------------------


def _path_with(tmp_path: Path, fake_bwrap: str | None) -> str:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git").symlink_to(shutil.which("git"))
    if fake_bwrap is not None:
        (bindir / "bwrap").write_text(fake_bwrap)
        (bindir / "bwrap").chmod(0o755)
    return str(bindir)


@pytest.mark.anyio
async def test_check_fails_when_bubblewrap_is_required_but_missing(tmp_path, monkeypatch):
    """isolation=bubblewrap fails check() without bwrap on PATH; auto and none fall back to unisolated."""
    monkeypatch.setenv("PATH", _path_with(tmp_path, None))
    with pytest.raises(EnvironmentFailure, match="bwrap"):
        await LocalEnvironment("bubblewrap").check()
    await LocalEnvironment("auto").check()
    assert LocalEnvironment("auto").isolated is False


@pytest.mark.anyio
async def test_check_fails_when_bwrap_cannot_create_a_sandbox(tmp_path, monkeypatch):
    """A bwrap that exits non-zero on the probe is unusable, so isolation=bubblewrap fails check()."""
    monkeypatch.setenv("PATH", _path_with(tmp_path, "#!/bin/sh\nexit 1\n"))
    with pytest.raises(EnvironmentFailure, match="cannot create a sandbox"):
        await LocalEnvironment("bubblewrap").check()


def test_make_environment_picks_local_and_refuses_unknown(tmp_path):
    """make_environment("local") builds a LocalEnvironment and an unknown backend is a config error (exit 2) listing the registered ones."""
    env = make_environment("local", isolation="none", root=tmp_path)
    assert isinstance(env, LocalEnvironment) and env.name == "local" and env.root == tmp_path
    with pytest.raises(ConfigError) as refused:
        make_environment("podman")
    assert refused.value.exit_code == 2 and refused.value.field == "environment.backend"
    assert {"docker", "local"} <= set((refused.value.fix or "").removeprefix("use one of: ").split(", "))
    with pytest.raises(EnvironmentFailure):
        LocalEnvironment("maybe")  # type: ignore[arg-type]


def test_workspace_with_a_symlink_is_refused(tmp_path):
    """A starting source holding a symlink is refused and no sandbox folder is left behind."""
    ws = write_workspace(tmp_path / "ws")
    (ws / "link").symlink_to("/etc/passwd")
    env = LocalEnvironment("none", root=tmp_path / "boxes")

    async def main() -> None:
        async with env.sandbox(_spec(tmp_path, workspace=ws)):
            pass

    with pytest.raises(Exception, match="symlink"):
        anyio.run(main)
    assert os.listdir(tmp_path / "boxes") == []


@pytest.mark.anyio
async def test_left_behind_sandboxes_of_a_run_are_removed_and_others_kept(tmp_path: Path) -> None:
    """stop_left_running removes this run's leftover sandbox folders (killing their processes) and nothing else."""
    import subprocess

    from pluginbench.environments import LocalEnvironment

    env = LocalEnvironment(isolation="none", root=tmp_path)
    # a run id of this test's own: the sweep also removes this run's sandbox cgroups, machine-wide,
    # and another test (another xdist worker) may run sandboxes of a run called "run1" right now
    run1, run2 = f"run1-{tmp_path.name[-12:]}", f"run2-{tmp_path.name[-12:]}"
    mine = tmp_path / f"pluginbench-{run1}-a__b__r1-coding-x1"
    other = tmp_path / f"pluginbench-{run2}-a__b__r1-coding-x2"
    foreign = tmp_path / "unrelated"
    for d in (mine, other, foreign):
        (d / "app").mkdir(parents=True)
    child = subprocess.Popen(["sleep", "60"], env={"APP_DIR": str(mine / "app"), "PATH": "/usr/bin:/bin"},
                             start_new_session=True)
    try:
        # Until the child has exec'd, /proc shows the parent's environment: wait for its own
        # (a loaded machine can take a while), or the sweep would rightly not find it.
        from pluginbench.environments import _proctree

        with anyio.fail_after(30):
            while child.pid not in _proctree.marked(f"APP_DIR={mine / 'app'}".encode()):
                await anyio.sleep(0.01)
        removed = await env.stop_left_running(run1)
        assert removed == [f"sandbox folder {mine}"]
        assert not mine.exists() and other.exists() and foreign.exists()
        assert child.wait(timeout=60) == -signal.SIGKILL  # killed by the sweep, not by the finally below
    finally:
        if child.poll() is None:
            child.kill()


@pytest.mark.anyio
async def test_a_bubblewrap_sandbox_sees_no_host_cgroup_path(tmp_path):
    """Inside bubblewrap /proc/self/cgroup shows each hierarchy at its root: no host cgroup path
    (the worker's own cgroup, a sandbox's run and attempt names) is visible."""
    async with _both(tmp_path, "bubblewrap").sandbox(_spec(tmp_path)) as sb:
        r = await sb.exec(["cat", "/proc/self/cgroup"])
    lines = r.stdout.decode().splitlines()
    assert lines and all(line.endswith(":/") for line in lines), lines
