"""A local bubblewrap command without the egress forwarder, and files removed in the command's own launch
(``remove_after``): confirmed only by the host, so the command's code cannot fake the removal."""

from __future__ import annotations

import os
import shutil
import socket
import threading
from pathlib import Path

import anyio
import pytest

from pluginbench.environments import Egress, LocalEnvironment, SandboxSpec, bwrap_available
from pluginbench.environments._local_after import NamespaceWatch, confirmed_absent
from tests._prereq import require

CRED = "/home/agent/.cfg/.credentials.json"


def test_confirmed_absent_follows_no_symlink(tmp_path: Path) -> None:
    """Absence is confirmed for a missing file or folder, never for a present file or a path through a symlink."""
    (tmp_path / "home" / ".cfg").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    home = tmp_path / "home"
    assert confirmed_absent(home, ".cfg/.credentials.json")
    assert confirmed_absent(home, "gone/.credentials.json")
    (home / ".cfg" / ".credentials.json").write_text("{}")
    assert not confirmed_absent(home, ".cfg/.credentials.json")
    os.symlink(tmp_path / "elsewhere", home / "link")
    assert not confirmed_absent(home, "link/.credentials.json")  # the host cannot tell: the sandbox rm still runs
    os.symlink(tmp_path / "nowhere", home / ".cfg" / "dangling")
    assert not confirmed_absent(home, ".cfg/dangling")  # a dangling symlink is something rm -f would remove


@pytest.fixture
def probe_port():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"probe")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


_CONNECT = ("import socket,sys\ntry: print(socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=3)"
            ".recv(9).decode())\nexcept OSError: print('refused')\n")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_remove_after_is_confirmed_only_when_the_file_is_gone(tmp_path: Path, probe_port: int) -> None:
    """Without egress a command has loopback only; remove_after keeps the command's exit status and environment
    and is confirmed after a normal exit, but not when the command kills its wrapper, hangs to the deadline,
    makes the removal fail, or leaves daemons writing the file again."""
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    (tmp_path / "ws").mkdir()
    secret = tmp_path / "cred.json"
    secret.write_text('{"token": "x"}')
    spec = SandboxSpec(run_id="r", attempt_id="a", role="coding", task="t", workspace=tmp_path / "ws",
                       egress=Egress("probe", port=probe_port))
    async with LocalEnvironment("bubblewrap", root=tmp_path / "boxes").sandbox(spec) as sb:
        on_host = sb.root / "home" / ".cfg" / ".credentials.json"

        async def run(script: str, **kw):
            await sb.put(secret, CRED)
            return await sb.exec(["sh", "-c", script], remove_after=(CRED,), **kw)

        reach = [await sb.exec(["python3", "-c", _CONNECT, str(probe_port)], egress=e) for e in (True, False)]
        assert [r.stdout.decode().strip() for r in reach] == ["probe", "refused"]
        plain = await sb.exec(["env"])
        done = await run("env; exit 3")
        assert (done.exit_code, done.removed, on_host.exists()) == (3, True, False)
        assert sorted(done.stdout.splitlines()) == sorted(plain.stdout.splitlines())  # no PWD of the wrapper's

        killed = await run('kill -9 "$PPID"; sleep 5')
        assert (killed.removed, on_host.exists()) == (False, True)
        hung = await run("sleep 30", timeout=1)
        assert (hung.exit_code, hung.removed, on_host.exists()) == (None, False, True)
        locked = await run('chmod 500 "$HOME/.cfg"')  # the rm fails: nothing can be confirmed
        assert (locked.exit_code, locked.removed, on_host.exists()) == (0, False, True)
        await sb.exec(["chmod", "700", "/home/agent/.cfg"])

        # Daemons that outlive the command and keep writing the file: whoever wins the race, the result
        # says what the host sees, and nothing is left running to change it afterwards.
        daemon = f'for i in 1 2 3 4; do setsid sh -c \'while :; do : > "$0"; done\' {CRED} & done; sleep 0.3'
        for _ in range(3):
            left = await run(daemon)
            there = on_host.exists()
            assert left.removed == (not there)
            await anyio.sleep(0.2)
            assert on_host.exists() == there


async def _gone(pid_json: bytes, timeout: float) -> bool:
    """What a watch whose bubblewrap reported ``pid_json`` says."""
    watch = NamespaceWatch()
    os.write(watch.write_fd, pid_json)
    os.close(watch.write_fd)
    try:
        return await watch.gone(timeout=timeout)
    finally:
        watch.close()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_namespace_watch_says_gone_only_once_pid_1_has_ended() -> None:
    """The watch reads the pid bubblewrap reports: a live process is not gone (within the wait), an ended or
    reaped one is, and an unreadable report is never taken for gone."""
    import subprocess

    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert not await _gone(b'{"child-pid": %d}' % proc.pid, timeout=0.1)
        proc.kill()
        assert await _gone(b'{\n    "child-pid": %d\n}\n' % proc.pid, timeout=5)  # a zombie has ended
    finally:
        proc.kill()
        proc.wait()
    assert await _gone(b'{"child-pid": %d}' % proc.pid, timeout=0.1)  # reaped
    for bad in (b"", b"{", b'{"child-pid": "1"}', b'{"child-pid": 1}', b"[]"):
        assert not await _gone(bad, timeout=0.1)
