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


#: the leftovers task's verifier: reward 1 only when add() sums AND /logs/artifacts holds only model.patch
LEFTOVERS_VERIFIER = """#!/usr/bin/env bash
cd "${APP_DIR:-/app}" || exit 1
logs="${LOGS_DIR:-/logs}"
mkdir -p "$logs/verifier"
ls -A "$logs/artifacts" | sed 's/^/artifact /'
if [ "$(ls -A "$logs/artifacts")" = "model.patch" ] && [ -f "$logs/artifacts/model.patch" ] && \\
   python3 -c 'import solution, sys; sys.exit(0 if solution.add(2, 3) == 5 else 1)'; then
  echo 1 > "$logs/verifier/reward.txt"
else
  echo 0 > "$logs/verifier/reward.txt"
fi
"""
#: a host Python file the agent's leak.py symlink points at: two functions complexity would count
HOST_SOURCE = "def host_one(x):\n    return 1 if x else 2\n\n\ndef host_two(x):\n    return 2 if x else 3\n"


def _leftovers_script(other: Path, marker: Path, host_source: Path) -> str:
    """The agent's shell command: solve the task, then leave a setuid binary, a gitdir pointer to a host
    repository, a .gitmodules whose update runs a command, a symlink to a host source file, and
    /logs/artifacts tricks (a symlink, model.patch as a folder, a planted file)."""
    return (
        "printf 'def add(a, b):\\n    return a + b\\n' > solution.py; "
        "cp /usr/bin/id suid-id; chmod 4755 suid-id; "
        f"mkdir -p sub; printf 'gitdir: {other}/.git\\n' > sub/.git; echo sub > sub/file.txt; "
        f"printf '[submodule \"sub\"]\\n\\tpath = sub\\n\\turl = ./sub\\n\\tupdate = !touch {marker}\\n' > .gitmodules; "
        f"ln -s {host_source} leak.py; "
        'a="${LOGS_DIR:-/logs}/artifacts"; ln -s /etc/passwd "$a/link"; mkdir -p "$a/model.patch"; '
        'echo planted > "$a/planted.txt"; echo done'
    )


@pytest.mark.parametrize(("backend", "harness"), [
    ("local", "claude"),
    ("local", "codex"),
    pytest.param("docker", "claude", marks=pytest.mark.docker),
])
def test_what_the_agent_leaves_is_data_and_cannot_void_its_grade(tmp_path: Path, backend: str, harness: str) -> None:
    """A real agent that solves the task and leaves a setuid binary, a sub/.git pointer to a host repository, a
    .gitmodules update=!cmd, a symlink to a host source file and /logs/artifacts tricks: its export has no setuid
    bit, model.patch no other repository, nothing ran, complexity counts only add(), and the grade is a true pass
    with only model.patch in the verifier's /logs/artifacts."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    if backend == "docker":
        require(shutil.which("docker") is not None and subprocess.run(
            ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0,
            "docker engine and pluginbench/base:bookworm")
    other = tmp_path / "other"
    other.mkdir()
    (other / "secret.txt").write_text("host repository\n")
    git_env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "o", "GIT_AUTHOR_EMAIL": "o@x",
               "GIT_COMMITTER_NAME": "o", "GIT_COMMITTER_EMAIL": "o@x"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "other"]):
        subprocess.run(["git", *args], cwd=other, env=git_env, check=True, capture_output=True)
    other_head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=other, env=git_env, check=True,
                                capture_output=True, text=True).stdout.strip()
    host_source = tmp_path / "host_source.py"
    host_source.write_text(HOST_SOURCE)
    marker = tmp_path / "gitmodules-update-ran"
    tasks = tmp_path / "tasks"
    shutil.copytree(PROBE_TASKS / "add-numbers", tasks / "add-numbers")
    (tasks / "add-numbers" / "tests" / "test.sh").write_text(LEFTOVERS_VERIFIER)
    (tasks / "add-numbers" / "workspace" / "calc.py").write_text("def sub(a, b):\n    return a - b\n")  # Python to analyze
    command = _leftovers_script(other, marker, host_source)
    scenario = tmp_path / "leftovers.yaml"
    scenario.write_text(yaml.safe_dump({
        "name": "leftovers",
        "final": {"text": "Done.", "usage": {"input_tokens": 900, "output_tokens": 5}},
        "rules": [
            {"name": "claude-leftovers", "when": {"api": "anthropic", "tools_include": "Bash"},
             "script": [{"tool": {"name": "Bash", "input": {"command": command, "description": "Solve"}},
                         "usage": {"input_tokens": 800, "output_tokens": 30}}]},
            {"name": "codex-leftovers", "when": {"api": "responses"},
             "script": [{"tool": {"name": "shell", "input": {"command": command}},
                         "usage": {"input_tokens": 800, "output_tokens": 30}}]},
        ],
    }, sort_keys=False))
    config = {
        "name": f"leftovers-{backend}-{harness}",
        "tasks": {"source": str(tasks), "ids": ["add-numbers"]},
        "treatments": {},
        "runner": {"harness": harness, "model": MODELS[harness], "reasoning": "low", "probe": str(scenario),
                   "vanilla_cache": False},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 180,
        "environment": {"backend": "docker"} if backend == "docker" else {"isolation": "bubblewrap"},
        "measurements": ["tokens", "lines", "cyclomatic"],
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"))
    run = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (attempt,) = json.loads((run / "report" / "results.json").read_text())["attempts"]
    evidence = run / "evidence" / "attempts" / attempt["attempt_id"]
    exported = evidence / "export" / "suid-id"
    assert exported.is_file() and not exported.stat().st_mode & 0o7000, oct(exported.stat().st_mode)
    patch = (evidence / "model.patch").read_text()
    assert "b/solution.py" in patch and "b/sub/file.txt" in patch and "b/.gitmodules" in patch
    assert "Subproject commit" not in patch and other_head not in patch and "secret.txt" not in patch
    assert "sub/.git: a nested .git" in (evidence / "export.dropped.txt").read_text()
    assert not marker.exists()
    assert (attempt["outcome"], attempt["measures"]["functions_added"]["value"]) == ("pass", 1), attempt
    seen = (evidence / "grading" / "test-stdout.txt").read_text().split()
    assert seen == ["artifact", "model.patch"], seen
