"""``task_owned: remove`` on an image task: the coding sandbox deletes the repository's own
guidance inside itself before the agent starts (see :mod:`pluginbench.tasks._owned`).
Only shell built-ins and ``rm``/``rmdir`` run, inside the sandbox, as the agent's user."""

from __future__ import annotations

from collections.abc import Sequence

from ..environments import Sandbox
from ..errors import EnvironmentFailure
from ..tasks import removal_roots

#: paths one removal command names at most (an argv well under the kernel's limit)
_STRIP_BATCH = 200
_REMOVE = 'for p in "$@"; do rm -rf -- "$p" || exit 1; done'
#: folders left empty by the removal go too (as in a folder task's stripped copy), deepest first
_PRUNE = 'for d in "$@"; do rmdir -- "$d" 2>/dev/null || true; done'
_LEFT = 'for p in "$@"; do if [ -e "$p" ] || [ -L "$p" ]; then printf "%s\\n" "$p"; fi; done'


async def strip_task_owned_inside(sandbox: Sandbox, removed: Sequence[str]) -> None:
    """Delete ``removed`` (an image task's task-owned files, relative to ``/app``) inside the
    coding sandbox before the agent starts, as the agent's own user, and confirm none is
    left; :class:`EnvironmentFailure` (before launch) when one survives."""
    roots = removal_roots(removed)
    app = sandbox.paths.app.rstrip("/")
    for i in range(0, len(roots), _STRIP_BATCH):
        paths = [f"{app}/{r}" for r in roots[i:i + _STRIP_BATCH]]
        await sandbox.exec(["/bin/sh", "-c", _REMOVE, "pluginbench-task-owned", *paths], cwd=app, timeout=120)
        left = await sandbox.exec(["/bin/sh", "-c", _LEFT, "pluginbench-task-owned", *paths], cwd=app, timeout=120)
        survivors = left.stdout.decode(errors="replace").splitlines()
        if left.exit_code != 0 or survivors:
            raise EnvironmentFailure(
                "task_owned: remove could not delete the repository's own guidance inside the coding sandbox "
                f"({', '.join(survivors[:3]) or f'the check exited {left.exit_code}'}): the image's user cannot "
                "remove them")
    parents = sorted({"/".join(r.split("/")[:i]) for r in roots for i in range(1, r.count("/") + 1)},
                     key=lambda d: (-d.count("/"), d))
    for i in range(0, len(parents), _STRIP_BATCH):
        await sandbox.exec(["/bin/sh", "-c", _PRUNE, "pluginbench-task-owned",
                            *(f"{app}/{d}" for d in parents[i:i + _STRIP_BATCH])], cwd=app, timeout=120)
