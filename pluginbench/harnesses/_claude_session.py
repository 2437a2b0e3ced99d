"""The one Claude Code process of an attempt, as a stdin/stdout dialogue.

1. Control requests, all written at once (no model call); every answer is awaited,
   matched by request id, before anything else is sent.
2. ``check(control_lines)`` builds and judges the receipt; it returns whether to go on.
3. Going on: the task is sent as the first user message; when the session's ``result``
   arrives, ``end_session`` ends the process. Refused: ``end_session`` at once, so the
   process ends before any model call.

Deadlines: the control phase has ``setup_timeout`` seconds, coding ``coding_timeout``
seconds counted from the moment the task is sent; either one raises ``TimeoutError``
(the sandbox then kills the process tree).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio

from ..environments import LineChannel
from ._claude_discovery import (
    REQUESTS,
    control_request,
    end_session,
    request_id,
    response_id,
    user_message,
)
from ._claude_stream import OpenTools
from ._idle import start_offered


class ClaudeSession:
    """The dialogue; after the exec its fields say how far it got."""

    def __init__(self, instruction: str, check: Callable[[str], Awaitable[bool]], *,
                 setup_timeout: float, coding_timeout: float) -> None:
        self.instruction = instruction
        self.check = check
        self.setup_timeout = setup_timeout
        self.coding_timeout = coding_timeout
        self.control_lines: list[str] = []
        self.ended_early = False
        self.task_sent_at: float | None = None
        self.result_seen = False
        self.coding_timed_out = False

    async def __call__(self, channel: LineChannel) -> None:
        with anyio.fail_after(self.setup_timeout):
            # Pipelined: the CLI answers them in order from local state, and a round trip
            # per request would add its latency to every attempt.
            await channel.send(b"".join(control_request(i, sub, params) for i, (sub, params) in enumerate(REQUESTS, 1)))
            start_offered()  # the CLI starts up before it answers: the run's advance work runs meanwhile
            waiting = {request_id(i, sub) for i, (sub, _) in enumerate(REQUESTS, 1)}
            while waiting:
                raw = await channel.receive_line()
                if raw is None:
                    self.ended_early = True
                    return
                line = raw.decode(errors="replace")
                self.control_lines.append(line)
                waiting.discard(response_id(line) or "")
            go = await self.check("\n".join(self.control_lines) + "\n")
        last = len(REQUESTS) + 1
        if not go:
            await channel.send(end_session(last))
            await _drain(channel)
            return
        self.task_sent_at = time.monotonic()
        await channel.send(user_message(self.instruction))
        tools = OpenTools()
        try:
            with anyio.fail_after(self.coding_timeout):
                while (raw := await channel.receive_line()) is not None:
                    ev = tools.feed(raw.decode(errors="replace"))
                    # A result while a tool runs is a line the agent wrote into the CLI's
                    # stdout (the CLI is waiting for the tool): it does not end the session.
                    if not self.result_seen and ev is not None and ev.get("type") == "result" and not tools.running:
                        self.result_seen = True
                        await channel.send(end_session(last))
        except TimeoutError:
            self.coding_timed_out = True
            raise


async def _drain(channel: LineChannel) -> None:
    while await channel.receive_line() is not None:
        pass
