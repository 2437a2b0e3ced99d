"""A whole probe evaluation with the real Claude Code CLI: one package whose skill triggers and one whose
skill never does. results.json, results.csv and report.html say which arm exercised its package."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pluginbench.measures._activation_spec import verdicts
from pluginbench.probe import find_cli
from tests._prereq import require
from tests.harnesses._claude_pkg import write

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")
TRIGGER = "PB-TRIGGER-ME"
WRITE = {"name": "Write", "input": {"file_path": "{{cwd}}/solution.py", "content": "def add(a, b):\n    return a + b\n"}}
SCENARIO = {
    "name": "activation-eval",
    "final": {"text": "Done.", "usage": {"input_tokens": 900, "output_tokens": 5}},
    "rules": [
        {"name": f"triggered-{where}", "when": {"api": "anthropic", "tools_include": "Write", f"{where}_contain{'s' if where == 'system' else ''}": TRIGGER},
         "script": [{"tool": {"name": "Skill", "input": {"skill": "triggers"}}}, {"tool": WRITE}]}
        for where in ("system", "messages")
    ] + [{"name": "plain", "when": {"api": "anthropic", "tools_include": "Write"}, "script": [{"tool": WRITE}]}],
}


def test_probe_evaluation_reports_which_package_was_exercised(tmp_path: Path) -> None:
    """The arm whose skill the scripted agent invokes is 'exercised' (rate 1), the arm whose skill it never
    invokes is 'not exercised' (rate 0), vanilla has no components; the CSV carries the per-component values
    and report.html shows the words."""
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    triggers = write(tmp_path / "a" / "triggers" / "SKILL.md",
                     f"---\nname: triggers\ndescription: {TRIGGER} use me for every sum.\n---\nAdd carefully.\n").parent
    dormant = write(tmp_path / "b" / "dormant" / "SKILL.md",
                    "---\nname: dormant\ndescription: For deleting databases only.\n---\nNever.\n").parent
    scenario = write(tmp_path / "scenario.yaml", yaml.safe_dump(SCENARIO))
    config = {
        "name": "activation-eval",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"triggering": {"skills": [str(triggers)]}, "dormant": {"skills": [str(dormant)]}},
        "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low", "probe": str(scenario),
                   "vanilla_cache": False},
        "measurements": ["tokens", "time", "lines", "activation", "checks"],
        "measurement_settings": {"checks": [
            {"name": "used-triggers", "kind": "tool_used", "skill": "triggers"},
            {"name": "has-solution", "kind": "file_exists", "path": "solution.py", "content_regex": r"return a \+ b"},
            {"name": "said-done", "kind": "regex", "target": "answer", "pattern": "^Done"}]},
        "repeats": 2, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }
    path = write(tmp_path / "evaluation.yaml", yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir),
                           "--foreground", "--yes"], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    per_arm = results["activation"]["per_arm"]
    assert per_arm["triggering"]["label"] == "exercised" and per_arm["triggering"]["any"]["rate"] == 1.0
    assert per_arm["triggering"]["components"]["skill:triggers"]["rate"] == 1.0
    assert per_arm["triggering"]["components"]["skill:triggers"]["median_first_turn"] == 1
    assert per_arm["dormant"]["label"] == "not exercised" and per_arm["dormant"]["exercised"] is False
    assert per_arm["dormant"]["components"]["skill:dormant"] == {
        "owner": "treatment", "used": 0, "not_used": 2, "unknown": 0, "rate": 0.0, "exercised": False,
        "label": "not exercised", "median_first_turn": None}
    assert per_arm["vanilla"]["label"] == "no components"
    split = per_arm["triggering"]["outcomes_by_activation"]
    assert split["used"]["attempts"] == 2 and "not causal" in split["note"]
    rows = list(csv.DictReader((run_dir / "report" / "results.csv").open()))
    used = [r for r in rows if r["measure"] == "measures.activation:skill:triggers"]
    assert [r["value"] for r in used] == ["1", "1"]
    # The graders: their own columns, never the outcome.
    by = {(r["attempt_id"], r["measure"]): r["value"] for r in rows}
    for a in results["attempts"]:
        assert a["outcome"] == "pass"
        assert a["measures"]["check:has-solution"]["value"] == 1 and a["measures"]["check:said-done"]["value"] == 1
        assert a["measures"]["check:used-triggers"]["value"] == (1 if a["arm"] == "triggering" else 0)
        assert by[(a["attempt_id"], "measures.check:used-triggers")] in ("0", "1")
    html = (run_dir / "report" / "report.html").read_text()
    assert "Was the package exercised?" in html and "not exercised" in html
    # The checks section: each grader's share per arm beside the verifier.
    assert results["checks"]["per_arm"]["triggering"]["used-triggers"]["rate"] == 1.0
    assert results["checks"]["per_arm"]["dormant"]["used-triggers"] == {
        "passed": 0, "failed": 2, "unknown": 0, "rate": 0.0, "unknown_reasons": []}
    assert "Checks beside the verifier" in html and "check:used-triggers" in html
    assert [n for n in results["notes"] if n.startswith("Not exercised")] == [
        "Not exercised: arm dormant never used its package (2 of 2 attempts known to use none of its components); "
        "its result says nothing about the package's effect."]
    # status --json, the status text and the dashboard's run page say it too.
    status = json.loads(subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--json"],
                                       capture_output=True, text=True, env=env, check=True).stdout)
    assert status["arms"]["dormant"]["activation"] == {"exercised": False, "label": "not exercised", "used": 0,
                                                       "not_used": 2, "unknown": 0, "rate": 0.0}
    assert status["arms"]["triggering"]["activation"]["label"] == "exercised"
    text = subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir)],
                          capture_output=True, text=True, env=env, check=True).stdout
    assert "package exercised:" in text and "dormant not exercised (0/2)" in text
    from pluginbench.dashboard._html import run_fragment
    from pluginbench.dashboard._views import run_model
    from tests.dashboard.test_views import source
    page = run_fragment(run_model(source(run_dir)))
    assert "package exercised" in page and "not exercised (0/2)" in page and "exercised (2/2)" in page
    # Gateable: activation_any and activation:<component> through compare's metric gates.
    gates = {"count_overlap_passes": False, "gates": [
        {"name": "exercised", "against": "dormant", "direction": "higher", "metrics": ["activation_any"],
         "statistic": "total", "factor": 1.0},
        {"name": "skill", "against": "dormant", "direction": "higher", "metrics": ["activation:skill:triggers"],
         "statistic": "total"},
        {"name": "grader", "against": "dormant", "direction": "higher", "metrics": ["check:used-triggers"],
         "statistic": "total", "factor": 1.0},
        {"name": "rate", "against": "dormant", "direction": "higher", "rate": "activation:skill:triggers",
         "threshold": 0.5}]}
    gates_path = write(tmp_path / "gates.yaml", yaml.safe_dump(gates))
    compared = subprocess.run([sys.executable, "-m", "pluginbench", "compare", f"{run_dir}=triggering,dormant",
                               "--gates", str(gates_path), "--json"], capture_output=True, text=True, env=env)
    verdict = json.loads(compared.stdout)
    # 1: the rate gate fails (two attempts are too few); the skill gate is undetermined (dormant has no such skill)
    assert compared.returncode == 1, compared.stdout + compared.stderr
    found: dict[str, dict] = {}

    def walk(o: object) -> None:
        if isinstance(o, dict):
            if "gate" in o and "status" in o and o.get("candidate") == "triggering":
                found[o["gate"]] = o
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(verdict)
    assert found["exercised"]["status"] == "pass", found
    assert (found["exercised"]["candidate_value"], found["exercised"]["comparator_value"]) == (2.0, 0.0)
    assert found["skill"]["status"] == "undetermined" and found["skill"]["candidate_value"] is None
    assert found["grader"]["status"] == "pass" and found["grader"]["candidate_value"] == 2.0
    # A fixed-threshold rate gate: 2 of 2 uses cannot show a rate above 0.5 (exact binomial p = 0.25).
    assert found["rate"]["status"] == "fail" and found["rate"]["candidate_value"] == 1.0, found["rate"]
    assert "2 of 2 known attempt(s)" in found["rate"]["detail"] and "p = 0.25" in found["rate"]["detail"]
    bad = write(tmp_path / "bad-gates.yaml", yaml.safe_dump({"count_overlap_passes": False, "gates": [
        {"name": "g", "against": "dormant", "direction": "higher", "metrics": ["activation:"], "statistic": "total"}]}))
    refused = subprocess.run([sys.executable, "-m", "pluginbench", "compare", f"{run_dir}=triggering,dormant",
                              "--gates", str(bad)], capture_output=True, text=True, env=env)
    assert refused.returncode == 2 and "metrics[0]" in refused.stdout + refused.stderr
    # What activation adds per attempt: reading the receipt and traces again.
    attempts = sorted((run_dir / "evidence" / "attempts").iterdir())
    t0 = time.perf_counter()
    for a in attempts:
        verdicts(a)
    per_attempt = (time.perf_counter() - t0) / len(attempts)
    print(f"activation: {per_attempt * 1000:.2f} ms per attempt over {len(attempts)} attempts")
    import msgspec

    from pluginbench.measures._checks import Check
    from pluginbench.measures._checks_spec import collect_checks
    from pluginbench.measures._port import CollectorInput
    checks = msgspec.convert(config["measurement_settings"]["checks"], list[Check])
    start = TASKS / "add-numbers" / "workspace"
    t1 = time.perf_counter()
    import anyio
    for a in attempts:
        anyio.run(collect_checks, CollectorInput(
            attempt_id=a.name, task="add-numbers", arm="", patch=(a / "model.patch").read_text(), attempt_dir=a,
            traces_dir=a / "agent", harness="claude", task_dir=TASKS / "add-numbers", starting_source=start,
            reference_patch=None, task_image=None, open_task_sandbox=None, settings={"checks": checks},
            work_dir=tmp_path / "checks" / a.name, agent_traces=True))
    checks_per_attempt = (time.perf_counter() - t1) / len(attempts)
    print(f"checks (3 graders): {checks_per_attempt * 1000:.2f} ms per attempt")
    for arm, a in per_arm.items():
        print(f"{arm}: {a['label']} (any rate {a['any']['rate']})")
    (tmp_path.parent / "activation-eval-words.txt").write_text(
        "\n".join(f"{arm}: {a['label']} (any rate {a['any']['rate']})" for arm, a in per_arm.items())
        + f"\nseconds per attempt: {per_attempt:.4f}; checks: {checks_per_attempt:.4f}\n")
