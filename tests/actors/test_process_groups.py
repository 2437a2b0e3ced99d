"""Every child process PluginBench starts lives in its own session, so a stop reaches only the worker."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pluginbench"
SPAWNERS = {
    ("subprocess", "run"), ("subprocess", "Popen"), ("subprocess", "call"), ("subprocess", "check_call"),
    ("subprocess", "check_output"), ("anyio", "run_process"), ("anyio", "open_process"),
    ("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell"),
    ("os", "system"), ("os", "popen"),
}


def _spawn_calls(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in SPAWNERS):
            calls.append(node)
    return calls


#: The only spawns that must keep the terminal's session: fzf draws on the controlling tty.
TERMINAL_UI = {"pluginbench/cli/_tasks.py"}


def _session(call: ast.Call) -> bool | None:
    """The literal start_new_session a call passes (None when it passes none)."""
    for k in call.keywords:
        if k.arg == "start_new_session" and isinstance(k.value, ast.Constant):
            return bool(k.value.value)
    return None


def _own_session(call: ast.Call) -> bool:
    return _session(call) is True


def test_every_process_spawn_starts_a_new_session() -> None:
    """Each subprocess/anyio/asyncio spawn passes start_new_session=True (only the fzf picker says False)."""
    seen, bad = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in _spawn_calls(ast.parse(path.read_text(), str(path))):
            seen += 1
            rel = str(path.relative_to(PACKAGE.parent))
            if _own_session(call) or (rel in TERMINAL_UI and _session(call) is False):
                continue  # a terminal UI says so explicitly, with start_new_session=False
            bad.append(f"{rel}:{call.lineno}")
    assert seen >= 8, "the scan found too few spawns to be looking at the package"
    assert not bad, "child processes in the worker's process group (a stop would kill them): " + ", ".join(bad)


def test_the_scan_flags_a_spawn_without_its_own_session() -> None:
    """A spawn without start_new_session (or with it False) is caught; one with it True is not."""
    bad = ast.parse("import subprocess\nsubprocess.run(['git'], check=True)\nanyio.run_process(['x'], start_new_session=False)")
    good = ast.parse("subprocess.Popen(['x'], start_new_session=True)")
    assert [c.lineno for c in _spawn_calls(bad) if not _own_session(c)] == [2, 3]
    assert all(_own_session(c) for c in _spawn_calls(good))
