"""Analyzers that execute or load repository code run in a fresh sandbox, never on the host.

``cargo check`` runs the crate's ``build.rs`` and proc macros, knip loads ``knip.config.js``
and the project's plugins' configs, jscpd reads ``.jscpd.json``, staticcheck loads the Go
module through ``go list``: each is code (or configuration that names code) the submission
or the task controls. :func:`run_sandboxed` opens a fresh sandbox of the frozen task with the
measure port's ``open_task_sandbox`` (bubblewrap on the local backend, a fresh container of
the frozen image on docker, the node's sandbox on Ray), with the coding sandbox's
default-deny rules, no credentials (a readiness sandbox gets none) and no network
(``network="none"``), applies the canonical patch there with ``git apply``, runs the
analyzer from the repository root and reads back its output. The analyzer's own install
folders are bound read-only (``readonly``; the docker backend ignores them, so there the
frozen image must carry the tool, as the product description asks of Cargo).

Collectors are synchronous (they run in a worker thread); :func:`blocking` runs the
sandbox's async calls on the event loop that started the thread, or in a fresh loop when
called outside one (a test, a script).
"""

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from ..errors import AnalyzerFailed, EnvironmentFailure, PatchDoesNotApply

T = TypeVar("T")

#: the most bytes of one output file an analyzer writes that is copied out and read on the host
OUTPUT_BYTES = 64 * 1024 * 1024

#: the placeholders an analyzer's argv and env may hold: the sandbox's repository root and
#: its private scratch folder (``/app`` and ``/tmp`` under bubblewrap and docker)
APP, TMP = "{app}", "{tmp}"


class SandboxedRun(NamedTuple):
    """How one analyzer command ended inside its sandbox."""

    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    #: the requested output files (relative to the sandbox's scratch folder) that exist
    files: Mapping[str, bytes]
    #: wall-clock seconds of the whole sandbox: create, apply, analyze, read back, remove
    seconds: float
    #: the sandbox's repository root, as the analyzer saw it (paths in its report start there)
    app: str


def blocking(fn: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    """``await fn(*args)`` from synchronous code: on the event loop of the worker thread
    this runs in, else in a fresh event loop."""
    import anyio.from_thread  # on first use: it loads concurrent.futures and logging

    try:
        return anyio.from_thread.run(fn, *args)
    except anyio.NoEventLoopError:
        return anyio.run(fn, *args)


def _fill(text: str, app: str, tmp: str) -> str:
    return text.replace(APP, app).replace(TMP, tmp)


async def run_sandboxed_async(
    open_sandbox: Callable[..., AbstractAsyncContextManager[Any]],
    patch: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float,
    readonly: Sequence[Path] = (),
    outputs: Sequence[str] = (),
    tool: str,
) -> SandboxedRun:
    """Run ``argv`` (``{app}``/``{tmp}`` filled in) in a fresh sandbox of the frozen task
    with ``patch`` applied; raises :class:`PatchDoesNotApply` or :class:`AnalyzerFailed`."""
    started = time.monotonic()
    try:
        async with open_sandbox(network="none", readonly=tuple(readonly)) as sb:
            app, tmp = sb.paths.app, sb.paths.tmp
            if patch.strip():
                with tempfile.TemporaryDirectory(prefix="pluginbench-analyzer-") as staging:
                    staged = Path(staging) / "model.patch"
                    staged.write_bytes(patch.encode("utf-8", errors="surrogateescape"))
                    await sb.put(staged, f"{tmp}/pluginbench-model.patch")
                applied = await sb.exec(["git", "apply", "--binary", "--whitespace=nowarn",
                                         f"{tmp}/pluginbench-model.patch"], cwd=app, timeout=120)
                if applied.exit_code != 0:
                    raise PatchDoesNotApply("model.patch does not apply to the starting source: "
                                            + (applied.stderr or applied.stdout).decode(errors="replace").strip()[:300])
                await sb.exec(["rm", "-f", f"{tmp}/pluginbench-model.patch"], timeout=30)
            try:
                done = await sb.exec([_fill(a, app, tmp) for a in argv], cwd=app, timeout=timeout,
                                     env={k: _fill(v, app, tmp) for k, v in (env or {}).items()})
            except EnvironmentFailure as exc:  # the runtime could not start it: no such program inside
                raise AnalyzerFailed(f"{tool} is not in the analysis sandbox (on docker the frozen task image must "
                                     f"carry it): {str(exc)[:200]}") from None
            await sb.stop()
            files: dict[str, bytes] = {}
            if outputs:
                with tempfile.TemporaryDirectory(prefix="pluginbench-analyzer-") as back:
                    for i, rel in enumerate(outputs):
                        # A missing, oversized or non-file output is left out (the analyzer's
                        # parser then says what is missing); never read past the bound.
                        with contextlib.suppress(EnvironmentFailure, OSError):
                            got = Path(back) / f"out-{i}"
                            await sb.get(f"{tmp}/{rel}", got, limit=OUTPUT_BYTES)
                            if stat.S_ISREG(os.lstat(got).st_mode):
                                files[rel] = got.read_bytes()
    except EnvironmentFailure as exc:
        raise AnalyzerFailed(f"the {tool} sandbox failed: {exc}") from None
    if done.timed_out:
        raise AnalyzerFailed(f"{tool} timed out after {timeout:g} s in its sandbox")
    return SandboxedRun(done.exit_code, False, done.stdout.decode(errors="replace"),
                        done.stderr.decode(errors="replace"), files, round(time.monotonic() - started, 3), app)


def run_sandboxed(open_sandbox: Callable[..., AbstractAsyncContextManager[Any]] | None, patch: str,
                  argv: Sequence[str], *, tool: str, **kwargs: Any) -> SandboxedRun:
    """:func:`run_sandboxed_async` from synchronous code; without a sandbox to open the
    analyzer does not run (it would run on the host) and its values are unknown."""
    if open_sandbox is None:
        raise AnalyzerFailed(f"{tool} executes repository code, so it runs only in a sandbox of the frozen task, "
                             "and none can be opened here")

    async def go() -> SandboxedRun:
        return await run_sandboxed_async(open_sandbox, patch, argv, tool=tool, **kwargs)

    return blocking(go)


def not_found(run: SandboxedRun) -> bool:
    """The sandbox has no such program (a docker image without the tool, a missing bind):
    the shell's 127, bubblewrap's failed ``execvp``, the container runtime's "executable file
    not found"."""
    text = run.stderr + run.stdout
    return (run.exit_code == 127 or ("execvp" in text and "No such file or directory" in text)
            or "executable file not found" in text)
