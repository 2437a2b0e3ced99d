"""Host-side readers of folders copied out of a coding sandbox (transcripts, rollouts,
chats) never follow a symlink the agent planted there: the copy keeps symlinks as
symlinks, and following one would put a host file in the evidence (or read /dev/zero)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec, plain_files
from pluginbench.harnesses._claude import ClaudeHarness, _slug
from pluginbench.harnesses._codex import CODEX_DIR, CodexHarness
from pluginbench.harnesses._gemini import GeminiHarness

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_plain_files_skips_symlinks_symlinked_folders_and_a_symlinked_root(tmp_path: Path) -> None:
    """Only regular files reached through no symlink match, with folder patterns matched from the right."""
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    (host / "secret.jsonl").write_text("host\n")
    (host / "sub" / "deep.jsonl").write_text("host\n")
    got = tmp_path / "got"
    (got / "chats").mkdir(parents=True)
    (got / "chats" / "a.jsonl").write_text("ok\n")
    (got / "b.jsonl").write_text("ok\n")
    (got / "leak.jsonl").symlink_to(host / "secret.jsonl")
    (got / "chats" / "zero.jsonl").symlink_to("/dev/zero")
    (got / "linked").symlink_to(host / "sub")
    assert plain_files(got, "*.jsonl") == [got / "b.jsonl", got / "chats" / "a.jsonl"]
    assert plain_files(got, "chats/*.jsonl") == [got / "chats" / "a.jsonl"]
    (tmp_path / "via").symlink_to(got)
    assert plain_files(tmp_path / "via", "*.jsonl") == []


async def test_harnesses_copy_no_planted_symlink_out_of_the_sandbox(tmp_path: Path) -> None:
    """Claude's transcripts, Codex's rollouts and Gemini's chats copied out of a sandbox whose agent planted
    symlinks to a host file beside its real ones hold the real files only, never the host file."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("x\n")
    env = LocalEnvironment("none", root=tmp_path / "boxes")
    spec = SandboxSpec(run_id="r", attempt_id="a", role="coding", task="t", workspace=ws)
    async with env.sandbox(spec) as sb:
        home = Path(sb.paths.home)
        session = "0000-session"
        claude = home / ".claude-config" / "projects" / _slug(sb.paths.app)
        (claude / session).mkdir(parents=True)
        (claude / f"{session}.jsonl").write_text('{"type": "user"}\n')
        (claude / session / "leak.jsonl").symlink_to(secret)
        rollouts = home / CODEX_DIR / "sessions" / "2026"
        rollouts.mkdir(parents=True)
        (rollouts / "rollout-1.jsonl").write_text("{}\n")
        (rollouts / "rollout-2.jsonl").symlink_to(secret)
        chats = home / ".gemini" / "tmp" / "h" / "chats"
        chats.mkdir(parents=True)
        (chats / "session-1.jsonl").write_text("{}\n")
        (chats / "session-2.jsonl").symlink_to(secret)
        await sb.stop()
        dest = tmp_path / "claude"
        got = await ClaudeHarness("/bin/true", "0", "http://127.0.0.1:9")._copy_transcripts(
            sb, {"CLAUDE_CONFIG_DIR": str(home / ".claude-config")}, session, dest)
        assert got == (['{"type": "user"}'], [])
        codex_dir = tmp_path / "codex"
        codex_dir.mkdir()
        assert await CodexHarness("/bin/true", "0", "http://127.0.0.1:9")._collect_rollouts(sb, codex_dir) == ["{}\n"]
        gemini_dir = tmp_path / "gemini"
        gemini_dir.mkdir()
        await GeminiHarness("/bin/true", "0", "http://127.0.0.1:9")._collect(sb, gemini_dir)
    copied = [p for p in tmp_path.joinpath("claude").rglob("*")] + list(codex_dir.rglob("*")) + list(gemini_dir.rglob("*"))
    assert sorted(p.name for p in copied if p.is_file()) == [f"{session}.jsonl", "rollout-1.jsonl", "session-1.jsonl"]
    assert not any(p.is_symlink() or "HOST-SECRET" in p.read_text() for p in copied if p.is_file() or p.is_symlink())
    assert os.path.exists(secret)
