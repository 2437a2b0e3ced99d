"""The nesting agent: the real Claude Code CLI, driven by the loopback probe, writes its
solution, then appends a line of 100,000 nested ``[`` to its own session transcript and into
the CLI's stdout (``/proc/<pid>/fd/1``). Python's JSON parser raises RecursionError on it;
before, the harness's host-side parse crashed, and the attempt was recorded as a harness
error with ``coding_seconds`` 0.0 (a false zero) and no integrity note. The line must be
read as an undecodable line like any other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import find_cli
from tests._prereq import require
from tests.actors.test_forged_evidence import PROBE_TASKS, REFUSED

pytestmark = [pytest.mark.realcli, pytest.mark.slow]

_BOMB = ("import glob, os\n"
         "line = '[' * 100000 + ']' * 100000 + '\\n'\n"
         "for f in glob.glob(os.path.expandvars('$CLAUDE_CONFIG_DIR/projects/*/*.jsonl')):\n"
         "    open(f, 'a').write(line)\n"
         "for p in os.listdir('/proc'):\n"
         "    try:\n"
         "        if p.isdigit() and p != str(os.getpid()) and b'claude' in open(f'/proc/{p}/cmdline', 'rb').read():\n"
         "            open(f'/proc/{p}/fd/1', 'a').write(line)\n"
         "    except OSError:\n"
         "        pass\n")
SCRIPT = ("printf 'def add(a, b):\\n    return a + b\\n' > solution.py; "
          f"python3 - <<'PY'\n{_BOMB}PY\n")


def test_a_nested_json_bomb_in_the_transcript_and_stdout_is_an_undecodable_line(tmp_path: Path) -> None:
    """The attempt keeps its exit code and measured coding time, carries an integrity note and is graded."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    tasks = tmp_path / "tasks"
    shutil.copytree(PROBE_TASKS / "add-numbers", tasks / "add-numbers")
    doc = {"name": "nest", "final": {"text": "Done.", "usage": {"input_tokens": 900, "output_tokens": 5}},
           "rules": [{"name": "claude-nest", "when": {"api": "anthropic", "tools_include": "Bash"},
                      "script": [{"tool": {"name": "Bash", "input": {"command": SCRIPT, "description": "Nest"}},
                                  "usage": {"input_tokens": 800, "output_tokens": 30}}]}]}
    scenario = tmp_path / "nest.yaml"
    scenario.write_text(yaml.safe_dump(doc, sort_keys=False))
    config = {"name": "nest-local-claude", "tasks": {"source": str(tasks), "ids": ["add-numbers"]}, "treatments": {},
              "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low", "probe": str(scenario)},
              "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 180, "environment": {"isolation": "bubblewrap"}}
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    run = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    exited = next(e for e in events if e["type"] == "agent.exited")
    attempt = run / "evidence" / "attempts" / exited["attempt_id"]
    assert "[[[[[[[[" in (attempt / "agent" / "stdout.jsonl").read_text(), "the bomb did not reach the CLI's stdout"
    assert exited["error"] is None and exited["exit_code"] == 0, exited
    assert exited["coding_seconds"] > 0, exited
    assert any("undecodable" in note for note in exited["integrity"]), exited
    assert exited["usage"]["status"] == "unknown" and "undecodable" in exited["usage"]["reason"], exited
    graded = next(e for e in events if e["type"] == "attempt.graded")
    assert graded["outcome"] == "pass", graded
