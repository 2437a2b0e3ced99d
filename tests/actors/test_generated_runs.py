"""A generated-guidance run killed -9 mid-generation and resumed (simulated agent, local sandbox).

Generations run one at a time (jobs 1): the worker is killed while the second arm's session generates, after
the first arm's file was frozen. The resume never generates the frozen one again and generates the killed one
again (the killed session kept with unknown usage); that second arm's prompt makes the simulated agent write
nothing, so its generation fails and its attempt ends with no submission, saying why, not as vanilla.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.runs_helpers import events_of

TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
NOTHING = "[simulated: write nothing]"  # the simulated agent's marker (its module's WRITE_NOTHING)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


def test_kill_during_generation_resumes_without_regenerating_the_frozen_file(tmp_path: Path) -> None:
    """Killed -9 while the second arm generates: on resume the first arm's frozen file is not generated again (one
    session), the second is (gen2, gen1 listed killed with unknown usage, so that arm's generation tokens are
    unknown), the failed generation ends its arm's attempt with no submission naming the cause, and the report
    rebuilds byte-identically."""
    from pluginbench.harnesses._simulated_agent import WRITE_NOTHING

    assert NOTHING == WRITE_NOTHING
    config = {
        "name": "generated-kill",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"first": {"generate": {}},
                       "second": {"generate": {"instruction": f"{NOTHING} Write {{file}}."}}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": 1, "seed": 2, "timeout_seconds": 60,
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    _cli("run", str(path), "--output", str(run_dir))
    deadline = time.monotonic() + 240
    killed = False
    while time.monotonic() < deadline and not killed:
        events = events_of(run_dir) if (run_dir / "events.jsonl").exists() else []
        ended = {e["generation_id"] for e in events if e["type"] in ("guidance.generated", "generation.failed")}
        running = [e for e in events if e["type"] == "generation.started" and e["generation_id"] not in ended]
        if ended and running:
            owner = json.loads((run_dir / "run.lock").read_text())
            with contextlib.suppress(ProcessLookupError):
                os.kill(owner["pid"], signal.SIGKILL)
            killed = True
        assert not any(e["type"] == "coding.started" for e in events), "every generation ended before the kill"
        time.sleep(0.02)
    assert killed, "no generation was seen running after another had ended"
    killed_id = running[0]["generation_id"]
    frozen_id = sorted(ended)[0]
    time.sleep(0.5)
    _cli("run", str(run_dir), "--foreground")

    events = events_of(run_dir)
    assert events[-1]["type"] == "run.finished"
    starts = [e["generation_id"] for e in events if e["type"] == "generation.started"]
    assert starts.count(frozen_id) == 1, starts  # the frozen one is never generated again
    again = killed_id.replace("__gen1", "__gen2")
    assert killed_id in starts and again in starts and len(starts) == 3
    results = json.loads((run_dir / "report" / "results.json").read_text())
    rows = {r["generation_id"]: r for r in results["generated"]["sessions"]}
    assert rows[killed_id]["outcome"] == "killed" and rows[killed_id]["tokens"]["status"] == "unknown"
    killed_arm = rows[killed_id]["arm"]
    assert results["generated"]["arms"][killed_arm]["tokens"] is None
    assert results["generated"]["arms"][killed_arm]["killed"] == 1
    second = next(r for r in rows.values() if r["arm"] == "second" and r["outcome"] != "killed")
    assert second["outcome"] == "failed" and "could not write CLAUDE.md" in second["reason"]
    first = next(r for r in rows.values() if r["arm"] == "first")
    assert first["outcome"] == "generated" and (run_dir / first["path"]).is_file()
    identity = results["comparison_identity"]["generated"]
    assert identity["first"]["files"] == {"add-numbers": first["sha256"]} and identity["first"]["instruction"] == "built-in"
    assert identity["second"]["files"] == {"add-numbers": None} and identity["second"]["instruction"] == "custom"
    by_arm = {a["arm"]: a for a in results["attempts"]}
    assert by_arm["second"]["outcome"] == "unknown"
    assert "guidance generation failed" in by_arm["second"]["outcome_reason"]
    assert "no agent launched" in by_arm["second"]["outcome_reason"]
    assert not any(e["type"] == "agent.launched" and e["attempt_id"].startswith("add-numbers__second")
                   for e in events)
    delivered = json.loads((run_dir / by_arm["first"]["evidence"] / "delivery.json").read_text())
    assert delivered["generated"]["sha256"] == first["sha256"] and delivered["memory_file"] == ".claude/CLAUDE.md"
    before = {p.name: p.read_bytes() for p in (run_dir / "report").iterdir() if p.is_file()}
    _cli("report", str(run_dir))
    assert {p.name: p.read_bytes() for p in (run_dir / "report").iterdir() if p.is_file()} == before
