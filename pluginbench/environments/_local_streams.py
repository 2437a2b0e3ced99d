"""How a local sandbox command's pipes reach their sinks (see :mod:`._local`): stdout and
stderr to a buffer or a host file, stdout line by line to a dialogue, bytes to stdin.

Every helper ends quietly when its stream is closed or broken under it (the command
ended, or it was killed): a pipe that goes away is the end of its data, not an error.
"""

from __future__ import annotations

from contextlib import suppress
from typing import IO

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from ._dialogue import Dialogue, LineChannel
from ._limits import CappedBuffer


class FileDrains:
    """The pipes that go to host files. Once the command has exited they are read for a
    short grace and then closed (as a file descriptor would have been, a process it left
    behind no longer reaches the file), so a leftover background process holding the
    pipe neither hangs the command until its deadline nor writes evidence afterwards."""

    def __init__(self) -> None:
        self._streams: list[tuple[ByteReceiveStream, CappedBuffer, IO[bytes] | None]] = []
        self._scope = anyio.CancelScope()
        self._done = anyio.Event()

    def add(self, stream: ByteReceiveStream, into: CappedBuffer, file: IO[bytes] | None) -> None:
        self._streams.append((stream, into, file))

    async def run(self) -> None:
        try:
            with self._scope:
                async with anyio.create_task_group() as tg:
                    for stream, into, file in self._streams:
                        tg.start_soon(drain, stream, into, file)
        finally:
            self._done.set()

    async def finish(self, grace: float) -> None:
        with anyio.move_on_after(grace):
            await self._done.wait()
        self._scope.cancel()


async def drain(stream: ByteReceiveStream, into: CappedBuffer, file: IO[bytes] | None = None) -> None:
    """A pipe to its sink: the host file when given (written as it comes), else the buffer."""
    try:
        async for chunk in stream:
            if file is not None:
                file.write(chunk)
                file.flush()
            else:
                into += chunk
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


async def drain_lines(stream: ByteReceiveStream, into: CappedBuffer, file: IO[bytes] | None,
                       channel: LineChannel) -> None:
    """stdout to its sink (file or buffer) and, line by line, to the dialogue."""
    try:
        async for chunk in stream:
            if file is not None:
                file.write(chunk)
                file.flush()
            else:
                into += chunk
            channel.feed(chunk)
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        channel.end()


async def converse(dialogue: Dialogue, channel: LineChannel, stdin: ByteSendStream) -> None:
    try:
        await dialogue(channel)
    finally:
        with anyio.CancelScope(shield=True):
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await stdin.aclose()


async def feed(stream: ByteSendStream, data: bytes) -> None:
    try:
        await stream.send(data)
        await stream.aclose()
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
