"""Whole evaluations with an independent reviewer: the real pinned Claude Code and Codex
CLIs against the loopback probe, for coding and for review."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from pluginbench.projections._results_schema import validate
from tests._prereq import require
from tests.harnesses._claude_pkg import MARKER, write

pytestmark = [pytest.mark.realcli, pytest.mark.slow]
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN")
MODELS = {"claude": "claude-sonnet-4-5", "codex": "gpt-5.5"}


def _config(tmp: Path, harness: str, scenario: Path, treatment: bool = True) -> Path:
    probe = tmp / "scenario.yaml"
    shutil.copyfile(scenario, probe)
    cfg = {
        "name": f"review-{harness}",
        "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"guided-arm": {"guidance": [str(write(tmp / "pkg" / "core.md", f"# G\n{MARKER}: be right.\n"))]}}
        if treatment else {},
        "runner": {"harness": harness, "model": MODELS[harness], "reasoning": "low", "probe": str(probe),
                   "vanilla_cache": False},
        "reviewer": {"harness": harness, "model": MODELS[harness], "reasoning": "low", "timeout_seconds": 120},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }
    if harness == "codex" and scenario.name == "review-findings.yaml":  # the llm grader, wired into a whole run
        cfg["measurements"] = ["tokens", "time", "lines", "checks"]
        cfg["measurement_settings"] = {"checks": [
            {"name": "explains", "kind": "llm", "rubric": "The final message says what was fixed.", "votes": 1}]}
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _pb(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def _require(harness: str) -> None:
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")


def _review_requests(run_dir: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines()]
    return [r for r in rows if r["kind"] == "coding" and r.get("rule") == "review"]


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_every_submission_is_reviewed_blind_with_findings_and_usage(tmp_path: Path, harness: str) -> None:
    """Both arms' submissions get the probe's two findings; reviewer usage is separate; the packet holds no arm."""
    _require(harness)
    run_dir = tmp_path / "run"
    done = _pb("run", str(_config(tmp_path, harness, SCENARIOS_DIR / "review-findings.yaml")), "--output",
               str(run_dir), "--foreground", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    validate(results)
    reviews = results["reviews"]
    assert reviews["reviewer"]["harness"] == harness and reviews["reviewer"]["simulated"] is False
    assert results["comparison_identity"]["reviewer"]["model"] == MODELS[harness]
    assert set(reviews["per_attempt"]) == {a["attempt_id"] for a in results["attempts"]}
    for row in reviews["per_attempt"].values():
        assert row["status"] == "complete" and row["findings"] == 2
        assert row["by_severity"] == {"high": 0, "medium": 1, "low": 1}
        assert row["by_category"]["tests"] == 1 and row["by_category"]["readability"] == 1
    assert reviews["per_arm"]["guided-arm"]["mean_of_task_medians"]["findings"] == 2
    assert reviews["usage"]["calls"] == 2 and reviews["usage"]["status"] == "exact"
    assert reviews["usage"]["output"] == 2 * 90
    # Coding usage is the coding sessions' only: the reviewer's 90-token answers are not in it.
    assert all(a["tokens"]["output"] != 90 for a in results["attempts"])
    assert len(_review_requests(run_dir)) >= 2
    for packet in (run_dir / "evidence" / "review-packets").iterdir():
        text = "".join(p.read_text(errors="replace") for p in (packet / "packet").rglob("*") if p.is_file())
        assert "guided-arm" not in text and MARKER not in text and "reward" not in text
    prompt = next((run_dir / "evidence" / "reviews" / "initial").glob("*/prompt.md")).read_text()
    assert "guided-arm" not in prompt and "vanilla" not in prompt
    if harness == "codex":  # the llm grader's one vote per attempt: its own column, never the outcome
        for a in results["attempts"]:
            assert a["measures"]["check:explains"]["value"] == 1, a["measures"]
        assert {a["outcome"] for a in results["attempts"]} == {"pass", "fail"}
        votes = sorted((run_dir / "evidence" / "attempts").glob("*/measure/checks/llm/explains/vote-1/prompt.md"))
        assert len(votes) == 2 and all("guided-arm" not in v.read_text() for v in votes)


def test_a_malformed_review_is_a_failed_review_with_its_reason(tmp_path: Path) -> None:
    """Prose instead of the response JSON: the review failed with the reason, its findings are null, the run finishes."""
    _require("claude")
    run_dir = tmp_path / "run"
    done = _pb("run", str(_config(tmp_path, "claude", SCENARIOS_DIR / "review-malformed.yaml", treatment=False)),
               "--output", str(run_dir), "--foreground", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    validate(results)
    [row] = results["reviews"]["per_attempt"].values()
    assert row["status"] == "failed" and row["findings"] is None and "malformed review" in row["reason"]
    assert results["reviews"]["per_task"]["add-numbers"]["vanilla"]["median"]["findings"] is None


def test_a_provider_stop_mid_review_stops_the_run_and_resume_completes_the_review(tmp_path: Path) -> None:
    """A 429 on the review stops the run failed with the attempt unfinished; a resume reviews it and finishes."""
    _require("claude")
    run_dir = tmp_path / "run"
    config = _config(tmp_path, "claude", SCENARIOS_DIR / "review-provider-stop.yaml", treatment=False)
    done = _pb("run", str(config), "--output", str(run_dir), "--foreground", "--yes")
    assert done.returncode != 0
    status = json.loads(_pb("status", str(run_dir), "--json").stdout)
    assert status["phase"] == "failed" and "provider stop in the review" in status["error"]
    assert status["states"]["complete"] == 0
    # The provider is back: the same scenario file now answers reviews.
    shutil.copyfile(SCENARIOS_DIR / "review-findings.yaml", tmp_path / "scenario.yaml")
    again = _pb("run", str(run_dir), "--foreground", "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    [row] = results["reviews"]["per_attempt"].values()
    assert row["status"] == "complete" and row["findings"] == 2
    assert results["reviews"]["usage"]["calls"] == 2  # the stopped call is counted, with its usage
    assert results["reviews"]["usage"]["status"] != "exact" or results["reviews"]["usage"]["unknown_calls"] == 0


def test_a_revision_with_another_real_reviewer_is_named_in_the_comparison_identity(tmp_path: Path) -> None:
    """A claude-reviewed run reviewed again by the real Codex CLI: the report selects it and names codex."""
    _require("claude")
    _require("codex")
    run_dir = tmp_path / "run"
    done = _pb("run", str(_config(tmp_path, "claude", SCENARIOS_DIR / "review-findings.yaml", treatment=False)),
               "--output", str(run_dir), "--foreground", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    again = _pb("review", str(run_dir), "--revision", "codex-2", "--reviewer-harness", "codex", "--reviewer-model",
                MODELS["codex"], "--reviewer-effort", "low", "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    validate(results)
    ident = results["comparison_identity"]["reviewer"]
    assert (ident["revision"], ident["harness"], ident["model"]) == ("codex-2", "codex", MODELS["codex"])
    assert results["reviews"]["reviewer"]["cli_version"] is not None
    [row] = results["reviews"]["per_attempt"].values()
    assert row["status"] == "complete" and row["findings"] == 2
    assert [r["reviewer"]["harness"] for r in results["reviews"]["revisions"]] == ["claude", "codex"]
