"""A generated-guidance arm through the real Claude Code CLI and the loopback probe (issue 25 item 5).

The generating session (PluginBench's built-in prompt) writes CLAUDE.md holding the guidance marker and a
scratch file; only CLAUDE.md is kept, frozen and hash-bound, and delivered natively to the arm's coding
attempt, whose requests then carry the marker (the scripted model writes the correct fix only then), while
vanilla's do not. The generation's usage equals what the probe served for it, and its dollars are in the
arm's cost. A rebuilt report is byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from tests._prereq import require
from tests.harnesses._claude_pkg import MARKER

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")
MODEL = "claude-sonnet-4-5"


def _served(requests: list[dict], rule_prefix: str) -> int:
    """Total tokens (Anthropic: input, cache reads and writes, output) the probe served on completed turns of rules
    whose name starts with ``rule_prefix``."""
    total = 0
    for r in requests:
        if r["kind"] == "coding" and r["completed"] and r["status"] == 200 and r["usage"] and r["rule"].startswith(rule_prefix):
            u = r["usage"]
            total += u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] + u["output_tokens"]
    return total


def test_generated_file_is_delivered_natively_and_its_usage_is_counted(tmp_path: Path) -> None:
    """The generated CLAUDE.md (and nothing else the session wrote) is the arm's guidance: frozen under evidence with
    its sha256 in the receipt and results, its marker reaches the coding requests (pass) while vanilla's lack it
    (fail), the generation's tokens equal the probe's, its dollars are in the arm's total, and report rebuilds
    are byte-identical."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    config = {
        "name": "generated-claude",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"generated": {"generate": {"model": MODEL}, "task_owned": "remove"}},
        "runner": {"harness": "claude", "model": MODEL, "reasoning": "low",
                   "probe": str(SCENARIOS_DIR / "generate-guidance.yaml")},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env["PLUGINBENCH_VANILLA_CACHE"] = "off"  # vanilla must be coded here (its requests are asserted); readiness may be cached
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir),
                           "--foreground", "--yes"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    (session,) = results["generated"]["sessions"]
    assert session["outcome"] == "generated" and session["file"] == "CLAUDE.md"
    assert session["discarded_changes"] == ["scratch-notes.txt"]
    frozen = (run_dir / session["path"]).read_bytes()
    assert MARKER.encode() in frozen and hashlib.sha256(frozen).hexdigest() == session["sha256"]
    # The coding attempt's receipt: the frozen file delivered natively as the user's CLAUDE.md, bound by its hash.
    by_arm = {a["arm"]: a for a in results["attempts"]}
    delivery = json.loads((run_dir / by_arm["generated"]["evidence"] / "delivery.json").read_text())
    assert delivery["generated"]["sha256"] == session["sha256"]
    assert delivery["generated"]["fingerprint"] == session["fingerprint"]
    receipt = json.loads((run_dir / by_arm["generated"]["evidence"] / "native-treatment.json").read_text())
    assert receipt["memory_files"], receipt
    assert not json.loads((run_dir / by_arm["vanilla"]["evidence"] / "native-treatment.json").read_text())["memory_files"]
    # Only the file was carried over: the coding patch never holds the scratch file.
    assert "scratch-notes.txt" not in (run_dir / by_arm["generated"]["evidence"] / "model.patch").read_text()
    # The marker reached the treated arm's requests and not vanilla's: the scripted fix follows it.
    assert results["per_task"]["add-numbers"]["generated"]["pass_rate"] == 1.0
    assert results["per_task"]["add-numbers"]["vanilla"]["pass_rate"] == 0.0
    requests = [json.loads(line) for line in (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines()]
    rules = [r["rule"] for r in requests if r["kind"] == "coding"]
    assert "claude-generate" in rules and "claude-guided" in rules and "claude-vanilla" in rules
    # Usage: exact and equal to what the probe served the generating session; dollars counted in the arm.
    assert session["tokens"]["status"] == "exact" and session["tokens"]["total"] == _served(requests, "claude-generate")
    totals = results["generated"]["arms"]["generated"]
    assert totals["tokens"] == session["tokens"]["total"] and totals["seconds"] == session["seconds"] > 0
    costs = results["costs"]
    gen_usd = costs["generation"]["generated"]["usd"]
    assert gen_usd is not None and gen_usd > 0
    assert costs["arms"]["generated"]["usd"] == pytest.approx(costs["attempts"][by_arm["generated"]["attempt_id"]]["usd"] + gen_usd)
    html = (run_dir / "report" / "report.html").read_text()
    assert 'id="generated-sessions"' in html and session["sha256"][:12] in html and f'href="../{session["path"]}"' in html
    before = ((run_dir / "report" / "results.json").read_bytes(), (run_dir / "report" / "report.html").read_bytes())
    rebuilt = subprocess.run([sys.executable, "-m", "pluginbench", "report", str(run_dir)], capture_output=True,
                             text=True, env=env, timeout=120)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert ((run_dir / "report" / "results.json").read_bytes(), (run_dir / "report" / "report.html").read_bytes()) == before
