"""results.json ``checks`` and report.html's checks section: per arm and check, the share of attempts that
passed (unknowns apart, never a fail), only when the run selected the checks measure."""

from __future__ import annotations

from typing import Any

from pluginbench.projections._report_checks import checks_html, checks_section


def _row(arm: str, **values: Any) -> dict[str, Any]:
    measures = {f"check:{k}": ({"value": v, "unit": "pass", "status": "measured"} if v is not None else
                               {"value": None, "unit": "pass", "status": "unknown", "reason": "provider stop"})
                for k, v in values.items()}
    return {"arm": arm, "state": "complete", "measures": measures}


def test_checks_fold_per_arm_with_unknowns_apart() -> None:
    """Passed/failed/unknown per arm and check; rate over known attempts; no section without the measure."""
    rows = [_row("vanilla", explains=0, done=1), _row("vanilla", explains=None, done=1),
            _row("skill", explains=1, done=1), _row("skill", explains=1, done=0),
            {"arm": "skill", "state": "running", "measures": {}}]
    sec = checks_section(rows, ["vanilla", "skill"], ["tokens", "checks"])
    assert sec is not None and sec["names"] == ["done", "explains"]
    assert sec["per_arm"]["vanilla"]["explains"] == {"passed": 0, "failed": 1, "unknown": 1, "rate": 0.0,
                                                     "unknown_reasons": ["provider stop"]}
    assert sec["per_arm"]["skill"]["explains"]["rate"] == 1.0 and sec["per_arm"]["skill"]["done"]["rate"] == 0.5
    assert checks_section(rows, ["vanilla"], ["tokens"]) is None
    html = checks_html({"arms": ["vanilla", "skill"], "checks": sec})
    assert "check:explains" in html and "100% (2/2)" in html and "0% (0/1)" in html and "+1 unknown" in html
    assert "never change correctness" in html
