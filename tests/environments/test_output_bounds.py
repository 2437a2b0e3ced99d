"""What a sandboxed command prints is bounded in host memory: the in-memory output buffer
keeps a head and a tail with a cut line, and a dialogue's line channel caps line length
and how far its reader may fall behind."""

from __future__ import annotations

import pytest

from pluginbench.environments import _dialogue
from pluginbench.environments._dialogue import LineChannel
from pluginbench.environments._limits import CappedBuffer


def test_output_within_the_bound_comes_back_unchanged() -> None:
    """Chunks that add up to at most the bound come back byte for byte, without a cut line."""
    buf = CappedBuffer(10)
    for chunk in (b"abc", b"", b"defg", b"hij"):
        buf += chunk
    assert bytes(buf) == b"abcdefghij" and not buf.cut


def test_output_past_the_bound_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    """Past the bound the first and last halves are kept and one line names the bytes left out."""
    buf = CappedBuffer(8)
    for i in range(1000):
        buf.extend(str(i % 10).encode() * 1000)  # 1,000,000 bytes in all
    got = bytes(buf)
    assert buf.cut and buf.total == 1_000_000
    assert got.startswith(b"0000\n[pluginbench: output cut: 999992 bytes left out of the middle")
    assert got.endswith(b"(output kept in memory is bounded at 8 bytes)]\n9999")
    assert len(got) < 200


def test_a_huge_single_chunk_is_cut_too() -> None:
    """One chunk far over the bound keeps only its first and last halves."""
    buf = CappedBuffer(4)
    buf.extend(b"ab" + b"x" * 10_000 + b"yz")
    assert bytes(buf).startswith(b"ab\n[pluginbench: output cut: 10000 bytes") and bytes(buf).endswith(b"]\nyz")


@pytest.mark.anyio
async def test_a_dialogue_channel_cuts_endless_lines_and_drops_past_its_queue(monkeypatch) -> None:
    """A line without a newline arrives cut at the line bound; lines past the queue bound are
    dropped and counted, and reading frees room again."""
    monkeypatch.setattr(_dialogue, "MAX_LINE_BYTES", 4)
    monkeypatch.setattr(_dialogue, "MAX_QUEUED_BYTES", 6)

    async def send(_data: bytes) -> None:
        return None

    channel = LineChannel(send)
    channel.feed(b"abcdefgh")  # no newline yet: cut at 4, the rest dropped up to its newline
    channel.feed(b"ijk\nok\n")
    channel.feed(b"zz\n")  # 4 + 2 queued already: over the queue bound
    assert channel.dropped == 1
    assert await channel.receive_line() == b"abcd"
    channel.feed(b"yy\nz")
    channel.end()
    assert [await channel.receive_line() for _ in range(4)] == [b"ok", b"yy", b"z", None]


def test_a_copy_out_stops_at_the_bound_even_when_files_grew_after_the_check(tmp_path, monkeypatch) -> None:
    """Files that grow past the storage bound after get()'s size check (a live sandbox's background
    writer) are still cut off by the copy itself, and nothing of the copy is left on the host."""
    from pluginbench.environments import _hostcopy
    from pluginbench.errors import ResourceLimitHit

    folder = tmp_path / "box" / "artifacts"
    folder.mkdir(parents=True)
    for name in ("a", "b", "c"):
        (folder / name).write_bytes(bytes(1024 * 1024))
    monkeypatch.setattr(_hostcopy, "_size_at", lambda _fd, _stop: 0)  # what the check saw, before the growth
    with pytest.raises(ResourceLimitHit, match="storage bound"):
        _hostcopy.copy_out(tmp_path / "box", "artifacts", tmp_path / "out", limit=2 * 1024 * 1024)
    assert not (tmp_path / "out").exists()
    _hostcopy.copy_out(tmp_path / "box", "artifacts", tmp_path / "out", limit=4 * 1024 * 1024)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a", "b", "c"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_ray_nodes_dialogue_relay_holds_back_when_the_head_is_behind(monkeypatch, anyio_backend) -> None:
    """A node relaying a dialogue keeps at most about the queue bound of lines for a head that reads
    nothing; the rest waits in (and is then dropped by) the bounded line channel."""
    import anyio

    from pluginbench.environments import _ray_node
    from pluginbench.environments._ray_node import _Dialogue

    monkeypatch.setattr(_ray_node, "MAX_QUEUED_BYTES", 100)
    monkeypatch.setattr(_dialogue, "MAX_QUEUED_BYTES", 100)

    async def send(_data: bytes) -> None:
        return None

    talk, channel = _Dialogue(), LineChannel(send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(talk.run, channel)
        for _ in range(1000):
            channel.feed(b"x" * 9 + b"\n")
            await anyio.sleep(0)
        await anyio.sleep(0.1)
        assert talk.queued <= 110 and channel.dropped > 800
        got = talk.take(talk.lines.get_nowait())
        assert got == b"x" * 9
        talk.ended.set()
