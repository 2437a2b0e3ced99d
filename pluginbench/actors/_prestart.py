"""An attempt's grading sandbox made while its agent codes (on a backend that can).

A backend's ``prestart(spec)`` makes the fresh sandbox a later ``sandbox(spec)`` of exactly
that spec takes: docker's grading container (:meth:`~pluginbench.environments.DockerEnvironment.prestart`),
the local backend's sandbox folder, base repository, cgroup and mount namespace under
bubblewrap (:mod:`pluginbench.environments._local_warm`). It is the attempt's own, never
shared with another attempt or with the coding sandbox. :func:`prestarting` runs it beside the coding sandbox; :func:`discard_prestarted`
removes what no grading took (no patch, a failure, a cancel, the worker's end).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import anyio

from .._parsing import visible
from ..environments import Environment, SandboxSpec

T = TypeVar("T")


async def discard_prestarted(environment: Environment, run_id: str, attempt_id: str | None = None) -> None:
    """Remove the pre-started sandboxes of ``run_id`` (one attempt's, when given) that no
    grading took; nothing on a backend that pre-starts none. A failure to remove is said
    on stderr, never raised: a resume's sweep finds the container by its labels."""
    discard = getattr(environment, "discard_prestarted", None)
    if discard is None:
        return
    try:
        await discard(run_id, attempt_id)
    except Exception as exc:  # noqa: BLE001 - cleanup; the labels let a resume find what is left
        print(visible(f"could not remove a pre-started grading sandbox of {attempt_id or run_id}: {exc}"),
              file=sys.stderr, flush=True)


async def prestarting(environment: Environment, verifier: SandboxSpec | None,
                       code: Callable[[Callable[[], None]], Awaitable[T]]) -> T:
    """``code(ready)`` and, from when it calls ``ready()`` (its own sandbox is up), the
    backend's ``prestart(verifier)`` beside it; returns once both ended. ``code``'s
    exception is raised as it is (never in a group); a failing pre-start is dropped (grading
    then makes its own sandbox and reports its own failure) and is cancelled when ``code``
    fails."""
    start = getattr(environment, "prestart", None)
    ready = anyio.Event()
    if verifier is None or start is None:
        return await code(ready.set)

    async def prestart() -> None:
        await ready.wait()
        with contextlib.suppress(Exception):
            await start(verifier)

    ended: list[tuple[bool, Any]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(prestart)
        try:
            ended.append((True, await code(ready.set)))
        except Exception as exc:  # noqa: BLE001 - raised below, outside the task group
            ended.append((False, exc))
        if not ended[0][0] or not ready.is_set():
            tg.cancel_scope.cancel()
    ok, value = ended[0]
    if not ok:
        raise value
    return cast(T, value)
