"""The nesting agent: the real Claude Code CLI, driven by the loopback probe, writes its
solution, then appends a line of 100,000 nested ``[`` to its own session transcript and into
the CLI's stdout (``/proc/<pid>/fd/1``). Python's JSON parser raises RecursionError on it;
before, the harness's host-side parse crashed, and the attempt was recorded as a harness
error with ``coding_seconds`` 0.0 (a false zero) and no integrity note. The line must be
read as an undecodable line like any other. When PluginBench runs as root the sandbox's own
uid cannot reopen the CLI's stdout (a pipe of host root's), so only the transcript gets it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import find_cli
from tests._prereq import require
from tests.actors._probe_run import PROBE_TASKS, run_probe_evaluation

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
    """The attempt keeps its exit code and measured coding time, tokens unknown with the reason, and is graded."""
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
    run, events = run_probe_evaluation(tmp_path, config, timeout=900)
    exited = next(e for e in events if e["type"] == "agent.exited")
    attempt = run / "evidence" / "attempts" / exited["attempt_id"]
    stdout_lines = (attempt / "agent" / "stdout.jsonl").read_text().splitlines()
    assert exited["error"] is None and exited["exit_code"] == 0, exited
    assert exited["coding_seconds"] > 0, exited
    if os.geteuid() == 0:  # the CLI's stdout is a pipe of host root's; the sandbox's own uid may not reopen it
        assert not any(line.startswith("[[[[") for line in stdout_lines), "the sandbox wrote into the CLI's stdout"
    else:
        assert any(line.startswith("[[[[") for line in stdout_lines), "the bomb did not reach the CLI's stdout"
        assert any("undecodable" in note for note in exited["integrity"]), exited
    assert exited["usage"]["status"] == "unknown" and "undecodable" in exited["usage"]["reason"], exited
    graded = next(e for e in events if e["type"] == "attempt.graded")
    assert graded["outcome"] == "pass", graded
