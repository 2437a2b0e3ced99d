"""A bounded channel from the Supervisor to a pool of actors, fed without blocking the Supervisor.

The Supervisor must never wait on an actor: an actor that waits to put its result into a
full inbox while the Supervisor waits to hand that actor more work would deadlock both.
So :meth:`Feed.put` only queues a command in the feed's backlog, and the feed's own task
(:meth:`Feed.run`) moves commands into the bounded channel in order, waiting while every
actor of the pool is busy and the channel is full: that wait is the back-pressure. The
backlog holds only commands the run's state already owes (at most one per attempt per
requirement: the coding slots, ``jobs``, bound how many attempts are being graded and
measured at once, and bursts such as a resume, the vanilla cache's regrades or the
source-only round are bounded by the plan); a command that an ended run never sent is
issued again from the log by the next worker (``decide`` on ``run.started``).
"""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

import anyio
from anyio.streams.memory import (
    MemoryObjectReceiveStream,
    MemoryObjectSendStream,
    MemoryObjectStreamStatistics,
)

T = TypeVar("T")


class Feed(Generic[T]):
    """Commands for one pool of actors: a backlog in order and a channel of ``capacity``."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.send_stream: MemoryObjectSendStream[T]
        self.receive_stream: MemoryObjectReceiveStream[T]
        self.send_stream, self.receive_stream = anyio.create_memory_object_stream[T](capacity)
        self._backlog: deque[T] = deque()
        self._more = anyio.Event()
        self.most_waiting = 0  # the largest backlog seen (for tests and benchmarks)

    def put(self, command: T) -> None:
        """Queue ``command`` for the pool; never blocks."""
        self._backlog.append(command)
        self.most_waiting = max(self.most_waiting, len(self._backlog))
        self._more.set()

    @property
    def waiting(self) -> int:
        """Commands not yet in the channel."""
        return len(self._backlog)

    def statistics(self) -> MemoryObjectStreamStatistics:
        return self.send_stream.statistics()

    async def run(self) -> None:
        """Move commands into the channel, in order, as the pool takes them (until cancelled)."""
        while True:
            while not self._backlog:
                self._more = anyio.Event()
                await self._more.wait()
            await self.send_stream.send(self._backlog[0])
            self._backlog.popleft()

    def close(self) -> None:
        self.send_stream.close()
