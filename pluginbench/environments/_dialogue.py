"""A line-oriented stdin/stdout conversation with one sandboxed command.

Some CLIs answer questions on stdin before they start work (Claude Code's stream-json
control requests), so a harness needs to read their answers and decide what to send
next while the process runs. :class:`LineChannel` is the side a harness sees; a backend
feeds it the command's stdout as it arrives and gives it a way to write to stdin.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import anyio

#: The longest stdout line a dialogue receives (longer ones arrive cut at this length) and
#: the most bytes of lines waiting for the reader (past it, lines are dropped and
#: :attr:`LineChannel.dropped` counts them): the command runs in a sandbox and may print
#: without end or without a newline, and every byte held here is host memory.
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_QUEUED_BYTES = 32 * 1024 * 1024


class LineChannel:
    """stdout lines in (buffered up to :data:`MAX_QUEUED_BYTES`, so the reader never
    blocks the command), stdin out."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        self._send = send
        self._tx, self._rx = anyio.create_memory_object_stream[bytes](math.inf)
        self._partial = bytearray()
        self._skipping = False  # inside a line past MAX_LINE_BYTES: dropped up to its newline
        self._queued = 0
        self._ended = False
        #: lines dropped because the reader was more than MAX_QUEUED_BYTES behind
        self.dropped = 0

    def _queue(self, line: bytes) -> None:
        if self._queued + len(line) > MAX_QUEUED_BYTES:
            self.dropped += 1
            return
        self._queued += len(line)
        self._tx.send_nowait(line)

    def feed(self, chunk: bytes) -> None:
        """Backend side: one stdout chunk; every complete line is queued for the reader."""
        if self._ended:
            return
        self._partial += chunk
        while (cut := self._partial.find(b"\n")) >= 0:
            if not self._skipping:
                self._queue(bytes(self._partial[:cut]))
            self._skipping = False
            del self._partial[: cut + 1]
        if len(self._partial) > MAX_LINE_BYTES:
            if not self._skipping:
                self._queue(bytes(self._partial[:MAX_LINE_BYTES]))
            self._skipping = True
            self._partial.clear()

    def end(self) -> None:
        """Backend side: stdout is closed (an unterminated last line is still delivered)."""
        if self._ended:
            return
        self._ended = True
        if self._partial and not self._skipping:
            self._queue(bytes(self._partial))
        self._partial.clear()
        self._tx.close()

    async def send(self, data: bytes) -> None:
        """Write to the command's stdin; a command that already exited ignores it."""
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError, RuntimeError):
            await self._send(data)

    async def receive_line(self) -> bytes | None:
        """The next stdout line without its newline, or ``None`` once stdout has ended."""
        try:
            line = await self._rx.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None
        self._queued -= len(line)
        return line


#: What a harness passes as ``Sandbox.exec(dialogue=...)``: it runs while the command
#: runs and must end it through its own protocol (a backend may not be able to close
#: stdin on its own); when it returns, the local backend also closes stdin.
Dialogue = Callable[[LineChannel], Coroutine[Any, Any, None]]


@contextmanager
def first_error() -> Iterator[None]:
    """Re-raise a task group's lone error as itself, so a dialogue's ``TimeoutError`` or
    harness error reaches the caller of ``exec`` unwrapped."""
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
