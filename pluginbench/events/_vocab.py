"""The closed vocabularies of the log and the views: each a ``Literal`` that msgspec
validates when it decodes an event or ``results.json``, with one meaning per value.

The docs' vocabulary tables are generated from the meanings here (``tools/gen_docs.py``),
and a test checks that every value has exactly one meaning, so a value added to a
``Literal`` without its meaning fails the suite instead of reaching the page silently.
"""

from __future__ import annotations

from typing import Literal, get_args

#: The arm name of the untreated control (no guidance, no skills, no plugins).
VANILLA = "vanilla"

#: The grade of one attempt (``attempt.graded``, ``results.json``, ``status --json``).
Outcome = Literal["pass", "overlap_pass", "fail", "empty", "unknown"]
#: How far an attempt's token counts can be trusted (``usage.status``, ``tokens.status``).
UsageStatus = Literal["exact", "lower_bound", "unvalidated", "unknown"]
#: Whether a measure has a value (``measures.<name>.status``).
MeasureStatus = Literal["measured", "unknown", "not_applicable"]
#: Where one attempt is in its life (``results.json``, the ledger, ``status --json``).
AttemptState = Literal["pending", "running", "complete", "interrupted"]
#: Where a whole run is (``status --json`` ``phase``, the dashboard).
Phase = Literal[
    "not_started", "starting", "coding", "reviewing", "reporting", "complete", "stopped", "failed", "interrupted",
]
#: Which models an attempt's sessions ran on (``model.status``).
ModelStatus = Literal["single", "mixed", "unknown"]

OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
#: Outcomes that count as a pass for a winner or a pass count (an overlap pass is a pass here;
#: ``compare`` decides with ``count_overlap_passes``).
PASSING_OUTCOMES: tuple[Outcome, ...] = ("pass", "overlap_pass")
#: Outcomes that say something about correctness (all but ``unknown``).
KNOWN_OUTCOMES: tuple[Outcome, ...] = ("pass", "overlap_pass", "fail", "empty")
USAGE_STATUSES: tuple[UsageStatus, ...] = get_args(UsageStatus)
MEASURE_STATUSES: tuple[MeasureStatus, ...] = get_args(MeasureStatus)
ATTEMPT_STATES: tuple[AttemptState, ...] = get_args(AttemptState)
PHASES: tuple[Phase, ...] = get_args(Phase)
MODEL_STATUSES: tuple[ModelStatus, ...] = get_args(ModelStatus)

OUTCOME_MEANINGS: dict[Outcome, str] = {
    "pass": "reward exactly 1",
    "overlap_pass": "reward 1 from a patch that changes paths the hidden `tests/test.patch` replaces: "
                    "see [results.md](results.md#outcomes)",
    "fail": "reward exactly 0",
    "empty": "the graded patch is empty, whatever the reward",
    "unknown": "no reward, a non-binary reward such as 0.5, a patch that does not apply, a verifier "
               "timeout, or no submission could be made",
}

USAGE_STATUS_MEANINGS: dict[UsageStatus, str] = {
    "exact": "Validated, with every model answer's usage seen and valid (non-negative integers): "
             "Claude Code's `modelUsage` matched the session transcripts under the "
             "version's rule; Codex's `turn.completed` usage matched the root rollout total; a control "
             "made no model call (exactly 0); the simulated agent's trace gave a complete `result` usage.",
    "lower_bound": "Only a floor is known: some answers carried no valid usage (missing, malformed or "
                   "negative counts) or a call was cut mid-stream and retried, and the counters are the "
                   "validated answers' counts; or a Codex session that timed out or whose turn failed after "
                   "responses were counted, or whose descendant sessions lack totals (the observed totals). "
                   "`reason` says which.",
    "unvalidated": "Reserved by the status schema for recorded figures without validation provenance; "
                   "this build does not produce it.",
    "unknown": "Not measured; every counter is `null` and `reason` says why (a Claude timeout, a failed "
               "cross-check, no result line, no answer with valid usage, the worker killed before the "
               "receipt was saved, …).",
}

MEASURE_STATUS_MEANINGS: dict[MeasureStatus, str] = {
    "measured": "`value` holds the measured number.",
    "unknown": "`value` is `null` and `reason` says why it was not measured.",
    "not_applicable": "`value` is `null`: the measure has no meaning for this submission's language (JS/TS "
                      "duplicate-code groups on a task without JavaScript or TypeScript); `reason` says why. "
                      "Not missing: never listed under missing values, never counted as unknown.",
}

ATTEMPT_STATE_MEANINGS: dict[AttemptState, str] = {
    "pending": "planned, not started yet (or reset to start again)",
    "running": "started: coding, grading, measuring or reviewing is under way",
    "complete": "graded and measured (and reviewed when the run has a reviewer): it has an outcome",
    "interrupted": "no usable session came out of it (a provider stop, or a failure before the agent launched)",
}

PHASE_MEANINGS: dict[Phase, str] = {
    "not_started": "no `run.created` yet",
    "starting": "created; preparation (freezing, readiness) is under way",
    "coding": "attempts are being coded, graded and measured",
    "reviewing": "the reviewer is reviewing submissions (or `pluginbench review` is)",
    "reporting": "every attempt is complete; the report is being built",
    "complete": "the run finished",
    "stopped": "the run stopped before finishing (a signal, `stop`, or the cost ceiling)",
    "failed": "the run stopped on a failure (readiness, a provider stop, an interrupted attempt)",
    "interrupted": "`status` only: no live owner while starting, coding or reporting (the worker was killed "
                   "or its host went down); `pluginbench run <run-dir>` resumes it",
}

MODEL_STATUS_MEANINGS: dict[ModelStatus, str] = {
    "single": "the root session and every child ran on the runner's model and effort",
    "mixed": "a child ran on another model or effort: `model` is null and the attempt is ineligible",
    "unknown": "a session's model could not be read; `reason` says why",
}

#: name → (the Literal's values, their meanings), for the docs and the completeness test.
VOCABULARIES: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "outcome": (OUTCOMES, dict(OUTCOME_MEANINGS.items())),
    "usage-status": (USAGE_STATUSES, dict(USAGE_STATUS_MEANINGS.items())),
    "measure-status": (MEASURE_STATUSES, dict(MEASURE_STATUS_MEANINGS.items())),
    "attempt-state": (ATTEMPT_STATES, dict(ATTEMPT_STATE_MEANINGS.items())),
    "phase": (PHASES, dict(PHASE_MEANINGS.items())),
    "model-status": (MODEL_STATUSES, dict(MODEL_STATUS_MEANINGS.items())),
}


def vocabulary_table(name: str, heading: str = "Value") -> str:
    """The markdown table of one vocabulary: each value and its meaning, in declaration order."""
    values, meanings = VOCABULARIES[name]
    rows = [f"| {heading} | Meaning |", "| --- | --- |"]
    rows += [f"| `{v}` | {meanings[v]} |" for v in values]
    return "\n".join(rows) + "\n"
