"""An attempt's grading sandbox made while its agent codes (the local backend's ``prestart``).

:meth:`~pluginbench.environments.LocalEnvironment.prestart` makes, beside the coding
sandbox, the ordinary sandbox of the attempt's verifier spec: its folder (its own uid
when PluginBench is root), the starting source copied and its base repository made
(``update-index`` over the kept base's copy), ``tests/`` staged, its cgroup and its mount
namespace. Nothing runs in it until grading takes it. It is held here under (run, attempt,
role) for that one attempt and role only:

* only a :meth:`~pluginbench.environments.LocalEnvironment.sandbox` of exactly the spec it
  was made for takes it, once; any other spec removes it and makes its own;
* only under bubblewrap: there the coding sandbox hides the folder holding every sandbox
  and runs as another uid, so the agent cannot reach it; unisolated, the agent is a host
  process that could write into it, and grading makes its own sandbox after the agent is
  gone, as before;
* made only when the disk has room for it and still leaves the coding agent its whole
  storage bound (:func:`room_for`): the copy is made while the agent writes, and must never
  be what fills the disk under it;
* removed (processes, cgroup, mount namespace, folder) when no grading takes it: no patch,
  a failure, a cancel, the worker's end (:func:`~pluginbench.actors._prestart.discard_prestarted`).
  A killed worker leaves an ordinary sandbox folder (``pluginbench-<run>-<attempt>-verifier-*``)
  and cgroup that a resume's sweep removes like any other; the mount namespace and the
  uid's claim end with the process and the folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from ._port import SandboxSpec

if TYPE_CHECKING:
    from ._local import LocalSandbox


def _tree_bytes(root: Path) -> int:
    """Bytes of the regular files under ``root`` (symlinks not followed; unreadable parts skipped)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += st.st_size
    return total


def room_for(spec: SandboxSpec, parent: Path, storage_bytes: int) -> bool:
    """Whether the disk holding ``parent`` has room for a pre-started sandbox of ``spec``
    and, after it, still ``storage_bytes`` (the coding agent's storage bound) free.

    The sandbox is counted as twice its sources: the working tree and the base
    repository made from it (its objects are at most the tree's size, compressed).
    """
    sources = [p for p in (spec.workspace, spec.tests, spec.solution, spec.home) if p is not None]
    needed = sum(_tree_bytes(p) for p in sources) * 2 + storage_bytes
    return shutil.disk_usage(parent).free >= needed


class WarmSandboxes:
    """The pre-started sandboxes of one environment, by (run, attempt, role)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str, str], tuple[SandboxSpec, LocalSandbox]] = {}

    @staticmethod
    def _key(spec: SandboxSpec) -> tuple[str, str, str]:
        return spec.run_id, spec.attempt_id, spec.role

    def keep(self, spec: SandboxSpec, box: LocalSandbox) -> None:
        """Hold ``box``, made for ``spec``, until it is taken or discarded."""
        self._kept[self._key(spec)] = (spec, box)

    def folders(self, run_id: str) -> list[Path]:
        """The folders of the held sandboxes of ``run_id``."""
        return [box.root for key, (_, box) in self._kept.items() if key[0] == run_id]

    async def take(self, spec: SandboxSpec) -> LocalSandbox | None:
        """The held sandbox of ``spec``'s attempt and role when it was made for exactly
        ``spec`` and is untouched (then no longer held); otherwise it is removed and ``None``."""
        held = self._kept.pop(self._key(spec), None)
        if held is None:
            return None
        made_for, box = held
        if made_for == spec and not box._stopped and not box._closed and not box._procs:
            return box
        with anyio.CancelScope(shield=True):
            await box._close()
        return None

    async def discard(self, run_id: str, attempt_id: str | None = None, role: str | None = None) -> list[Path]:
        """Remove the held sandboxes of ``run_id`` (of one attempt, and role, when given);
        their folders. Shielded; every one is closed even when one fails (the first
        failure is raised after)."""
        keys = [k for k in self._kept if k[0] == run_id and attempt_id in (None, k[1]) and role in (None, k[2])]
        boxes = [self._kept.pop(k)[1] for k in keys]
        failed: list[Exception] = []
        with anyio.CancelScope(shield=True):
            for box in boxes:
                try:
                    await box._close()
                except Exception as exc:  # noqa: BLE001 - the others are still removed; raised below
                    failed.append(exc)
        if failed:
            raise failed[0]
        return [box.root for box in boxes]
