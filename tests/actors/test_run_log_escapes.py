"""What the worker prints (its stdout and stderr are ``run.log``, read with ``tail``) writes the control
characters of agent- or backend-made text as text, so an escape sequence in a file name or an error never
reaches a terminal: the vanilla-cache line naming the attempt's files, the left-sandbox lines and the
pre-started-sandbox cleanup line. Only the environment and engine around each method are stand-ins."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from pluginbench.actors._prestart import discard_prestarted
from pluginbench.actors._supervisor import Supervisor

OSC52 = "\x1b]52;c;cHduZWQ=\x07"  # a clipboard write, if a terminal ever saw it raw


def _clean(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text and "\\x1b]52;c;cHduZWQ=\\x07" in text


@pytest.mark.anyio
async def test_the_not_cached_line_writes_an_agent_file_name_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file the agent named with an OSC 52 sequence, holding the credential, is named escaped in run.log."""
    attempt = tmp_path / "a1"
    attempt.mkdir()
    (attempt / f"notes{OSC52}.txt").write_text("the key is sk-test-SECRET-0123456789\n")
    send, receive = anyio.create_memory_object_stream[Any](1)
    engine = SimpleNamespace(run_dir=SimpleNamespace(attempt=lambda _: attempt),
                             harness=SimpleNamespace(secrets=lambda: ["sk-test-SECRET-0123456789"]))
    async with send, receive:
        await Supervisor._publish(SimpleNamespace(engine=engine, _inbox=send), "a1", None)  # type: ignore[arg-type]
        sent = receive.receive_nowait()
    out = capsys.readouterr().out
    assert "is not cached: a form of the delivered credential is in notes" in out and _clean(out)
    assert sent.event.entry is None


class _Backend:
    """A backend whose cleanup names and errors carry escape sequences."""

    async def remove_left_stopped(self, run_id: str) -> list[str]:
        return [f"container {OSC52}"]

    async def stop_left_running(self, run_id: str) -> list[str]:
        raise RuntimeError(f"daemon said {OSC52}")

    async def discard_prestarted(self, run_id: str, attempt_id: str | None) -> None:
        raise RuntimeError(f"daemon said {OSC52}")


@pytest.mark.anyio
async def test_the_left_sandbox_and_prestart_lines_write_backend_text_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """The removed-sandbox name, the failed check and the failed pre-start cleanup are each written escaped."""
    engine = SimpleNamespace(environment=_Backend(), run_id="r")
    await Supervisor._stop_left_running(SimpleNamespace(engine=engine))  # type: ignore[arg-type]
    await discard_prestarted(_Backend(), "r", "a1")  # type: ignore[arg-type]
    captured = capsys.readouterr()
    lines = captured.out.splitlines() + captured.err.splitlines()
    assert len(lines) == 3 and all(_clean(line) for line in lines), lines
