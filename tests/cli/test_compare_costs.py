"""``pluginbench compare`` cost gates through the CLI, on results.json costs priced by the real report code."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from pluginbench.cli import app
from pluginbench.projections._report_cost import costs_section
from pluginbench.stats import bundled_prices
from tests.cli._results_synth import write_run

runner = CliRunner()
TASKS = [f"task-{i}" for i in range(6)]


def priced(root: Path, model: str | None = "claude-sonnet-4-5") -> Path:
    """Add the costs section the report writes (bundled table) to a synthetic run's results.json."""
    path = root / "report" / "results.json"
    doc = json.loads(path.read_text())
    doc["costs"] = costs_section(bundled_prices(), None, model, doc["attempts"], doc["tasks"], doc["arms"],
                                 source="bundled", file="pluginbench/stats/prices.json")
    path.write_text(json.dumps(doc))
    return root


def cli(tmp_path: Path, gate: dict, *runs: Path) -> tuple[int, dict]:
    g = tmp_path / "gates.yaml"
    g.write_text(yaml.safe_dump({"count_overlap_passes": True, "gates": [{"against": "vanilla", "direction": "lower", **gate}]}))
    res = runner.invoke(app, ["compare", *map(str, runs), "--gates", str(g), "--json"])
    return res.exit_code, json.loads(res.output) if res.output.startswith("{") else {"output": res.output}


def all_split(doc: dict) -> dict:
    return doc["splits"][-1]["gates"][0]


def test_cost_ratio_gate_passes_and_fails_by_its_factor(tmp_path: Path) -> None:
    """Twice the tokens is twice the dollars per attempt: cost_ratio passes at factor 2.5 (exit 0) and fails at 1.5 (exit 1)."""
    run = priced(write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, a, r: "pass",
                           tokens=lambda t, a, r: (2000, 200) if a == "docs" else (1000, 100)))
    code, doc = cli(tmp_path, {"name": "dollars", "cost": "cost_ratio", "factor": 2.5}, run)
    assert code == 0, doc
    assert all_split(doc)["status"] == "pass" and all_split(doc)["candidate_value"] == 2.0
    assert "bundled price table of " + bundled_prices().as_of in all_split(doc)["detail"]
    code, doc = cli(tmp_path, {"name": "dollars", "cost": "cost_ratio", "factor": 1.5}, run)
    assert code == 1 and all_split(doc)["status"] == "fail"


def test_cost_per_pass_gate_counts_passes(tmp_path: Path) -> None:
    """Same dollars, more passes: the candidate's dollars per pass is lower, so cost_per_pass passes (exit 0)."""
    run = priced(write_run(tmp_path / "a", ["vanilla", "docs"], TASKS,
                           lambda t, a, r: "pass" if a == "docs" or r == 1 else "fail"))
    code, doc = cli(tmp_path, {"name": "per-pass", "cost": "cost_per_pass"}, run)
    assert code == 0, doc
    row = all_split(doc)
    assert row["status"] == "pass" and row["candidate_value"] * 3 == row["comparator_value"]


def test_a_run_without_dollars_makes_the_cost_gate_undetermined(tmp_path: Path) -> None:
    """A report without a costs section, or a model the table has no row for, is exit 3 with the reason, never a pass."""
    bare = write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, a, r: "pass")
    code, doc = cli(tmp_path, {"name": "dollars", "cost": "cost_ratio", "factor": 100}, bare)
    assert code == 3 and "unknown dollars" in all_split(doc)["detail"]
    unpriced = priced(write_run(tmp_path / "b", ["vanilla", "docs"], TASKS, lambda t, a, r: "pass"), model="model-x")
    code, doc = cli(tmp_path, {"name": "dollars", "cost": "cost_ratio", "factor": 100}, unpriced)
    assert code == 3 and "the bundled price table has no row for model 'model-x'" in all_split(doc)["detail"]


def test_a_misspelt_cost_gate_exits_two_naming_the_field(tmp_path: Path) -> None:
    """cost: cost_per_passes is exit 2 naming gates[0].cost and the allowed names; nothing is decided."""
    run = priced(write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, a, r: "pass"))
    code, doc = cli(tmp_path, {"name": "x", "cost": "cost_per_passes"}, run)
    out = doc.get("output", json.dumps(doc))
    assert code == 2 and "gates[0].cost" in out and "cost_per_pass, cost_ratio" in out and "Traceback" not in out


def test_paired_line_shows_the_dollars_ratio_with_its_interval(tmp_path: Path) -> None:
    """compare's paired section carries the dollars per attempt ratio with its sign-flip interval (×2.00 when the
    candidate spends twice the tokens on every task), in --json and in the terminal's paired line and verdict."""
    run = priced(write_run(tmp_path / "a", ["vanilla", "docs"], TASKS, lambda t, a, r: "pass",
                           tokens=lambda t, a, r: (2000, 200) if a == "docs" else (1000, 100)))
    code, doc = cli(tmp_path, {"name": "dollars", "cost": "cost_ratio", "factor": 2.5}, run)
    dollars = doc["splits"][-1]["paired"][0]["dollars"]
    assert dollars["status"] == "ok" and abs(dollars["estimate"] - 2.0) < 1e-9 and dollars["low"] <= 2.0 <= dollars["high"]
    g = tmp_path / "gates.yaml"
    text = runner.invoke(app, ["compare", str(run), "--gates", str(g)]).output
    assert "dollars per attempt ratio: ×2.00 [90%: ×2.00 to ×2.00] over 6 task(s)" in text
    assert "dollars per attempt ×2.00 [×2.00 to ×2.00]" in text
