"""The local backend's sandboxes run as a host uid of their own, not as the host's root.

Running as the host's root, a sandbox shared root's per-user kernel counters: holding the
128 inotify instances a uid may have made ``inotify_init1`` fail (EMFILE) for every root
process of the host, the docker daemon included. Exhausting a counter here would break
whatever runs beside the suite even when the fix holds, so the tests read the cause
instead: which host uid the sandbox's root is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment

from .contract import EnvironmentContract
from .test_local import _require_bwrap


def host_uid_of_root(uid_map: str) -> int | None:
    """The host uid that uid 0 of a process's user namespace is, from its ``/proc/self/uid_map``."""
    for line in uid_map.splitlines():
        inside, outside, count = (int(x) for x in line.split())
        if inside <= 0 < inside + count:
            return outside + (0 - inside)
    return None


def test_host_uid_of_root_reads_the_mapping() -> None:
    """The identity map makes root the host's root; a one-uid map names the host uid it maps to."""
    assert host_uid_of_root("         0          0 4294967295\n") == 0
    assert host_uid_of_root("         0 1900000123          1\n") == 1900000123
    assert host_uid_of_root("      1000       1000          1\n") is None


@pytest.mark.anyio
async def test_a_sandbox_root_is_not_the_host_root(tmp_path):
    """Uid 0 inside a bubblewrap sandbox is not uid 0 of the host, so the sandbox's per-user
    kernel counters (inotify instances, processes) are not the host root's."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("a sandbox can map to the host's root only when PluginBench runs as root")
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    async with env.sandbox(EnvironmentContract().make_spec(tmp_path)) as sb:
        got = await sb.exec(["cat", "/proc/self/uid_map"], timeout=60)
    assert got.exit_code == 0, got.stderr
    assert host_uid_of_root(got.stdout.decode()) == sb.uid
    assert sb.uid is not None and sb.uid != 0


def test_the_sandbox_uid_is_per_sandbox_deterministic_and_in_its_range():
    """A sandbox's uid depends only on its folder name, lies in the reserved range, and differs between sandboxes."""
    from pluginbench.environments._local_uid import UID_BASE, UID_COUNT, sandbox_uid

    names = [f"pluginbench-run-a{i}-coding-x" for i in range(50)]
    uids = [sandbox_uid(n) for n in names]
    assert uids == [sandbox_uid(n) for n in names]
    assert all(UID_BASE <= u < UID_BASE + UID_COUNT for u in uids)
    assert len(set(uids)) > 45


def test_unprivileged_user_namespaces_off_is_named_with_the_fix(tmp_path):
    """Each sysctl that turns unprivileged user namespaces off is reported with the command that turns them on."""
    from pluginbench.environments._local_uid import userns_failure

    (tmp_path / "kernel").mkdir()
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "max_user_namespaces").write_text("96363\n")
    assert userns_failure(str(tmp_path)) is None
    (tmp_path / "kernel" / "unprivileged_userns_clone").write_text("0\n")
    why = userns_failure(str(tmp_path))
    assert why is not None and "sysctl -w kernel.unprivileged_userns_clone=1" in why
    (tmp_path / "kernel" / "unprivileged_userns_clone").write_text("1\n")
    (tmp_path / "user" / "max_user_namespaces").write_text("0\n")
    assert "user.max_user_namespaces" in (userns_failure(str(tmp_path)) or "")


@pytest.mark.anyio
async def test_a_sandbox_folder_under_a_root_only_parent_works(tmp_path):
    """As root, a sandbox whose folder lies under a parent other uids cannot search (pytest's own
    /tmp/pytest-of-root is one) runs its commands and writes its files."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("only root starts sandboxes as another uid")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    env = LocalEnvironment("bubblewrap", root=closed / "boxes")
    async with env.sandbox(EnvironmentContract().make_spec(tmp_path)) as sb:
        got = await sb.exec(["sh", "-c", "echo made > /app/made; cat /app/made"], timeout=60)
        made = (sb.root / "app" / "made").read_text()
    assert (got.exit_code, got.stdout, made) == (0, b"made\n", "made\n"), got.stderr
    assert list((closed / "boxes").iterdir()) == []


@pytest.mark.anyio
async def test_sandbox_files_belong_to_the_sandbox_uid_and_root_inside(tmp_path):
    """As root, the agent is uid 0 inside, and what it writes (and what put() stages) is owned by the sandbox's host uid."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("only root starts sandboxes as another uid")
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    staged = tmp_path / "staged.txt"
    staged.write_text("x")
    async with env.sandbox(EnvironmentContract().make_spec(tmp_path)) as sb:
        await sb.put(staged, "/home/agent/deep/er/staged.txt")
        r = await sb.exec(["sh", "-c", "id -u; touch /app/made; echo more >> /home/agent/deep/er/staged.txt"])
        owners = {p: os.lstat(sb.root / p).st_uid for p in ("app/made", "app", "home/deep/er/staged.txt", "home/deep")}
    assert r.exit_code == 0, r.stderr
    assert r.stdout.split()[0] == b"0"
    assert set(owners.values()) == {sb.uid}, owners


def test_required_bubblewrap_without_user_namespaces_fails_naming_the_sysctl(monkeypatch):
    """As root with unprivileged user namespaces off, isolation=bubblewrap fails saying which sysctl to change."""
    from pluginbench.environments import _bwrap
    from pluginbench.errors import EnvironmentFailure

    monkeypatch.setattr(_bwrap, "_usable", set())
    monkeypatch.setattr(_bwrap, "_failed", {})
    monkeypatch.setattr(_bwrap, "PROBE_RETRY_PAUSES", (0.0, 0.0))
    monkeypatch.setattr(_bwrap, "drops", lambda: True)
    monkeypatch.setattr(_bwrap, "userns_failure", lambda: "unprivileged user namespaces are off "
                        "(user.max_user_namespaces = 0); enable them (sysctl -w user.max_user_namespaces=65536)")
    monkeypatch.setattr(_bwrap, "find_bwrap", lambda: "/usr/bin/bwrap")
    with pytest.raises(EnvironmentFailure, match=r"sysctl -w user\.max_user_namespaces"):
        LocalEnvironment("bubblewrap")._bwrap_executable()


@pytest.mark.anyio
async def test_two_live_sandboxes_of_one_run_run_as_different_host_uids(tmp_path):
    """Two sandboxes of the same run open at once each map their root to a host uid of their own."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("only root starts sandboxes as another uid")
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    contract = EnvironmentContract()
    async with env.sandbox(contract.make_spec(tmp_path)) as one, env.sandbox(contract.make_spec(tmp_path)) as two:
        maps = [await sb.exec(["cat", "/proc/self/uid_map"], timeout=60) for sb in (one, two)]
        uids = [one.uid, two.uid]
    assert [host_uid_of_root(m.stdout.decode()) for m in maps] == uids
    assert uids[0] != uids[1]


def test_a_new_sandbox_folder_never_takes_a_uid_a_live_one_owns(tmp_path, monkeypatch):
    """A folder name whose uid a sandbox folder beside it owns is drawn again, and the new folder is owned by its uid."""
    from pluginbench.environments import _local_uid

    if os.geteuid() != 0:
        pytest.skip("only root chowns sandbox folders")
    draws = iter([1_900_000_007, 1_900_000_007, 1_900_000_008])
    monkeypatch.setattr(_local_uid, "sandbox_uid", lambda name: next(draws))
    first = _local_uid.make_folder(tmp_path, "pluginbench-r-a-agent", True)
    second = _local_uid.make_folder(tmp_path, "pluginbench-r-b-agent", True)
    assert (first.stat().st_uid, second.stat().st_uid) == (1_900_000_007, 1_900_000_008)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name])


def _mount_ns_fds() -> int:
    """How many mount namespaces this process holds open by a file descriptor."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("mnt:")
        except OSError:
            continue
    return count


@pytest.mark.anyio
async def test_a_tool_folder_under_a_root_only_parent_is_bound(tmp_path):
    """As root, a tool folder whose parent is mode 0700 (like /root) is still bound read-only at its own path, the
    host's mount table stays as it was, no extra descriptor reaches the command, and none is left after the sandbox."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("only root starts sandboxes as another uid")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    tool = closed / "tool"
    tool.mkdir(mode=0o755)
    (tool / "hello.txt").write_text("from a root-only parent\n")
    spec = EnvironmentContract().make_spec(tmp_path, readonly=(tool,))
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    held = _mount_ns_fds()
    async with env.sandbox(spec) as sb:
        got = await sb.exec(["sh", "-c", f"cat {tool}/hello.txt; touch {tool}/x; ls /proc/self/fd"], timeout=60)
        during = _mount_ns_fds()
        assert str(sb.root) not in Path("/proc/self/mountinfo").read_text()
    assert got.stdout.decode().splitlines() == ["from a root-only parent", "0", "1", "2", "3"], got.stderr
    assert b"Read-only file system" in got.stderr
    assert (during, _mount_ns_fds()) == (held + 1, held)


@pytest.mark.anyio
async def test_a_tool_folder_other_uids_cannot_read_is_refused_naming_it(tmp_path):
    """As root, a tool folder of mode 0700 is refused before the sandbox starts, naming it and chmod o+rX."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("only root starts sandboxes as another uid")
    from pluginbench.errors import EnvironmentFailure

    tool = tmp_path / "tool"
    tool.mkdir(mode=0o700)
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    with pytest.raises(EnvironmentFailure, match=f"{tool} \\(mode 0700\\).*chmod -R o\\+rX {tool}"):
        async with env.sandbox(EnvironmentContract().make_spec(tmp_path, readonly=(tool,))):
            pass


def test_the_plan_moves_the_sandbox_folder_each_resolved_tool_folder_once_and_the_others(tmp_path):
    """The sandbox folder, the other folders and each resolved tool folder get a place of their own under the point;
    a tool folder reached through a symlink shares its target's, and a path under a moved folder moves with it."""
    from pluginbench.environments._local_binds import moved, plan

    (tmp_path / "tool").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "tool")
    tools = [str(tmp_path / "link"), str(tmp_path / "tool"), "/opt/other"]
    moves = plan("/x/boxes/pb-1", tools, ["/tmp/pb-egress-1"], point="/p")
    assert moves == {"/x/boxes/pb-1": "/p/box", "/tmp/pb-egress-1": "/p/e0", tools[0]: "/p/t0", tools[1]: "/p/t0",
                     "/opt/other": "/p/t1"}
    assert moved(moves, "/x/boxes/pb-1/home") == "/p/box/home"
    assert moved(moves, "/x/boxes/pb-10/home") == "/x/boxes/pb-10/home"
    assert moved(moves, "/usr") == "/usr"


def test_a_tool_folder_is_bound_from_its_mount_point_at_its_own_path():
    """bwrap binds a tool folder named in sources from that source, at the folder's own path; the others from themselves."""
    from pluginbench.environments._bwrap import bwrap_args

    args = bwrap_args([], [], [], chdir="/app", readonly=["/root/.rustup/bin", "/opt/tool"],
                      sources={"/root/.rustup/bin": "/tmp/box/.binds/0"})
    pairs = [tuple(args[i + 1:i + 3]) for i, a in enumerate(args) if a == "--ro-bind"]
    assert ("/tmp/box/.binds/0", "/root/.rustup/bin") in pairs
    assert ("/opt/tool", "/opt/tool") in pairs
    assert not any(src == "/root/.rustup/bin" for src, _ in pairs)
