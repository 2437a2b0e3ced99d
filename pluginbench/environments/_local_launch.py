"""What one command of a local sandbox needs beside its process: bubblewrap's options (see
:mod:`._bwrap` for what they mean) and the watch that ends the sandbox at a limit breach."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import anyio

from . import _bwrap, _limits, _proctree
from ._local_paths import _memfd, tool_folders

if TYPE_CHECKING:
    from ._local import LocalSandbox


def bwrap_options(box: LocalSandbox, cwd: str, fds: list[int]) -> list[str]:
    """bwrap's options for one command of ``box``. The host listings the layout reads (``/``,
    ``/etc``, ``/proc``, the tool folders) are read when the sandbox is made (else at the
    first command) and kept for the sandbox's life; the hidden paths are resolved again for every command, so one
    that appears later (a cache created mid-attempt) is still covered. The ``/etc``
    copies' file descriptors are appended to ``fds`` (the caller passes and closes them)."""
    assert box._bwrap is not None
    src = box._binds.source if box._binds is not None else str
    binds = [_bwrap.Bind(src(str(host)), inside) for inside, host in sorted(box._mounts, key=lambda m: len(m[0]))]
    hidden: list[_bwrap.Hidden] = []
    # The folder holding every sandbox is hidden too: other attempts live there.
    for path in (*box.spec.hidden, box.root.parent):
        real = os.path.realpath(path)
        if os.path.lexists(real):
            hidden.append(_bwrap.Hidden(real, os.path.isdir(real)))
    if box._layout is None:
        box._layout = _bwrap.read_host_layout(tool_folders(box.spec.readonly))
    layout = box._layout
    etc_files = [(name, _memfd("pb-etc", data)) for name, data in layout.etc_files.items()]
    fds += [fd for _, fd in etc_files]
    return _bwrap.bwrap_args(
        layout.top,
        binds,
        hidden,
        chdir=cwd,
        readonly=layout.readonly,
        etc=layout.etc,
        egress_dir=src(str(box.egress.folder)) if box.egress is not None else None,
        proc_entries=layout.proc_entries,
        etc_files=etc_files,
        userns=box.uid is not None,
        sources={tool: src(tool) for tool in layout.readonly},
    )


async def watch_limits(box: LocalSandbox, root_pid: int) -> None:
    """While a command of ``box`` runs: on a cgroup breach, or the sandbox folder over its disk
    bound, end every process of the sandbox (a breach ends the attempt, not the host)."""
    bound = box.limits.storage_mb * 1024 * 1024
    tick = 0
    while True:
        await anyio.sleep(0.25)
        tick += 1
        hit = box._cgroup.breaches() if box._cgroup is not None else []
        if not hit and tick % 20 == 0:
            used = await anyio.to_thread.run_sync(
                lambda: _limits.tree_bytes(box.root, allocated=True, stop_above=bound))
            if used > bound:
                hit = [f"disk: the sandbox's files are over the {box.limits.storage_mb} MB storage bound "
                       "(storage_mb)"]
                box._breaches += [h for h in hit if h not in box._breaches]
        if hit:
            if box._cgroup is not None:
                await anyio.to_thread.run_sync(box._cgroup.kill)
            await anyio.to_thread.run_sync(_proctree.kill_trees, [root_pid])
            return


__all__ = ["bwrap_options", "watch_limits"]
