"""The local backend's sandboxes run as a host uid of their own, not as the host's root.

Running as the host's root, a sandbox shared root's per-user kernel counters: holding the
128 inotify instances a uid may have made ``inotify_init1`` fail (EMFILE) for every root
process of the host, the docker daemon included. Exhausting a counter here would break
whatever runs beside the suite even when the fix holds, so the tests read the cause
instead: which host uid the sandbox's root is."""

from __future__ import annotations

import os

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
async def test_a_sandbox_folder_under_a_closed_parent_is_refused(tmp_path):
    """As root, a sandbox root whose parent other uids cannot search is refused naming that folder and chmod o+x."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("only root starts sandboxes as another uid")
    from pluginbench.errors import EnvironmentFailure

    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    env = LocalEnvironment("bubblewrap", root=closed / "boxes")
    with pytest.raises(EnvironmentFailure, match=f"{closed}.*chmod o\\+x"):
        async with env.sandbox(EnvironmentContract().make_spec(tmp_path)):
            pass
    assert not list((closed / "boxes").iterdir())


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
