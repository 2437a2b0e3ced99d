"""The root-and-network escape agent: a real agent CLI, driven by the loopback probe,
runs a shell script in its coding sandbox that tries what root and a shared network
namespace used to allow, and writes one ``blocked``/``LEAK`` line per probe to
``escape.txt`` in the workspace (the canonical patch carries the agent's own report):

* open ``/proc/sys/kernel/core_pattern`` for writing (append mode: on a leaking sandbox
  the open succeeds and nothing is written, so the host's setting stays as it was);
* connect to a canary TCP service and to the real dashboard on the host's 127.0.0.1;
* ``keyctl`` on the session keyring (a shared kernel keyring);
* find the folder's token in any process's command line or environment under ``/proc``
  (bubblewrap's own argv used to name the run and hidden host folders; ``PATH`` carried
  the host's folders).

The attempt finishing with the agent's final answer is the proof the probe still
answered the CLI through the sandbox's egress.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import find_cli
from tests._prereq import require

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
PROBE_TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
           "OPENAI_API_KEY", "CODEX_API_KEY")
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5"}
KEYCTL = ("import ctypes,sys;l=ctypes.CDLL(None,use_errno=True);"
          "r=l.syscall(250 if sys.maxsize>2**32 and __import__('platform').machine()=='x86_64' else 219,0,-3,1,0,0);"
          "sys.exit(0 if r>=0 else 1)")
PROBES = ("core_pattern", "canary", "dashboard", "keyctl", "proc-token")


def _script(token: str, canary: int, dashboard: int) -> str:
    """One line per probe: ``LEAK <probe>`` when the sandbox let it through."""
    def line(name: str, attempt: str) -> str:
        return f'if {attempt}; then echo "LEAK {name}" >> "$out"; else echo "blocked {name}" >> "$out"; fi; '
    return (
        'out="$PWD/escape.txt"; : > "$out"; '
        + line("core_pattern", "(exec 3>>/proc/sys/kernel/core_pattern) 2>/dev/null")
        + line("canary", f"timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{canary}' 2>/dev/null")
        + line("dashboard", f"timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{dashboard}' 2>/dev/null")
        + line("keyctl", f'python3 -c "{KEYCTL}" 2>/dev/null')
        # The pattern is assembled in a file, so no command line of the script carries it.
        + f"printf '%s%s\\n' {token[:5]} {token[5:]} > /tmp/pattern; "
        + line("proc-token", "cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -qf /tmp/pattern")
        + 'echo done >> "$out"'
    )


def _scenario(command: str, folder: Path) -> Path:
    doc = {
        "name": "root-network",
        "final": {"text": "Looked around.", "usage": {"input_tokens": 900, "output_tokens": 5}},
        "rules": [
            {"name": "claude-escape", "when": {"api": "anthropic", "tools_include": "Bash"},
             "script": [{"tool": {"name": "Bash", "input": {"command": command, "description": "Look around"}},
                         "usage": {"input_tokens": 800, "output_tokens": 30}}]},
            {"name": "codex-escape", "when": {"api": "responses"},
             "script": [{"tool": {"name": "shell", "input": {"command": ["bash", "-c", command]}},
                         "usage": {"input_tokens": 800, "output_tokens": 30}}]},
        ],
    }
    path = folder / "root-network.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _report(patch: str) -> list[str]:
    """The lines escape.txt got, read from the canonical patch that adds it."""
    lines, inside = [], False
    for line in patch.splitlines():
        if line.startswith("diff --git"):
            inside = line.endswith("b/escape.txt")
        elif inside and line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    return lines


class Canary:
    """A TCP service on the host's 127.0.0.1 that hands a secret to whoever connects."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            conn.sendall(b"canary-secret\n")
            conn.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dashboard(tmp_path: Path):
    """The real dashboard on the host's 127.0.0.1 (over an empty runs folder): its port."""
    port = _free_port()
    (tmp_path / "dash-runs").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "pluginbench", "dashboard", str(tmp_path / "dash-runs"),
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("the dashboard did not start")
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize(("backend", "harness"), [
    ("local", "claude"),
    ("local", "codex"),
    pytest.param("docker", "claude", marks=pytest.mark.docker),
    pytest.param("docker", "codex", marks=pytest.mark.docker),
])
def test_root_and_network_probes_are_blocked_while_the_probe_answers(
        tmp_path: Path, dashboard: int, backend: str, harness: str) -> None:
    """An agent running as root cannot open core_pattern for writing, reach a host 127.0.0.1 service or the
    dashboard, use the kernel keyring, or read a host path in any /proc command line or environment, and its
    CLI still reaches the probe."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    if backend == "docker":
        require(shutil.which("docker") is not None and subprocess.run(
            ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0,
            "docker engine and pluginbench/base:bookworm")
    token = "pbnet" + secrets.token_hex(6)
    # The run folder, the tasks, the sandboxes' host folders and a PATH entry carry the token.
    base = tmp_path / token
    shutil.copytree(PROBE_TASKS / "add-numbers", base / "tasks" / "add-numbers")
    (base / "bin").mkdir()
    canary = Canary()
    config = {
        "name": f"root-network-{backend}-{harness}",
        "tasks": {"source": str(base / "tasks"), "ids": ["add-numbers"]},
        "treatments": {},
        "runner": {"harness": harness, "model": MODELS[harness], "reasoning": "low",
                   "probe": str(_scenario(_script(token, canary.port, dashboard), tmp_path))},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 180,
        "environment": {"backend": "docker"} if backend == "docker" else {"isolation": "bubblewrap"},
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env["PATH"] = f"{base / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}"
    (base / "tmp").mkdir()
    env["TMPDIR"] = str(base / "tmp")  # the local sandboxes' host folders carry the token
    run = base / "runs" / "current"
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run / "report" / "results.json").read_text())
    (attempt,) = [a["attempt_id"] for a in results["attempts"]]
    report = _report((run / "evidence" / "attempts" / attempt / "model.patch").read_text())
    assert report and report[-1] == "done", report
    assert sorted(line.split(" ", 1)[1] for line in report[:-1]) == sorted(PROBES), report
    assert [line for line in report if line.startswith("LEAK")] == [], report
    assert canary.hits == 0
