"""The single-process Claude dialogue: control requests first, the task only after a passing check."""

from __future__ import annotations

import json

import anyio
import pytest

from pluginbench.environments._dialogue import LineChannel
from pluginbench.harnesses._claude_discovery import REQUESTS
from pluginbench.harnesses._claude_session import ClaudeSession


class FakeCli:
    """Answers each control request at once; after a user message, emits a result."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.channel = LineChannel(self.receive)

    async def receive(self, data: bytes) -> None:
        for line in data.splitlines():
            self.answer(json.loads(line))

    def answer(self, msg: dict) -> None:
        self.sent.append(msg)
        if msg["type"] == "control_request":
            self.channel.feed(json.dumps({"type": "control_response", "response": {
                "subtype": "success", "request_id": msg["request_id"], "response": {}}}).encode() + b"\n")
            if msg["request"]["subtype"] == "end_session":
                self.channel.end()
        elif msg["type"] == "user":
            self.channel.feed(b'{"type":"assistant","message":{}}\n{"type":"result","subtype":"success"}\n')


@pytest.mark.anyio
@pytest.mark.parametrize("passes", [True, False])
async def test_the_task_is_sent_only_after_a_passing_check(passes: bool) -> None:
    """Every control request is answered before the check; a refusal sends end_session and never the task."""
    cli = FakeCli()
    seen: list[str] = []

    async def check(control_stdout: str) -> bool:
        seen.append(control_stdout)
        return passes

    session = ClaudeSession("Fix the bug.", check, setup_timeout=60, coding_timeout=60)  # generous: CI shares 2 cores
    with anyio.fail_after(120):
        await session(cli.channel)
    kinds = [m["type"] for m in cli.sent]
    subs = [m["request"]["subtype"] for m in cli.sent if m["type"] == "control_request"]
    assert subs[: len(REQUESTS)] == [sub for sub, _ in REQUESTS] and subs[-1] == "end_session"
    assert len(seen) == 1 and seen[0].count("control_response") == len(REQUESTS)
    if passes:
        assert kinds.count("user") == 1 and cli.sent[len(REQUESTS)]["message"]["content"] == "Fix the bug."
        assert session.result_seen and session.task_sent_at is not None
    else:
        assert "user" not in kinds and session.task_sent_at is None


@pytest.mark.anyio
async def test_a_silent_cli_times_out_in_the_control_phase() -> None:
    """A CLI that never answers raises TimeoutError before any task is sent."""
    sent: list[bytes] = []

    async def swallow(data: bytes) -> None:
        sent.append(data)

    session = ClaudeSession("x", lambda _: anyio.sleep(0), setup_timeout=0.2, coding_timeout=5)  # type: ignore[arg-type]
    with pytest.raises(TimeoutError):
        await session(LineChannel(swallow))
    assert session.task_sent_at is None and all(b'"type": "user"' not in s for s in sent)
