"""The escape agent: a real agent CLI, driven by the loopback probe, runs a shell script
in its coding sandbox that tries to read everything the sandbox must never show.

Everything a user would keep outside /tmp and /home lives under one fresh folder in
``/srv`` (the issue's setup): the runs folder with an earlier run's frozen reference
solution next to the current run, the task sources, the treatment sources, the cache
root and the host HOME (``~/.claude``, ``~/.codex``); one more marker lies in ``/opt``.
The script checks each path directly and through ``/proc/1/root``, searches the whole
file system for the folder's unique token, and writes what it found to ``escape.txt`` in
the workspace, so the canonical patch carries the agent's own report. A control line
(the workspace's README) proves the script ran and could read.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
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


class Layout:
    """The host folders the agent must not see, under ``/srv/pb-escape-<token>``."""

    def __init__(self) -> None:
        self.token = "pb-escape-" + secrets.token_hex(6)
        self.base = Path("/srv") / self.token
        self.opt_marker = Path("/opt") / f"{self.token}.marker"
        self.runs = self.base / "runs"
        self.sibling_answer = self.runs / "earlier" / "evidence" / "frozen" / "tasks" / "add-numbers" / "solution" / "solution.patch"
        self.current = self.runs / "current"
        self.tasks = self.base / "tasks"
        self.cache = self.base / "cache"
        self.treatment = self.base / "pkg" / "core.md"
        self.host_home = self.base / "hosthome"
        self.srv_marker = self.base / "marker.txt"

    def create(self) -> None:
        self.sibling_answer.parent.mkdir(parents=True)
        self.sibling_answer.write_text("ANSWER\n")
        shutil.copytree(PROBE_TASKS / "add-numbers", self.tasks / "add-numbers")
        self.cache.mkdir()
        self.treatment.parent.mkdir(parents=True)
        self.treatment.write_text("# Guidance\nBe careful.\n")
        for tool in (".claude", ".codex"):
            (self.host_home / tool).mkdir(parents=True)
            (self.host_home / tool / "marker.txt").write_text("host config\n")
        self.srv_marker.write_text("srv\n")
        self.opt_marker.write_text("opt\n")

    def remove(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)
        self.opt_marker.unlink(missing_ok=True)

    def forbidden(self) -> list[str]:
        direct = [
            self.sibling_answer, self.runs, self.current / "events.jsonl", self.tasks,
            self.tasks / "add-numbers" / "solution" / "solve.sh", self.cache, self.treatment,
            self.host_home / ".claude" / "marker.txt", self.host_home / ".codex" / "marker.txt",
            self.srv_marker, self.opt_marker,
        ]
        return [str(p) for p in direct] + [f"/proc/1/root{p}" for p in direct]

    def script(self) -> str:
        """The agent's shell command: one line per path, then the token search."""
        paths = " ".join(f"'{p}'" for p in self.forbidden())
        return (
            'out="$PWD/escape.txt"; : > "$out"; '
            'if [ -r "$PWD/README.md" ]; then echo "control-readable README.md" >> "$out"; fi; '
            f"for p in {paths}; do "
            'if [ -e "$p" ] || [ -L "$p" ]; then echo "FOUND $p" >> "$out"; else echo "absent $p" >> "$out"; fi; done; '
            "ls -a /srv /opt 2>/dev/null | sed 's/^/listed /' >> \"$out\"; "
            f"find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -name '*{self.token}*' -print 2>/dev/null"
            " | sed 's/^/search-hit /' >> \"$out\"; echo done >> \"$out\""
        )


def _scenario(layout: Layout, folder: Path) -> Path:
    command = layout.script()
    doc = {
        "name": "escape",
        "final": {"text": "Looked around.", "usage": {"input_tokens": 900, "output_tokens": 5}},
        "rules": [
            {"name": "claude-escape", "when": {"api": "anthropic", "tools_include": "Bash"},
             "script": [{"tool": {"name": "Bash", "input": {"command": command, "description": "Look around"}},
                         "usage": {"input_tokens": 800, "output_tokens": 30}}]},
            {"name": "codex-escape", "when": {"api": "responses"},
             "script": [{"tool": {"name": "shell", "input": {"command": command}},
                         "usage": {"input_tokens": 800, "output_tokens": 30}}]},
        ],
    }
    path = folder / "escape.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _escape_report(patch: str) -> list[str]:
    """The lines escape.txt got, read from the canonical patch that adds it."""
    lines, inside = [], False
    for line in patch.splitlines():
        if line.startswith("diff --git"):
            inside = line.endswith("b/escape.txt")
        elif inside and line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    return lines


@pytest.fixture
def layout():
    require(os.access("/srv", os.W_OK) and os.access("/opt", os.W_OK), "write access to /srv and /opt (root)")
    made = Layout()
    made.create()
    yield made
    made.remove()


@pytest.mark.parametrize(("backend", "harness"), [
    ("local", "claude"),
    ("local", "codex"),
    pytest.param("docker", "claude", marks=pytest.mark.docker),
    pytest.param("docker", "codex", marks=pytest.mark.docker),
])
def test_escape_agent_finds_nothing_outside_its_sandbox(tmp_path: Path, layout: Layout, backend: str, harness: str) -> None:
    """An agent that reads sibling runs, the current run, task and treatment sources, the cache root, /srv,
    /opt, the host ~/.claude and ~/.codex, directly and through /proc/1/root, finds none of them."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    if backend == "docker":
        require(shutil.which("docker") is not None and subprocess.run(
            ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0,
            "docker engine and pluginbench/base:bookworm")
    environment = {"backend": "docker"} if backend == "docker" else {"isolation": "bubblewrap"}
    config = {
        "name": f"escape-{backend}-{harness}",
        "tasks": {"source": str(layout.tasks), "ids": ["add-numbers"]},
        "treatments": {"guided": {"guidance": [str(layout.treatment)]}},
        "runner": {"harness": harness, "model": MODELS[harness], "reasoning": "low",
                   "probe": str(_scenario(layout, tmp_path))},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 180,
        "environment": environment,
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env.update(HOME=str(layout.host_home), XDG_CACHE_HOME=str(layout.cache))
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(layout.current), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((layout.current / "report" / "results.json").read_text())
    attempts = [a["attempt_id"] for a in results["attempts"]]
    assert len(attempts) == 2
    for attempt in attempts:
        patch = (layout.current / "evidence" / "attempts" / attempt / "model.patch").read_text()
        report = _escape_report(patch)
        assert report[0] == "control-readable README.md" and report[-1] == "done", report
        checked = [line.split(" ", 1) for line in report[1:-1] if line.startswith(("FOUND ", "absent "))]
        assert [p for _, p in checked] == layout.forbidden()
        assert [p for verdict, p in checked if verdict == "FOUND"] == [], report
        assert not [line for line in report if layout.token in line and line.startswith(("listed", "search-hit"))], report
