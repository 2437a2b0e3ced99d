"""Limits against a real agent: the real Claude Code CLI, driven by the loopback probe on
the local backend (bubblewrap), runs a fork bomb of 5,000 processes, allocates past the
task's ``memory_mb``, or leaves a sparse file over the patch bound. The attempt ends with
the execution outcome ``resource_limit`` (recorded in execution.json, and for the first two
in the ``agent.exited`` event), the run finishes, and no process of the attempt is left on
the machine. The task's limits are small (128 processes, 768 MB) so the test's real load
stays modest.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from pluginbench.environments._limits import Cgroup, limits_of
from pluginbench.probe import find_cli
from tests._prereq import require
from tests.actors._probe_run import claude_add_numbers, run_probe_evaluation

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
MARK = "PB_LIMIT_TEST_MARK"
SCRIPTS = {
    "fork-bomb": f"export {MARK}=1; i=0; while [ $i -lt 5000 ]; do sleep 120 & i=$((i+1)); done; wait",
    "memory": (f"export {MARK}=1; python3 -c 'import time\nb = []\nfor i in range(150):\n"
               "    b.append(bytearray(10 * 1024 * 1024))\ntime.sleep(120)'"),
}


def _cgroups_usable() -> bool:
    box = Cgroup.create(f"pluginbench-probe-{os.getpid()}", limits_of(64, None, 16, None))
    if box is None:
        return False
    box.remove()
    return True


def _scenario(folder: Path, command: str) -> Path:
    doc = {
        "name": "limits",
        "final": {"text": "Done.", "usage": {"input_tokens": 900, "output_tokens": 5}},
        "rules": [{"name": "claude-limit", "when": {"api": "anthropic", "tools_include": "Bash"},
                   "script": [{"tool": {"name": "Bash", "input": {"command": command, "description": "Load"}},
                               "usage": {"input_tokens": 800, "output_tokens": 30}}]}],
    }
    path = folder / "limits.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _marked_processes() -> list[int]:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if f"{MARK}=1".encode() in Path(f"/proc/{p}/environ").read_bytes():
                    out.append(int(p))
            except OSError:
                continue
    return out


@pytest.mark.parametrize(("load", "needle"), [("fork-bomb", "processes:"), ("memory", "memory:")])
def test_an_agent_past_its_limits_ends_with_resource_limit(tmp_path: Path, load: str, needle: str) -> None:
    """A fork bomb (5,000 processes against 128) or an allocation past memory_mb (768 MB) ends the attempt
    with resource_limit naming the limit, well before the load's own 120 s, and leaves nothing running."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    require(_cgroups_usable(), "root and a writable cgroup file system")
    config, task = claude_add_numbers(tmp_path, f"limits-{load}", _scenario(tmp_path, SCRIPTS[load]), 150)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('[environment]\n', '[environment]\nmemory_mb = 768\npids_limit = 128\n'))
    run, events = run_probe_evaluation(tmp_path, config, timeout=600)
    exited = next(e for e in events if e["type"] == "agent.exited")
    assert exited["resource_limit"] and needle in exited["resource_limit"], exited
    assert exited["coding_seconds"] < 100, "the load ran to its own end instead of being stopped"
    attempt = run / "evidence" / "attempts" / exited["attempt_id"]
    execution = json.loads((attempt / "execution.json").read_text())
    assert execution["execution_outcome"] == "resource_limit"
    assert execution["limits"]["pids"] == 128 and execution["limits"]["memory_mb"] == 768
    assert execution["limits"]["mechanism"].startswith("cgroup")
    assert _marked_processes() == []


def test_an_agent_leaving_a_big_new_file_ends_with_resource_limit_before_the_host_diffs_it(tmp_path: Path) -> None:
    """An agent that leaves a sparse 300 MiB file in its workspace (no disk, no memory in the sandbox) ends
    the attempt with resource_limit naming the file and the 256 MiB patch bound: no canonical patch, no
    grade, and the run finishes (host-side git would have held the file whole in memory to diff it)."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    config, _ = claude_add_numbers(tmp_path, "limits-sparse", _scenario(tmp_path, "truncate -s 300M zeros.bin"), 150)
    run, events = run_probe_evaluation(tmp_path, config, timeout=600)
    assert events[-1]["type"] == "run.finished"
    completed = next(e for e in events if e["type"] == "attempt.completed")
    attempt = run / "evidence" / "attempts" / completed["attempt_id"]
    execution = json.loads((attempt / "execution.json").read_text())
    assert execution["execution_outcome"] == "resource_limit", execution
    assert "zeros.bin is 300 MiB and not the starting source's, over the 256 MiB patch bound" in \
        execution["resource_limit"], execution
    assert not (attempt / "model.patch").exists()
    assert not any(e["type"] == "attempt.graded" and e.get("reward") is not None for e in events)
