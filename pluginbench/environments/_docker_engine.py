"""The Docker Engine connection: one aiodocker session per use, clear errors, capacity.

Only a local Unix socket is used: ``docker_host`` (``unix:///path``), else
``DOCKER_HOST``, else ``/var/run/docker.sock``. :func:`engine` opens a session, proves
the engine answers, and closes the session on exit even under cancellation. Every failure
to reach the engine is an :class:`EnvironmentFailure` naming the socket and the fix.

:func:`capacity_problem` is pure: it says why ``jobs`` containers with the given limits
do not fit an engine's CPUs and 80% of its memory, or ``None`` when they fit.
"""

import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO, Any, NamedTuple

import aiodocker
import aiohttp
import anyio

from ..errors import EnvironmentFailure, ResourceLimitHit
from ._docker_userns import user_namespace

DEFAULT_SOCKET = "/var/run/docker.sock"
MEMORY_BUDGET = 0.8
START_HINT = "start one with tools/start-docker.sh (as root)"
# Connecting must not hang; long operations (build, exec streams, archives) have no
# total timeout of their own and are bounded by the caller's deadline.
_ANSWER_SECONDS = 20.0
_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=30, sock_connect=30, sock_read=None)


def socket_of(docker_host: str | None) -> tuple[str, str]:
    """``(url, socket path)`` for ``docker_host`` or ``DOCKER_HOST``; only ``unix://``."""
    host = docker_host or os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"
    if not host.startswith("unix://") or len(host) <= len("unix://"):
        raise EnvironmentFailure(
            f"docker endpoint {host!r} is not a local Unix socket; PluginBench only uses "
            f"unix:// endpoints (unset DOCKER_HOST or point it at unix:///var/run/docker.sock)"
        )
    return host, host[len("unix://") :]


def no_engine(sock: str, why: str) -> EnvironmentFailure:
    return EnvironmentFailure(f"no Docker engine answers at {sock} ({why}); {START_HINT}")


@asynccontextmanager
async def engine(docker_host: str | None = None) -> AsyncIterator[aiodocker.Docker]:
    """An open aiodocker session to an engine that answered; closed on exit."""
    url, sock = socket_of(docker_host)
    if not os.path.exists(sock):
        raise no_engine(sock, "no such socket")
    docker = aiodocker.Docker(url=url, timeout=_TIMEOUT)
    try:
        try:
            with anyio.move_on_after(_ANSWER_SECONDS) as waited:
                await docker.version()
            if waited.cancelled_caught:
                raise no_engine(sock, f"no answer within {_ANSWER_SECONDS:g}s")
        except (aiohttp.ClientError, OSError) as exc:
            raise no_engine(sock, str(exc) or type(exc).__name__) from exc
        except aiodocker.DockerError as exc:
            raise no_engine(sock, f"{exc.status} {exc.message}") from exc
        yield docker
    finally:
        with anyio.CancelScope(shield=True):
            await docker.close()


class EngineInfo(NamedTuple):
    """What the engine reports about itself, as capacity and runtime checks need it."""

    id: str
    version: str
    os_type: str
    cpus: int
    memory_mb: int
    #: whose uid the containers' root is: ``userns`` (remapped), ``rootless`` or ``none``
    #: (the host's root; see :mod:`._docker_userns`)
    user_namespace: str = "none"

    @property
    def memory_budget_mb(self) -> int:
        return int(self.memory_mb * MEMORY_BUDGET)


async def engine_info(docker: aiodocker.Docker) -> EngineInfo:
    info: dict[str, Any] = dict(await docker.system.info())
    return EngineInfo(
        id=str(info.get("ID", "")),
        version=str(info.get("ServerVersion", "")),
        os_type=str(info.get("OSType", "")),
        cpus=int(info.get("NCPU") or 0),
        memory_mb=int(info.get("MemTotal") or 0) // (1024 * 1024),
        user_namespace=user_namespace(info),
    )


def capacity_problem(
    jobs: int, cpus: float | None, memory_mb: int | None, info: EngineInfo
) -> str | None:
    """Why ``jobs`` containers of ``cpus``/``memory_mb`` do not fit ``info``, or ``None``.

    A limit that is ``None`` (not declared) is not checked. Nothing is ever lowered to
    fit: the caller refuses, and the user picks smaller settings or a bigger engine.
    """
    if jobs < 1:
        return f"jobs must be at least 1, not {jobs}"
    problems = []
    if cpus is not None and jobs * cpus > info.cpus:
        problems.append(
            f"{jobs} containers x {cpus:g} CPUs = {jobs * cpus:g} CPUs, but the engine has {info.cpus}"
        )
    if memory_mb is not None and jobs * memory_mb > info.memory_budget_mb:
        problems.append(
            f"{jobs} containers x {memory_mb} MB = {jobs * memory_mb} MB, over the engine's "
            f"80% memory budget of {info.memory_budget_mb} MB (of {info.memory_mb} MB)"
        )
    if not problems:
        return None
    return "; ".join(problems) + (
        "; lower jobs or the container limits (container_cpus/container_memory_mb), "
        "or give the engine more resources (PluginBench never lowers a budget itself)"
    )


def _archive_url(cid: str) -> str:
    return f"containers/{cid}/archive"


def archive_limit(storage_bytes: int) -> int:
    """The most archive bytes taken for a copy bounded by ``storage_bytes`` of content:
    twice that plus 64 MiB leaves room for tar's headers and padding; the content itself
    is checked against the bound after unpacking (pure)."""
    return 2 * storage_bytes + (64 << 20)


async def get_archive(docker: aiodocker.Docker, cid: str, path: str, out: IO[bytes], *,
                      limit: int | None = None) -> None:
    """Stream the engine's tar of ``path`` in container ``cid`` into ``out`` (not into
    memory); past ``limit`` bytes the copy stops with :class:`ResourceLimitHit` (a sparse
    file in a container streams every zero byte)."""
    taken = 0
    try:
        # aiodocker's get_archive reads the whole archive into memory; workspaces can be
        # large, so the archive endpoint is read in chunks through the same session.
        async with docker._query(_archive_url(cid), method="GET", params={"path": path}) as resp:
            async for chunk in resp.content.iter_chunked(1 << 20):
                taken += len(chunk)
                if limit is not None and taken > limit:
                    raise ResourceLimitHit(f"disk: {path} is over the storage bound (storage_mb): its archive "
                                           f"passed {limit // (1024 * 1024)} MB and it is not copied out of the sandbox")
                await anyio.to_thread.run_sync(out.write, chunk)
    except aiodocker.DockerError as exc:
        if exc.status == 404:
            raise EnvironmentFailure(f"no such file in the sandbox: {path}") from exc
        raise EnvironmentFailure(f"cannot copy {path} out of the container: {exc.message}") from exc


class Upload:
    """A tar file handed to the engine that reads as ended once the file is closed.

    The engine answers as soon as it has read the tar's end marker, before the zero
    padding after it; aiohttp then keeps sending in the background while the caller
    closes the file. Reads happen on the event loop thread, so they never race a close.
    """

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh

    def read(self, size: int = -1) -> bytes:
        return b"" if self._fh.closed else self._fh.read(size)

    async def chunks(self) -> AsyncIterator[bytes]:
        while chunk := self.read(1 << 20):
            yield chunk


async def put_archive(docker: aiodocker.Docker, cid: str, path: str, data: IO[bytes]) -> None:
    """Extract the tar ``data`` (an open file at offset 0) at ``path`` in container ``cid``."""
    try:
        async with docker._query(
            _archive_url(cid),
            method="PUT",
            data=Upload(data).chunks(),
            headers={"content-type": "application/x-tar"},
            params={"path": path},
        ):
            pass
    except aiodocker.DockerError as exc:
        raise EnvironmentFailure(
            f"cannot copy into the container at {path}: {exc.message}"
        ) from exc


async def engine_kills(docker: aiodocker.Docker, cid: str, since: float) -> int | None:
    """How many ``kill`` events the engine recorded for container ``cid`` from ``since``
    (Unix seconds) until now: every ``docker kill`` and ``docker stop`` through the API,
    from any client, records one; processes the container's own agent killed record none.
    None when the engine's event log cannot be read."""
    filters = json.dumps({"type": ["container"], "container": [cid], "event": ["kill"]})
    params = {"since": f"{since:.6f}", "until": f"{time.time():.6f}", "filters": filters}
    try:
        async with docker._query("events", method="GET", params=params) as resp:
            body = await resp.read()
    except (aiodocker.DockerError, OSError, ValueError):
        return None
    kills = 0
    for line in body.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            return None
        kills += isinstance(event, dict) and event.get("Action") == "kill"
    return kills
