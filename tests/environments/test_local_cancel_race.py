"""A cancellation that reaches an unisolated local exec while its process is being opened
(spawned, but ``open_process`` not yet returned: under load asyncio needs several loop turns
to connect the pipes) still kills the whole process tree."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from pluginbench.environments import LocalEnvironment
from tests.environments.contract import (
    EnvironmentContract,
    assert_stopped_growing,
    beat,
    wait_for_file,
)


@pytest.mark.anyio
async def test_cancel_while_the_process_is_being_opened_kills_its_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that lands after the command was spawned but before ``open_process``
    returned does not leak the command's children: its heartbeat stops."""
    real_open = anyio.open_process
    spawned, cancelled = anyio.Event(), anyio.Event()

    async def slow_open(*args, **kwargs):
        # The real spawn, then the loop turns asyncio spends connecting the pipes,
        # stretched until the cancel has been sent, so it lands exactly there.
        proc = await real_open(*args, **kwargs)
        spawned.set()
        await cancelled.wait()
        return proc

    monkeypatch.setattr(anyio, "open_process", slow_open)
    spec = EnvironmentContract.make_spec(EnvironmentContract(), tmp_path)
    env = LocalEnvironment(isolation="none", root=tmp_path / "boxes")
    async with env.sandbox(spec) as sb:
        beat_path = f"{sb.paths.logs}/artifacts/o.beat"
        finished = []
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                await sb.exec(["/bin/sh", "-c", f"sh -c '{beat('o.beat')}'"])
                finished.append(True)

            tg.start_soon(run)
            await spawned.wait()
            await wait_for_file(sb, beat_path, tmp_path)
            tg.cancel_scope.cancel()
            cancelled.set()
        assert finished == []
        await assert_stopped_growing(sb, beat_path, tmp_path)
