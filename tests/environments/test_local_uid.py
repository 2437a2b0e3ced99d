"""The open issue of local sandboxes running as the host's root (docs/architecture.md, root
powers): a reproduction, expected to fail until sandboxes run as a uid of their own (branch
ired3-wip).

Its consequence was shown by hand, not here: a sandbox holding the 128 inotify instances a
uid may have made ``inotify_init1`` fail (EMFILE) for every root process of the host, the
docker daemon included. Doing that in the suite would break whatever else runs beside it,
so the test reads the cause instead: which host uid the sandbox's root is."""

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


@pytest.mark.xfail(os.geteuid() == 0, strict=True,
                   reason="open: bubblewrap sandboxes run as host uid 0 and share its per-user counters")
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
    assert host_uid_of_root(got.stdout.decode()) not in (0, None)
