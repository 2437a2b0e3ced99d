"""The code-quality measures through a whole evaluation: the simulated agent's patches differ in
complexity and tests, and results.json, results.csv and report.html show the hand-counted values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.measures._complexity_scan import analyzer_status
from pluginbench.measures._deadcode_scan import vulture_status
from pluginbench.projections._results_schema import validate as validate_results
from tests._prereq import require
from tests.actors.test_supervisor import _drive
from tests.runs_helpers import QUICKSTART, write_config

CANDIDATES = QUICKSTART / "tasks" / "roman-numerals" / "simulated"
# Hand-counted per candidate patch of roman-numerals (the simulated agent picks one per attempt):
# correct(-tested): `if not isinstance(...) or not numeral or any(... for s in numeral)` -> cyc if+or+or+for = 4,
#   cog if+or-sequence = 2; `if not 1 <= total <= 3999 or to_roman(total) != numeral` -> cyc 2, cog 2.
# partial: `if not numeral` (cyc 1, cog 1), `for symbol` (1, 1), nested `if symbol not in` (1, 2).
HAND = {
    "correct-tested": {"cyclomatic_added": 6, "cognitive_added": 4, "functions_added": 0, "test_lines_added": 23,
                       "dead_code_candidates_added": 0, "duplicated_test_lines_added": 0},
    "correct": {"cyclomatic_added": 6, "cognitive_added": 4, "functions_added": 0, "test_lines_added": 0,
                "dead_code_candidates_added": 0, "duplicated_test_lines_added": 0},
    "partial": {"cyclomatic_added": 3, "cognitive_added": 4, "functions_added": 0, "test_lines_added": 0,
                "dead_code_candidates_added": 0, "duplicated_test_lines_added": 0},
    "empty": {"cyclomatic_added": 0, "cognitive_added": 0, "functions_added": 0, "test_lines_added": 0,
              "dead_code_candidates_added": 0, "duplicated_test_lines_added": 0},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _added(patch: str) -> set[str]:
    return {line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")}


def _candidate(patch: str) -> str:
    if not patch.strip():
        return "empty"
    for name in ("correct-tested", "correct", "partial"):
        if _added((CANDIDATES / f"{name}.patch").read_text()) == _added(patch):
            return name
    raise AssertionError("the patch is none of the scripted candidates")


@pytest.mark.anyio
async def test_quality_measures_in_a_whole_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attempt's complexity, dead-code and duplicated-test values equal the hand count of the candidate
    the simulated agent applied; iterations are unknown (the simulated harness saves no transcript); the
    report's attempt table carries the new columns and its Code quality table their per task medians."""
    require(analyzer_status("python")[0] is not None and vulture_status()[0] is not None,
            "the pinned Python analyzers (pip install -e '.[dev]')")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = write_config(tmp_path, tasks=["roman-numerals"], repeats=3, jobs=1, environment={"isolation": "none"},
                          measurements=["tokens", "time", "lines", "iterations", "cyclomatic", "cognitive",
                                        "dead_code"])
    rd = create_run(load(config), tmp_path / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)
    seen = set()
    for row in doc["attempts"]:
        patch = (rd.root / row["evidence"] / "model.patch").read_text()
        name = _candidate(patch)
        seen.add(name)
        got = {k: row["measures"][k]["value"] for k in HAND[name]}
        assert got == HAND[name], (row["attempt_id"], name)
        assert row["measures"]["verification_iterations"]["value"] is None
        assert "simulated harness saves no agent transcript" in row["measures"]["verification_iterations"]["reason"]
        assert row["measures"]["duplicate_groups_added"]["value"] is None  # a Python task: JS/TS only
    assert len(seen) >= 2, f"the seed should give attempts with different candidates, got {seen}"
    for arm, summary in doc["per_task"]["roman-numerals"].items():
        assert "median_cognitive_added" in summary and "median_dead_code_candidates_added" in summary, arm
    missing = {m["field"] for m in doc["missing_values"]}
    assert "measures.verification_commands" in missing
    # JS/TS duplicate groups on a Python task are not applicable: never listed as a missing value
    assert "measures.duplicate_groups_added" not in missing
    html = (rd.report_dir / "report.html").read_text()
    assert "Cyc +" in html and "Cog +" in html and "Unused +" in html  # the attempt table's columns
    quality = html.split('id="code-quality-table"')[1].split("</table>")[0]
    for metric in ("cyclomatic_added", "cognitive_added", "dead_code_candidates_added"):
        assert f'data-metric="{metric}"' in quality, metric
