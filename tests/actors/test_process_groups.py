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


def _own_session(call: ast.Call) -> bool:
    return any(k.arg == "start_new_session" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def test_every_process_spawn_starts_a_new_session() -> None:
    """Each subprocess/anyio/asyncio spawn in the package passes start_new_session=True (no os.system)."""
    seen, bad = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        for call in _spawn_calls(ast.parse(path.read_text(), str(path))):
            seen += 1
            if not _own_session(call):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{call.lineno}")
    assert seen >= 8, "the scan found too few spawns to be looking at the package"
    assert not bad, "child processes in the worker's process group (a stop would kill them): " + ", ".join(bad)


def test_the_scan_flags_a_spawn_without_its_own_session() -> None:
    """A spawn without start_new_session (or with it False) is caught; one with it True is not."""
    bad = ast.parse("import subprocess\nsubprocess.run(['git'], check=True)\nanyio.run_process(['x'], start_new_session=False)")
    good = ast.parse("subprocess.Popen(['x'], start_new_session=True)")
    assert [c.lineno for c in _spawn_calls(bad) if not _own_session(c)] == [2, 3]
    assert all(_own_session(c) for c in _spawn_calls(good))
