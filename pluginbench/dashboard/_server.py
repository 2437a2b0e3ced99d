"""Serving the dashboard: hypercorn on 127.0.0.1 plus the monitor, in one task group.

Hypercorn is the ASGI server because it runs under both asyncio and trio (the
backend-neutral spirit of the core), exposes ``serve(app, config, shutdown_trigger=...)``
as a plain awaitable that nests in an anyio task group, and is maintained with Quart by
the Pallets projects. The dashboard itself runs on anyio's asyncio backend, because
aiosqlite (the ledger reader) is an asyncio library.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config

from ..errors import InputError
from ._app import build_app
from ._monitor import Monitor

HOST = "127.0.0.1"


def check_port(port: int) -> None:
    """Refuse a port that cannot be bound on 127.0.0.1, before anything starts."""
    if not 1 <= port <= 65535:
        raise InputError(f"port {port} is out of range", field="--port", fix="pass a port from 1 to 65535")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise InputError(f"cannot listen on {HOST}:{port}: {exc.strerror}", field="--port",
                             fix="stop what uses that port or pass another one with --port") from exc


def check_roots(roots: Sequence[Path]) -> list[Path]:
    out = []
    for r in roots:
        if not r.is_dir():
            raise InputError(f"{r} is not a folder", file=str(r),
                             fix="pass folders that hold run directories (for example runs/)")
        out.append(r.resolve())
    return out


def _quiet_cancelled_connections() -> None:
    """Python 3.11's asyncio logs a spurious "Exception in callback" when a server
    connection task is cancelled at shutdown (fixed in 3.12); only that is silenced."""
    import asyncio

    loop = asyncio.get_running_loop()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if isinstance(context.get("exception"), asyncio.CancelledError):
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


async def serve(roots: Sequence[Path], port: int, ready: Callable[[Monitor], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM (Ctrl-C); the first search and read happen before the
    server answers, so the first page already lists every run."""
    monitor = Monitor(roots)
    await monitor.step()
    config = Config()
    config.bind = [f"{HOST}:{port}"]
    config.accesslog = None
    config.graceful_timeout = 1.0
    stop = anyio.Event()
    _quiet_cancelled_connections()

    async def signals() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for _ in received:
                stop.set()
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(signals)
        tg.start_soon(monitor.run, stop)
        if ready is not None:
            ready(monitor)
        await hypercorn_serve(build_app(monitor, port), config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]  # Starlette's ASGI app type is looser than hypercorn's scope union
        stop.set()
