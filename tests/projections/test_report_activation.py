"""results.json `activation` and its report.html section, folded from attempt rows (pure)."""

from __future__ import annotations

from typing import Any

import msgspec

from pluginbench.projections._report_activation import activation_notes, activation_section
from pluginbench.projections._report_activation_html import activation_html
from pluginbench.projections._results_schema_activation import Activation


def _m(value: int | None, reason: str | None = None) -> dict[str, Any]:
    return {"value": value, "unit": "x", "status": "unknown" if value is None else "measured", "reason": reason}


def _row(arm: str, outcome: str, any_: int | None, skill: int | None, turn: int | None = None,
         state: str = "complete") -> dict[str, Any]:
    measures = {"activation_any": _m(any_, None if any_ is not None else "no root session transcript was saved")}
    if arm != "vanilla":
        measures["activation:skill:s"] = _m(skill)
        measures["activation_first_turn:skill:s"] = _m(turn)
        measures["activation:task:skill:p"] = _m(0)
    return {"arm": arm, "state": state, "outcome": outcome, "ineligible": None, "measures": measures}


ROWS = [
    _row("vanilla", "fail", None, None),
    _row("used", "pass", 1, 2, 1), _row("used", "fail", 0, 0), _row("used", "pass", None, None),
    _row("idle", "pass", 0, 0), _row("idle", "fail", 0, 0), _row("idle", "pass", 1, 1, state="running"),
]


def test_per_arm_shares_labels_and_outcome_split() -> None:
    """Each arm's share of attempts that used the package and each component, unknowns counted apart (never as
    not used), the label, task-owned components apart, and passes split by activation; incomplete attempts
    are left out."""
    section = activation_section(ROWS, ["vanilla", "used", "idle"], ["tokens", "activation"])
    assert section is not None
    msgspec.convert(section, Activation)  # the documented schema
    used, idle, van = (section["per_arm"][a] for a in ("used", "idle", "vanilla"))
    assert used["any"] == {"used": 1, "not_used": 1, "unknown": 1, "rate": 0.5}
    assert used["label"] == "exercised" and used["unknown_reasons"] == ["no root session transcript was saved"]
    assert used["components"]["skill:s"]["median_first_turn"] == 1
    assert used["components"]["task:skill:p"]["owner"] == "task"
    assert used["outcomes_by_activation"]["used"] == {"attempts": 1, "decided": 1, "passes": 1, "pass_rate": 1.0}
    assert used["outcomes_by_activation"]["not_used"]["pass_rate"] == 0.0
    assert idle["attempts"] == 2 and idle["label"] == "not exercised" and idle["exercised"] is False
    assert van["label"] == "no components" and van["exercised"] is None


def test_absent_unless_selected_and_html_words() -> None:
    """No section without the activation measure; the HTML names each arm's label and never shows 0 for unknown."""
    assert activation_section(ROWS, ["vanilla"], ["tokens"]) is None
    section = activation_section(ROWS, ["vanilla", "used", "idle"], ["activation"])
    html = activation_html({"activation": section})
    assert "not exercised" in html and "exercised" in html and "no components" in html
    assert "1/2 (50%), 1 unknown" in html and "Descriptive, not causal" in html
    assert activation_html({}) == ""


def test_a_never_exercised_arm_gets_a_note() -> None:
    """The report's notes name each arm whose package no attempt used (every attempt known), and only those."""
    notes = activation_notes(activation_section(ROWS, ["vanilla", "used", "idle"], ["activation"]))
    assert len(notes) == 1 and notes[0].startswith("Not exercised: arm idle") and "2 of 2" in notes[0]
    assert activation_notes(None) == []
