"""The open issue of local sandboxes running as the host's root (docs/architecture.md, root powers):
a reproduction, expected to fail until sandboxes run as a uid of their own (branch ired3-wip)."""

from __future__ import annotations

import ctypes
import os

import anyio
import pytest

from pluginbench.environments import LocalEnvironment

from .contract import EnvironmentContract
from .test_local import _require_bwrap

# Opens inotify instances until the kernel refuses, says how many, holds them until the
# host drops /logs/done.
_HOG = r"""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 4096 and libc.inotify_init1(0) >= 0:
    n += 1
open("/logs/count.tmp", "w").write(str(n))
os.rename("/logs/count.tmp", "/logs/count")
while not os.path.exists("/logs/done"):
    time.sleep(0.05)
"""


def _host_inotify_errno() -> int:
    """0 when this process can open an inotify instance now, else the errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd >= 0:
        os.close(fd)
        return 0
    return ctypes.get_errno()


@pytest.mark.xfail(os.geteuid() == 0, strict=True,
                   reason="open: bubblewrap sandboxes run as host uid 0 and share its per-user counters")
@pytest.mark.anyio
async def test_a_sandbox_exhausting_inotify_leaves_the_host_root_its_own(tmp_path):
    """A sandbox holding every inotify instance its uid may have leaves the host's root its
    own: while the sandbox holds them, a root process of the host still opens one."""
    _require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("the counter is shared with the host only when PluginBench runs as root")
    env = LocalEnvironment("bubblewrap", root=tmp_path / "boxes")
    seen: dict[str, object] = {}
    async with env.sandbox(EnvironmentContract().make_spec(tmp_path)) as sb:
        logs = sb.root / "logs"

        async def hog() -> None:
            seen["hog"] = await sb.exec(["python3", "-c", _HOG], timeout=60)

        async with anyio.create_task_group() as tg:
            tg.start_soon(hog)
            with anyio.fail_after(50):
                while not (logs / "count").exists():
                    await anyio.sleep(0.05)
            seen["count"] = int((logs / "count").read_text())
            seen["host"] = _host_inotify_errno()
            (logs / "done").write_text("")
    assert seen["hog"].exit_code == 0, seen["hog"].stderr  # type: ignore[attr-defined]
    assert seen["count"] >= 1  # type: ignore[operator]
    assert seen["host"] == 0, f"the host root got errno {seen['host']} while the sandbox held its inotify instances"
