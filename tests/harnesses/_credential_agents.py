"""What the real-CLI credential tests make their agent do, and a sandbox that keeps every exec.

Shared by test_claude_credentials_realcli.py and test_codex_credentials_realcli.py: each
attempt's credential file must be gone once the harness returns, whatever the agent did.
"""

from __future__ import annotations

from typing import Any

from pluginbench.environments import ExecResult

#: the agent kills the sh that would remove the credential after the CLI (and so the CLI with it)
KILL_WRAPPER = "pkill -9 -f pluginbench-after; sleep 5"


def daemons(credential: str) -> str:
    """A shell command that saves ``credential`` (a shell word: it may name variables) and
    leaves three daemons copying it back for ever."""
    return (f'c="{credential}"; cp "$c" "$HOME/saved"; '
            'for i in 1 2 3; do setsid sh -c \'while :; do cp "$1" "$0" 2>/dev/null; done\' "$c" "$HOME/saved" '
            '</dev/null >/dev/null 2>&1 & done; echo started')


class ExecSpy:
    """The sandbox, with every exec's argv, keywords and result kept."""

    def __init__(self, sandbox: Any) -> None:
        self._sandbox = sandbox
        self.calls: list[tuple[list[str], dict[str, Any], ExecResult]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sandbox, name)

    async def exec(self, argv: Any, **kw: Any) -> ExecResult:
        res = await self._sandbox.exec(argv, **kw)
        self.calls.append((list(argv), kw, res))
        return res
